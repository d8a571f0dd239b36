/// A reader for FlexBuffers, the schema-less binary format TFLite uses for custom operator options.
///
/// A FlexBuffer is read from its end: the last byte is the byte width of the root slot, the byte
/// before it is the root's packed type (`type << 2 | log2(width of the data it points to)`), and
/// the root slot sits just before those two bytes. Scalars live inline in their slot; strings, keys,
/// vectors, maps, blobs and indirect scalars store in their slot an unsigned distance back to their
/// data. Every read is bounds-checked and every distance is checked to stay inside the buffer, so a
/// malformed blob throws instead of trapping. (An empty vector's distance may be 0, so a crafted
/// buffer can contain cycles: the reader is lazy and never follows references on its own.)
///
/// ```swift
/// guard let blob = node.customOptions else { return }
/// let options = try FlexBuffer.root(blob.bytes).map()
/// let maxDetections = try options.value(forKey: "max_detections")?.int() ?? 10
/// ```
///
/// Nothing is copied or decoded ahead of time: references are small views into the borrowed bytes,
/// which the caller keeps alive.
package enum FlexBuffer {
    /// The root value of the FlexBuffer `bytes`.
    /// - Throws: `FlexBufferError` if the buffer is too short or its trailer is invalid.
    package static func root(_ bytes: UnsafeRawBufferPointer) throws(FlexBufferError) -> FlexBufferReference {
        let count = bytes.count
        guard count >= 3 else {
            throw .malformed(offset: 0, reason: "a FlexBuffer has at least 3 bytes, this one has \(count)")
        }
        let width = Int(bytes[count - 1])
        guard [1, 2, 4, 8].contains(width), width + 2 <= count else {
            throw .malformed(offset: count - 1, reason: "root width \(width) is not 1, 2, 4 or 8 or does not fit")
        }
        return try FlexBufferReference(reader: ByteReader(bytes), position: count - 2 - width,
                                       parentWidth: width, packedType: bytes[count - 2])
    }
}

/// The type of a FlexBuffer value: the upper six bits of its packed type byte.
package enum FlexBufferType: UInt8, Sendable, CaseIterable {
    case null = 0, int = 1, uint = 2, float = 3
    case key = 4, string = 5, indirectInt = 6, indirectUInt = 7, indirectFloat = 8
    case map = 9, vector = 10
    case vectorInt = 11, vectorUInt = 12, vectorFloat = 13, vectorKey = 14, vectorStringDeprecated = 15
    case vectorInt2 = 16, vectorUInt2 = 17, vectorFloat2 = 18
    case vectorInt3 = 19, vectorUInt3 = 20, vectorFloat3 = 21
    case vectorInt4 = 22, vectorUInt4 = 23, vectorFloat4 = 24
    case blob = 25, bool = 26
    case vectorBool = 36

    /// Element type of a typed vector with a size prefix (`vectorInt` ... `vectorStringDeprecated`, `vectorBool`).
    var typedVectorElement: FlexBufferType? {
        switch self {
        case .vectorInt: return .int
        case .vectorUInt: return .uint
        case .vectorFloat: return .float
        case .vectorKey: return .key
        case .vectorStringDeprecated: return .string
        case .vectorBool: return .bool
        default: return nil
        }
    }

    /// Element type and length of a fixed-length typed vector (`vectorInt2` ... `vectorFloat4`).
    var fixedVectorElement: (type: FlexBufferType, count: Int)? {
        guard rawValue >= FlexBufferType.vectorInt2.rawValue, rawValue <= FlexBufferType.vectorFloat4.rawValue else { return nil }
        let k = rawValue - FlexBufferType.vectorInt2.rawValue
        let element: FlexBufferType = [.int, .uint, .float][Int(k % 3)]
        return (element, Int(k / 3) + 2)
    }
}

