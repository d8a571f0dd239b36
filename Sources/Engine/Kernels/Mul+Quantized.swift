extension Mul {
    /// Quantized MUL (uint8, int8), as TFLite's reference kernels:
    /// `zpOut + m((x − zpX)(y − zpY))`, with `m` the multiplier of `scaleX · scaleY / scaleOut`
    /// (computed in Float, then widened), clamped to the fused activation's range.
    static func prepareQuantized(_ context: inout PrepareContext, broadcast: Broadcast, activation: FusedActivation) throws(ModelError) -> any Kernel {
        let (lhs, lhsQ, _, rhsQ, output, outputQ) = try context.binaryQuantized()
        let multiplier = QuantizedMultiplier(Double(lhsQ.scale * rhsQ.scale / outputQ.scale))
        let range = try context.integerActivationRange(activation, output: output, outputQ)
        let (l, r, o) = (context.node.inputs[Self.lhs], context.node.inputs[Self.rhs], context.node.outputs[Self.output])
        if lhs.dataType == .int8 {
            return MulQuantized<Int8>(lhs: l, rhs: r, output: o, broadcast: broadcast, lhsZeroPoint: lhsQ.zeroPoint,
                                      rhsZeroPoint: rhsQ.zeroPoint, multiplier: multiplier, outputZeroPoint: outputQ.zeroPoint, range: range)
        }
        return MulQuantized<UInt8>(lhs: l, rhs: r, output: o, broadcast: broadcast, lhsZeroPoint: lhsQ.zeroPoint,
                                   rhsZeroPoint: rhsQ.zeroPoint, multiplier: multiplier, outputZeroPoint: outputQ.zeroPoint, range: range)
    }
}

struct MulQuantized<T: FixedWidthInteger & Sendable>: Kernel {
    let lhs: Int, rhs: Int, output: Int
    let broadcast: Broadcast
    let lhsZeroPoint: Int32, rhsZeroPoint: Int32
    let multiplier: QuantizedMultiplier
    let outputZeroPoint: Int32
    let range: ClosedRange<Int32>

    // Kernels run behind `any Kernel`, whose witness would be the unspecialised generic code;
    // these make it jump to the 8-bit specialisations.
    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func eval(_ memory: TensorMemory) {
        let zx = lhsZeroPoint, zy = rhsZeroPoint, zOut = outputZeroPoint, m = multiplier
        let lower = range.lowerBound, upper = range.upperBound
        broadcast.apply(memory.input(lhs, as: T.self), memory.input(rhs, as: T.self), memory.output(output, as: T.self)) { x, y in
            // Zero points lie in the type's range, so |product| ≤ 255².
            let product = (Int32(x) - zx) * (Int32(y) - zy)
            let value = zOut &+ multiplyByQuantizedMultiplier(product, m)
            return T(truncatingIfNeeded: min(max(value, lower), upper))
        }
    }
}
