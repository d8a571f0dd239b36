extension TransposeConv {
    /// int8 TRANSPOSE_CONV, as TFLite's `reference_integer_ops::TransposeConv`: the same scatter
    /// into an Int32 scratch buffer of `(q − zpIn) · filter` (the filter is symmetric per output
    /// channel), then per output element `clamp(zpOut + m_c(acc + bias_c))`, with `m_c` the
    /// per-channel multiplier of `inputScale · filterScale_c / outputScale` (Double) and the
    /// clamp of the fused activation.
    static func prepareQuantized(_ context: inout PrepareContext, geometry: Geometry, activation: FusedActivation) throws(ModelError) -> any Kernel {
        let input = try context.input(Self.input), filter = try context.input(Self.filter), output = try context.output(Self.output)
        try context.expect(filter, is: .int8, role: "filter")
        try context.expect(output, is: .int8, role: "output")
        let inputQ = try context.affineQuantization(of: input, role: "input")
        let outputQ = try context.affineQuantization(of: output, role: "output")
        guard let filterQ = filter.quantization, filterQ.scales.count == 1 || (filterQ.scales.count == geometry.outputChannels && filterQ.quantizedDimension == 0) else {
            throw context.invalid("filter '\(filter.name)' needs one scale or one per output channel along dimension 0")
        }
        guard filterQ.zeroPoints.allSatisfy({ $0 == 0 }) else {
            throw context.unsupported("filter '\(filter.name)' has non-zero zero points; int8 filters are symmetric")
        }
        var bias = [Int32](repeating: 0, count: geometry.outputChannels)
        if let b = context.optionalInput(Self.bias) {
            try context.expect(b, is: .int32, role: "bias")
            bias = try context.constant(Self.bias).array(of: Int32.self)
        }
        let multipliers = QuantizedMultiplier.perChannel(inputScale: inputQ.scale, filterScales: filterQ.scales,
                                                         outputScale: outputQ.scale, channelCount: geometry.outputChannels)
        let range = try context.integerActivationRange(activation, output: output, outputQ)
        let g = geometry
        context.requestScratch(bytes: g.batches * g.outputHeight * g.outputWidth * g.outputChannels * MemoryLayout<Int32>.stride)
        return TransposeConvInt8(geometry: g, filter: PackedBuffer(try context.constant(Self.filter).elements(as: Int8.self)),
                                 bias: PackedBuffer(bias), multipliers: multipliers, inputZeroPoint: inputQ.zeroPoint,
                                 outputZeroPoint: outputQ.zeroPoint, range: range,
                                 input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
    }
}

struct TransposeConvInt8: Kernel {
    let geometry: TransposeConv.Geometry
    let filter: PackedBuffer<Int8>
    let bias: PackedBuffer<Int32>
    let multipliers: [QuantizedMultiplier]
    let inputZeroPoint: Int32, outputZeroPoint: Int32
    let range: ClosedRange<Int32>
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        let g = geometry
        let x = memory.input(input, as: Int8.self), y = memory.output(output, as: Int8.self), w = filter.pointer
        let outputCount = g.batches * g.outputHeight * g.outputWidth * g.outputChannels
        let acc = memory.scratch(as: Int32.self)
        acc.update(repeating: 0, count: outputCount)
        for b in 0 ..< g.batches {
            for inY in 0 ..< g.inputHeight {
                for inX in 0 ..< g.inputWidth {
                    for inC in 0 ..< g.inputChannels {
                        let value = Int32(x[((b * g.inputHeight + inY) * g.inputWidth + inX) * g.inputChannels + inC]) - inputZeroPoint
                        let originY = inY * g.strideHeight - g.padTop, originX = inX * g.strideWidth - g.padLeft
                        for fy in 0 ..< g.filterHeight {
                            let outY = originY + fy
                            guard outY >= 0 && outY < g.outputHeight else { continue }
                            for fx in 0 ..< g.filterWidth {
                                let outX = originX + fx
                                guard outX >= 0 && outX < g.outputWidth else { continue }
                                let out = acc + ((b * g.outputHeight + outY) * g.outputWidth + outX) * g.outputChannels
                                for oc in 0 ..< g.outputChannels {
                                    out[oc] &+= value * Int32(w[((oc * g.filterHeight + fy) * g.filterWidth + fx) * g.inputChannels + inC])
                                }
                            }
                        }
                    }
                }
            }
        }
        for i in 0 ..< outputCount {
            let c = i % g.outputChannels
            let value = multiplyByQuantizedMultiplier(acc[i] &+ bias.pointer[c], multipliers[c]) &+ outputZeroPoint
            y[i] = Int8(truncatingIfNeeded: min(max(value, range.lowerBound), range.upperBound))
        }
    }
}
