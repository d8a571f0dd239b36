extension Add {
    /// Quantized ADD (uint8, int8), as TFLite's reference kernels: both operands are moved to a
    /// common fixed-point scale (`AdditiveRescaling`), added, and rescaled to the output.
    static func prepareQuantized(_ context: inout PrepareContext, broadcast: Broadcast, activation: FusedActivation) throws(ModelError) -> any Kernel {
        try AdditiveQuantized.prepare(&context, broadcast: broadcast, activation: activation, subtract: false)
    }
}

/// The rescaling of TFLite's 8-bit ADD and SUB (`Prepare` in add.cc, `PrepareGeneralSubOp` in
/// sub.cc): each operand `x − zp` is shifted left by 20 bits and multiplied by
/// `scale / (2 · maxInputScale)`; the sum (or difference) is multiplied by
/// `2 · maxInputScale / (2^20 · outputScale)`. The twice-max scale and `2^20 · outputScale` are
/// Float products, the quotients Double, exactly as TFLite writes them.
enum AdditiveQuantized {
    static let leftShift = 20

    static func prepare(_ context: inout PrepareContext, broadcast: Broadcast, activation: FusedActivation,
                        subtract: Bool) throws(ModelError) -> any Kernel {
        let lhs = try context.input(0), rhs = try context.input(1), output = try context.output(0)
        let lhsQ = try context.affineQuantization(of: lhs, role: "input 0")
        let rhsQ = try context.affineQuantization(of: rhs, role: "input 1")
        let outputQ = try context.affineQuantization(of: output, role: "output")
        let twiceMaxInputScale = Double(2 * max(lhsQ.scale, rhsQ.scale))
        let realOutput = twiceMaxInputScale / Double(Float(1 << leftShift) * outputQ.scale)
        guard let lhsMultiplier = QuantizedMultiplier.smallerThanOneExp(Double(lhsQ.scale) / twiceMaxInputScale),
              let rhsMultiplier = QuantizedMultiplier.smallerThanOneExp(Double(rhsQ.scale) / twiceMaxInputScale),
              let outputMultiplier = QuantizedMultiplier.smallerThanOneExp(realOutput) else {
            throw context.unsupported("input scales \(lhsQ.scale), \(rhsQ.scale) and output scale \(outputQ.scale) need a rescaling multiplier ≥ 1")
        }
        let range = try context.integerActivationRange(activation, output: output, outputQ)

        func table<T: FixedWidthInteger>(_: T.Type, _ zeroPoint: Int32, _ multiplier: QuantizedMultiplier,
                                         negated: Bool) -> PackedBuffer<Int32> {
            byteIndexedTable(T.self) { x in
                // |x − zp| ≤ 255, so the shifted value and the product stay far inside Int32.
                let scaled = multiplyByQuantizedMultiplierSmallerThanOneExp((x - zeroPoint) << leftShift, multiplier)
                return negated ? -scaled : scaled
            }
        }
        let (l, r, o) = (context.node.inputs[0], context.node.inputs[1], context.node.outputs[0])
        if lhs.dataType == .int8 {
            return AdditiveQuantizedKernel<Int8>(lhs: l, rhs: r, output: o, broadcast: broadcast,
                                                 lhsTable: table(Int8.self, lhsQ.zeroPoint, lhsMultiplier, negated: false),
                                                 rhsTable: table(Int8.self, rhsQ.zeroPoint, rhsMultiplier, negated: subtract),
                                                 outputMultiplier: outputMultiplier, outputZeroPoint: outputQ.zeroPoint, range: range)
        }
        return AdditiveQuantizedKernel<UInt8>(lhs: l, rhs: r, output: o, broadcast: broadcast,
                                              lhsTable: table(UInt8.self, lhsQ.zeroPoint, lhsMultiplier, negated: false),
                                              rhsTable: table(UInt8.self, rhsQ.zeroPoint, rhsMultiplier, negated: subtract),
                                              outputMultiplier: outputMultiplier, outputZeroPoint: outputQ.zeroPoint, range: range)
    }
}

/// 8-bit ADD or SUB: each operand's rescaled value comes from a 256-entry table (SUB's right
/// table is negated, which is exact), the two are added and rescaled to the output.
struct AdditiveQuantizedKernel<T: FixedWidthInteger & Sendable>: Kernel {
    let lhs: Int, rhs: Int, output: Int
    let broadcast: Broadcast
    let lhsTable: PackedBuffer<Int32>, rhsTable: PackedBuffer<Int32>
    let outputMultiplier: QuantizedMultiplier
    let outputZeroPoint: Int32
    let range: ClosedRange<Int32>

    // Kernels run behind `any Kernel`, whose witness would be the unspecialised generic code;
    // these make it jump to the 8-bit specialisations.
    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func eval(_ memory: TensorMemory) {
        let a = lhsTable.pointer, b = rhsTable.pointer
        let multiplier = outputMultiplier, zeroPoint = outputZeroPoint
        let lower = range.lowerBound, upper = range.upperBound
        broadcast.apply(memory.input(lhs, as: T.self), memory.input(rhs, as: T.self), memory.output(output, as: T.self)) { x, y in
            let sum = a[Int(UInt8(truncatingIfNeeded: x))] &+ b[Int(UInt8(truncatingIfNeeded: y))]
            let value = multiplyByQuantizedMultiplierSmallerThanOneExp(sum, multiplier) &+ zeroPoint
            return T(truncatingIfNeeded: min(max(value, lower), upper))
        }
    }
}
