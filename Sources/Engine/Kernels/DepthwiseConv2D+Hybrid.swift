extension DepthwiseConv2D {
    /// Hybrid DEPTHWISE_CONV_2D (float32 input and output, constant int8 filter with one scale per
    /// output channel), as TFLite's `EvalHybridPerChannel` and its reference
    /// `DepthwiseConvHybridPerChannel`: each batch is quantized asymmetrically
    /// (`HybridInputQuantization.asymmetric`); per output `acc = Σ filter · (q − zp_b)` over the
    /// window's pixels inside the input; `output = act(Float(acc) · (filterScale_o · rowScale_b) + bias_o)`.
    ///
    /// A per-tensor filter is rejected: TFLite indexes its scales by output channel anyway and
    /// reads past the single scale (its results change from run to run).
    static func prepareHybrid(_ context: inout PrepareContext, geometry: Geometry, activation: FusedActivation) throws(ModelError) -> any Kernel {
        let (_, q, bias, range) = try context.hybridOperands(weights: Self.filter, bias: Self.bias, output: Self.output, role: "filter",
                                                            channels: geometry.outputChannels, dimension: 3, perTensor: false,
                                                            what: "output channel", activation: activation)
        let g = geometry
        context.requestScratch(bytes: g.batches * g.inputHeight * g.inputWidth * g.inputChannels)
        return DepthwiseConv2DHybrid(geometry: g, filter: PackedBuffer(try context.constant(Self.filter).elements(as: Int8.self)),
                                     scales: q.scales, bias: bias, lower: range.lowerBound, upper: range.upperBound,
                                     input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
    }
}

/// A plain scalar loop (correctness first); see `DepthwiseConv2D.prepareHybrid`.
struct DepthwiseConv2DHybrid: Kernel {
    let geometry: DepthwiseConv2D.Geometry
    /// `[1, kH, kW, O]`.
    let filter: PackedBuffer<Int8>
    let scales: [Float]
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
            let (rowScale, zeroPoint) = HybridInputQuantization.asymmetric(x + b * imageSize, count: imageSize, into: image)
            for outY in 0 ..< g.outputHeight {
                for outX in 0 ..< g.outputWidth {
                    let originY = outY * g.strideHeight - g.padTop, originX = outX * g.strideWidth - g.padLeft
                    let out = y + ((b * g.outputHeight + outY) * g.outputWidth + outX) * g.outputChannels
                    for ic in 0 ..< g.inputChannels {
                        for m in 0 ..< g.depthMultiplier {
                            let oc = ic * g.depthMultiplier + m
                            var acc: Int32 = 0
                            for fy in 0 ..< g.filterHeight {
                                let inY = originY + fy * g.dilationHeight
                                guard inY >= 0 && inY < g.inputHeight else { continue }
                                for fx in 0 ..< g.filterWidth {
                                    let inX = originX + fx * g.dilationWidth
                                    guard inX >= 0 && inX < g.inputWidth else { continue }
                                    let value = Int32(image[(inY * g.inputWidth + inX) * g.inputChannels + ic]) - zeroPoint
                                    acc &+= Int32(w[(fy * g.filterWidth + fx) * g.outputChannels + oc]) * value
                                }
                            }
                            let scaled = Float(acc) * (scales[oc] * rowScale)
                            out[oc] = FloatGEMM.clamp(scaled + (bias?.pointer[oc] ?? 0), lower, upper)
                        }
                    }
                }
            }
        }
    }
}
