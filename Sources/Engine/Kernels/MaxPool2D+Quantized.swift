extension MaxPool2D {
    /// Integer max pooling (uint8, int8): the window's maximum (padding excluded), clamped to the
    /// fused activation's range, as TFLite's reference kernels. Input and output share their
    /// quantization (the output's is used for the clamp).
    static func prepareQuantized(_ context: inout PrepareContext, geometry: Pool2DGeometry, activation: FusedActivation) throws(ModelError) -> any Kernel {
        let (input, _, output, outputQ) = try context.unaryQuantized()
        let range = try context.integerActivationRange(activation, output: output, outputQ)
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        if input.dataType == .int8 {
            return MaxPool2DQuantized<Int8>(geometry: geometry, lower: Int8(range.lowerBound), upper: Int8(range.upperBound), input: i, output: o)
        }
        return MaxPool2DQuantized<UInt8>(geometry: geometry, lower: UInt8(range.lowerBound), upper: UInt8(range.upperBound), input: i, output: o)
    }
}

/// Integer max pooling of an 8-bit tensor, all channels of an output pixel at once.
struct MaxPool2DQuantized<T: FixedWidthInteger & Sendable>: PartitionedKernel {
    let geometry: Pool2DGeometry
    let lower: T, upper: T
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
        let lower = lower, upper = upper
        let base = memory.input(input, as: T.self), out = memory.output(output, as: T.self)
        for outputRow in outputRows {
            let oy = outputRow % g.outputHeight
            let source = base + outputRow / g.outputHeight * g.inputHeight * g.inputWidth * c
            var dst = out + outputRow * g.outputWidth * c
            let rows = g.inputRows(oy)
            for ox in 0 ..< g.outputWidth {
                let cols = g.inputColumns(ox)
                dst.update(repeating: T.min, count: c)
                for iy in rows {
                    for ix in cols {
                        let src = source + (iy * g.inputWidth + ix) * c
                        for ch in 0 ..< c { dst[ch] = max(dst[ch], src[ch]) }
                    }
                }
                for ch in 0 ..< c { dst[ch] = min(max(dst[ch], lower), upper) }
                dst += c
            }
        }
    }
}
