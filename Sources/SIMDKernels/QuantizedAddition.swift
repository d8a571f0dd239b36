// x86-64 only: the one-shift requantization is the intrinsics header's AVX2 or AVX-512 wrapper.
#if SWIFTLITE_AVX2
import CX86Intrinsics

/// The vector loop of the engine's quantized ADD and SUB on same-shape 8-bit operands, the
/// output's rescaling in the one-shift form (`swiftlite_requantize_wide`, exact where the engine
/// built its constants). Compiled twice, like `FloatTiles`: `SIMDKernelsAVX512`, whose loop takes
/// the operands' rescalings in the one-shift form as well, and `SIMDKernels` for the build's
/// floor, whose loop takes them in 32-bit lanes (`swiftlite_rescale_operand_avx2`: AVX2 has no
/// 64-bit products but `vpmuldq`'s four per `ymm`).
public enum QuantizedAddition {
    /// One rescaling's constants: the 16 multipliers and the `WideRequantization` block after
    /// them, as `ChannelRequantization` lays them out.
    public typealias Stage = (multipliers: UnsafeRawPointer, wide: UnsafeRawPointer)

    #if SWIFTLITE_AVX512VNNI
    /// `count` (a multiple of 16) elements: `z = clamp(rescale(rescale(x − xz) ± rescale(y − yz)) + zz)`.
    /// An operand whose stage is nil has the multiplier exactly ½ and is `(x − xz) << 19`, which
    /// is what the doubling high multiply of `(x − xz) << 20` by 2^30 gives for every byte.
    /// `signed` reads the bytes as `Int8`, else `UInt8`; `subtract` negates the right operand.
    @inline(never)
    public static func elementwise(signed: Bool, _ x: UnsafeRawPointer, _ y: UnsafeRawPointer, _ z: UnsafeMutablePointer<UInt8>,
                                   count: Int, zeroPoints: (lhs: Int32, rhs: Int32, output: Int32), leftShift: Int32,
                                   lhs: Stage?, rhs: Stage?, output: Stage, subtract: Bool, lower: Int32, upper: Int32) {
        let run = switch (signed, subtract) {
        case (true, false): signedSum
        case (true, true): signedDifference
        case (false, false): unsignedSum
        case (false, true): unsignedDifference
        }
        run(x, y, z, count, zeroPoints, leftShift, lhs, rhs, output, lower, upper)
    }

    /// `elementwise`'s arguments but for the flags, which each copy below holds as constants.
    private typealias Copy = @Sendable (UnsafeRawPointer, UnsafeRawPointer, UnsafeMutablePointer<UInt8>, Int,
                                        (lhs: Int32, rhs: Int32, output: Int32), Int32, Stage?, Stage?, Stage, Int32, Int32) -> Void

    // One copy of the loop per function: four inlined into `elementwise` itself may be too many
    // for the inliner, which then calls one with the flags as variables.
    private static let signedSum: Copy = { x, y, z, count, zeroPoints, leftShift, lhs, rhs, output, lower, upper in
        elementwiseInRegisters(signed: true, subtract: false, x, y, z, count: count, zeroPoints: zeroPoints, leftShift: leftShift,
                               lhs: lhs, rhs: rhs, output: output, lower: lower, upper: upper)
    }
    private static let signedDifference: Copy = { x, y, z, count, zeroPoints, leftShift, lhs, rhs, output, lower, upper in
        elementwiseInRegisters(signed: true, subtract: true, x, y, z, count: count, zeroPoints: zeroPoints, leftShift: leftShift,
                               lhs: lhs, rhs: rhs, output: output, lower: lower, upper: upper)
    }
    private static let unsignedSum: Copy = { x, y, z, count, zeroPoints, leftShift, lhs, rhs, output, lower, upper in
        elementwiseInRegisters(signed: false, subtract: false, x, y, z, count: count, zeroPoints: zeroPoints, leftShift: leftShift,
                               lhs: lhs, rhs: rhs, output: output, lower: lower, upper: upper)
    }
    private static let unsignedDifference: Copy = { x, y, z, count, zeroPoints, leftShift, lhs, rhs, output, lower, upper in
        elementwiseInRegisters(signed: false, subtract: true, x, y, z, count: count, zeroPoints: zeroPoints, leftShift: leftShift,
                               lhs: lhs, rhs: rhs, output: output, lower: lower, upper: upper)
    }
    #else
    /// An operand's rescaling, `MultiplyByQuantizedMultiplierSmallerThanOneExp((x − zp) · 2^20,
    /// multiplier, −exponent)`: a multiplier in 0...Int32.max and an exponent in 0...31.
    public typealias Operand = (multiplier: Int32, exponent: Int32)

