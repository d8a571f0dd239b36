/// A FlatBuffers vector: a 32-bit element count followed by the elements.
package struct Vector: Sendable {
    package let reader: ByteReader
    /// Absolute position of the first element.
    package let start: Int
    package let count: Int

    init(reader: ByteReader, position: Int) throws(FlatBufferError) {
        self.reader = reader
        self.count = Int(try reader.load(UInt32.self, at: position))
        self.start = position + 4
        try reader.check(start, 0)
    }

    /// Checks that `count` elements of `size` bytes each fit in the buffer.
    private func checkElements(size: Int) throws(FlatBufferError) {
        let (total, overflow) = count.multipliedReportingOverflow(by: size)
        guard !overflow else { throw .invalidVector(offset: start, count: count) }
        do { try reader.check(start, total) } catch { throw .invalidVector(offset: start, count: count) }
    }

    /// All elements as integers of type `T` (each widened to `Int`).
    /// Once `checkElements` has passed, each element is read without a check of its own (the
    /// per-channel zero points and scales of a quantized model run to tens of thousands).
    package func integers<T: FixedWidthInteger>(_ type: T.Type) throws(FlatBufferError) -> [Int] {
        try checkElements(size: MemoryLayout<T>.size)
        let elements = UnsafeRawBufferPointer(rebasing: reader.bytes[start ..< start + count * MemoryLayout<T>.size])
        return (0 ..< count).map { i in
            Int(T(littleEndian: elements.loadUnaligned(fromByteOffset: i * MemoryLayout<T>.size, as: T.self)))
        }
    }

    /// All elements as `Float` (checked as `integers` is).
    package func floats() throws(FlatBufferError) -> [Float] {
        try checkElements(size: 4)
        let elements = UnsafeRawBufferPointer(rebasing: reader.bytes[start ..< start + count * 4])
        return (0 ..< count).map { i in Float(bitPattern: UInt32(littleEndian: elements.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))) }
    }

    /// The raw bytes of a `[ubyte]` vector.
    package func bytes() throws(FlatBufferError) -> UnsafeRawBufferPointer {
        try checkElements(size: 1)
        return try reader.slice(start, count)
    }

    package func table(at index: Int) throws(FlatBufferError) -> Table {
        guard index >= 0, index < count else {
            throw .outOfBounds(offset: start + index * 4, length: 4, bufferSize: reader.count)
        }
        let at = start + index * 4
        let target = at + Int(try reader.load(UInt32.self, at: at))
        return try Table(reader: reader, position: target)
    }

    package func tables() throws(FlatBufferError) -> [Table] {
        try checkElements(size: 4)
        var result = [Table]()
        result.reserveCapacity(count)
        for i in 0 ..< count { result.append(try table(at: i)) }
        return result
    }

    package func string(at index: Int) throws(FlatBufferError) -> String {
        guard index >= 0, index < count else {
            throw .outOfBounds(offset: start + index * 4, length: 4, bufferSize: reader.count)
        }
        let at = start + index * 4
        let target = at + Int(try reader.load(UInt32.self, at: at))
        return try Vector(reader: reader, position: target).string()
    }

    /// Decodes this vector of bytes as a UTF-8 string.
    func string() throws(FlatBufferError) -> String {
        let raw = try bytes()
        guard let text = String(validating: raw, as: UTF8.self) else { throw .invalidString(offset: start) }
        return text
    }
}
