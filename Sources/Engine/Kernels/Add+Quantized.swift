import CX86Intrinsics
import Microkernels
#if SWIFTLITE_AVX2
import SIMDKernels
import SIMDKernelsAVX512
#endif

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
        let (lhs, lhsQ, rhs, rhsQ, output, outputQ) = try context.binaryQuantized()
        let twiceMaxInputScale = Double(2 * max(lhsQ.scale, rhsQ.scale))
        let realOutput = twiceMaxInputScale / Double(Float(1 << leftShift) * outputQ.scale)
        guard let lhsMultiplier = QuantizedMultiplier.smallerThanOneExp(Double(lhsQ.scale) / twiceMaxInputScale),
              let rhsMultiplier = QuantizedMultiplier.smallerThanOneExp(Double(rhsQ.scale) / twiceMaxInputScale),
              let outputMultiplier = QuantizedMultiplier.smallerThanOneExp(realOutput) else {
            throw context.unsupported("input scales \(lhsQ.scale), \(rhsQ.scale) and output scale \(outputQ.scale) need a rescaling multiplier ≥ 1")
        }
        let range = try context.integerActivationRange(activation, output: output, outputQ)
        let (l, r, o) = (context.node.inputs[0], context.node.inputs[1], context.node.outputs[0])
        /// The kernel, or the table of its other operand where one is a one-element constant.
        func kernel<T: FixedWidthInteger & Sendable>(_: T.Type) -> any Kernel {
            let kernel = AdditiveQuantizedKernel<T>(lhs: l, rhs: r, output: o, broadcast: broadcast,
                                                    lhsZeroPoint: lhsQ.zeroPoint, lhsMultiplier: lhsMultiplier,
                                                    rhsZeroPoint: rhsQ.zeroPoint, rhsMultiplier: rhsMultiplier, subtract: subtract,
                                                    outputMultiplier: outputMultiplier, outputZeroPoint: outputQ.zeroPoint, range: range)
            return ByteLookupKernel.binary(T.self, lhs: lhs, rhs: rhs, output: o, outputCount: broadcast.outputCount, kernel.combined)
                ?? kernel
        }
        return lhs.dataType == .int8 ? kernel(Int8.self) : kernel(UInt8.self)
    }
}

/// 8-bit ADD or SUB. Broadcasting operands go element by element: each operand's rescaled value
/// comes from a 256-entry table (SUB's right table is negated, which is exact), the two are added
/// and rescaled to the output. Same-shape operands (MobileNet's residual adds) take sixteen
/// elements per step through the same arithmetic in vector lanes, the tail through the tables.
struct AdditiveQuantizedKernel<T: FixedWidthInteger & Sendable>: PartitionedKernel {
    let lhs: Int, rhs: Int, output: Int
    let broadcast: Broadcast
    let lhsZeroPoint: Int32, rhsZeroPoint: Int32
    let lhsMultiplier: QuantizedMultiplier, rhsMultiplier: QuantizedMultiplier
    let subtract: Bool
    let lhsTable: PackedBuffer<Int32>, rhsTable: PackedBuffer<Int32>
    let outputMultiplier: QuantizedMultiplier
    let outputZeroPoint: Int32
    let range: ClosedRange<Int32>
    /// The output's rescaling as 16 equal channels in the one-shift form (`WideRequantization`,
    /// exact for every value where the multiplier shifts right by 1...31 and is not `Int32.min`),
    /// nil where that form is not exact for it; the vector loops need it.
    let outputWide: ChannelRequantization?
    /// The operands' rescalings in the same form, for the AVX-512 loop. An operand's is nil where
    /// its multiplier is exactly ½ (`2^30`, no shift: the operand of the larger scale), whose
    /// rescaling of `(x − zp) · 2^20` is `(x − zp) · 2^19` exactly. Nil as a whole unless both
    /// take one of the two. (The AVX2 loop takes the operands' multipliers as they are.)
    let operandsWide: (lhs: ChannelRequantization?, rhs: ChannelRequantization?)?
    /// The constants of `outputWide` and `operandsWide` by address (multipliers, then the
    /// `WideRequantization` block), into the buffers those keep: what a task reads. Binding
    /// the stages themselves copied them in every task, retaining and releasing their buffers
    /// from all threads at once. (`unsafe`: addresses of memory no one writes after `init`.)
    nonisolated(unsafe) private let outputStage: Stage?
    nonisolated(unsafe) private let operandStages: (lhs: Stage?, rhs: Stage?)?
    typealias Stage = (multipliers: UnsafeRawPointer, wide: UnsafeRawPointer)
    /// For the AVX2 loop: which operand's multiplier is exactly ½ (one is, where
    /// `AdditiveQuantized.prepare` made them) and the other one's multiplier, nil where neither is.
    let halfOperand: (isLeft: Bool, other: QuantizedMultiplier)?
    /// The table of the operand that is not the half one (SUB's right table negated, as
    /// `rhsTable`) as four byte planes, byte `p` of entry `v` at `256 p + v`: what
    /// `swiftlite_add_bytes_vbmi` reads. Nil without a half operand or a one-shift output stage,
    /// and on machines that do not run the table loop.
    let otherPlanes: PackedBuffer<UInt8>?