    /// `count` (a multiple of 16) elements: `z = clamp(rescale(lhs(x − xz) ± rhs(y − yz)) + zz)`,
    /// the output's rescaling `output`, where one operand's multiplier is exactly ½ (TFLite's
    /// `Prepare` divides each input scale by twice the larger one): that operand (the left one
    /// where `halfIsLeft`) is `(x − xz) · 2^19` exactly, the other takes `other` in 32-bit lanes
    /// (`swiftlite_rescale_operand_avx2`). `signed` reads the bytes as `Int8`, else `UInt8`;
    /// `subtract` subtracts the right operand.
    @inline(never)
    public static func elementwise(signed: Bool, _ x: UnsafeRawPointer, _ y: UnsafeRawPointer, _ z: UnsafeMutablePointer<UInt8>,
                                   count: Int, zeroPoints: (lhs: Int32, rhs: Int32, output: Int32), halfIsLeft: Bool,
                                   other: Operand, output: Stage, subtract: Bool, lower: Int32, upper: Int32) {
        // The loop adds the half operand and the other one, or subtracts the other one; `x − y`
        // with the half on the right is `−(y − x)`, exact in integers.
        let (half, rest) = halfIsLeft ? (x, y) : (y, x)
        let offsets = halfIsLeft ? (zeroPoints.lhs, zeroPoints.rhs) : (zeroPoints.rhs, zeroPoints.lhs)
        @inline(__always)
        func run(signed: Bool, subtractOther: Bool, negateSum: Bool) {
            loop(signed: signed, subtractOther: subtractOther, negateSum: negateSum, half, rest, z, count: count,
                 offsets: offsets, other: other, output: output, outputOffset: zeroPoints.output, lower: lower, upper: upper)
        }
        // Each flag a constant in its copy of the loop.
        switch (signed, subtract, halfIsLeft) {
        case (true, false, _): run(signed: true, subtractOther: false, negateSum: false)
        case (true, true, true): run(signed: true, subtractOther: true, negateSum: false)
        case (true, true, false): run(signed: true, subtractOther: true, negateSum: true)
        case (false, false, _): run(signed: false, subtractOther: false, negateSum: false)
        case (false, true, true): run(signed: false, subtractOther: true, negateSum: false)
        case (false, true, false): run(signed: false, subtractOther: true, negateSum: true)
        }
    }

    /// Each lane's `MultiplyByQuantizedMultiplierSmallerThanOneExp(v · 2^20, operand)`, for
    /// |v| < 2^11: `swiftlite_rescale_operand_avx2` with the multiplier split at bit 11.
    @inline(__always)
    public static func rescaled(_ v: SIMD16<Int32>, _ operand: Operand) -> SIMD16<Int32> {
        swiftlite_rescale_operand_avx2(v, operand.multiplier >> 11, operand.multiplier & 0x7FF, CInt(operand.exponent))
    }

    /// `z = clamp(rescale(±(h · 2^19 ± other(r))) + zz)` with `h = half − offsets.0`, `r = rest − offsets.1`.
    @inline(__always)
    private static func loop(signed: Bool, subtractOther: Bool, negateSum: Bool, _ half: UnsafeRawPointer, _ rest: UnsafeRawPointer,
                             _ z: UnsafeMutablePointer<UInt8>, count: Int, offsets: (Int32, Int32), other: Operand, output: Stage,
                             outputOffset: Int32, lower: Int32, upper: Int32) {
        let halfOffset = SIMD16<Int32>(repeating: offsets.0), restOffset = SIMD16<Int32>(repeating: offsets.1)
        let isSigned: CInt = signed ? 1 : 0
        var i = 0
        while i < count {
            let h = (swiftlite_widen_16_bytes(half + i, isSigned) &- halfOffset) &<< 19
            let r = rescaled(swiftlite_widen_16_bytes(rest + i, isSigned) &- restOffset, other)
            let sum = subtractOther ? h &- r : h &+ r
            let q = swiftlite_requantize_wide_avx2(negateSum ? SIMD16(repeating: 0) &- sum : sum, output.multipliers, output.wide)
            swiftlite_store_clamped_16_bytes_avx2(z + i, q, 1 - isSigned, outputOffset, lower, upper)
            i &+= 16
        }
    }
    #endif