/// One value inside a FlexBuffer: where its slot is, how wide the slot is, and its type.
///
/// Accessors check the type and throw `FlexBufferError.typeMismatch` for a value of another kind;
/// numeric accessors convert between integer and float kinds where no information is lost
/// (see each accessor).
package struct FlexBufferReference: Sendable {
    let reader: ByteReader
    /// Position of the value's slot in its parent: the inline scalar, or the distance to the data.
    let position: Int
    /// Width in bytes of that slot.
    let parentWidth: Int
    /// Width in bytes of the data the slot points to (indirect scalars, vector elements, size fields).
    let byteWidth: Int
    package let type: FlexBufferType

    init(reader: ByteReader, position: Int, parentWidth: Int, packedType: UInt8) throws(FlexBufferError) {
        guard let type = FlexBufferType(rawValue: packedType >> 2) else {
            throw .malformed(offset: position, reason: "unknown type code \(packedType >> 2)")
        }
        self.init(reader: reader, position: position, parentWidth: parentWidth, byteWidth: 1 << Int(packedType & 3), type: type)
    }

    init(reader: ByteReader, position: Int, parentWidth: Int, byteWidth: Int, type: FlexBufferType) {
        self.reader = reader
        self.position = position
        self.parentWidth = parentWidth
        self.byteWidth = byteWidth
        self.type = type
    }

    package var isNull: Bool { type == .null }

    /// The value as a signed integer: `int` and `indirectInt` of any width, and `uint` /
    /// `indirectUInt` values up to `Int64.max`.
    package func int() throws(FlexBufferError) -> Int64 {
        switch type {
        case .int: return try reader.flexInt(at: position, width: parentWidth)
        case .indirectInt: return try reader.flexInt(at: try target(), width: byteWidth)
        case .uint, .indirectUInt:
            let value = try uint()
            guard value <= UInt64(Int64.max) else { throw .typeMismatch(expected: "an integer up to Int64.max", found: type) }
            return Int64(value)
        default: throw .typeMismatch(expected: "int", found: type)
        }
    }

    /// The value as an unsigned integer: `uint` and `indirectUInt` of any width, and non-negative
    /// `int` / `indirectInt` values.
    package func uint() throws(FlexBufferError) -> UInt64 {
        switch type {
        case .uint: return try reader.flexUInt(at: position, width: parentWidth)
        case .indirectUInt: return try reader.flexUInt(at: try target(), width: byteWidth)
        case .int, .indirectInt:
            let value = try int()
            guard value >= 0 else { throw .typeMismatch(expected: "a non-negative integer", found: type) }
            return UInt64(value)
        default: throw .typeMismatch(expected: "uint", found: type)
        }
    }

    /// The value as a `Double`: `float` and `indirectFloat` (32 or 64 bits), or any integer kind
    /// converted to the nearest `Double`.
    package func double() throws(FlexBufferError) -> Double {
        switch type {
        case .float: return try reader.flexFloat(at: position, width: parentWidth)
        case .indirectFloat: return try reader.flexFloat(at: try target(), width: byteWidth)
        case .int, .indirectInt: return Double(try int())
        case .uint, .indirectUInt: return Double(try uint())
        default: throw .typeMismatch(expected: "float", found: type)
        }
    }

    /// The value as a `Bool`: a `bool`, or any integer kind (non-zero is true).
    package func bool() throws(FlexBufferError) -> Bool {
        switch type {
        case .bool: return try reader.flexUInt(at: position, width: parentWidth) != 0
        case .int, .indirectInt: return try int() != 0
        case .uint, .indirectUInt: return try uint() != 0
        default: throw .typeMismatch(expected: "bool", found: type)
        }
    }

    /// The text of a `string` (size-prefixed) or a `key` (NUL-terminated).
    package func string() throws(FlexBufferError) -> String {
        let start: Int, bytes: UnsafeRawBufferPointer
        switch type {
        case .string:
            start = try target()
            bytes = try reader.flexSlice(start, try sizePrefix(at: start))
        case .key:
            start = try target()
            bytes = try keyBytes()
        default: throw .typeMismatch(expected: "string", found: type)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .invalidString(offset: start) }
        return text
    }

    /// The bytes of a `blob`.
    package func blob() throws(FlexBufferError) -> UnsafeRawBufferPointer {
        guard type == .blob else { throw .typeMismatch(expected: "blob", found: type) }
        let start = try target()
        return try reader.flexSlice(start, try sizePrefix(at: start))
    }

    /// The elements of an untyped `vector`, a typed vector (`vectorInt`, `vectorKey`, `vectorBool`, ...)
    /// or a fixed-length typed vector (`vectorFloat3`, ...).
    package func vector() throws(FlexBufferError) -> FlexBufferVector {
        if type == .vector {
            let start = try target()
            return try FlexBufferVector(reader: reader, start: start, count: try sizePrefix(at: start), width: byteWidth, elementType: nil)
        }
        if let element = type.typedVectorElement {
            let start = try target()
            return try FlexBufferVector(reader: reader, start: start, count: try sizePrefix(at: start), width: byteWidth, elementType: element)
        }
        if let (element, count) = type.fixedVectorElement {
            return try FlexBufferVector(reader: reader, start: try target(), count: count, width: byteWidth, elementType: element)
        }
        throw .typeMismatch(expected: "vector", found: type)
    }

    /// The keys and values of a `map`.
    package func map() throws(FlexBufferError) -> FlexBufferMap {
        guard type == .map else { throw .typeMismatch(expected: "map", found: type) }
        // A map's values are an untyped vector preceded by three fields of `byteWidth` bytes:
        // the distance back to the keys vector, that vector's element width, and the count.
        let start = try target()
        let count = try sizePrefix(at: start)
        let values = try FlexBufferVector(reader: reader, start: start, count: count, width: byteWidth, elementType: nil)
        let keysSlot = start - 3 * byteWidth
        let keysWidth = try reader.flexUInt(at: start - 2 * byteWidth, width: byteWidth)
        guard [1, 2, 4, 8].contains(keysWidth) else {
            throw .malformed(offset: start - 2 * byteWidth, reason: "map key width \(keysWidth) is not 1, 2, 4 or 8")
        }
        let keysStart = try FlexBufferReference(reader: reader, position: keysSlot, parentWidth: byteWidth,
                                                byteWidth: Int(keysWidth), type: .vectorKey).target()
        let keysCount = try sizePrefix(at: keysStart, width: Int(keysWidth))
        guard keysCount == count else {
            throw .malformed(offset: keysStart, reason: "map has \(count) values but \(keysCount) keys")
        }
        let keys = try FlexBufferVector(reader: reader, start: keysStart, count: count, width: Int(keysWidth), elementType: .key)
        return FlexBufferMap(keys: keys, values: values)
    }

    // MARK: - Layout

    /// Position of the data that an offset-typed value's slot points back to.
    func target() throws(FlexBufferError) -> Int {
        let distance = try reader.flexUInt(at: position, width: parentWidth)
        guard distance <= UInt64(position) else {
            throw .malformed(offset: position, reason: "offset \(distance) points before the start of the buffer")
        }
        return position - Int(distance)
    }

    /// The element count or byte length stored just before `start` (in `width` bytes, by default
    /// this value's data width), checked to be no larger than the buffer.
    func sizePrefix(at start: Int, width: Int? = nil) throws(FlexBufferError) -> Int {
        let width = width ?? byteWidth
        let size = try reader.flexUInt(at: start - width, width: width)
        guard size <= UInt64(reader.count) else {
            throw .malformed(offset: start - width, reason: "size \(size) is larger than the buffer")
        }
        return Int(size)
    }

    /// The bytes of a key, without its NUL terminator.
    func keyBytes() throws(FlexBufferError) -> UnsafeRawBufferPointer {
        let start = try target()
        try reader.flexCheck(start, 0)
        guard let end = reader.bytes[start...].firstIndex(of: 0) else {
            throw .malformed(offset: start, reason: "key is not NUL-terminated")
        }
        return try reader.flexSlice(start, end - start)
    }
}

