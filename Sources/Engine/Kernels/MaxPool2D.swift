/// MAX_POOL_2D: `output[n, y, x, c] = act(max of input[n, iy, ix, c] over the window)`; window taps
/// in the padding are ignored.
enum MaxPool2D {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        let pool = try context.pool2D(input: Self.input, output: Self.output)
        if pool.type != .float32 { return try prepareQuantized(&context, geometry: pool.geometry, activation: pool.activation) }
        return MaxPool2DFloat32(geometry: pool.geometry, range: pool.floatRange,
                                input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
    }
}

/// Float32 max pooling, all channels of an output pixel at once (a contiguous, vectorisable loop).
struct MaxPool2DFloat32: PartitionedKernel {
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
                dst.update(repeating: -.greatestFiniteMagnitude, count: c)
                for iy in rows {
                    for ix in cols {
                        let src = source + (iy * g.inputWidth + ix) * c
                        // `m < v ? v : m` is std::max(m, v): a NaN input is skipped, as in TFLite.
                        for ch in 0 ..< c { dst[ch] = dst[ch] < src[ch] ? src[ch] : dst[ch] }
                    }
                }
                for ch in 0 ..< c { dst[ch] = FloatGEMM.clamp(dst[ch], lower, upper) }
                dst += c
            }
        }
    }
}