    #if SWIFTLITE_AVX512VNNI
    /// `elementwise` with every rescaling's constants loaded into registers once (from memory in
    /// every step, the compiler could not keep them: the byte stores might alias them), 64
    /// elements per step packed to bytes and clamped as bytes (`swiftlite_store_clamped_bytes`:
    /// exact, the clamp range lies inside the packs' range). `signed` and `subtract` are
    /// constants at every call site, so each copy keeps one widening load and one sum.
    @inline(__always)
    private static func elementwiseInRegisters(signed: Bool, subtract: Bool, _ x: UnsafeRawPointer, _ y: UnsafeRawPointer,
                                               _ z: UnsafeMutablePointer<UInt8>, count: Int,
                                               zeroPoints: (lhs: Int32, rhs: Int32, output: Int32), leftShift: Int32,
                                               lhs: Stage?, rhs: Stage?, output: Stage, lower: Int32, upper: Int32) {
        let lhsOffset = SIMD16<Int32>(repeating: zeroPoints.lhs), rhsOffset = SIMD16<Int32>(repeating: zeroPoints.rhs)
        // An operand without a stage reads the output's constants, which it never uses.
        let lhsBlock = Block(lhs ?? output), rhsBlock = Block(rhs ?? output), outBlock = Block(output)
        let lhsHalf = lhs == nil, rhsHalf = rhs == nil
        let halfShift = leftShift &- 1
        @inline(__always)
        func operand(_ p: UnsafeRawPointer, _ offset: SIMD16<Int32>, _ half: Bool, _ block: Block) -> SIMD16<Int32> {
            let d = (signed ? swiftlite_load_widened_signed_bytes(p, 16, 16) : swiftlite_load_widened_bytes(p, 16, 16)) &- offset
            return half ? d &<< halfShift : block.rescaled(d &<< leftShift)
        }
        @inline(__always)
        func sum(_ i: Int) -> SIMD16<Int32> {
            let su = operand(x + i, lhsOffset, lhsHalf, lhsBlock)
            let sv = operand(y + i, rhsOffset, rhsHalf, rhsBlock)
            return outBlock.rescaled(subtract ? su &- sv : su &+ sv)
        }
        var i = 0
        while i + 64 <= count {
            swiftlite_store_clamped_bytes(z + i, sum(i), sum(i + 16), sum(i + 32), sum(i + 48), 4, signed ? 0 : 1,
                                          zeroPoints.output, lower, upper, 64)
            i &+= 64
        }
        while i < count {
            let q = sum(i)
            swiftlite_store_clamped_bytes(z + i, q, q, q, q, 1, signed ? 0 : 1, zeroPoints.output, lower, upper, 16)
            i &+= 16
        }
    }

    /// One rescaling's constants in registers: `swiftlite_requantize_wide_block`'s five vectors.
    /// (Microkernels' `WideBlock` loads the same for the product's stores; neither module can
    /// import the other, and a C struct of vectors does not import into Swift.)
    private struct Block {
        let multipliers, oddMultipliers, evenNudges, oddNudges, shifts: SIMD16<Int32>

        @inline(__always)
        init(_ stage: Stage) {
            multipliers = swiftlite_load_dwords(stage.multipliers)
            oddMultipliers = swiftlite_load_dwords(stage.wide)
            evenNudges = swiftlite_load_dwords(stage.wide + 64)
            oddNudges = swiftlite_load_dwords(stage.wide + 128)
            shifts = swiftlite_load_dwords(stage.wide + 192)
        }

        @inline(__always)
        func rescaled(_ x: SIMD16<Int32>) -> SIMD16<Int32> {
            swiftlite_requantize_wide_block(x, multipliers, oddMultipliers, evenNudges, oddNudges, shifts)
        }
    }
    #endif
}
#endif
