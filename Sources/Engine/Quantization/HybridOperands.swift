/// The operands every hybrid (dynamic-range) operator checks the same way: constant, symmetric
/// int8 weights with quantization parameters, a float32 output, and an optional float32 bias.
/// (How many scales the weights may have differs per operator and stays with it.)
extension PrepareContext {
    /// The int8 weights at input `slot` and their quantization; `role` names them in errors
    /// ("filter", "weights"). Also checks that output `output` is float32.
    func hybridWeights(_ slot: Int, output: Int, role: String) throws(ModelError) -> (tensor: TensorDescriptor, quantization: QuantizationParameters) {
        let weights = try input(slot)
        try expect(weights, is: .int8, role: role)
        guard weights.isConstant else { throw unsupported("hybrid \(role) '\(weights.name)' must be a constant tensor") }
        try expect(try self.output(output), is: .float32, role: "output")
        guard let q = weights.quantization, !q.scales.isEmpty else {
            throw invalid("hybrid \(role) '\(weights.name)' has no quantization parameters")
        }
        guard q.zeroPoints.allSatisfy({ $0 == 0 }) else {
            throw unsupported("hybrid \(role) '\(weights.name)' has non-zero zero points; TFLite's int8 \(role) values are symmetric")
        }
        return (weights, q)
    }

    /// The float32 bias at input `slot`, copied, or nil when the operator has none.
    func hybridBias(_ slot: Int) throws(ModelError) -> PackedBuffer<Float>? {
        guard let b = optionalInput(slot) else { return nil }
        try expect(b, is: .float32, role: "bias")
        return PackedBuffer(try constant(slot).elements(as: Float.self))
    }

    /// Everything a hybrid CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED prepares alike:
    /// `hybridWeights`, their scale count (one per `channels` along `dimension`, or also a
    /// single one when `perTensor` is allowed), `hybridBias` and the float clamp of `activation`.
    /// `what` names the channels in errors ("output channel", "unit").
    func hybridOperands(weights slot: Int, bias: Int, output: Int, role: String, channels: Int, dimension: Int,
                        perTensor: Bool, what: String, activation: FusedActivation) throws(ModelError)
        -> (tensor: TensorDescriptor, quantization: QuantizationParameters, bias: PackedBuffer<Float>?, range: ClosedRange<Float>) {
        let (weights, q) = try hybridWeights(slot, output: output, role: role)
        guard (perTensor && q.scales.count == 1) || (q.scales.count == channels && q.quantizedDimension == dimension) else {
            if q.scales.count == 1 {
                throw unsupported("hybrid \(role) '\(weights.name)' has one scale; this operator needs one per \(what) along dimension \(dimension) (TFLite reads per-channel scales even for a per-tensor \(role))")
            }
            let expected = perTensor ? "one scale or one per \(what) (dimension \(dimension))" : "one scale per \(what) along dimension \(dimension)"
            throw invalid("hybrid \(role) '\(weights.name)' has \(q.scales.count) scales along dimension \(q.quantizedDimension), expected \(expected)")
        }
        return (weights, q, try hybridBias(bias), try floatActivationRange(activation))
    }
}
