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
    public let graph: Graph
    /// Tensor descriptors with the shapes inferred by preparation.
    public let tensors: [TensorDescriptor]
    /// Byte offset of each non-constant tensor in the arena (nil for constants).
    let arenaOffsets: [Int?]
    /// Bytes of activation memory a session needs.
    public let arenaBytes: Int
    /// Bytes of scratch memory shared by all operators.
    public let scratchBytes: Int
    let steps: [Step]

    struct Step: Sendable {
        let node: Node
        let kernel: any Kernel
    }

    /// Alignment of every tensor in the arena: one cache line, enough for any SIMD load.
    static let alignment = 64

    /// Prepares every operator and plans memory.
    /// - Parameters:
    ///   - preserveAllTensors: give every tensor its own memory instead of reusing buffers whose
    ///     lifetimes do not overlap, so that every intermediate can be read after `invoke`.
    /// - Throws: `ModelError` for an unsupported operator or one whose inputs break its rules.
    public convenience init(graph: Graph, preserveAllTensors: Bool = false) throws(ModelError) {
        try self.init(graph: graph, registry: .standard, preserveAllTensors: preserveAllTensors)
    }

    init(graph: Graph, registry: OpRegistry, preserveAllTensors: Bool) throws(ModelError) {
        self.graph = graph
        var tensors = graph.tensors
        var steps = [Step]()
        var scratch = 0
        for node in graph.nodes {
            guard let prepare = registry.prepare(for: node) else {
                throw .unsupportedOperator(op: node.opName, index: node.index,
                                           reason: node.customName != nil ? "no kernel for custom operator '\(node.opName)'" : "no kernel for this builtin operator")
            }
            var context = PrepareContext(node: node, tensors: tensors)
            var kernel = try prepare(&context)
            // Kernels write exactly the shapes their prepare decided; an output left at the
            // model's declared shape would let a lying model size the memory that eval writes.
            for slot in node.outputs.indices where !context.sizedOutputs.contains(slot) {
                throw .invalidOperator(op: node.opName, index: node.index, reason: "prepare did not size output \(slot) (an engine bug)")
            }
            // All-constant inputs (shape arithmetic): run once now, outputs become constants.
            if let folded = try ConstantPropagation.fold(kernel, &context) { kernel = folded }
            tensors = context.tensors
            scratch = max(scratch, context.scratchBytes)
            steps.append(Step(node: node, kernel: kernel))
        }
        for t in tensors where t.dataType == .string && !t.isConstant {
            throw .invalidTensor(index: t.index, name: t.name, reason: "string tensors are not supported")
        }
        self.tensors = tensors
        self.steps = steps
        self.scratchBytes = scratch
        (arenaOffsets, arenaBytes) = Self.planArena(graph: graph, tensors: tensors, preserveAll: preserveAllTensors)
        guard arenaBytes <= maxTensorBytes, scratchBytes <= maxTensorBytes else {
            throw .invalidGraph("the activations need \(arenaBytes) bytes and \(scratchBytes) bytes of scratch; the limit is \(maxTensorBytes) each")
        }
    }

    /// Places every non-constant tensor in one arena, reusing memory between tensors whose
    /// lifetimes (first write to last read) do not overlap: largest tensors first, each at the
    /// lowest offset that does not collide with an already placed, simultaneously live tensor.
    private static func planArena(graph: Graph, tensors: [TensorDescriptor], preserveAll: Bool) -> ([Int?], Int) {
        let end = graph.nodes.count
        var first = [Int](repeating: Int.max, count: tensors.count)
        var last = [Int](repeating: -1, count: tensors.count)
        for t in graph.inputs { first[t] = -1; last[t] = max(last[t], -1) }
        for (step, node) in graph.nodes.enumerated() {
            for t in node.inputs where t >= 0 { last[t] = max(last[t], step) }
            for t in node.outputs { first[t] = min(first[t], step); last[t] = max(last[t], step) }
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