    init(lhs: Int, rhs: Int, output: Int, broadcast: Broadcast,
         lhsZeroPoint: Int32, lhsMultiplier: QuantizedMultiplier, rhsZeroPoint: Int32, rhsMultiplier: QuantizedMultiplier,
         subtract: Bool, outputMultiplier: QuantizedMultiplier, outputZeroPoint: Int32, range: ClosedRange<Int32>) {
        precondition(T.bitWidth == 8, "additive kernels take 8-bit operands")
        (self.lhs, self.rhs, self.output, self.broadcast) = (lhs, rhs, output, broadcast)
        (self.lhsZeroPoint, self.lhsMultiplier, self.rhsZeroPoint, self.rhsMultiplier) = (lhsZeroPoint, lhsMultiplier, rhsZeroPoint, rhsMultiplier)
        self.subtract = subtract
        lhsTable = byteIndexedTable(T.self) { x in Self.rescaled(x, lhsZeroPoint, lhsMultiplier) }
        rhsTable = byteIndexedTable(T.self) { x in
            let scaled = Self.rescaled(x, rhsZeroPoint, rhsMultiplier)
            return subtract ? -scaled : scaled
        }
        (self.outputMultiplier, self.outputZeroPoint, self.range) = (outputMultiplier, outputZeroPoint, range)
        /// The one-shift stage of `m`, or nil where that form is not exact for it.
        func lanes(_ m: QuantizedMultiplier) -> ChannelRequantization? {
            let stage = ChannelRequantization(Array(repeating: m, count: 16), zeroPoint: 0, range: (Int32.min, Int32.max))
            return stage.wide != nil ? stage : nil
        }
        /// `.some(nil)` for a multiplier of exactly ½, `.some(stage)` for a one-shift one, nil otherwise.
        let half = QuantizedMultiplier(multiplier: 1 << 30, shift: 0)
        func operand(_ m: QuantizedMultiplier) -> ChannelRequantization?? {
            m == half ? .some(nil) : lanes(m).map { .some($0) }
        }
        halfOperand = lhsMultiplier == half ? (true, rhsMultiplier) : rhsMultiplier == half ? (false, lhsMultiplier) : nil
        func stage(_ r: ChannelRequantization) -> Stage {
            (UnsafeRawPointer(r.multipliers.pointer), UnsafeRawPointer(r.wide.unsafelyUnwrapped.pointer))
        }
        outputWide = lanes(outputMultiplier)
        outputStage = outputWide.map(stage)
        if let (isLeft, _) = halfOperand, outputWide != nil, ByteLookup.fastest == .vbmi {
            let table = isLeft ? rhsTable : lhsTable
            let planes = PackedBuffer<UInt8>(count: 4 * 256, initializedTo: 0)
            for v in 0 ..< 256 {
                let entry = UInt32(bitPattern: table.pointer[v])
                for p in 0 ..< 4 { planes.pointer[256 * p + v] = UInt8(truncatingIfNeeded: entry >> (8 * p)) }
            }
            otherPlanes = planes
        } else {
            otherPlanes = nil
        }
        if let l = operand(lhsMultiplier), let r = operand(rhsMultiplier) {
            operandsWide = (l, r)
            operandStages = (l.map(stage), r.map(stage))
        } else {
            operandsWide = nil
            operandStages = nil
        }
    }