/// The elements of a FlexBuffer vector.
package struct FlexBufferVector: Sendable {
    let reader: ByteReader
    /// Position of the first element slot.
    let start: Int
    package let count: Int
    /// Width in bytes of every element slot.
    let width: Int
    /// The type shared by all elements of a typed vector; nil for an untyped vector, whose element
    /// types follow the elements as one packed type byte each.
    package let elementType: FlexBufferType?

    init(reader: ByteReader, start: Int, count: Int, width: Int, elementType: FlexBufferType?) throws(FlexBufferError) {
        self.reader = reader
        self.start = start
        self.count = count
        self.width = width
        self.elementType = elementType
        // `count` is at most the buffer size (checked by the caller), so these products cannot overflow.
        try reader.flexCheck(start, count * width + (elementType == nil ? count : 0))
    }

    /// The element at `index`.
    package func element(at index: Int) throws(FlexBufferError) -> FlexBufferReference {
        guard index >= 0, index < count else {
            throw .outOfBounds(offset: start + index * width, length: width, bufferSize: reader.count)
        }
        let slot = start + index * width
        if let elementType {
            // Typed vector elements point to data of width 1 (strings and keys in typed vectors).
            return FlexBufferReference(reader: reader, position: slot, parentWidth: width, byteWidth: 1, type: elementType)
        }
        let packedType = try reader.flexUInt(at: start + count * width + index, width: 1)
        return try FlexBufferReference(reader: reader, position: slot, parentWidth: width, packedType: UInt8(packedType))
    }
}

