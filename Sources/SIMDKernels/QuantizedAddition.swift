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
    }

    @inline(always)
    static func rescaled(_ x: SIMD16<Int32>, _ stage: Stage) -> SIMD16<Int32> {
        #if SWIFTLITE_AVX512VNNI
        swiftlite_requantize_wide(x, stage.multipliers, stage.wide)
        #else
        swiftlite_requantize_wide_avx2(x, stage.multipliers, stage.wide)
        #endif
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
