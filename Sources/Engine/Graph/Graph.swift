import Foundation

/// A validated TFLite model: the main subgraph's tensors and operators in engine types.
///
/// Loading checks everything that can be checked without knowing the operators' semantics: every
/// offset against the file, tensor types and shapes, constant sizes, tensor indices, and the order
/// of the operators (each input produced before it is read). Operator-specific rules are checked
/// when a `Plan` prepares the graph.
///
/// ```swift
/// let graph = try Graph(contentsOf: "mobilenet.tflite")
/// print(graph.nodes.map(\.opName))
/// ```
public final class Graph: Sendable {
    /// The mapped file; constant tensors point into it.
    public let file: MappedFile
    /// The schema version the file declares (3 for every current converter).
    public let version: Int
    /// The model's description string, when the file has one.
    public let description: String?
    /// The main subgraph's tensors, indexed as the file indexes them (shapes as declared; `Plan.tensors` has the prepared ones).
    public let tensors: [TensorDescriptor]
    /// The main subgraph's operators, in execution order (`nodes[i].index == i`).
    public let nodes: [Node]
    /// Tensor indices of the subgraph's inputs, in order.
    public let inputs: [Int]
    /// Tensor indices of the subgraph's outputs, in order.
    public let outputs: [Int]
    /// Named metadata buffers (e.g. `TFLITE_METADATA`, `min_runtime_version`).
    public let metadata: [(name: String, data: ConstantData)]
    /// How many subgraphs the file has; only the first is run.
    public let subgraphCount: Int
    /// Aligned copies of constants that the file stores misaligned for their element type (the
    /// TFLite converter aligns buffers to 4 bytes only, so 8-byte elements may need one), made
    /// once at load so kernels and sessions can read every constant in place.
    private let alignedCopies = AlignedCopies()

    /// Maps and validates the model at `path`.
    /// - Throws: `ModelError` naming the problem.
    public convenience init(contentsOf path: String) throws(ModelError) {
        try self.init(file: MappedFile(path: path))
    }

    /// Validates a model held in memory.
    public convenience init(data: Data) throws(ModelError) {
        try self.init(file: MappedFile(data: data))
    }

    /// Validates the model held by `file` (mapped or copied bytes).
    public init(file: MappedFile) throws(ModelError) {
        self.file = file
        let reader = ByteReader(file.bytes)
        let model = try SchemaModel(reader)
        do {
            version = try model.version
            description = try model.description
            let subgraphs = try model.subgraphs
            guard let main = subgraphs.first else { throw ModelError.malformed("the model has no subgraph") }
            subgraphCount = subgraphs.count
            let buffers = try Self.readBuffers(model, reader, copies: alignedCopies)
            let schemaTensors = try main.tensors
            var tensors = [TensorDescriptor]()
            tensors.reserveCapacity(schemaTensors.count)
            var densifyBudget = DensifyBudget(fileBytes: file.bytes.count)
            for (index, t) in schemaTensors.enumerated() {
                tensors.append(try Self.readTensor(t, index: index, buffers: buffers, budget: &densifyBudget, copies: alignedCopies))
            }
            self.tensors = tensors
            nodes = try Self.readNodes(main, codes: model.operatorCodes, tensorCount: tensors.count)
            inputs = try main.inputs
            outputs = try main.outputs
            metadata = try model.metadata.compactMap { entry in
                let b = try entry.buffer
                guard buffers.indices.contains(b), let data = buffers[b] else {
                    throw ModelError.malformed("metadata '\(try entry.name)' names buffer \(b) of \(buffers.count)")
                }
                return (try entry.name, data)
            }
        } catch let error as ModelError {
            throw error
        } catch let error as FlatBufferError {
            throw .malformed("\(error)")
        } catch {
            throw .malformed("\(error)")
        }
        try validateGraph()
    }

