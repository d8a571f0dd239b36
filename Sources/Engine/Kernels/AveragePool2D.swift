/// AVERAGE_POOL_2D: `output[n, y, x, c] = act(mean of input[n, iy, ix, c] over the window)`, where
/// the mean divides by the number of window taps inside the input, not by the filter area.
enum AveragePool2D {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        let pool = try context.pool2D(input: Self.input, output: Self.output)
        if pool.type != .float32 { return try prepareQuantized(&context, geometry: pool.geometry, activation: pool.activation) }
        return AveragePool2DFloat32(geometry: pool.geometry, range: pool.floatRange,
                                    input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
    }
}

/// Float32 average pooling. Each output pixel sums its window row by row, all channels at once
/// (a contiguous, vectorisable loop), in the same order as TFLite's reference kernel.
struct AveragePool2DFloat32: PartitionedKernel {
    let geometry: Pool2DGeometry
    let range: ClosedRange<Float>
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        let g = geometry
        // Threads take whole output rows.
        memory.parallelize(self, count: g.batches * g.outputHeight,
                           work: g.batches * g.outputHeight * g.outputWidth * g.channels * g.filterHeight * g.filterWidth)
    }

    /// Output rows `outputRows`, counted over all batches.
    func evalPart(_ outputRows: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let g = geometry
        let c = g.channels
        let lower = range.lowerBound, upper = range.upperBound
        let base = memory.input(input, as: Float.self), out = memory.output(output, as: Float.self)
        for outputRow in outputRows {
            let oy = outputRow % g.outputHeight
            let source = base + outputRow / g.outputHeight * g.inputHeight * g.inputWidth * c
            var dst = out + outputRow * g.outputWidth * c
            let rows = g.inputRows(oy)
            for ox in 0 ..< g.outputWidth {
                let cols = g.inputColumns(ox)
                dst.update(repeating: 0, count: c)
                for iy in rows {
                    for ix in cols {
                        let src = source + (iy * g.inputWidth + ix) * c
                        for ch in 0 ..< c { dst[ch] += src[ch] }
                    }
                }
                // Divide (not multiply by a reciprocal) to round exactly as the reference does.
                let count = Float(rows.count * cols.count)
                for ch in 0 ..< c { dst[ch] = FloatGEMM.clamp(dst[ch] / count, lower, upper) }
                dst += c
            }
        }
    }
}