    /// One operand moved to the common scale: `(x − zp) · 2^20`, times its multiplier.
    static func rescaled(_ x: Int32, _ zeroPoint: Int32, _ multiplier: QuantizedMultiplier) -> Int32 {
        // |x − zp| ≤ 255, so the shifted value and the product stay far inside Int32.
        multiplyByQuantizedMultiplierSmallerThanOneExp((x - zeroPoint) << AdditiveQuantized.leftShift, multiplier)
    }

    // Kernels run behind `any Kernel`, whose witness would be the unspecialised generic code;
    // these make it jump to the 8-bit specialisations.
    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func eval(_ memory: TensorMemory) {
        let x = memory.input(lhs, as: T.self), y = memory.input(rhs, as: T.self), z = memory.output(output, as: T.self)
        if broadcast.isElementwise {
            // Threads take ranges of whole 16-element vectors. An element (its rescalings) costs
            // as much as tens of multiply-adds of a convolution: counted as 32, so that residual
            // adds of MobileNetV2's 14 × 14 × 64 size are shared out and smaller ones are not.
            let count = broadcast.outputCount
            memory.parallelize(self, count: count, granularity: 16, work: count * 32)
            return
        }
        broadcast.apply(x, y, z) { a, b in combined(a, b) }
    }

    /// Same-shape elements `range`.
    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func evalPart(_ range: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let x = memory.input(lhs, as: T.self), y = memory.input(rhs, as: T.self), z = memory.output(output, as: T.self)
        elementwise(x + range.lowerBound, y + range.lowerBound, z + range.lowerBound, count: range.count)
    }

    /// `lhs ⊕ rhs` for one pair of elements, through the tables: the reference the vector path
    /// is tested against.
    @inline(__always)
    func combined(_ x: T, _ y: T) -> T {
        let sum = lhsTable.pointer[Int(UInt8(truncatingIfNeeded: x))] &+ rhsTable.pointer[Int(UInt8(truncatingIfNeeded: y))]
        let value = multiplyByQuantizedMultiplierSmallerThanOneExp(sum, outputMultiplier) &+ outputZeroPoint
        return T(truncatingIfNeeded: min(max(value, range.lowerBound), range.upperBound))
    }