    /// A valid address for zero-byte constants (allocated once). Only constants point here, and
    /// `validateGraph` guarantees no operator writes a constant.
    nonisolated(unsafe) private static let emptyConstant = UnsafeRawPointer(UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16))

    /// Every buffer's bytes, inside the flatbuffer or (for large models) at `offset` in the file.
    private static func readBuffers(_ model: SchemaModel, _ reader: ByteReader, copies: AlignedCopies) throws -> [ConstantData?] {
        guard let vector = try model.buffers else { return [] }
        return try vector.tables().enumerated().map { i, table in
            let buffer = SchemaBuffer(table: table)
            let offset = try buffer.offset
            if offset > 1 {
                let size = try buffer.size
                guard offset <= UInt64(reader.count), size <= UInt64(reader.count) - offset else {
                    throw ModelError.malformed("buffer \(i) at offset \(offset) size \(size) lies outside the \(reader.count)-byte file")
                }
                return ConstantData(bytes: try reader.slice(Int(offset), Int(size)))
            }
            return try buffer.data.map(ConstantData.init(bytes:))
        }
    }

    private static func readTensor(_ t: SchemaTensor, index: Int, buffers: [ConstantData?], budget: inout DensifyBudget,
                                   copies: AlignedCopies) throws -> TensorDescriptor {
        let name = try t.name
        func fail(_ reason: String) -> ModelError { .invalidTensor(index: index, name: name, reason: reason) }
        let code = try t.typeCode
        guard let type = DataType(schemaCode: code) else { throw fail("unsupported tensor type code \(code)") }
        let shape = try t.shape
        guard let bytes = checkedByteCount(shape, elementSize: type.byteSize ?? 1) else {
            throw fail("shape \(shape) is negative or too large: its dimensions (a 0 counted as 1) times \(type.byteSize ?? 1) bytes exceed the limit of \(maxTensorBytes) bytes")
        }
        var constant: ConstantData?
        let b = try t.buffer
        let isVariable = try t.isVariable
        if b != 0 {
            guard buffers.indices.contains(b) else { throw fail("buffer index \(b) out of range (\(buffers.count) buffers)") }
            if let sparsity = try t.sparsity {
                // Densified once here (Sparsity.swift); kernels only ever see dense constants.
                constant = try densifiedConstant(t, sparsity: sparsity, index: index, name: name, type: type, shape: shape,
                                                 data: buffers[b], budget: &budget, copies: copies)
            } else if let data = buffers[b], data.bytes.count > 0 {
                // TFLite refuses these too ("a variable tensor with buffer"): a variable is state
                // that operators write, so it lives in the arena, never in the file.
                guard !isVariable else { throw fail("variable tensor with constant data (\(data.bytes.count) bytes) is not supported") }
                guard type == .string || data.bytes.count == bytes else {
                    throw fail("constant holds \(data.bytes.count) bytes, shape \(shape) of \(type) needs \(bytes)")
                }
                constant = copies.aligned(data.bytes, to: type.byteSize ?? 1)
            } else if bytes == 0 && !isVariable {
                // A constant with no elements (e.g. an empty axis list) has an empty buffer.
                constant = ConstantData(bytes: UnsafeRawBufferPointer(start: Self.emptyConstant, count: 0))
            }
        }
        var quantization: QuantizationParameters?
        if let q = try t.quantization {
            let scales = try q.scales, zeroPoints = try q.zeroPoints, dimension = try q.quantizedDimension
            if !scales.isEmpty {
                guard zeroPoints.count == scales.count || zeroPoints.isEmpty else {
                    throw fail("\(scales.count) quantization scales but \(zeroPoints.count) zero points")
                }
                if scales.count > 1 {
                    guard shape.indices.contains(dimension), shape[dimension] == scales.count else {
                        throw fail("\(scales.count) per-channel scales do not match dimension \(dimension) of shape \(shape)")
                    }
                }
                guard scales.allSatisfy({ $0.isFinite && $0 >= 0 }) else { throw fail("quantization scale not finite and non-negative") }
                quantization = QuantizationParameters(
                    scales: scales, zeroPoints: zeroPoints.isEmpty ? Array(repeating: 0, count: scales.count) : zeroPoints,
                    quantizedDimension: dimension)
            }
        }
        return TensorDescriptor(index: index, name: name, dataType: type, shape: shape,
                                shapeSignature: try t.shapeSignature, quantization: quantization,
                                isVariable: isVariable, constantData: constant)
    }

    private static func readNodes(_ subgraph: SchemaSubGraph, codes: [SchemaOperatorCode], tensorCount: Int) throws -> [Node] {
        try subgraph.operators.enumerated().map { index, op in
            let codeIndex = try op.opcodeIndex
            guard codes.indices.contains(codeIndex) else {
                throw ModelError.invalidGraph("operator \(index) uses opcode index \(codeIndex), the model has \(codes.count)")
            }
            let code = codes[codeIndex]
            let builtin = try code.builtinCode
            let customName = builtin == .custom ? (try code.customCode ?? "") : nil
            let inputs = try op.inputs, outputs = try op.outputs
            let label = customName ?? builtin.name
            for t in inputs where t != -1 && !(0 ..< tensorCount).contains(t) {
                throw ModelError.invalidOperator(op: label, index: index, reason: "input tensor index \(t) out of range (\(tensorCount) tensors)")
            }
            for t in outputs where !(0 ..< tensorCount).contains(t) {
                throw ModelError.invalidOperator(op: label, index: index, reason: "output tensor index \(t) out of range (\(tensorCount) tensors)")
            }
            let options: OperatorOptions
            do { options = try BuiltinOptionsReader.read(builtin, op.builtinOptions) } catch let error as ModelError {
                throw ModelError.invalidOperator(op: label, index: index, reason: "\(error)")
            }
            return Node(index: index, op: builtin, customName: customName, version: try code.version,
                        inputs: inputs, outputs: outputs, options: options,
                        customOptions: try op.customOptions.map(ConstantData.init))
        }
    }

    /// Checks indices and that operators are in a valid execution order: every tensor an operator
    /// reads is a graph input, a constant, or produced by an earlier operator; every tensor is
    /// produced at most once; every graph output is produced.
    private func validateGraph() throws(ModelError) {
        for t in inputs + outputs where !tensors.indices.contains(t) {
            throw .invalidGraph("graph input/output tensor index \(t) out of range (\(tensors.count) tensors)")
        }
        var available = [Bool](repeating: false, count: tensors.count)
        for t in inputs { available[t] = true }
        for t in tensors where t.isConstant || t.isVariable { available[t.index] = true }
        for node in nodes {
            for t in node.inputs where t >= 0 && !available[t] {
                let producer = nodes.firstIndex { $0.index > node.index && $0.outputs.contains(t) }
                let why = producer.map { "it is produced later by operator \($0) (cycle or out-of-order operators)" }
                    ?? "no operator produces it and it is not a graph input or constant"
                throw .invalidGraph("operator \(node.index) (\(node.opName)) reads tensor \(t) '\(tensors[t].name)' but \(why)")
            }
            for t in node.outputs {
                guard !tensors[t].isConstant else {
                    throw .invalidGraph("operator \(node.index) (\(node.opName)) writes tensor \(t) '\(tensors[t].name)', which is a constant")
                }
                guard !available[t] || tensors[t].isVariable else {
                    throw .invalidGraph("operator \(node.index) (\(node.opName)) writes tensor \(t) '\(tensors[t].name)', which is already a graph input, constant or another operator's output")
                }
                available[t] = true
            }
        }
        for t in outputs where !available[t] {
            throw .invalidGraph("graph output tensor \(t) '\(tensors[t].name)' is never produced")
        }
    }
}

