extension Concatenation {
    /// uint8/int8 concatenation whose inputs are quantized differently from the output (or with a
    /// fused activation). The output shape is set; `axis` is non-negative.
    ///
    /// As in TFLite: the fused activation is ignored (TFLite's kernel never applies it); int8
    /// inputs must share the output's scale and zero point (TFLite's prepare fails otherwise);
    /// uint8 inputs that differ are requantized the way `ConcatenationWithScaling` does it, in
    /// Float: `round(x · (s / sOut) + (−zp · s / sOut)) + zpOut`, clamped to 0 ... 255.
    static func prepareQuantized(_ context: inout PrepareContext, axis: Int, activation: FusedActivation) throws(ModelError) -> any Kernel {
        let output = try context.output(Self.output)
        let outputQ = try context.affineQuantization(of: output, role: "output")
        var tables = [PackedBuffer<UInt8>?]()
        for slot in context.node.inputs.indices {
            let input = try context.input(slot)
            let q = try context.affineQuantization(of: input, role: "input \(slot)")
            if q == outputQ {
                tables.append(nil)
                continue
            }
            guard output.dataType == .uint8 else {
                throw context.invalid("int8 input \(slot) ('\(input.name)') has scale \(q.scale) and zero point \(q.zeroPoint), the output \(outputQ.scale) and \(outputQ.zeroPoint); int8 CONCATENATION requires them equal")
            }
            let scale = q.scale * (1 / outputQ.scale)
            let bias = Float(-q.zeroPoint) * scale
            tables.append(PackedBuffer((0 ... 255).map { (x: Int32) -> UInt8 in
                let rounded = truncatingToInt32LikeX86((Float(x) * scale + bias).rounded(.toNearestOrAwayFromZero))
                return UInt8(min(max(rounded &+ outputQ.zeroPoint, 0), 255))
            }))
        }
        let shape = try context.output(Self.output).shape
        let outer = shape[..<axis].reduce(1, *), inner = shape[(axis + 1)...].reduce(1, *)
        var chunks = [Int]()
        for slot in context.node.inputs.indices { chunks.append(try context.input(slot).shape[axis] * inner) }
        let inputs = context.node.inputs, out = context.node.outputs[Self.output]
        guard tables.contains(where: { $0 != nil }) else {
            return ConcatenationCopy(inputs: inputs, output: out, outerCount: outer, chunkBytes: chunks, clamp: nil)
        }
        return ConcatenationUInt8Rescaling(inputs: inputs, output: out, outerCount: outer, chunkSizes: chunks, tables: tables)
    }
}

/// uint8 concatenation that requantizes some inputs through 256-entry tables (nil: plain copy),
/// applied as `ByteLookup` applies them.
/// Threads take ranges of the output's elements (a range may start and end inside any input's
/// chunk), so that one large slice (a detector's class scores from several inputs) splits too.
struct ConcatenationUInt8Rescaling: PartitionedKernel {
    let inputs: [Int], output: Int
    let outerCount: Int
    /// Elements each input contributes per outer slice.
    let chunkSizes: [Int]
    let tables: [PackedBuffer<UInt8>?]
    /// Elements of one outer slice of the output: every input's chunk.
    let sliceSize: Int

    init(inputs: [Int], output: Int, outerCount: Int, chunkSizes: [Int], tables: [PackedBuffer<UInt8>?]) {
        precondition(inputs.count == chunkSizes.count && inputs.count == tables.count, "one chunk size and table per input")
        (self.inputs, self.output, self.outerCount, self.chunkSizes, self.tables) = (inputs, output, outerCount, chunkSizes, tables)
        sliceSize = chunkSizes.reduce(0, +)
    }

    func eval(_ memory: TensorMemory) {
        let count = outerCount * sliceSize
        // A re-scaled element is a table look-up, as in `ByteLookupKernel`.
        memory.parallelize(self, count: count, granularity: 64, work: count * ByteLookup.fastest.elementWork)
    }

    /// Output elements `range`, input chunk by input chunk.
    func evalPart(_ range: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let out = memory.output(output, as: UInt8.self)
        var position = range.lowerBound
        while position < range.upperBound {
            let o = position / sliceSize, offset = position - o * sliceSize
            // The input whose chunk holds `offset` (empty chunks are passed over).
            var i = 0, chunkStart = 0
            while offset >= chunkStart + chunkSizes[i] {
                chunkStart += chunkSizes[i]
                i += 1
            }
            let within = offset - chunkStart
            let n = min(chunkSizes[i] - within, range.upperBound - position)
            let source = memory.input(inputs[i], as: UInt8.self) + o * chunkSizes[i] + within
            let destination = out + position
            if let table = tables[i]?.pointer {
                ByteLookup.fastest.apply(table, source, destination, count: n)
            } else {
                destination.update(from: source, count: n)
            }
            position += n
        }
    }
}
