extension Conv2D {
    /// Hybrid CONV_2D (float32 input and output, constant int8 filter), as TFLite's conv.cc:
    ///
    /// - **per channel** (filter scales that differ, `EvalHybridPerChannel`): each batch is
    ///   quantized asymmetrically (`HybridInputQuantization.asymmetric`); per output
    ///   `acc = Σ filter · (q − zp_b)` over the window's pixels inside the input, and
    ///   `output = act((Float(acc) · filterScale_o) · rowScale_b + bias_o)`;
    /// - **per tensor** (one scale, or all equal: `EvalHybrid`): each batch is quantized
    ///   symmetrically, `acc = Σ filter · q` (padding reads zeros), and
    ///   `output = act(Float(acc) · (rowScale_b · filterScale) + bias_o)`.
    static func prepareHybrid(_ context: inout PrepareContext, geometry: Geometry, activation: FusedActivation) throws(ModelError) -> any Kernel {
        let (_, q, bias, range) = try context.hybridOperands(weights: Self.filter, bias: Self.bias, output: Self.output, role: "filter",
                                                            channels: geometry.outputChannels, dimension: 0, perTensor: true,
                                                            what: "output channel", activation: activation)
        let g = geometry
        context.requestScratch(bytes: g.batches * g.inputHeight * g.inputWidth * g.inputChannels)
        let perChannel = q.scales.contains { $0 != q.scales[0] }
        return Conv2DHybrid(geometry: g, filter: PackedBuffer(try context.constant(Self.filter).elements(as: Int8.self)),
                            scales: perChannel ? q.scales : [q.scales[0]], perChannel: perChannel, bias: bias,
                            lower: range.lowerBound, upper: range.upperBound,
                            input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
    }
}

/// A plain scalar loop over output pixels (correctness first); see `Conv2D.prepareHybrid`.
struct Conv2DHybrid: Kernel {
    let geometry: Conv2D.Geometry
    /// `[O, kH, kW, I]`.
    let filter: PackedBuffer<Int8>
    /// One scale per output channel when `perChannel`, else one.
    let scales: [Float]
    let perChannel: Bool
    let bias: PackedBuffer<Float>?
    let lower: Float, upper: Float
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        let g = geometry
        let x = memory.input(input, as: Float.self), y = memory.output(output, as: Float.self)
        let q = memory.scratch(as: Int8.self), w = filter.pointer
        let imageSize = g.inputHeight * g.inputWidth * g.inputChannels
        for b in 0 ..< g.batches {
            let image = q + b * imageSize
            var rowScale: Float, zeroPoint: Int32 = 0
            if perChannel {
                (rowScale, zeroPoint) = HybridInputQuantization.asymmetric(x + b * imageSize, count: imageSize, into: image)
            } else {
                rowScale = HybridInputQuantization.symmetric(x + b * imageSize, count: imageSize, into: image)
            }
            let tensorScale = rowScale * scales[0]
            for outY in 0 ..< g.outputHeight {
                for outX in 0 ..< g.outputWidth {
                    let originY = outY * g.strideHeight - g.padTop, originX = outX * g.strideWidth - g.padLeft
                    let out = y + ((b * g.outputHeight + outY) * g.outputWidth + outX) * g.outputChannels
                    for oc in 0 ..< g.outputChannels {
                        var acc: Int32 = 0
                        // `image` holds this batch alone, so its taps are those of batch 0.
                        g.forEachTapInside(batch: 0, originY: originY, originX: originX) { pixelOffset, tap in
                            let pixel = image + pixelOffset, taps = w + (oc * g.filterHeight * g.filterWidth + tap) * g.inputChannels
                            for ic in 0 ..< g.inputChannels { acc &+= Int32(taps[ic]) * (Int32(pixel[ic]) - zeroPoint) }
                        }
                        let scaled = perChannel ? Float(acc) * scales[oc] * rowScale : Float(acc) * tensorScale
                        out[oc] = FloatGEMM.clamp(scaled + (bias?.pointer[oc] ?? 0), lower, upper)
                    }
                }
            }
        }
    }
}
