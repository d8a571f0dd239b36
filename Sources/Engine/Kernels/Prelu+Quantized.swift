extension Prelu {
    /// Quantized PRELU (uint8, int8), as TFLite's reference kernel, with two multipliers:
    ///
    ///     x = q − zpIn
    ///     x ≥ 0: out = zpOut + m1(x)                 m1 = inputScale / outputScale
    ///     x < 0: out = zpOut + m2(x · (a − zpAlpha)) m2 = inputScale · alphaScale / outputScale
    ///
    /// (scales combined in Float, then widened), clamped to the type's range.
    static func prepareQuantized(_ context: inout PrepareContext, broadcast: Broadcast) throws(ModelError) -> any Kernel {
        let (input, inputQ, _, alphaQ, _, outputQ) = try context.binaryQuantized(roles: ("input", "alpha"))
        let identity = QuantizedMultiplier(Double(inputQ.scale / outputQ.scale))
        let negative = QuantizedMultiplier(Double(inputQ.scale * alphaQ.scale / outputQ.scale))
        let (i, a, o) = (context.node.inputs[Self.input], context.node.inputs[Self.alpha], context.node.outputs[Self.output])
        if input.dataType == .int8 {
            return PreluQuantized<Int8>(input: i, alpha: a, output: o, broadcast: broadcast, inputZeroPoint: inputQ.zeroPoint,
                                        alphaZeroPoint: alphaQ.zeroPoint, outputZeroPoint: outputQ.zeroPoint,
                                        identity: identity, negative: negative)
        }
        return PreluQuantized<UInt8>(input: i, alpha: a, output: o, broadcast: broadcast, inputZeroPoint: inputQ.zeroPoint,
                                     alphaZeroPoint: alphaQ.zeroPoint, outputZeroPoint: outputQ.zeroPoint,
                                     identity: identity, negative: negative)
    }
}

struct PreluQuantized<T: FixedWidthInteger & Sendable>: Kernel {
    let input: Int, alpha: Int, output: Int
    let broadcast: Broadcast
    let inputZeroPoint: Int32, alphaZeroPoint: Int32, outputZeroPoint: Int32
    let identity: QuantizedMultiplier, negative: QuantizedMultiplier

    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func eval(_ memory: TensorMemory) {
        let zx = inputZeroPoint, za = alphaZeroPoint, zOut = outputZeroPoint, m1 = identity, m2 = negative
        let lower = Int32(T.min), upper = Int32(T.max)
        broadcast.apply(memory.input(input, as: T.self), memory.input(alpha, as: T.self), memory.output(output, as: T.self)) { q, a in
            let x = Int32(q) - zx
            let value = x >= 0 ? multiplyByQuantizedMultiplier(x, m1) : multiplyByQuantizedMultiplier(x * (Int32(a) - za), m2)
            return T(truncatingIfNeeded: min(max(value &+ zOut, lower), upper))
        }
    }
}
