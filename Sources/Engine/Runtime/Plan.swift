import Foundation

/// An immutable, prepared execution plan for a `Graph`: operator order, prepared kernels, shapes,
/// and where each tensor lives in the activation arena.
///
/// A plan is `Sendable`: create it once and run it from any number of threads, each with its own
/// `Session`.
///
/// ```swift
/// let plan = try Plan(graph: Graph(contentsOf: "model.tflite"))
/// let session = Session(plan: plan)
/// ```
public final class Plan: Sendable {
    /// The graph the plan was prepared from.
    public let graph: Graph
    /// Tensor descriptors with the shapes inferred by preparation.
    public let tensors: [TensorDescriptor]
    /// Byte offset of each non-constant tensor in the arena (nil for constants).
    let arenaOffsets: [Int?]
    /// Bytes of activation memory a session needs.
    public let arenaBytes: Int
    /// Bytes of scratch memory shared by all operators.
    public let scratchBytes: Int
    /// Bytes of scratch memory each thread of a session needs for itself.
    public let workerScratchBytes: Int
    /// Constants whose mapped pages were given back to the system after packing: no kernel reads
    /// them during `invoke` (their bytes stay readable; the system pages them in again if asked).
    public let releasedConstants: Set<Int>
    /// Constants computed at prepare (folded) whose memory was freed after packing: no kernel
    /// reads them, and their bytes cannot be read (`Interpreter.tensor` throws). None with
    /// `preserveAllTensors`.
    public let discardedConstants: Set<Int>
    let steps: [Step]

    /// Operators run as one with the operator before them (by index): a float CONV_2D and the
    /// 3×3 DEPTHWISE_CONV_2D that alone reads its output, and the pointwise CONV_2D that alone
    /// reads the depthwise one, if any, in bands of rows that stay in cache (see
    /// `PointwiseDepthwiseFloat32`); the ADD, PRELU, RELU-family and HARD_SWISH operators after a
    /// float CONV_2D or DEPTHWISE_CONV_2D (`FloatEpilogue`), with any operator folded at prepare
    /// between them and the PAD of a residual shortcut's channels before its ADD; an 8-bit table
    /// operator after another whose output only it reads (one table); a swish's MUL (`Swish`).
    /// The tensors between them are not written. None when tensors are preserved.
    public var fusedOperators: [Int] { steps.flatMap { $0.fused.map(\.node.index) } }

    struct Step: Sendable {
        /// The operator, or the first of fused ones.
        let node: Node
        let kernel: any Kernel
        /// The operators fused after `node`, whose work `kernel` does too, each with the kernel
        /// that runs the operators before it alone, for a run that stops there
        /// (`Session.invoke(stopAfter:)`).
        var fused: [(node: Node, before: any Kernel)] = []
    }

    /// The most operators fused after one (`Step.fused`): a depthwise layer after the PAD it
    /// folds, a convolution's three epilogue operators, and a folded one among them.
    static let maxFused = 5

    /// Alignment of every tensor in the arena: one cache line, enough for any SIMD load.
    static let alignment = 64

    /// Prepares every operator and plans memory.
    /// - Parameters:
    ///   - graph: the validated model.
    ///   - preserveAllTensors: give every tensor its own memory instead of reusing buffers whose
    ///     lifetimes do not overlap, so that every intermediate can be read after `invoke`.
    ///   - limits: the most memory and work the plan may ask for (see `Limits`).
    /// - Throws: `ModelError` for an unsupported operator or one whose inputs break its rules, or
    ///   whose memory or work exceeds `limits`.
    public convenience init(graph: Graph, preserveAllTensors: Bool = false, limits: Limits = .default) throws(ModelError) {
        try self.init(graph: graph, registry: .standard, preserveAllTensors: preserveAllTensors, limits: limits)
    }

