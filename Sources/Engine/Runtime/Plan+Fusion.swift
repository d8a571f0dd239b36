import Foundation

/// The operators a plan runs as one step, chosen once at prepare (`Plan.fuse`).
extension Plan {
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
    static func fuse(_ steps: inout [Step], readers: [Int], tensors: [TensorDescriptor], workerScratch: inout Int) {
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
}
