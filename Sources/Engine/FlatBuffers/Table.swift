/// A FlatBuffers table: an object whose fields are found through its vtable.
///
/// Fields are addressed by their slot (the field's declaration index in the schema, counting a
/// union as two slots: its type tag, then its value). An absent field yields the schema default.
package struct Table: Sendable {
    package let reader: ByteReader
    /// Absolute position of the table in the buffer.
    package let position: Int
    private let vtable: Int
    private let vtableSize: Int

    /// Reads the table whose position is `position`, validating its vtable.
    package init(reader: ByteReader, position: Int) throws(FlatBufferError) {
        self.reader = reader
        self.position = position
        let vtableOffset = Int(try reader.load(Int32.self, at: position))
        let vtable = position - vtableOffset
        let size = Int(try reader.load(UInt16.self, at: vtable))
        guard size >= 4, size % 2 == 0 else { throw .invalidVTable(offset: vtable, size: size) }
        try reader.check(vtable, size)
        self.vtable = vtable
        self.vtableSize = size
    }

    /// The root table of a buffer (the caller checks any file identifier).
    package static func root(of reader: ByteReader) throws(FlatBufferError) -> Table {
        let offset = Int(try reader.load(UInt32.self, at: 0))
        return try Table(reader: reader, position: offset)
    }

    /// Absolute position of the field in `slot`, or nil when the field is absent.
    @inline(__always)
    package func fieldPosition(_ slot: Int) throws(FlatBufferError) -> Int? {
        let entry = 4 + 2 * slot
        guard entry + 2 <= vtableSize else { return nil }
        let relative = Int(try reader.load(UInt16.self, at: vtable + entry))
        return relative == 0 ? nil : position + relative
    }

    package func scalar<T: FixedWidthInteger>(_ slot: Int, default value: T) throws(FlatBufferError) -> T {
        guard let at = try fieldPosition(slot) else { return value }
        return try reader.load(T.self, at: at)
    }

    package func float(_ slot: Int, default value: Float) throws(FlatBufferError) -> Float {
        guard let at = try fieldPosition(slot) else { return value }
        return try reader.loadFloat(at: at)
    }

    package func bool(_ slot: Int, default value: Bool = false) throws(FlatBufferError) -> Bool {
        try scalar(slot, default: UInt8(value ? 1 : 0)) != 0
    }

    /// Follows the offset stored at `at` to the object it points to.
    @inline(__always)
    private func indirect(_ at: Int) throws(FlatBufferError) -> Int {
        let target = at + Int(try reader.load(UInt32.self, at: at))
        try reader.check(target, 4)
        return target
    }

    package func table(_ slot: Int) throws(FlatBufferError) -> Table? {
        guard let at = try fieldPosition(slot) else { return nil }
        return try Table(reader: reader, position: try indirect(at))
    }

    package func vector(_ slot: Int) throws(FlatBufferError) -> Vector? {
        guard let at = try fieldPosition(slot) else { return nil }
        return try Vector(reader: reader, position: try indirect(at))
    }

    package func string(_ slot: Int) throws(FlatBufferError) -> String? {
        guard let at = try fieldPosition(slot) else { return nil }
        return try Vector(reader: reader, position: try indirect(at)).string()
    }
}
