extension LeakyRelu {
    /// Integer leaky ReLU (uint8, int8), as TFLite's `LeakyReluPrepare` and reference
    /// `QuantizeLeakyRelu`: `x − zpIn ≥ 0` is rescaled by `inputScale / outputScale`, a negative
    /// one by `inputScale · alpha / outputScale` (both computed in Float, then widened), each with
    /// its own quantized multiplier; a negative alpha multiplies by `|multiplier|` and negates.
    static func prepareQuantized(_ context: inout PrepareContext, alpha: Float) throws(ModelError) -> any Kernel {
        let (input, inputQ, _, outputQ) = try context.unaryQuantized()
        let identity = QuantizedMultiplier(Double(inputQ.scale / outputQ.scale))
        let scaledAlpha = QuantizedMultiplier(Double(inputQ.scale * alpha / outputQ.scale))
        let alphaIsNegative = scaledAlpha.multiplier < 0
        // Int32.min negates to itself, as in the C++.
        let alphaMagnitude = QuantizedMultiplier(multiplier: alphaIsNegative ? 0 &- scaledAlpha.multiplier : scaledAlpha.multiplier,
                                                 shift: scaledAlpha.shift)
        let typeRange = input.dataType == .int8 ? int32Range(of: Int8.self) : int32Range(of: UInt8.self)
        return context.byteLookupKernel(input) { x in
            let value = x - inputQ.zeroPoint
            var result = outputQ.zeroPoint
            if value >= 0 {
                result &+= multiplyByQuantizedMultiplier(value, identity)
            } else {
                let scaled = multiplyByQuantizedMultiplier(value, alphaMagnitude)
                result &+= alphaIsNegative ? 0 &- scaled : scaled
            }
            return min(max(result, typeRange.lowerBound), typeRange.upperBound)
        }
    }
}
