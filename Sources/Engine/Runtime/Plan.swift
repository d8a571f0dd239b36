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

    /// Folds each float PAD of zeros into the DEPTHWISE_CONV_2D that alone reads it (`foldPads`);
    /// then fuses each float CONV_2D with the 3×3 DEPTHWISE_CONV_2D right after it that alone reads
    /// its output, and that with the pointwise CONV_2D right after it that alone reads its output
    /// (`PointwiseDepthwiseFloat32`, which says when); each other float CONV_2D or
    /// DEPTHWISE_CONV_2D with the element-wise operators after it, a shortcut's channel PAD
    /// among them (`withEpilogue`); each 8-bit table operator with the table operator that alone
    /// reads its output (`ByteLookupKernel.composed`); and each
    /// swish, an activation with the MUL of its input and output right after it (`Swish`); then
    /// each 8-bit convolution with the table operator after it (`withTables`). Only
    /// without `preserveAllTensors`: the tensors between them are then never written. `readers`:
    /// per tensor, the operators that read it, plus one for a graph output.
    private static func fuse(_ steps: inout [Step], readers: [Int], tensors: [TensorDescriptor], workerScratch: inout Int) {
        foldPads(&steps, readers: readers, tensors: tensors, workerScratch: &workerScratch)
        var fused = [Step]()
        var i = 0
        while i < steps.count {
            if i + 1 < steps.count, let pointwise = steps[i].kernel as? Conv2DFloat32,
               let depthwise = steps[i + 1].kernel as? DepthwiseConv2DFloat32, steps[i + 1].fused.isEmpty,
               readers[pointwise.output] == 1,
               let pair = PointwiseDepthwiseFloat32(pointwise: pointwise, depthwise: depthwise) {
                var kernel = pair, after: [(node: Node, before: any Kernel)] = [(steps[i + 1].node, pointwise)]
                if i + 2 < steps.count, let projection = steps[i + 2].kernel as? Conv2DFloat32, readers[depthwise.output] == 1,
                   let three = PointwiseDepthwiseFloat32(pointwise: pointwise, depthwise: depthwise, projection: projection) {
                    after.append((steps[i + 2].node, pair))
                    kernel = three
                }
                workerScratch = max(workerScratch, kernel.workerScratchBytes)
                fused.append(Step(node: steps[i].node, kernel: kernel, fused: after))
                i += 1 + after.count
            } else if let (step, count) = withEpilogue(steps, at: i, readers: readers, tensors: tensors) {
                fused.append(step)
                i += count
            } else if let (step, count) = tableChain(steps, at: i, readers: readers) {
                fused.append(step)
                i += count
            } else if i + 1 < steps.count, let swish = Swish.fused(steps[i].kernel, steps[i + 1].kernel, readers: readers) {
                fused.append(Step(node: steps[i].node, kernel: swish, fused: [(steps[i + 1].node, steps[i].kernel)]))
                i += 2
            } else {
                fused.append(steps[i])
                i += 1
            }
        }
        steps = fused
        withTables(&steps, readers: readers)
    }

    /// Each float PAD with zeros across height and width whose output only the float
    /// DEPTHWISE_CONV_2D after it reads: that convolution reading the PAD's input, the padding its
    /// own (`DepthwiseConv2DFloat32.reading(_:paddedBy:)`), as one step. Operators whose outputs
    /// are all constants (the DEQUANTIZE of the layer's float16 weights, folded at prepare) may
    /// lie between the two.
    private static func foldPads(_ steps: inout [Step], readers: [Int], tensors: [TensorDescriptor], workerScratch: inout Int) {
        var folded = [Step]()
        var i = 0
        while i < steps.count {
            var j = i + 1
            while j < steps.count, j - i < maxFused, computesNothing(steps[j], tensors: tensors) { j += 1 }
            if j < steps.count, let pad = steps[i].kernel as? PadKernel, let padding = pad.imagePadding,
               let depthwise = steps[j].kernel as? DepthwiseConv2DFloat32, depthwise.input == pad.output,
               readers[pad.output] == 1, let kernel = depthwise.reading(pad.input, paddedBy: padding) {
                workerScratch = max(workerScratch, kernel.workerScratchBytes)
                // Each operator after the PAD runs, in a run stopped before the depthwise layer,
                // as the PAD alone.
                let after = steps[(i + 1) ... j].map { (node: $0.node, before: pad as any Kernel) }
                folded.append(Step(node: steps[i].node, kernel: kernel, fused: after))
                i = j + 1
            } else {
                folded.append(steps[i])
                i += 1
            }
        }
        steps = folded
    }

    /// Whether every output of `step` is a constant: an operator folded at prepare, which
    /// computes nothing at eval and may lie between operators that fuse.
    private static func computesNothing(_ step: Step, tensors: [TensorDescriptor]) -> Bool {
        step.node.outputs.allSatisfy { $0 >= 0 && tensors[$0].isConstant }
    }

    /// The float CONV_2D or DEPTHWISE_CONV_2D of `steps[i]` with the longest run of operators
    /// after it that `FloatEpilogue` computes, each reading the one before it, which nothing else
    /// reads; operators whose outputs are all constants (folded at prepare; they compute nothing)
    /// may lie between them, and so may a float PAD of zeros after the channels whose output
    /// only the next operator, an ADD to the run's output, reads (`FloatEpilogue.paddedAdd`).
    /// The fused step and how many steps it takes; nil where no operator fuses.
    private static func withEpilogue(_ steps: [Step], at i: Int, readers: [Int], tensors: [TensorDescriptor]) -> (Step, count: Int)? {
        let base = steps[i].kernel
        let host: (output: Int, channels: Int, followed: (FloatEpilogue, Int) -> any Kernel)
        if let conv = base as? Conv2DFloat32, conv.epilogue == nil {
            host = (conv.output, conv.geometry.outputChannels, { conv.followed(by: $0, output: $1) })
        } else if let depthwise = base as? DepthwiseConv2DFloat32, depthwise.epilogue == nil {
            host = (depthwise.output, depthwise.geometry.outputChannels, { depthwise.followed(by: $0, output: $1) })
        } else {
            return nil
        }
        var stages = [FloatEpilogue.Stage](), after = [(node: Node, before: any Kernel)]()
        var kernel: any Kernel = base, produced = host.output, j = i + 1
        var longest: (Step, count: Int)?
        while j < steps.count, steps[i].fused.count + after.count < maxFused {
            if computesNothing(steps[j], tensors: tensors) {
                after.append((steps[j].node, kernel))
                j += 1
                continue
            }
            // A PAD of a residual shortcut's channels, then the ADD of it: the ADD reads the
            // shortcut itself, computed before this run (nothing in the run writes it).
            if let pad = steps[j].kernel as? PadKernel, j + 1 < steps.count, steps[i].fused.count + after.count + 1 < maxFused,
               readers[produced] == 1, readers[pad.output] == 1, stages.count < FloatEpilogue.maxStages,
               !([steps[i].node] + steps[i].fused.map(\.node) + after.map(\.node)).contains(where: { $0.outputs.contains(pad.input) }),
               let (stage, output) = FloatEpilogue.paddedAdd(steps[j + 1].kernel, on: produced, pad: pad, channels: host.channels,
                                                             tensors: tensors) {
                after.append((steps[j].node, kernel))
                after.append((steps[j + 1].node, Then(first: kernel, second: pad)))
                stages.append(stage)
                kernel = host.followed(FloatEpilogue(stages: stages), output)
                produced = output
                j += 2
                longest = (Step(node: steps[i].node, kernel: kernel, fused: steps[i].fused + after), j - i)
                continue
            }
            guard readers[produced] == 1, stages.count < FloatEpilogue.maxStages,
                  let (stage, output) = FloatEpilogue.stage(steps[j].kernel, on: produced, channels: host.channels,
                                                            tensors: tensors) else { break }
            after.append((steps[j].node, kernel))
            stages.append(stage)
            kernel = host.followed(FloatEpilogue(stages: stages), output)
            produced = output
            j += 1
            longest = (Step(node: steps[i].node, kernel: kernel, fused: steps[i].fused + after), j - i)
        }
        return longest
    }

    /// A run stopped inside a fused step after an operator that the step's own kernels do not
    /// end on: `first`, then `second`. A PAD fused into a convolution's epilogue
    /// (`withEpilogue`), stopped before the ADD that reads it: the operators before the PAD,
    /// then the PAD; a swish's table fused into a convolution (`withTables`), stopped before
    /// its MUL: the convolution, then the LOGISTIC. `second` is a partitioned kernel, which
    /// takes no tile grid, so it leaves `first`'s grid slot alone.
    private struct Then: Kernel {
        let first: any Kernel
        let second: any PartitionedKernel

        func eval(_ memory: TensorMemory) {
            first.eval(memory)
            second.eval(memory)
        }
    }

    /// Each 8-bit CONV_2D or 3 × 3 / 5 × 5 DEPTHWISE_CONV_2D followed by the 8-bit table operator
    /// (`ByteLookupKernel`: its activation, a swish's LOGISTIC and MUL, a chain of tables) in
    /// which alone its output is read: the convolution applying the table to each part of its output
    /// as it computes it (`AppliesOutputTable.followed(by:)`). Runs after the other fusions, which
    /// make the swishes and chains into single tables.
    private static func withTables(_ steps: inout [Step], readers: [Int]) {
        var fused = [Step]()
        var i = 0
        while i < steps.count {
            let step = steps[i]
            guard i + 1 < steps.count, step.fused.isEmpty, 1 + steps[i + 1].fused.count <= maxFused,
                  let table = steps[i + 1].kernel as? ByteLookupKernel else {
                fused.append(step)
                i += 1
                continue
            }
            // What a stop inside the table step ran before its fused operators: table kernels.
            let seconds = steps[i + 1].fused.compactMap { $0.before as? any PartitionedKernel }
            // The convolution's output may be read only inside the table step (a swish reads it
            // twice: its LOGISTIC and its MUL).
            let tableNodes = [steps[i + 1].node] + steps[i + 1].fused.map(\.node)
            func readOnlyByTable(_ t: Int) -> Bool {
                readers[t] == tableNodes.reduce(0) { count, node in count + node.inputs.filter { $0 == t }.count }
            }
            guard seconds.count == steps[i + 1].fused.count, let convolution = step.kernel as? any AppliesOutputTable,
                  readOnlyByTable(convolution.output), let kernel = convolution.followed(by: table) else {
                fused.append(step)
                i += 1
                continue
            }
            // A stop after the convolution runs it alone; a stop inside the table's own fused
            // operators runs the convolution, then what that stop ran before.
            let after = [(node: steps[i + 1].node, before: step.kernel)]
                + zip(steps[i + 1].fused, seconds).map { ($0.node, Then(first: step.kernel, second: $1) as any Kernel) }
            fused.append(Step(node: step.node, kernel: kernel, fused: after))
            i += 2
        }
        steps = fused
    }

    /// The 8-bit table operator of `steps[i]` with the longest run of table operators after it,
    /// each reading only the one before it, which nothing else reads: one table
    /// (`ByteLookupKernel.composed`). The fused step and how many steps it takes; nil where no
    /// operator follows that way.
    private static func tableChain(_ steps: [Step], at i: Int, readers: [Int]) -> (Step, count: Int)? {
        guard steps[i].fused.isEmpty, var table = steps[i].kernel as? ByteLookupKernel else { return nil }
        var after = [(node: Node, before: any Kernel)](), j = i + 1
        while j < steps.count, after.count < maxFused, steps[j].fused.isEmpty, let next = steps[j].kernel as? ByteLookupKernel,
              let composed = ByteLookupKernel.composed(table, next, readers: readers) {
            after.append((steps[j].node, table))
            table = composed
            j += 1
        }
        return after.isEmpty ? nil : (Step(node: steps[i].node, kernel: table, fused: after), j - i)
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
