/// A structural problem found while reading a FlexBuffer (the schema-less format of custom options).
///
/// Like `FlatBufferError`, it knows nothing of TFLite; kernels wrap it into a `ModelError` that names
/// the operator.
package enum FlexBufferError: Error, Equatable, CustomStringConvertible {
    /// `length` bytes at `offset` do not lie inside a buffer of `bufferSize` bytes.
    case outOfBounds(offset: Int, length: Int, bufferSize: Int)
    /// The bytes at `offset` cannot be a FlexBuffer value: a bad width or type code, an offset
    /// that points outside the buffer, a size that cannot fit.
    case malformed(offset: Int, reason: String)
    /// The value has type `found` where the caller asked for `expected`.
    case typeMismatch(expected: String, found: FlexBufferType)
    /// A string or key at `offset` is not valid UTF-8.
    case invalidString(offset: Int)

    package var description: String {
        switch self {
        case let .outOfBounds(offset, length, size):
            return "offset \(offset) (+\(length) bytes) lies outside the \(size)-byte FlexBuffer"
        case let .malformed(offset, reason):
            return "malformed FlexBuffer at byte \(offset): \(reason)"
        case let .typeMismatch(expected, found):
            return "FlexBuffer value is \(found), expected \(expected)"
        case let .invalidString(offset):
            return "FlexBuffer string at \(offset) is not valid UTF-8"
        }
    }
}
