/// Builds a FlatBuffer back to front, the way FlatBuffers' own builders do: every object is
/// written before the objects that refer to it, so each reference (a `uoffset_t`, always pointing
/// forward) is known when it is written.
///
/// The bytes are kept in `reversed` in reverse order: appending to `reversed` prepends to the
/// buffer. A reference to an object is its distance from the buffer's end (`Ref`), which does not
/// change as more is prepended. A negative `Ref` names a position *after* the buffer's end (bytes
/// the caller places right behind the finished buffer), `-q` being `q` bytes past the end.
///
/// ```swift
/// var b = FlatBufferBuilder()
/// let name = b.string("labels.txt")
/// b.startTable()
/// b.add(slot: 0, reference: name)
/// let root = b.endTable()
/// let bytes = b.finish(root: root, identifier: "M001")
/// ```
struct FlatBufferBuilder {
    /// A position as its distance from the end of the buffer.
    typealias Ref = Int

    private var reversed: [UInt8] = []
    /// The largest alignment any value needed; `finish` pads the whole buffer to it.
    private var minimumAlignment = 1
    /// Fields of the table being built: slot and the `Ref` just after the field's value.
    private var fields: [(slot: Int, at: Ref)] = []
    /// `Ref` where the table being built starts (its last-written field ends there).
    private var tableStart: Ref = 0

    /// Bytes written so far: the `Ref` of whatever is prepended next (after its padding).
    var size: Ref { reversed.count }

    /// Pads so that after prepending `additional` more bytes the size is a multiple of `alignment`.
    mutating func align(_ alignment: Int, additional: Int = 0) {
        minimumAlignment = max(minimumAlignment, alignment)
        let padding = (alignment - (reversed.count + additional) % alignment) % alignment
        reversed.append(contentsOf: repeatElement(0, count: padding))
    }

    /// Prepends `value` little-endian, without alignment.
    private mutating func pushRaw<T: FixedWidthInteger>(_ value: T) {
        // Reversed order: the most significant byte first, so the least significant ends up lowest.
        var v = value.littleEndian
        withUnsafeBytes(of: &v) { raw in
            for i in stride(from: raw.count - 1, through: 0, by: -1) { reversed.append(raw[i]) }
        }
    }

    /// Prepends an aligned scalar.
    mutating func push<T: FixedWidthInteger>(_ value: T) {
        align(MemoryLayout<T>.size)
        pushRaw(value)
    }

    mutating func push(_ value: Float) { push(value.bitPattern) }

    /// Prepends a `uoffset_t` to `target`: the distance from the offset's own position forward to the target.
    mutating func pushReference(_ target: Ref) {
        align(4)
        // After pushing, the offset sits at Ref size + 4; the target lies `(size + 4) - target` bytes further on.
        let distance = size + 4 - target
        precondition(distance > 0 && distance <= Int(UInt32.max), "a flatbuffer reference must point forward")
        pushRaw(UInt32(distance))
    }

    /// A string: length, UTF-8 bytes, a terminating zero.
    mutating func string(_ text: String) -> Ref {
        let utf8 = Array(text.utf8)
        align(4, additional: utf8.count + 1)
        reversed.append(0)
        reversed.append(contentsOf: utf8.reversed())
        pushRaw(UInt32(utf8.count))
        return size
    }

    /// A vector of bytes whose first byte sits at a multiple of `alignment` (TFLite's `Buffer.data`
    /// is `force_align: 16`), given that the finished buffer is placed at such a multiple.
    mutating func bytes(_ data: [UInt8], alignment: Int = 1) -> Ref {
        align(4, additional: data.count)
        align(max(alignment, 1), additional: data.count)
        reversed.append(contentsOf: data.reversed())
        pushRaw(UInt32(data.count))
        return size
    }

    /// A vector of scalars.
    mutating func vector<T: FixedWidthInteger>(_ values: [T]) -> Ref {
        let width = MemoryLayout<T>.size
        align(4, additional: values.count * width)
        align(width, additional: values.count * width)
        for v in values.reversed() { pushRaw(v) }
        pushRaw(UInt32(values.count))
        return size
    }

    mutating func vector(_ values: [Float]) -> Ref { vector(values.map(\.bitPattern)) }

    /// A vector of references (tables, strings).
    mutating func vector(references: [Ref]) -> Ref {
        align(4, additional: references.count * 4)
        for r in references.reversed() { pushReference(r) }
        pushRaw(UInt32(references.count))
        return size
    }

    mutating func startTable() {
        precondition(fields.isEmpty, "tables are built one at a time")
        tableStart = size
    }

