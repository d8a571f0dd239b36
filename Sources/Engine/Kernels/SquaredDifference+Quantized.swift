extension SquaredDifference {
    /// int8 SQUARED_DIFFERENCE, as TFLite's kernel: each operand is shifted left by 7 and scaled
    /// by `scale_i / (2 · max(scale1, scale2))` (multipliers below one), the difference squared in
    /// Int32, then scaled by `(2 · maxScale)² / (2^14 · outputScale)`:
    ///
    ///     a = RDPOT(SRDHM((q1 − zp1) · 2^7, m1), −s1), b likewise
    ///     out = clamp(zpOut + RDPOT(SRDHM((a − b)², M), −S), −128, 127)
    static func prepareQuantized(_ context: inout PrepareContext, broadcast: Broadcast) throws(ModelError) -> any Kernel {
        let (_, lhsQ, _, rhsQ, _, outputQ) = try context.binaryQuantized()
        let leftShift = 7
        // C++: 2 * std::max(float, float) is a float; the rest is divided in double.
        let twiceMaxScale = Double(2 * max(lhsQ.scale, rhsQ.scale))
        let lhsMultiplier = QuantizedMultiplier(Double(lhsQ.scale) / twiceMaxScale)
        let rhsMultiplier = QuantizedMultiplier(Double(rhsQ.scale) / twiceMaxScale)
        let outputMultiplier = QuantizedMultiplier(twiceMaxScale * twiceMaxScale / Double(Float(1 << (2 * leftShift)) * outputQ.scale))
        for m in [lhsMultiplier, rhsMultiplier, outputMultiplier] where m.shift > 0 {
            throw context.unsupported("scales \(lhsQ.scale), \(rhsQ.scale) and output scale \(outputQ.scale) need a multiplier above one")
        }
        return SquaredDifferenceInt8(lhs: context.node.inputs[Self.lhs], rhs: context.node.inputs[Self.rhs],
                                     output: context.node.outputs[Self.output], broadcast: broadcast,
                                     lhsZeroPoint: lhsQ.zeroPoint, rhsZeroPoint: rhsQ.zeroPoint, outputZeroPoint: outputQ.zeroPoint,
                                     lhsMultiplier: lhsMultiplier, rhsMultiplier: rhsMultiplier, outputMultiplier: outputMultiplier,
                                     leftShift: leftShift)
    }
}

struct SquaredDifferenceInt8: Kernel {
    let lhs: Int, rhs: Int, output: Int
    let broadcast: Broadcast
    let lhsZeroPoint: Int32, rhsZeroPoint: Int32, outputZeroPoint: Int32
    let lhsMultiplier: QuantizedMultiplier, rhsMultiplier: QuantizedMultiplier, outputMultiplier: QuantizedMultiplier
    let leftShift: Int

    func eval(_ memory: TensorMemory) {
        let zx = lhsZeroPoint, zy = rhsZeroPoint, zOut = outputZeroPoint
        let mx = lhsMultiplier, my = rhsMultiplier, mOut = outputMultiplier, shift = leftShift
        broadcast.apply(memory.input(lhs, as: Int8.self), memory.input(rhs, as: Int8.self), memory.output(output, as: Int8.self)) { x, y in
            let a = multiplyByQuantizedMultiplierSmallerThanOneExp((Int32(x) - zx) << shift, mx)
            let b = multiplyByQuantizedMultiplierSmallerThanOneExp((Int32(y) - zy) << shift, my)
            let d = a &- b
            let value = multiplyByQuantizedMultiplierSmallerThanOneExp(d &* d, mOut) &+ zOut
            return Int8(truncatingIfNeeded: min(max(value, -128), 127))
        }
    }
}
