/// A structural problem found while reading a FlatBuffer.
///
/// The reader knows nothing of TFLite; the schema layer wraps these into `ModelError`.
package enum FlatBufferError: Error, Equatable, CustomStringConvertible {
    /// `length` bytes at `offset` do not lie inside a buffer of `bufferSize` bytes.
    case outOfBounds(offset: Int, length: Int, bufferSize: Int)
    /// A vtable is shorter than its header or is not a multiple of two bytes.
    case invalidVTable(offset: Int, size: Int)
    /// A vector's element count times its element size overflows or leaves the buffer.
    case invalidVector(offset: Int, count: Int)
    /// A string's bytes are not valid UTF-8.
    case invalidString(offset: Int)

    package var description: String {
        switch self {
        case let .outOfBounds(offset, length, size):
            return "offset \(offset) (+\(length) bytes) lies outside the \(size)-byte buffer"
        case let .invalidVTable(offset, size):
            return "vtable at \(offset) has invalid size \(size)"
        case let .invalidVector(offset, count):
            return "vector at \(offset) with \(count) elements does not fit in the buffer"
        case let .invalidString(offset):
            return "string at \(offset) is not valid UTF-8"
        }
    }
}
