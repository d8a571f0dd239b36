/// What a `.tflite` file contains and what of it this engine cannot run, read straight from the
/// schema — so it works for the models `Graph` refuses (complex64 tensors, unknown operators).
///
/// ```swift
/// let survey = try ModelSurvey(bytes: fileBytes)
/// for op in survey.operators where !op.isImplemented { print("cannot run", op.index, op.name) }
/// ```
///
/// `inspect` uses it to mark unsupported operators and tensors and still exit 0.
public struct ModelSurvey: Sendable {
    /// One tensor of the first subgraph.
    public struct Tensor: Sendable, Equatable {
        /// Position in the subgraph's tensor list.
        public let index: Int
        /// The tensor's name in the file.
        public let name: String
        /// The schema's type name (`FLOAT32`, `COMPLEX64`, `RESOURCE`, ...).
        public let typeName: String
        /// The shape the file declares.
        public let shape: [Int]
        /// Stored in the schema's sparse format (densified at load when the engine supports it).
        public let isSparse: Bool
        /// Whether the engine represents the type (`DataType`).
        public let isSupportedType: Bool
    }

    /// One operator of the first subgraph.
    public struct Operator: Sendable, Equatable {
        /// Position in the subgraph's operator list.
        public let index: Int
        /// The builtin's schema name, or the custom name.
        public let name: String
        /// Tensor indices; `-1` marks an omitted optional input.
        public let inputs: [Int]
        /// Tensor indices written by the operator.
        public let outputs: [Int]
        /// Whether the engine has a kernel for the operator (its types and options may still be refused at prepare).
        public let isImplemented: Bool
    }

    /// Every tensor of the first subgraph, by index.
    public let tensors: [Tensor]
    /// Every operator of the first subgraph, in execution order.
    public let operators: [Operator]
    /// The first subgraph's input and output tensor indices.
    public let inputs: [Int], outputs: [Int]

    /// The tensors whose type the engine cannot represent.
    public var unsupportedTensors: [Tensor] { tensors.filter { !$0.isSupportedType } }
    /// The operators the engine has no kernel for.
    public var unimplementedOperators: [Operator] { operators.filter { !$0.isImplemented } }
    /// The sparse tensors.
    public var sparseTensors: [Tensor] { tensors.filter(\.isSparse) }

    /// Reads the first subgraph of a `.tflite` flatbuffer.
    /// - Throws: `ModelError.malformed` if the flatbuffer itself cannot be read.
    public init(bytes: UnsafeRawBufferPointer) throws(ModelError) {
        let model = try SchemaModel(ByteReader(bytes))
        do {
            guard let main = try model.subgraphs.first else { throw ModelError.malformed("the model has no subgraph") }
            let codes = try model.operatorCodes
            inputs = try main.inputs
            outputs = try main.outputs
            tensors = try main.tensors.enumerated().map { index, t in
                let code = try t.typeCode
                return Tensor(index: index, name: try t.name, typeName: Self.typeName(code), shape: try t.shape,
                              isSparse: try t.hasSparsity, isSupportedType: DataType(schemaCode: code) != nil)
            }
            operators = try main.operators.enumerated().map { index, op in
                let codeIndex = try op.opcodeIndex
                guard codes.indices.contains(codeIndex) else {
                    return Operator(index: index, name: "opcode #\(codeIndex)", inputs: try op.inputs, outputs: try op.outputs, isImplemented: false)
                }
                let builtin = try codes[codeIndex].builtinCode
                let custom = builtin == .custom ? try codes[codeIndex].customCode : nil
                let node = Node(index: index, op: builtin, customName: custom, version: 1, inputs: [], outputs: [],
                                options: .none, customOptions: nil)
                return Operator(index: index, name: node.opName, inputs: try op.inputs, outputs: try op.outputs,
                                isImplemented: OpRegistry.standard.prepare(for: node) != nil)
            }
        } catch let error as ModelError {
            throw error
        } catch {
            throw .malformed("\(error)")
        }
    }

    /// The schema's `TensorType` names (schema.fbs), for codes `DataType` lacks too.
    static func typeName(_ code: Int8) -> String {
        let names = ["FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "STRING", "BOOL", "INT16", "COMPLEX64", "INT8",
                     "FLOAT64", "COMPLEX128", "UINT64", "RESOURCE", "VARIANT", "UINT32", "UINT16", "INT4"]
        return names.indices.contains(Int(code)) ? names[Int(code)] : "type code \(code)"
    }
}