/// Owns the aligned copies of misaligned constant buffers for the lifetime of a `Graph`.
final class AlignedCopies: @unchecked Sendable {
    private var copies: [UnsafeMutableRawPointer] = []
    /// The copy made of each misaligned buffer, by its address in the file (tensors may share one).
    private var copyOf: [UnsafeRawPointer: UnsafeRawPointer] = [:]

    /// `bytes` itself when its address is a multiple of `alignment` (a power of two, at most 16),
    /// else a 16-byte-aligned copy owned by this object. Only called while the graph is being
    /// loaded, from one thread.
    func aligned(_ bytes: UnsafeRawBufferPointer, to alignment: Int) -> ConstantData {
        guard let base = bytes.baseAddress, Int(bitPattern: base) & (alignment - 1) != 0 else { return ConstantData(bytes: bytes) }
        if let copy = copyOf[base] { return ConstantData(bytes: UnsafeRawBufferPointer(start: copy, count: bytes.count)) }
        let copy = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 16)
        copy.copyMemory(from: base, byteCount: bytes.count)
        copies.append(copy)
        copyOf[base] = UnsafeRawPointer(copy)
        return ConstantData(bytes: UnsafeRawBufferPointer(start: copy, count: bytes.count))
    }

    /// Zeroed 16-byte-aligned memory owned by this object (densified sparse constants).
    func allocate(byteCount: Int) -> UnsafeMutableRawBufferPointer {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: max(byteCount, 1), alignment: 16)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: max(byteCount, 1))
        copies.append(memory)
        return UnsafeMutableRawBufferPointer(start: memory, count: byteCount)
    }

    deinit { copies.forEach { $0.deallocate() } }
}
