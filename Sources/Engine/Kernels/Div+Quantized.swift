extension Div {
    /// Quantized DIV (uint8, int8), as TFLite's reference `DivElementwise` /
    /// `BroadcastDivSlowQuantized`:
    ///
    ///     x = q1 − zp1, y = q2 − zp2            (both negated when y < 0)
    ///     (r, bits) = GetReciprocal(y, 31)      // 1/y as Q0.31 and the bits of y above 1.0
    ///     h = CountLeadingSignBits(x)
    ///     u = SRDHM(x · 2^h, r)
    ///     out = clamp(zpOut + RDPOT(SRDHM(u, M), −(S − bits − h)))
    ///
    /// with `M · 2^S` the multiplier of `scale1 / (scale2 · scaleOut)` (Float, then widened).
    /// A zero divisor (TFLite only checks it in debug builds) gives the clamp bound of `x`'s sign.
    static func prepareQuantized(_ context: inout PrepareContext, broadcast: Broadcast, activation: FusedActivation) throws(ModelError) -> any Kernel {
        let (lhs, lhsQ, _, rhsQ, output, outputQ) = try context.binaryQuantized()
        let multiplier = QuantizedMultiplier(Double(lhsQ.scale / (rhsQ.scale * outputQ.scale)))
        let range = try context.integerActivationRange(activation, output: output, outputQ)
        let (l, r, o) = (context.node.inputs[Self.lhs], context.node.inputs[Self.rhs], context.node.outputs[Self.output])
        if lhs.dataType == .int8 {
            return DivQuantized<Int8>(lhs: l, rhs: r, output: o, broadcast: broadcast, lhsZeroPoint: lhsQ.zeroPoint,
                                      rhsZeroPoint: rhsQ.zeroPoint, multiplier: multiplier, outputZeroPoint: outputQ.zeroPoint, range: range)
        }
        return DivQuantized<UInt8>(lhs: l, rhs: r, output: o, broadcast: broadcast, lhsZeroPoint: lhsQ.zeroPoint,
                                   rhsZeroPoint: rhsQ.zeroPoint, multiplier: multiplier, outputZeroPoint: outputQ.zeroPoint, range: range)
    }

    /// One quantized quotient (the arithmetic documented on `prepareQuantized`).
    @inline(__always)
    static func quantizedQuotient(_ a: Int32, _ b: Int32, multiplier: QuantizedMultiplier, outputZeroPoint: Int32,
                                  range: ClosedRange<Int32>) -> Int32 {
        var x = a, y = b
        if y == 0 { return x == 0 ? min(max(outputZeroPoint, range.lowerBound), range.upperBound) : x > 0 ? range.upperBound : range.lowerBound }
        if y < 0 {
            x = -x
            y = -y
        }
        let (reciprocal, bitsOverUnit) = FixedPoint.reciprocal(y, integerBits: 31)
        let headroom = countLeadingSignBits(x)
        let unscaled = multiplyByQuantizedMultiplierGreaterThanOne(x, multiplier: reciprocal, leftShift: headroom)
        let totalShift = multiplier.shift - bitsOverUnit - headroom
        let value = outputZeroPoint &+ multiplyByQuantizedMultiplierSmallerThanOneExp(unscaled, multiplier: multiplier.multiplier,
                                                                                       leftShift: totalShift)
        return min(max(value, range.lowerBound), range.upperBound)
    }
}

/// TFLite's `CountLeadingSignBits<int32_t>`: the redundant sign bits of `x` (31 for 0 and −1,
/// 0 for `Int32.min`).
///
/// Examples: `1` → `30`; `-2` → `30`; `1 << 30` → `0`.
@inline(__always)
func countLeadingSignBits(_ x: Int32) -> Int {
    if x >= 0 { return countLeadingZeros(x) - 1 }
    if x == Int32.min { return 0 }
    return countLeadingZeros(Int32(bitPattern: 2 &* UInt32(bitPattern: -x) &- 1))
}

struct DivQuantized<T: FixedWidthInteger & Sendable>: Kernel {
    let lhs: Int, rhs: Int, output: Int
    let broadcast: Broadcast
    let lhsZeroPoint: Int32, rhsZeroPoint: Int32
    let multiplier: QuantizedMultiplier
    let outputZeroPoint: Int32
    let range: ClosedRange<Int32>

    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func eval(_ memory: TensorMemory) {
        let zx = lhsZeroPoint, zy = rhsZeroPoint, m = multiplier, zOut = outputZeroPoint, range = range
        broadcast.apply(memory.input(lhs, as: T.self), memory.input(rhs, as: T.self), memory.output(output, as: T.self)) { x, y in
            T(truncatingIfNeeded: Div.quantizedQuotient(Int32(x) - zx, Int32(y) - zy, multiplier: m,
                                                        outputZeroPoint: zOut, range: range))
        }
    }
}