    init(graph: Graph, registry: OpRegistry, preserveAllTensors: Bool, limits: Limits = .default) throws(ModelError) {
        self.graph = graph
        var tensors = graph.tensors
        var steps = [Step]()
        var scratch = 0, workerScratch = 0
        // Constants that only packed copies use: once the last operator that reads a constant has
        // been prepared, and none of them reads it in `eval`, its file pages are dropped (and a
        // constant folded at prepare, such as a DEQUANTIZE of float16 weights, is freed), which
        // keeps the peak resident memory at the packed copies plus one operator's raw weights.
        var readers = [Int](repeating: 0, count: tensors.count)
        for node in graph.nodes { for t in node.inputs where t >= 0 { readers[t] += 1 } }
        var readersLeft = readers
        var readAtEval = Set(graph.outputs), released = Set<Int>(), discarded = Set<Int>()
        var folded = [Int: any DiscardableConstant]()
        // Loading read the whole file (validation, and the aligned copies of misaligned buffers);
        // drop those pages now, so that only what packing reads comes back, one operator at a time.
        graph.file.releasePages(of: graph.file.bytes)
        var macs = 0
        func prepareOperators() throws(ModelError) {
            for node in graph.nodes {
                guard let prepare = registry.prepare(for: node) else {
                    throw .unsupportedOperator(op: node.opName, index: node.index,
                                               reason: node.customName != nil ? "no kernel for custom operator '\(node.opName)'" : "no kernel for this builtin operator")
                }
                var context = PrepareContext(node: node, tensors: tensors, limits: limits)
                // The context's array must be the only reference to its storage, or every output
                // shape it sets copies all the descriptors (quadratic in the graph's size).
                tensors = []
                var kernel = try prepare(&context)
                // Kernels write exactly the shapes their prepare decided; an output left at the
                // model's declared shape would let a lying model size the memory that eval writes.
                for slot in node.outputs.indices where !context.sizedOutputs.contains(slot) {
                    throw .invalidOperator(op: node.opName, index: node.index, reason: "prepare did not size output \(slot) (an engine bug)")
                }
                try limits.checkOutputs(of: context)
                try limits.accumulateMACs(context, into: &macs)
                // All-constant inputs (shape arithmetic): run once now, outputs become constants.
                if let folded = try ConstantPropagation.fold(kernel, &context) { kernel = folded }
                tensors = context.tensors
                scratch = max(scratch, context.scratchBytes)
                workerScratch = max(workerScratch, context.workerScratchBytes)
                steps.append(Step(node: node, kernel: kernel))
                if let constant = kernel.discardableConstant, let t = node.outputs.first { folded[t] = constant }
                for (slot, t) in node.inputs.enumerated() where t >= 0 {
                    readersLeft[t] -= 1
                    guard tensors[t].isConstant else { continue }
                    if !context.packedSlots.contains(slot) { readAtEval.insert(t) }
                    guard readersLeft[t] == 0, !readAtEval.contains(t) else { continue }
                    if let constant = folded[t] {
                        if !preserveAllTensors {
                            constant.discard()
                            discarded.insert(t)
                        }
                    } else if let bytes = graph.tensors[t].constantData?.bytes, graph.file.releasePages(of: bytes) {
                        released.insert(t)
                    }
                }
            }
        }
        // The kernels' packed buffers come from one arena of huge pages (`PackingArena`).
        let arena = PackingArena.isEnabled ? PackingArena() : nil
        try PackingArena.$current.withValue(arena) { Result { () throws(ModelError) in try prepareOperators() } }.get()
        for t in tensors where t.dataType == .string && !t.isConstant {
            throw .invalidTensor(index: t.index, name: t.name, reason: "string tensors are not supported")
        }
        self.tensors = tensors
        if !preserveAllTensors {
            for t in graph.outputs { readers[t] += 1 }
            Self.fuse(&steps, readers: readers, tensors: tensors, workerScratch: &workerScratch)
        }
        self.steps = steps
        self.scratchBytes = scratch
        self.workerScratchBytes = workerScratch
        releasedConstants = released
        discardedConstants = discarded
        (arenaOffsets, arenaBytes) = Self.planArena(graph: graph, tensors: tensors, preserveAll: preserveAllTensors,
                                                    fused: steps.flatMap { $0.fused.map(\.node.index) })
        try limits.checkArena(bytes: arenaBytes, scratch: scratchBytes, tensors: tensors)
        guard arenaBytes <= maxTensorBytes, scratchBytes <= maxTensorBytes, workerScratchBytes <= maxTensorBytes / WorkerPool.maxThreadCount else {
            throw .invalidGraph("the activations need \(arenaBytes) bytes, \(scratchBytes) bytes of scratch and \(workerScratchBytes) per thread; the limits are \(maxTensorBytes) and \(maxTensorBytes / WorkerPool.maxThreadCount) per thread")
        }
    }

    /// Places every non-constant tensor in one arena, reusing memory between tensors whose
    /// lifetimes (first write to last read) do not overlap: largest tensors first, each at the
    /// lowest offset that does not collide with an already placed, simultaneously live tensor.
    /// The graph's inputs and outputs live throughout, as in TFLite (whose arena planner
    /// preserves inputs): `invoke` again runs the same inputs, and `input(at:)` reads what was
    /// copied in.
    ///
    /// An operator fused into the one before it (`fused`, by index) runs with it: the first one's
    /// inputs are read until the last fused one's outputs are written, so they must not share memory.
    private static func planArena(graph: Graph, tensors: [TensorDescriptor], preserveAll: Bool, fused: [Int]) -> ([Int?], Int) {
        let end = graph.nodes.count
        var first = [Int](repeating: Int.max, count: tensors.count)
        var last = [Int](repeating: -1, count: tensors.count)
        for t in graph.inputs { first[t] = -1; last[t] = end }
        let fusedIndices = Set(fused)
        // The last operator of the fused run each operator is in.
        var readUntil = Array(0 ..< end)
        for step in stride(from: end - 2, through: 0, by: -1) where fusedIndices.contains(step + 1) { readUntil[step] = readUntil[step + 1] }
        for (step, node) in graph.nodes.enumerated() {
            for t in node.inputs where t >= 0 { last[t] = max(last[t], readUntil[step]) }
            for t in node.outputs { first[t] = min(first[t], step); last[t] = max(last[t], step) }
        }
        // An operator followed by one fused into it writes its output only when an invocation
        // stops right after it (`Session.invoke(stopAfter:)`), and nothing runs after that.
        for (step, node) in graph.nodes.enumerated() where fusedIndices.contains(step + 1) {
            for t in node.outputs where t >= 0 { last[t] = step }
        }
        for t in graph.outputs { last[t] = end }
        for t in tensors where t.isVariable || preserveAll { first[t.index] = -1; last[t.index] = end }

        let live = tensors.filter { !$0.isConstant && first[$0.index] != Int.max }
            .sorted { ($0.byteCount, -$0.index) > ($1.byteCount, -$1.index) }
        var offsets = [Int?](repeating: nil, count: tensors.count)
        var placed = [(offset: Int, size: Int, first: Int, last: Int)]()
        var total = 0
        for t in live {
            let size = (max(t.byteCount, 1) + alignment - 1) / alignment * alignment
            let overlapping = placed
                .filter { $0.first <= last[t.index] && first[t.index] <= $0.last }
                .sorted { $0.offset < $1.offset }
            var offset = 0
            for p in overlapping where offset + size > p.offset {
                offset = max(offset, p.offset + p.size)
            }
            placed.append((offset, size, first[t.index], last[t.index]))
            offsets[t.index] = offset
            total = max(total, offset + size)
        }
        return (offsets, total)
    }
}
