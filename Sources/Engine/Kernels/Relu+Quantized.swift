extension Relu {
    /// Integer RELU / RELU6 / RELU_N1_TO_1 (uint8, int8): clamp to the real range `lower ... upper`
    /// (`upper` is infinite for RELU).
    ///
    /// TFLite (`ReluPrepare`, `QuantizedReluX`, reference `ReluX`) first requantizes each input to
    /// the output's scale, `zpOut + q(x − zpIn)` with `q` the multiplier of `inputScale / outputScale`
    /// (divided in Float, then widened), and clamps to `zpOut + roundf(bound / outputScale)` within
    /// the type's range.
    static func prepareQuantized(_ context: inout PrepareContext, lower: Float, upper: Float) throws(ModelError) -> any Kernel {
        let (input, inputQ, _, outputQ) = try context.unaryQuantized()
        let multiplier = QuantizedMultiplier(Double(inputQ.scale / outputQ.scale))
        let typeRange = input.dataType == .int8 ? int32Range(of: Int8.self) : int32Range(of: UInt8.self)
        func quantized(_ bound: Float) -> Int32 {
            outputQ.zeroPoint &+ truncatingToInt32LikeX86((bound / outputQ.scale).rounded(.toNearestOrAwayFromZero))
        }
        let low = max(typeRange.lowerBound, quantized(lower))
        let high = upper == .infinity ? typeRange.upperBound : min(typeRange.upperBound, quantized(upper))
        return context.byteLookupKernel(input) { x in
            let requantized = outputQ.zeroPoint &+ multiplyByQuantizedMultiplier(x - inputQ.zeroPoint, multiplier)
            return min(max(requantized, low), high)
        }
    }
}
