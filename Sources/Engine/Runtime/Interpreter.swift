import Foundation

/// Runs a TFLite model; shaped like TensorFlowLiteSwift's `Interpreter` so its users feel at home.
///
/// ```swift
/// let interpreter = try Interpreter(modelPath: "mobilenet.tflite")
/// try interpreter.allocateTensors()
/// try interpreter.copy(imageBytes, toInputAt: 0)
/// try interpreter.invoke()
/// let scores = try interpreter.output(at: 0).data
/// ```
///
/// An `Interpreter` is one `Plan` plus one `Session`; use it from one thread at a time. For several
/// threads, share the `plan` and give each thread its own `Session`.
public final class Interpreter {
    /// Interpreter options.
    public struct Options: Sendable {
        /// Threads that run each heavy operator, `1...Session.maxThreadCount` (nil means 1). The
        /// outputs are byte-identical for every count; the workers are created once, with the session.
        public var threadCount: Int?
        /// Keep every intermediate tensor readable after `invoke` (no memory reuse).
        public var preserveAllTensors = false
        /// The most memory and work the model may ask for (see `Limits`).
        public var limits = Limits.default
        /// Options with `threadCount` (nil: one thread) and the defaults for the rest.
        public init(threadCount: Int? = nil) { self.threadCount = threadCount }
    }

    /// The options the interpreter was made with.
    public let options: Options
    /// The loaded model.
    public let graph: Graph
    private var session: Session?

    /// Loads (memory-maps) and validates the model, and prepares every operator.
    /// - Throws: `ModelError` if the file is unreadable or malformed, or uses an unsupported operator;
    ///   `ModelError.invalidArgument` for a thread count outside `1...Session.maxThreadCount`.
    public init(modelPath: String, options: Options? = nil) throws(ModelError) {
        self.options = options ?? Options()
        try Session.validate(threadCount: self.options.threadCount ?? 1)
        graph = try Graph(contentsOf: modelPath)
        plan = try Plan(graph: graph, preserveAllTensors: self.options.preserveAllTensors, limits: self.options.limits)
    }

    /// The prepared plan, shareable across threads.
    public let plan: Plan

    /// The number of the model's inputs (`input(at:)` takes `0 ..< inputTensorCount`).
    public var inputTensorCount: Int { graph.inputs.count }
    /// The number of the model's outputs (`output(at:)` takes `0 ..< outputTensorCount`).
    public var outputTensorCount: Int { graph.outputs.count }

    /// Allocates the activation arena. Called implicitly by the first `copy` or `invoke`.
    public func allocateTensors() throws(ModelError) {
        if session == nil { session = try Session(plan: plan, threadCount: options.threadCount ?? 1) }
    }

    /// Runs the model on the current inputs.
    /// - Parameter stopAfter: run only operators `0...stopAfter` (for bisecting a mismatch).
    public func invoke(stopAfter: Int? = nil) throws(ModelError) {
        try allocateTensors()
        session?.invoke(stopAfter: stopAfter)
    }

    /// Runs the model once, timing each operator (see `Session.invokeProfiled`).
    public func invokeProfiled() throws(ModelError) -> [(node: Node, nanoseconds: UInt64, busyNanoseconds: UInt64)] {
        try allocateTensors()
        return session!.invokeProfiled()
    }

    /// Copies `data` into input `index`; its byte count must match the tensor.
    @discardableResult
    public func copy(_ data: Data, toInputAt index: Int) throws(ModelError) -> Tensor {
        guard graph.inputs.indices.contains(index) else {
            throw .invalidArgument("input index \(index) out of range (the model has \(graph.inputs.count) inputs)")
        }
        try allocateTensors()
        let tensorIndex = graph.inputs[index]
        try session!.copy(data, toTensor: tensorIndex)
        return try tensor(tensorIndex)
    }

    /// A snapshot of input `index` (in the subgraph's input order).
    /// - Throws: `ModelError.invalidArgument` for an index out of range.
    public func input(at index: Int) throws(ModelError) -> Tensor {
        guard graph.inputs.indices.contains(index) else {
            throw .invalidArgument("input index \(index) out of range (the model has \(graph.inputs.count) inputs)")
        }
        return try tensor(graph.inputs[index])
    }

    /// A snapshot of output `index` (in the subgraph's output order), valid after `invoke`.
    /// - Throws: `ModelError.invalidArgument` for an index out of range.
    public func output(at index: Int) throws(ModelError) -> Tensor {
        guard graph.outputs.indices.contains(index) else {
            throw .invalidArgument("output index \(index) out of range (the model has \(graph.outputs.count) outputs)")
        }
        return try tensor(graph.outputs[index])
    }

    /// Any tensor of the graph by its index (intermediates are meaningful after `invoke` only with
    /// `Options.preserveAllTensors`).
    /// - Throws: `ModelError.invalidArgument` for an index out of range, or a weight computed at
    ///   prepare (a DEQUANTIZE of constants) that was freed once packed (`Plan.discardedConstants`).
    public func tensor(_ index: Int) throws(ModelError) -> Tensor {
        guard plan.tensors.indices.contains(index) else { throw .invalidArgument("tensor index \(index) out of range") }
        try allocateTensors()
        let t = plan.tensors[index]
        guard !plan.discardedConstants.contains(index) else {
            throw .invalidArgument("tensor \(index) '\(t.name)' was computed at prepare and freed once packed; use Options.preserveAllTensors to keep it")
        }
        return Tensor(name: t.name, dataType: t.dataType, shape: Tensor.Shape(t.shape),
                      data: Data(session!.bytes(ofTensor: index)), quantizationParameters: t.quantization)
    }
}

/// A snapshot of a tensor: its description and a copy of its bytes.
public struct Tensor: Sendable, Equatable {
    /// Tensor dimensions, as TensorFlowLiteSwift's `Tensor.Shape`.
    public struct Shape: Sendable, Equatable {
        /// The size of each dimension, outermost first.
        public let dimensions: [Int]
        /// The number of dimensions.
        public var rank: Int { dimensions.count }
        /// A shape with these dimensions.
        public init(_ dimensions: [Int]) { self.dimensions = dimensions }
    }
    /// The tensor's name in the model.
    public let name: String
    /// The element type.
    public let dataType: DataType
    /// The shape after preparation.
    public let shape: Shape
    /// A copy of the bytes (little-endian elements, row-major).
    public let data: Data
    /// Affine quantization of the elements, for quantized tensors.
    public let quantizationParameters: QuantizationParameters?
}
