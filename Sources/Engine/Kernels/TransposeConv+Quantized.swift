extension TransposeConv {
    /// Quantized TRANSPOSE_CONV, as TFLite's reference kernels: the same scatter into an Int32
    /// scratch buffer of `(q − zpIn) · (w − zpFilter)`, then per output element
    /// `clamp(zpOut + m_c(acc + bias_c))` with the clamp of the fused activation.
    ///
    /// - int8 (`reference_integer_ops::TransposeConv`): a symmetric filter, one scale or one per
    ///   output channel; `m_c` is the per-channel multiplier of `inputScale · filterScale_c /
    ///   outputScale` (Double) even for a single scale.
    /// - uint8 (`reference_ops::TransposeConv`): one filter scale and zero point; the multiplier is
    ///   the legacy per-tensor one (`inputScale · filterScale` in Float, then divided in Double).
    static func prepareQuantized(_ context: inout PrepareContext, geometry: Geometry, activation: FusedActivation) throws(ModelError) -> any Kernel {
        let input = try context.input(Self.input), filter = try context.input(Self.filter), output = try context.output(Self.output)
        try context.expect(filter, is: input.dataType, role: "filter")
        try context.expect(output, is: input.dataType, role: "output")
        let inputQ = try context.affineQuantization(of: input, role: "input")
        let outputQ = try context.affineQuantization(of: output, role: "output")
        guard let filterQ = filter.quantization, filterQ.scales.count == 1 || (filterQ.scales.count == geometry.outputChannels && filterQ.quantizedDimension == 0) else {
            throw context.invalid("filter '\(filter.name)' needs one scale or one per output channel along dimension 0")
        }
        let isUInt8 = input.dataType == .uint8
        guard isUInt8 ? filterQ.scales.count == 1 && (0 ... 255).contains(filterQ.zeroPoint) : filterQ.zeroPoints.allSatisfy({ $0 == 0 }) else {
            throw context.unsupported("filter '\(filter.name)': int8 filters must be symmetric, uint8 filters per tensor with a zero point in 0...255")
        }
        var bias = [Int32](repeating: 0, count: geometry.outputChannels)
        if let b = context.optionalInput(Self.bias) {
            try context.expect(b, is: .int32, role: "bias")
            bias = try context.constant(Self.bias).array(of: Int32.self)
        }
        var multipliers: [QuantizedMultiplier]
        if isUInt8 {
            guard let m = QuantizedMultiplier.perTensorConvolution(inputScale: inputQ.scale, filterScale: filterQ.scale, outputScale: outputQ.scale) else {
                throw context.invalid("input scale \(inputQ.scale) × filter scale \(filterQ.scale) is negative")
            }
            multipliers = Array(repeating: m, count: geometry.outputChannels)
        } else {
            multipliers = QuantizedMultiplier.perChannel(inputScale: inputQ.scale, filterScales: filterQ.scales,
                                                         outputScale: outputQ.scale, channelCount: geometry.outputChannels)
        }
        let range = try context.integerActivationRange(activation, output: output, outputQ)
        let g = geometry
        context.requestScratch(bytes: g.batches * g.outputHeight * g.outputWidth * g.outputChannels * MemoryLayout<Int32>.stride)
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        if isUInt8 {
            return TransposeConvQuantized<UInt8>(geometry: g, filter: PackedBuffer(try context.constant(Self.filter).elements(as: UInt8.self)),
                                                 bias: PackedBuffer(bias), multipliers: multipliers, inputZeroPoint: inputQ.zeroPoint,
                                                 filterZeroPoint: Int32(filterQ.zeroPoint), outputZeroPoint: outputQ.zeroPoint,
                                                 range: range, input: i, output: o)
        }
        return TransposeConvQuantized<Int8>(geometry: g, filter: PackedBuffer(try context.constant(Self.filter).elements(as: Int8.self)),
                                            bias: PackedBuffer(bias), multipliers: multipliers, inputZeroPoint: inputQ.zeroPoint,
                                            filterZeroPoint: 0, outputZeroPoint: outputQ.zeroPoint, range: range, input: i, output: o)
    }
}

struct TransposeConvQuantized<T: FixedWidthInteger & Sendable>: Kernel {
    let geometry: TransposeConv.Geometry
    let filter: PackedBuffer<T>
    let bias: PackedBuffer<Int32>
    let multipliers: [QuantizedMultiplier]
    let inputZeroPoint: Int32, filterZeroPoint: Int32, outputZeroPoint: Int32
    let range: ClosedRange<Int32>
    let input: Int, output: Int

    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func eval(_ memory: TensorMemory) {
        let g = geometry
        let x = memory.input(input, as: T.self), y = memory.output(output, as: T.self), w = filter.pointer
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
                                    out[oc] &+= value * (Int32(w[((oc * g.filterHeight + fy) * g.filterWidth + fx) * g.inputChannels + inC]) - filterZeroPoint)
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
            y[i] = T(truncatingIfNeeded: min(max(value, range.lowerBound), range.upperBound))
        }
    }
}
