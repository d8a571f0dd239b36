import Microkernels

extension Mean {
    /// Integer mean (uint8, int8), as TFLite's reference `QuantizedMeanOrSum` (which BUILTIN_REF
    /// uses for every axis set, including `[1, H, W, C]` over axes 1 and 2):
    ///
    /// - the inputs under each output are summed in Int32;
    /// - the multiplier of `inputScale / outputScale` (divided in Double) absorbs `1 / n`:
    ///   with `s = min(floor(log2 n), 32, 31 + shift)`, it becomes `(multiplier << s) / n`
    ///   (truncated) and the shift `shift − s`;
    /// - each output is `zpOut + q(sum − zpIn · n)`, clamped to the type's range.
    static func prepareQuantized(_ context: inout PrepareContext, reduction: Reduction) throws(ModelError) -> any Kernel {
        let (input, inputQ, _, outputQ) = try context.unaryQuantized()
        var multiplier = QuantizedMultiplier(Double(inputQ.scale) / Double(outputQ.scale))
        let count = Int64(reduction.count)
        if count > 0 {
            let shift = min(63 - count.leadingZeroBitCount, 32, 31 + multiplier.shift)
            guard shift >= 0 else {
                throw context.unsupported("input scale \(inputQ.scale) / output scale \(outputQ.scale) is too small to average \(count) elements")
            }
            multiplier = QuantizedMultiplier(multiplier: Int32(truncatingIfNeeded: (Int64(multiplier.multiplier) << shift) / count),
                                             shift: multiplier.shift - shift)
        }
        context.requestScratch(bytes: reduction.outputShape.reduce(1, *) * MemoryLayout<Int32>.stride)
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        if input.dataType == .int8 {
            return MeanQuantized<Int8>(reduction, multiplier: multiplier, inputZeroPoint: inputQ.zeroPoint,
                                       outputZeroPoint: outputQ.zeroPoint, input: i, output: o)
        }
        return MeanQuantized<UInt8>(reduction, multiplier: multiplier, inputZeroPoint: inputQ.zeroPoint,
                                    outputZeroPoint: outputQ.zeroPoint, input: i, output: o)
    }
}

/// Integer mean of an 8-bit tensor. Integer sums do not depend on their order, so the input is
/// walked in memory order over merged dimensions (size-1 dimensions dropped, neighbours that are
/// both reduced or both kept joined): `[1, H, W, C]` over axes 1 and 2 is `[H·W (reduced), C]`.
struct MeanQuantized<T: FixedWidthInteger & Sendable & ColumnSummand>: Kernel where T.Sum == Int32 {
    let layout: ReductionLayout
    /// Inputs averaged into each output.
    let count: Int32
    let multiplier: QuantizedMultiplier
    let inputZeroPoint: Int32, outputZeroPoint: Int32
    let input: Int, output: Int

    init(_ r: Mean.Reduction, multiplier: QuantizedMultiplier, inputZeroPoint: Int32, outputZeroPoint: Int32,
         input: Int, output: Int) {
        layout = ReductionLayout(r)
        count = Int32(truncatingIfNeeded: r.count)
        self.multiplier = multiplier
        self.inputZeroPoint = inputZeroPoint
        self.outputZeroPoint = outputZeroPoint
        self.input = input
        self.output = output
    }

    // Kernels run behind `any Kernel`, whose witness would be the unspecialised generic code;
    // these make it jump to the 8-bit specialisations.
    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func eval(_ memory: TensorMemory) {
        let out = memory.output(output, as: T.self)
        // An empty input gives zeros, as TFLite does.
        guard layout.inputCount > 0 else {
            out.update(repeating: 0, count: layout.outputCount)
            return
        }
        let sums = memory.scratch(as: Int32.self)
        sums.update(repeating: 0, count: layout.outputCount)
        layout.addSums(memory.input(input, as: T.self), into: sums)
        // TFLite subtracts zpIn · n in 64 bits and keeps the low 32.
        let offset = Int32(truncatingIfNeeded: Int64(inputZeroPoint) * Int64(count))
        let lower = Int32(T.min), upper = Int32(T.max)
        let vectors = requantizesInLanes ? layout.outputCount / 16 * 16 : 0
        if vectors > 0 {
            // Sixteen outputs at a time through the lane form of the same steps.
            let m = multiplier
            let stage = RequantizationBlock(
                multipliers: SIMD16(repeating: m.multiplier), leftShifts: SIMD16(repeating: Int32(max(m.shift, 0))),
                rightShifts: SIMD16(repeating: Int32(max(-m.shift, 0))), saturates: m.multiplier == .min, shiftsLeft: m.shift > 0,
                zeroPoint: outputZeroPoint, minimum: lower, maximum: upper)
            let raw = UnsafeMutableRawPointer(out).assumingMemoryBound(to: UInt8.self)
            for i in stride(from: 0, to: vectors, by: 16) {
                let sum = UnsafeRawPointer(sums + i).loadUnaligned(as: SIMD16<Int32>.self) &- SIMD16(repeating: offset)
                storeLowBytes(stage.apply(sum), to: raw + i, count: 16)
            }
        }
        for i in vectors ..< layout.outputCount {
            let value = outputZeroPoint &+ multiplyByQuantizedMultiplier(sums[i] &- offset, multiplier)
            out[i] = T(truncatingIfNeeded: min(max(value, lower), upper))
        }
    }

    /// Whether `RequantizationBlock` gives `multiplyByQuantizedMultiplier`'s results: shifts
    /// within a lane's 0...31.
    private var requantizesInLanes: Bool { (-31 ... 31).contains(multiplier.shift) }
}
