/// What an operator sees while it is prepared: its node, every tensor's descriptor (with the
/// shapes inferred so far), and a way to set its outputs' shapes and ask for scratch memory.
struct PrepareContext {
    let node: Node
    var tensors: [TensorDescriptor]
    /// The resource limits the plan is built under (kernels with data-dependent output sizes check them).
    let limits: Limits
    /// Scratch bytes this operator needs during `eval`, shared by its threads.
    private(set) var scratchBytes = 0
    /// Output slots whose shape this operator's prepare has set (each must be, see `Plan`).
    private(set) var sizedOutputs = Set<Int>()
    /// Scratch bytes each of the operator's threads needs for itself during `eval`.
    private(set) var workerScratchBytes = 0
    /// Input slots whose constant data this operator copied (packed) at prepare and never reads
    /// in `eval`: their mapped file pages can be dropped once no operator reads them.
    private(set) var packedSlots = Set<Int>()

    init(node: Node, tensors: [TensorDescriptor], limits: Limits = .default) {
        self.node = node
        self.tensors = tensors
        self.limits = limits
    }

    /// An error naming this operator, its index and `reason`.
    func invalid(_ reason: String) -> ModelError {
        .invalidOperator(op: node.opName, index: node.index, reason: reason)
    }

    func unsupported(_ reason: String) -> ModelError {
        .unsupportedOperator(op: node.opName, index: node.index, reason: reason)
    }

    /// Throws unless the operator has between `inputs.lowerBound` and `inputs.upperBound` inputs
    /// and exactly `outputs` outputs.
    func expect(inputs: ClosedRange<Int>, outputs: Int) throws(ModelError) {
        guard inputs.contains(node.inputs.count) else {
            throw invalid("has \(node.inputs.count) inputs, expected \(inputs.lowerBound == inputs.upperBound ? "\(inputs.lowerBound)" : "\(inputs.lowerBound)...\(inputs.upperBound)")")
        }
        guard node.outputs.count == outputs else { throw invalid("has \(node.outputs.count) outputs, expected \(outputs)") }
    }

    /// The descriptor of input `slot`, which must be present.
    func input(_ slot: Int) throws(ModelError) -> TensorDescriptor {
        guard let t = optionalInput(slot) else { throw invalid("input \(slot) is missing") }
        return t
    }

    /// The descriptor of input `slot`, or nil when the slot is absent or marked `-1`.
    func optionalInput(_ slot: Int) -> TensorDescriptor? {
        guard node.inputs.indices.contains(slot), node.inputs[slot] >= 0 else { return nil }
        return tensors[node.inputs[slot]]
    }

    func output(_ slot: Int) throws(ModelError) -> TensorDescriptor {
        guard node.outputs.indices.contains(slot) else { throw invalid("output \(slot) is missing") }
        return tensors[node.outputs[slot]]
    }

    /// The data of input `slot`, which must be a constant.
    func constant(_ slot: Int) throws(ModelError) -> ConstantData {
        let t = try input(slot)
        guard let data = t.constantData else { throw unsupported("input \(slot) ('\(t.name)') must be a constant tensor") }
        return data
    }

    /// Throws unless `tensor` has element type `type`.
    func expect(_ tensor: TensorDescriptor, is types: DataType..., role: String) throws(ModelError) {
        guard types.contains(tensor.dataType) else {
            throw unsupported("\(role) '\(tensor.name)' has type \(tensor.dataType), expected \(types.map(\.rawValue).joined(separator: " or "))")
        }
    }

    /// Throws unless `tensor` has rank `rank`.
    func expect(_ tensor: TensorDescriptor, rank: Int, role: String) throws(ModelError) {
        guard tensor.shape.count == rank else {
            throw invalid("\(role) '\(tensor.name)' has shape \(tensor.shape), expected rank \(rank)")
        }
    }

    /// Sets the shape of output `slot` (replacing the model's declared shape, as TFLite does).
    mutating func setOutputShape(_ slot: Int, _ shape: [Int]) throws(ModelError) {
        let t = try output(slot)
        // Graph validation keeps constants out of every operator's outputs; a resized constant
        // would be written past its bytes, so check again where the size is decided.
        guard !t.isConstant else { throw invalid("output \(slot) ('\(t.name)') is a constant") }
        // A variable may be written by several operators, each prepared against its shape; the
        // arena holds it at one size, so no operator may change it.
        guard !t.isVariable || shape == t.shape else {
            throw invalid("output \(slot) ('\(t.name)') is a variable of shape \(t.shape); the operator would make it \(shape)")
        }
        guard checkedByteCount(shape, elementSize: t.dataType.byteSize ?? 1) != nil else {
            throw invalid("output shape \(shape) is negative or too large")
        }
        tensors[t.index].shape = shape
        sizedOutputs.insert(slot)
    }

    /// Reserves `bytes` of scratch memory for `eval` (the largest request of any operator is shared).
    mutating func requestScratch(bytes: Int) {
        scratchBytes = max(scratchBytes, bytes)
    }

    /// Reserves `bytes` of scratch memory for each thread that runs a part of `eval`
    /// (`TensorMemory.scratch(as:worker:)`).
    mutating func requestWorkerScratch(bytes: Int) {
        workerScratchBytes = max(workerScratchBytes, bytes)
    }

    /// Records that the constant in input `slot` was copied into packed memory at prepare and is
    /// not read in `eval`.
    mutating func markPacked(_ slot: Int) {
        packedSlots.insert(slot)
    }
}
