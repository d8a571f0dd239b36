/// The quantization CONV_2D and DEPTHWISE_CONV_2D share (TFLite's
/// `PopulateConvolutionQuantizationParams`): uint8 weights per tensor with a zero point, or int8
/// symmetric weights per tensor or per output channel; int32 bias; one requantization (multiplier,
/// output zero point, activation clamp) per output channel.
struct ConvolutionQuantization {
    let encoding: ActivationEncoding
    /// How the filter's bytes are read.
    let filter: WeightEncoding
    let requantization: ChannelRequantization
    let hasBias: Bool

    /// Validates the operator's tensors and derives the multipliers.
    /// - Parameters: the tensor slots, the output channel count, and the filter dimension that
    ///   per-channel scales run along (0 for CONV_2D, 3 for DEPTHWISE_CONV_2D).
    init(_ context: PrepareContext, input: Int, filter: Int, bias: Int, output: Int,
         channels: Int, channelDimension: Int, activation: FusedActivation) throws(ModelError) {
        let operands = try context.quantizedOperands(input: input, weights: filter, bias: bias, output: output, role: "filter")
        let type = operands.type, filter = operands.weights, filterQ = operands.weightsQ, biasTensor = operands.bias
        let inputQ = operands.inputQ, outputQ = operands.outputQ
        encoding = operands.encoding
        hasBias = biasTensor != nil
        let multipliers: [QuantizedMultiplier]
        if type == .uint8 {
            guard filterQ.scales.count == 1 else {
                throw context.unsupported("uint8 filter '\(filter.name)' has \(filterQ.scales.count) scales; per-channel quantization needs int8")
            }
            try context.checkZeroPoints(filterQ, of: filter, role: "filter")
            self.filter = WeightEncoding(.uint8, zeroPoint: Int32(filterQ.zeroPoint))
            try context.checkBiasScale(biasTensor, inputScale: inputQ.scale, filterScale: filterQ.scale, outputScale: outputQ.scale)
            guard let m = QuantizedMultiplier.perTensorConvolution(inputScale: inputQ.scale, filterScale: filterQ.scale,
                                                                  outputScale: outputQ.scale) else {
                throw context.invalid("input scale \(inputQ.scale) × filter scale \(filterQ.scale) is negative")
            }
            multipliers = Array(repeating: m, count: channels)
        } else {
            let count = filterQ.scales.count
            guard count == 1 || (filterQ.quantizedDimension == channelDimension && count == channels) else {
                throw context.invalid("filter '\(filter.name)' has \(count) scales along dimension \(filterQ.quantizedDimension), expected 1 or \(channels) along dimension \(channelDimension)")
            }
            guard filterQ.zeroPoints.allSatisfy({ $0 == 0 }) else {
                throw context.invalid("int8 filter '\(filter.name)' has non-zero zero points; TFLite requires symmetric weights")
            }
            self.filter = WeightEncoding(.int8, zeroPoint: 0)
            multipliers = QuantizedMultiplier.perChannel(inputScale: inputQ.scale, filterScales: filterQ.scales,
                                                         outputScale: outputQ.scale, channelCount: channels)
        }
        let range = try context.integerActivationRange(activation, output: operands.output, outputQ)
        requantization = ChannelRequantization(multipliers, zeroPoint: outputQ.zeroPoint,
                                              range: (range.lowerBound, range.upperBound))
    }
}