/// The entries of a FlexBuffer map, whose keys are stored sorted (byte-wise, like `strcmp`).
package struct FlexBufferMap: Sendable {
    /// A typed vector of keys.
    package let keys: FlexBufferVector
    /// The values, in key order.
    package let values: FlexBufferVector

    package var count: Int { values.count }

    /// The key at `index`.
    package func key(at index: Int) throws(FlexBufferError) -> String {
        try keys.element(at: index).string()
    }

    /// The value stored under `key`, or nil if the map has no such key.
    /// - Complexity: O(log n) key comparisons (binary search).
    package func value(forKey key: String) throws(FlexBufferError) -> FlexBufferReference? {
        let query = Array(key.utf8)
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            let candidate = try keys.element(at: mid).keyBytes()
            if candidate.lexicographicallyPrecedes(query) {
                low = mid + 1
            } else if query.lexicographicallyPrecedes(candidate) {
                high = mid
            } else {
                return try values.element(at: mid)
            }
        }
        return nil
    }
}

extension ByteReader {
    /// Maps a bounds failure of the underlying reader to the FlexBuffer error.
    fileprivate static func flex(_ error: FlatBufferError) -> FlexBufferError {
        if case let .outOfBounds(offset, length, size) = error { return .outOfBounds(offset: offset, length: length, bufferSize: size) }
        return .malformed(offset: 0, reason: error.description)
    }

    fileprivate func flexCheck(_ offset: Int, _ length: Int) throws(FlexBufferError) {
        do { try check(offset, length) } catch { throw Self.flex(error) }
    }

    fileprivate func flexSlice(_ offset: Int, _ length: Int) throws(FlexBufferError) -> UnsafeRawBufferPointer {
        do { return try slice(offset, length) } catch { throw Self.flex(error) }
    }

    /// An unsigned little-endian integer of `width` (1, 2, 4 or 8) bytes.
    fileprivate func flexUInt(at offset: Int, width: Int) throws(FlexBufferError) -> UInt64 {
        guard [1, 2, 4, 8].contains(width) else {
            throw .malformed(offset: offset, reason: "width \(width) is not 1, 2, 4 or 8")
        }
        try flexCheck(offset, width)
        // Concrete loads: this build's optimiser leaves calls to the generic `load<T>` unspecialised
        // here (runtime metadata lookups on every read; a third of the FlexBuffers fuzzer's time).
        switch width {
        case 1: return UInt64(bytes[offset])
        case 2: return UInt64(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
        case 4: return UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        default: return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
    }

    /// A signed little-endian integer of `width` bytes, sign-extended.
    fileprivate func flexInt(at offset: Int, width: Int) throws(FlexBufferError) -> Int64 {
        let raw = try flexUInt(at: offset, width: width)
        switch width {
        case 1: return Int64(Int8(truncatingIfNeeded: raw))
        case 2: return Int64(Int16(truncatingIfNeeded: raw))
        case 4: return Int64(Int32(truncatingIfNeeded: raw))
        default: return Int64(bitPattern: raw)
        }
    }

    /// An IEEE float of 4 or 8 bytes, widened to `Double`.
    fileprivate func flexFloat(at offset: Int, width: Int) throws(FlexBufferError) -> Double {
        switch width {
        case 4: return Double(Float(bitPattern: UInt32(try flexUInt(at: offset, width: 4))))
        case 8: return Double(bitPattern: try flexUInt(at: offset, width: 8))
        default: throw .malformed(offset: offset, reason: "a float of \(width) bytes (only 4 and 8 are supported)")
        }
    }
}
