/// Typed, zero-copy views of the TFLite schema (`schema.fbs`, file identifier `TFL3`).
///
/// Each view is a thin wrapper of a flatbuffer table whose accessors read fields by slot.
/// Slots follow the declaration order of the schema; a union occupies two slots (tag, value).
struct SchemaModel {
    let table: Table

    init(_ reader: ByteReader) throws(ModelError) {
        guard reader.count >= 8 else { throw .malformed("file is \(reader.count) bytes, too short for a flatbuffer") }
        let identifier = (try? reader.slice(4, 4)).map { Array($0) } ?? []
        guard identifier == Array("TFL3".utf8) else {
            let shown = String(decoding: identifier.map { (32 ... 126).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
            throw .malformed("file identifier is '\(shown)', expected 'TFL3' (not a TFLite model?)")
        }
        do { table = try Table.root(of: reader) } catch { throw .malformed("root table", error) }
    }

    var version: Int { get throws(FlatBufferError) { Int(try table.scalar(0, default: UInt32(0))) } }
    var operatorCodes: [SchemaOperatorCode] { get throws(FlatBufferError) { try (table.vector(1)?.tables() ?? []).map(SchemaOperatorCode.init) } }
    var subgraphs: [SchemaSubGraph] { get throws(FlatBufferError) { try (table.vector(2)?.tables() ?? []).map(SchemaSubGraph.init) } }
    var description: String? { get throws(FlatBufferError) { try table.string(3) } }
    var buffers: Vector? { get throws(FlatBufferError) { try table.vector(4) } }
    var metadata: [SchemaMetadata] { get throws(FlatBufferError) { try (table.vector(6)?.tables() ?? []).map(SchemaMetadata.init) } }
}

struct SchemaOperatorCode {
    let table: Table
    /// The operator, taking the larger of `deprecated_builtin_code` and `builtin_code`: old files set
    /// only the former, new files set the latter (and clamp the former to 127 for large codes).
    var builtinCode: BuiltinOperator {
        get throws(FlatBufferError) {
            let deprecated = Int32(try table.scalar(0, default: Int8(0)))
            let extended = try table.scalar(3, default: Int32(0))
            return BuiltinOperator(rawValue: max(deprecated, extended))
        }
    }
    var customCode: String? { get throws(FlatBufferError) { try table.string(1) } }
    var version: Int { get throws(FlatBufferError) { Int(try table.scalar(2, default: Int32(1))) } }
}

struct SchemaSubGraph {
    let table: Table
    var tensors: [SchemaTensor] { get throws(FlatBufferError) { try (table.vector(0)?.tables() ?? []).map(SchemaTensor.init) } }
    var inputs: [Int] { get throws(FlatBufferError) { try table.vector(1)?.integers(Int32.self) ?? [] } }
    var outputs: [Int] { get throws(FlatBufferError) { try table.vector(2)?.integers(Int32.self) ?? [] } }
    var operators: [SchemaOperator] { get throws(FlatBufferError) { try (table.vector(3)?.tables() ?? []).map(SchemaOperator.init) } }
    var name: String? { get throws(FlatBufferError) { try table.string(4) } }
}

struct SchemaTensor {
    let table: Table
    var shape: [Int] { get throws(FlatBufferError) { try table.vector(0)?.integers(Int32.self) ?? [] } }
    var typeCode: Int8 { get throws(FlatBufferError) { try table.scalar(1, default: Int8(0)) } }
    var buffer: Int { get throws(FlatBufferError) { Int(try table.scalar(2, default: UInt32(0))) } }
    var name: String { get throws(FlatBufferError) { try table.string(3) ?? "" } }
    var quantization: SchemaQuantization? { get throws(FlatBufferError) { try table.table(4).map(SchemaQuantization.init) } }
    var isVariable: Bool { get throws(FlatBufferError) { try table.bool(5) } }
    var hasSparsity: Bool { get throws(FlatBufferError) { try table.fieldPosition(6) != nil } }
    var sparsity: Table? { get throws(FlatBufferError) { try table.table(6) } }
    var shapeSignature: [Int]? { get throws(FlatBufferError) { try table.vector(7)?.integers(Int32.self) } }
}

struct SchemaQuantization {
    let table: Table
    var scales: [Float] { get throws(FlatBufferError) { try table.vector(2)?.floats() ?? [] } }
    var zeroPoints: [Int] { get throws(FlatBufferError) { try table.vector(3)?.integers(Int64.self) ?? [] } }
    var quantizedDimension: Int { get throws(FlatBufferError) { Int(try table.scalar(6, default: Int32(0))) } }
}

struct SchemaOperator {
    let table: Table
    var opcodeIndex: Int { get throws(FlatBufferError) { Int(try table.scalar(0, default: UInt32(0))) } }
    var inputs: [Int] { get throws(FlatBufferError) { try table.vector(1)?.integers(Int32.self) ?? [] } }
    var outputs: [Int] { get throws(FlatBufferError) { try table.vector(2)?.integers(Int32.self) ?? [] } }
    var builtinOptions: Table? { get throws(FlatBufferError) { try table.table(4) } }
    var customOptions: UnsafeRawBufferPointer? { get throws(FlatBufferError) { try table.vector(5)?.bytes() } }
}

struct SchemaBuffer {
    let table: Table
    var data: UnsafeRawBufferPointer? { get throws(FlatBufferError) { try table.vector(0)?.bytes() } }
    /// Position of data stored after the flatbuffer (large models); meaningful only when > 1.
    var offset: UInt64 { get throws(FlatBufferError) { try table.scalar(1, default: UInt64(0)) } }
    var size: UInt64 { get throws(FlatBufferError) { try table.scalar(2, default: UInt64(0)) } }
}

struct SchemaMetadata {
    let table: Table
    var name: String { get throws(FlatBufferError) { try table.string(0) ?? "" } }
    var buffer: Int { get throws(FlatBufferError) { Int(try table.scalar(1, default: UInt32(0))) } }
}
