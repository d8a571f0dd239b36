/// Bounds-checked little-endian loads from a region of memory.
///
/// Every read names its offset and length and is checked against the region before it happens, so
/// untrusted bytes (a model file, a custom-options blob) can never make the reader leave the buffer.
/// The region is borrowed: whoever creates a `ByteReader` keeps the memory alive.
package struct ByteReader: @unchecked Sendable {
    /// The bytes being read.
    package let bytes: UnsafeRawBufferPointer

    package init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    package var count: Int { bytes.count }

    /// Throws unless `length` bytes starting at `offset` lie inside the buffer.
    @inline(__always)
    package func check(_ offset: Int, _ length: Int) throws(FlatBufferError) {
        guard offset >= 0, length >= 0, offset <= bytes.count, length <= bytes.count - offset else {
            throw .outOfBounds(offset: offset, length: length, bufferSize: bytes.count)
        }
    }

    /// Loads a little-endian integer at `offset`.
    @inline(__always)
    package func load<T: FixedWidthInteger>(_ type: T.Type = T.self, at offset: Int) throws(FlatBufferError) -> T {
        try check(offset, MemoryLayout<T>.size)
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    @inline(__always)
    package func loadFloat(at offset: Int) throws(FlatBufferError) -> Float {
        Float(bitPattern: try load(UInt32.self, at: offset))
    }

    @inline(__always)
    package func loadDouble(at offset: Int) throws(FlatBufferError) -> Double {
        Double(bitPattern: try load(UInt64.self, at: offset))
    }

    /// The sub-region of `length` bytes at `offset`.
    package func slice(_ offset: Int, _ length: Int) throws(FlatBufferError) -> UnsafeRawBufferPointer {
        try check(offset, length)
        return UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + length])
    }
}