    /// Same-shape operands, sixteen elements per step, the last `count % 16` through `combined`.
    ///
    /// Every lane computes what the tables hold: `(x − zp) << 20` is within ±2^28 and the sum of
    /// two rescaled operands within ±2^29, so neither product is Int32.min × Int32.min and the
    /// non-saturating `roundingDoublingHighMul` gives the saturating helper's result. Where the
    /// output's rescaling has its one-shift form (`outputWide`), the tier's module takes the
    /// vectors instead, with the same values: `SIMDKernelsAVX512` where the AVX-512 kernels run
    /// (with `operandsWide`), else `SIMDKernels`' AVX2 loop.
    /// `readsTable: false` (tests) takes the loops that compute both rescalings even where the
    /// machine has VBMI, so that they stay tested there.
    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func elementwise(_ x: UnsafePointer<T>, _ y: UnsafePointer<T>, _ z: UnsafeMutablePointer<T>, count: Int,
                     readsTable: Bool = true) {
        let a = UnsafeRawPointer(x), b = UnsafeRawPointer(y)
        let out = UnsafeMutableRawPointer(z).assumingMemoryBound(to: UInt8.self)
        let lhsOffset = SIMD16<Int32>(repeating: lhsZeroPoint), rhsOffset = SIMD16<Int32>(repeating: rhsZeroPoint)
        let lhsM = SIMD16<Int32>(repeating: lhsMultiplier.multiplier), rhsM = SIMD16<Int32>(repeating: rhsMultiplier.multiplier)
        let shift = Int32(AdditiveQuantized.leftShift)
        let lhsShift = SIMD16<Int32>(repeating: Int32(-lhsMultiplier.shift))
        let rhsShift = SIMD16<Int32>(repeating: Int32(-rhsMultiplier.shift))
        let outM = SIMD16<Int32>(repeating: outputMultiplier.multiplier)
        let outShift = SIMD16<Int32>(repeating: Int32(-outputMultiplier.shift))
        let outOffset = SIMD16<Int32>(repeating: outputZeroPoint)
        let low = SIMD16<Int32>(repeating: range.lowerBound), high = SIMD16<Int32>(repeating: range.upperBound)
        // All ones for SUB: `(v ^ negate) − negate` is then −v, else v.
        let negate = SIMD16<Int32>(repeating: subtract ? -1 : 0)
        let end = count & ~15
        var i = 0
        #if SWIFTLITE_AVX2
        if let output = outputStage {
            if readsTable, let planes = otherPlanes, let (isLeft, _) = halfOperand {
                // The half operand computed, the other one read from its table (QuantizedAdd.c).
                let (h, t) = isLeft ? (a, b) : (b, a)
                swiftlite_add_bytes_vbmi(h.assumingMemoryBound(to: UInt8.self), t.assumingMemoryBound(to: UInt8.self), out, count,
                                         planes.pointer, isLeft ? lhsZeroPoint : rhsZeroPoint, !isLeft && subtract ? 1 : 0,
                                         output.multipliers, output.wide, outputZeroPoint, range.lowerBound, range.upperBound,
                                         T.isSigned ? 1 : 0)
                return
            }
            if KernelSelection.runsAVX512 {
                if let operands = operandStages {
                    SIMDKernelsAVX512.QuantizedAddition.elementwise(
                        signed: T.isSigned, a, b, out, count: end, zeroPoints: (lhsZeroPoint, rhsZeroPoint, outputZeroPoint),
                        leftShift: shift, lhs: operands.lhs, rhs: operands.rhs, output: output, subtract: subtract,
                        lower: range.lowerBound, upper: range.upperBound)
                    i = end
                }
            } else {
                #if !SWIFTLITE_AVX512VNNI
                // The other multiplier is a `smallerThanOneExp` one: 0...Int32.max, shifting right by 0...31.
                if let (isLeft, other) = halfOperand {
                    SIMDKernels.QuantizedAddition.elementwise(
                        signed: T.isSigned, a, b, out, count: end, zeroPoints: (lhsZeroPoint, rhsZeroPoint, outputZeroPoint),
                        halfIsLeft: isLeft, other: (other.multiplier, Int32(-other.shift)),
                        output: output, subtract: subtract, lower: range.lowerBound, upper: range.upperBound)
                    i = end
                }
                #endif
            }
        }
        #endif
        while i < end {
            let u = T.isSigned ? widened(a.loadUnaligned(fromByteOffset: i, as: SIMD16<Int8>.self))
                               : widened(a.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self))
            let v = T.isSigned ? widened(b.loadUnaligned(fromByteOffset: i, as: SIMD16<Int8>.self))
                               : widened(b.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self))
            let su = roundingDivideByPOT(roundingDoublingHighMul((u &- lhsOffset) &<< shift, lhsM), lhsShift)
            let sv = roundingDivideByPOT(roundingDoublingHighMul((v &- rhsOffset) &<< shift, rhsM), rhsShift)
            let sum = su &+ ((sv ^ negate) &- negate)
            let q = roundingDivideByPOT(roundingDoublingHighMul(sum, outM), outShift) &+ outOffset
            storeLowBytes(q.replacing(with: low, where: q .< low).replacing(with: high, where: q .> high), to: out + i, count: 16)
            i &+= 16
        }
        for j in end ..< count { z[j] = combined(x[j], y[j]) }
    }
}