    mutating func add<T: FixedWidthInteger>(slot: Int, _ value: T) {
        push(value)
        fields.append((slot, size))
    }

    mutating func add(slot: Int, _ value: Float) { add(slot: slot, value.bitPattern) }

    mutating func add(slot: Int, reference: Ref) {
        pushReference(reference)
        fields.append((slot, size))
    }

    /// Ends the table: its `soffset_t` to the vtable, then the vtable right before it (each table
    /// gets its own vtable; sharing them only saves bytes).
    mutating func endTable() -> Ref {
        push(Int32(0))
        let table = size
        let slots = (fields.map(\.slot).max() ?? -1) + 1
        var entries = [UInt16](repeating: 0, count: slots)
        // A field's offset inside the table: from the table's start (its soffset) to the field's value.
        for f in fields { entries[f.slot] = UInt16(table - f.at) }
        fields.removeAll()
        for e in entries.reversed() { pushRaw(e) }
        pushRaw(UInt16(table - tableStart))
        pushRaw(UInt16(4 + 2 * slots))
        let vtable = size
        // soffset = table position − vtable position; the vtable precedes the table, so it is positive.
        let soffset = Int32(vtable - table)
        withUnsafeBytes(of: soffset.littleEndian) { raw in
            // Byte k of the soffset sits at buffer position (end − table + k) = reversed index table − 1 − k.
            for k in 0 ..< 4 { reversed[table - 1 - k] = raw[k] }
        }
        return table
    }

    /// The finished buffer: the root reference, the 4-byte file identifier, then everything
    /// prepended so far; padded so that its length is a multiple of `minimumAlignment` (and of `alignTo`).
    mutating func finish(root: Ref, identifier: String, alignTo: Int = 1) -> [UInt8] {
        let id = Array(identifier.utf8)
        precondition(id.count == 4, "a file identifier has 4 bytes")
        align(max(minimumAlignment, alignTo, 4), additional: 8)
        reversed.append(contentsOf: id.reversed())
        pushReference(root)
        return reversed.reversed()
    }
}

/// Reads the raw layout of a FlatBuffer table: where each field sits, so that a rewritten root
/// can refer to the original objects. Every read is bounds-checked.
struct RawFlatBuffer {
    let bytes: [UInt8]

    enum Failure: Error { case outOfBounds(Int) }

    func u16(_ at: Int) throws(Failure) -> Int {
        guard at >= 0, at + 2 <= bytes.count else { throw .outOfBounds(at) }
        return Int(bytes[at]) | Int(bytes[at + 1]) << 8
    }

    func u32(_ at: Int) throws(Failure) -> Int {
        guard at >= 0, at + 4 <= bytes.count else { throw .outOfBounds(at) }
        return (0 ..< 4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
    }

    func u64(_ at: Int) throws(Failure) -> UInt64 {
        guard at >= 0, at + 8 <= bytes.count else { throw .outOfBounds(at) }
        return (0 ..< 8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
    }

    /// The root table's position.
    func root() throws(Failure) -> Int { try u32(0) }

    /// The position of `slot`'s value in the table at `table`, or nil when the field is absent.
    func field(_ slot: Int, table: Int) throws(Failure) -> Int? {
        let soffset = Int(Int32(truncatingIfNeeded: try u32(table)))
        let vtable = table - soffset
        let vtableSize = try u16(vtable)
        guard 4 + 2 * slot + 2 <= vtableSize else { return nil }
        let offset = try u16(vtable + 4 + 2 * slot)
        return offset == 0 ? nil : table + offset
    }

    /// Where the reference field `slot` of the table at `table` points, or nil when absent.
    func target(_ slot: Int, table: Int) throws(Failure) -> Int? {
        guard let at = try field(slot, table: table) else { return nil }
        let target = at + (try u32(at))
        guard target < bytes.count else { throw .outOfBounds(target) }
        return target
    }

    /// The element positions of the vector of references at `vector`.
    func references(vector: Int) throws(Failure) -> [Int] {
        let count = try u32(vector)
        guard count <= (bytes.count - vector) / 4 else { throw .outOfBounds(vector) }
        return try (0 ..< count).map { i throws(Failure) in
            let at = vector + 4 + 4 * i
            let target = at + (try u32(at))
            guard target < bytes.count else { throw .outOfBounds(target) }
            return target
        }
    }

    /// The string at `at`.
    func string(_ at: Int) throws(Failure) -> String {
        let count = try u32(at)
        guard count <= bytes.count - at - 4 else { throw .outOfBounds(at) }
        return String(decoding: bytes[(at + 4) ..< (at + 4 + count)], as: UTF8.self)
    }
}
