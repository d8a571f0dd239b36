extension AveragePool2D {
    /// Integer average pooling (uint8, int8), as TFLite's reference kernels: the window's values
    /// (padding excluded) are summed in Int32 and divided by their count rounding half away from
    /// zero, then clamped to the fused activation's range. Input and output share their
    /// quantization (TFLite only checks that in debug builds; the output's is used for the clamp).
    static func prepareQuantized(_ context: inout PrepareContext, geometry: Pool2DGeometry, activation: FusedActivation) throws(ModelError) -> any Kernel {
        let (input, _, output, outputQ) = try context.unaryQuantized()
        let range = try context.integerActivationRange(activation, output: output, outputQ)
        context.requestWorkerScratch(bytes: geometry.channels * MemoryLayout<Int32>.stride)
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        if input.dataType == .int8 { return AveragePool2DQuantized<Int8>(geometry: geometry, range: range, input: i, output: o) }
        return AveragePool2DQuantized<UInt8>(geometry: geometry, range: range, input: i, output: o)
    }
}

/// Integer average pooling of an 8-bit tensor, all channels of an output pixel at once.
struct AveragePool2DQuantized<T: FixedWidthInteger & Sendable>: PartitionedKernel {
    let geometry: Pool2DGeometry
    let range: ClosedRange<Int32>
    let input: Int, output: Int

    // Kernels run behind `any Kernel`, whose witness would be the unspecialised generic code;
    // these make it jump to the 8-bit specialisations.
    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func eval(_ memory: TensorMemory) {
        let g = geometry
        // Threads take whole output rows.
        memory.parallelize(self, count: g.batches * g.outputHeight,
                           work: g.batches * g.outputHeight * g.outputWidth * g.channels * g.filterHeight * g.filterWidth)
    }

    /// Output rows `outputRows`, counted over all batches.
    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func evalPart(_ outputRows: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let g = geometry
        let c = g.channels
        let lower = range.lowerBound, upper = range.upperBound
        let base = memory.input(input, as: T.self), out = memory.output(output, as: T.self)
        for outputRow in outputRows {
            let oy = outputRow % g.outputHeight
            let source = base + outputRow / g.outputHeight * g.inputHeight * g.inputWidth * c
            var dst = out + outputRow * g.outputWidth * c
            let sums = memory.scratch(as: Int32.self, worker: worker)
            let rows = g.inputRows(oy)
            for ox in 0 ..< g.outputWidth {
                let cols = g.inputColumns(ox)
                sums.update(repeating: 0, count: c)
                for iy in rows {
                    for ix in cols {
                        let src = source + (iy * g.inputWidth + ix) * c
                        for ch in 0 ..< c { sums[ch] &+= Int32(src[ch]) }
                    }
                }
                // Every window overlaps the input, so the count is at least 1. Int32 wraps
                // like TFLite's accumulator would for absurdly large windows.
                let count = Int32(truncatingIfNeeded: rows.count * cols.count)
                let half = count / 2
                for ch in 0 ..< c {
                    let sum = sums[ch]
                    // Division truncates toward zero, as in C++: this rounds half away from zero.
                    let average = sum > 0 ? (sum &+ half) / count : (sum &- half) / count
                    dst[ch] = T(truncatingIfNeeded: min(max(average, lower), upper))
                }
                dst += c
            }
        }
    }
}
