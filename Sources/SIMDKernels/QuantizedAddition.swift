// x86-64 only: the one-shift requantization is the intrinsics header's AVX2 or AVX-512 wrapper.
#if SWIFTLITE_AVX2
import CX86Intrinsics

/// The vector loop of the engine's quantized ADD and SUB on same-shape 8-bit operands, in the
/// one-shift form of TFLite's rescalings (`swiftlite_requantize_wide`, exact where the engine
/// built its constants). Compiled twice, like `FloatTiles`: `SIMDKernels` for the build's floor
/// (the two-`ymm` form of each step) and `SIMDKernelsAVX512`.
public enum QuantizedAddition {
    /// One rescaling's constants: the 16 multipliers and the `WideRequantization` block after
    /// them, as `ChannelRequantization` lays them out.
    public typealias Stage = (multipliers: UnsafeRawPointer, wide: UnsafeRawPointer)

    /// `count` (a multiple of 16) elements: `z = clamp(rescale(rescale(x − xz) ± rescale(y − yz)) + zz)`.
    /// An operand whose stage is nil has the multiplier exactly ½ and is `(x − xz) << 19`, which
    /// is what the doubling high multiply of `(x − xz) << 20` by 2^30 gives for every byte.
    /// `signed` reads the bytes as `Int8`, else `UInt8`; `subtract` negates the right operand.
    @inline(never)
    public static func elementwise(signed: Bool, _ x: UnsafeRawPointer, _ y: UnsafeRawPointer, _ z: UnsafeMutablePointer<UInt8>,
                                   count: Int, zeroPoints: (lhs: Int32, rhs: Int32, output: Int32), leftShift: Int32,
                                   lhs: Stage?, rhs: Stage?, output: Stage, subtract: Bool, lower: Int32, upper: Int32) {
        #if SWIFTLITE_AVX512VNNI
        if signed {
            elementwiseInRegisters(signed: true, x, y, z, count: count, zeroPoints: zeroPoints, leftShift: leftShift,
                                   lhs: lhs, rhs: rhs, output: output, subtract: subtract, lower: lower, upper: upper)
        } else {
            elementwiseInRegisters(signed: false, x, y, z, count: count, zeroPoints: zeroPoints, leftShift: leftShift,
                                   lhs: lhs, rhs: rhs, output: output, subtract: subtract, lower: lower, upper: upper)
        }
        #else
        let lhsOffset = SIMD16<Int32>(repeating: zeroPoints.lhs), rhsOffset = SIMD16<Int32>(repeating: zeroPoints.rhs)
        let outOffset = SIMD16<Int32>(repeating: zeroPoints.output)
        let low = SIMD16<Int32>(repeating: lower), high = SIMD16<Int32>(repeating: upper)
        // All ones for SUB: `(v ^ negate) − negate` is then −v, else v.
        let negate = SIMD16<Int32>(repeating: subtract ? -1 : 0)
        @inline(always)
        func load(_ p: UnsafeRawPointer) -> SIMD16<Int32> {
            let bytes = swiftlite_load_widened_bytes(p, 16)
            return signed ? (bytes &<< 24) &>> 24 : bytes
        }
        @inline(always)
        func operand(_ d: SIMD16<Int32>, _ stage: Stage?) -> SIMD16<Int32> {
            guard let stage else { return d &<< (leftShift - 1) }
            return rescaled(d &<< leftShift, stage)
        }
        var i = 0
        while i < count {
            let su = operand(load(x + i) &- lhsOffset, lhs)
            let sv = operand(load(y + i) &- rhsOffset, rhs)
            var q = rescaled(su &+ ((sv ^ negate) &- negate), output) &+ outOffset
            q.replace(with: low, where: q .< low)
            q.replace(with: high, where: q .> high)
            storeLowBytes(q, to: z + i)
            i &+= 16
        }
        #endif
    }

    #if SWIFTLITE_AVX512VNNI
    /// `elementwise` with every rescaling's constants loaded into registers once (from memory in
    /// every step, the compiler could not keep them: the byte stores might alias them), 64
    /// elements per step packed to bytes and clamped as bytes (`swiftlite_store_clamped_bytes`:
    /// exact, the clamp range lies inside the packs' range). `signed` is a constant at both
    /// call sites, so each copy keeps one widening load.
    @inline(__always)
    private static func elementwiseInRegisters(signed: Bool, _ x: UnsafeRawPointer, _ y: UnsafeRawPointer,
                                               _ z: UnsafeMutablePointer<UInt8>, count: Int,
                                               zeroPoints: (lhs: Int32, rhs: Int32, output: Int32), leftShift: Int32,
                                               lhs: Stage?, rhs: Stage?, output: Stage, subtract: Bool,
                                               lower: Int32, upper: Int32) {
        let lhsOffset = SIMD16<Int32>(repeating: zeroPoints.lhs), rhsOffset = SIMD16<Int32>(repeating: zeroPoints.rhs)
        let negate = SIMD16<Int32>(repeating: subtract ? -1 : 0)
        // An operand without a stage reads the output's constants, which it never uses.
        let lhsBlock = Block(lhs ?? output), rhsBlock = Block(rhs ?? output), outBlock = Block(output)
        let lhsHalf = lhs == nil, rhsHalf = rhs == nil
        let halfShift = leftShift &- 1
        @inline(__always)
        func operand(_ p: UnsafeRawPointer, _ offset: SIMD16<Int32>, _ half: Bool, _ block: Block) -> SIMD16<Int32> {
            let bytes = swiftlite_load_widened_bytes(p, 16)
            let d = (signed ? (bytes &<< 24) &>> 24 : bytes) &- offset
            return half ? d &<< halfShift : block.rescaled(d &<< leftShift)
        }
        @inline(__always)
        func sum(_ i: Int) -> SIMD16<Int32> {
            let su = operand(x + i, lhsOffset, lhsHalf, lhsBlock)
            let sv = operand(y + i, rhsOffset, rhsHalf, rhsBlock)
            return outBlock.rescaled(su &+ ((sv ^ negate) &- negate))
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

    /// One rescaling in the two-`ymm` form, for the loop of the modules without AVX-512 VNNI.
    @inline(always)
    static func rescaled(_ x: SIMD16<Int32>, _ stage: Stage) -> SIMD16<Int32> {
        swiftlite_requantize_wide_avx2(x, stage.multipliers, stage.wide)
    }

    /// The low byte of each of the 16 lanes, stored at `p`.
    @inline(always)
    static func storeLowBytes(_ v: SIMD16<Int32>, to p: UnsafeMutablePointer<UInt8>) {
        #if SWIFTLITE_AVX512
        swiftlite_store_low_bytes(p, v, 16)
        #else
        UnsafeMutableRawPointer(p).storeBytes(of: swiftlite_low_bytes(v), as: SIMD16<UInt8>.self)
        #endif
    }
}
#endif
