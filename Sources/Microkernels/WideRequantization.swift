// TFLite's per-channel output stage as one rounding shift of a 64-bit product, the form the
// AVX-512 kernels apply to channels that all shift right (`swiftlite_requantize_wide` in
// CX86Intrinsics): about half the instructions of the two rounding steps of
// LaneArithmetic.swift, and a third of those on the port the products need, with the same
// result for every accumulator.
//
// `MultiplyByQuantizedMultiplier(x, M, −e)` with e ≥ 1 (a real multiplier below ½) is two
// roundings of the exact product `P = x · M`:
//
//     y = SaturatingRoundingDoublingHighMul(x, M) = ⌊(P + 2^30) / 2^31⌋     (M ≠ Int32.min)
//     RoundingDivideByPOT(y, e) = ⌊(y + 2^(e−1) − [y < 0]) / 2^e⌋
//
// (the second line is the scalar helper's "add one when the remainder exceeds half, or half
// plus one for negative y", as a floor). A floor division of a floor division by powers of two
// is one floor division, `⌊(⌊u / a⌋ + c) / b⌋ = ⌊(u + c·a) / (a·b)⌋` for integer `c`, so
//
//     result = ⌊(P + 2^30 + 2^(30+e) − 2^31 · [y < 0]) / 2^(31+e)⌋
//            = ((P + 2^30 + 2^(30+e) − 2^31 · [P < 0]) >> 32) >> (e − 1)
//
// `[y < 0]` may be tested on `P` instead: the two differ only for −2^30 ≤ P < 0, where y = 0 and
// both forms give 0; and the shift by 31 + e ≥ 32 splits into the high half of the 64-bit word
// and a 32-bit shift by the same nesting. Nothing overflows: |P| < 2^62 when M ≠ Int32.min, and
// the nudge is below 2^62. A multiplier of Int32.min (whose square saturates), and channels with
// e = 0 or a left shift, keep the two-step form.
#if SWIFTLITE_AVX512VNNI
import CX86Intrinsics
#endif

/// The per-channel constants of `swiftlite_requantize_wide` (and of its AVX2 form), one block of 16 channels after
/// another: 4 vectors per block, 3 of 8 `Int64` — the odd lanes' multipliers (channels
/// 16b + 2i + 1), then the even and odd lanes' nudges `2^30 + 2^(30+e)` — and one of 16 `Int32`,
/// the shifts `e − 1`. The even lanes' multipliers are read from the 32-bit multiplier array
/// itself (`vpmuldq` ignores the high halves of its words). The engine writes them
/// (`WideRequantization.write`, in ChannelRequantization.swift: code of this module is compiled
/// for AVX-512 and must not run before the CPUID check, while the AVX2 kernels read them too).
public enum WideRequantization {
    /// `Int64` values per block of 16 channels.
    public static let valuesPerBlock = 32
}

extension WideRequantization {
    /// `swiftlite_requantize_wide` of sixteen channels (for tests): `multipliers` their 16
    /// `Int32` multipliers, `constants` their block of `write`'s output. Nil where this module is
    /// not built for AVX-512 VNNI. Call it only where `RunTimeCPU.runsVNNIKernels`: this function
    /// is compiled for that target too, and a debug build moves its `SIMD16` argument through
    /// `zmm` registers before any check inside it could run (SIGILL on an AVX2-only Zen 3).
    public static func apply(_ x: SIMD16<Int32>, multipliers: UnsafeRawPointer, constants: UnsafeRawPointer)
        -> SIMD16<Int32>? {
        #if SWIFTLITE_AVX512VNNI
        return applyWide(x, multipliers: multipliers, constants: constants)
        #else
        return nil
        #endif
    }

    /// `swiftlite_requantize_wide_nonnegative` of sixteen channels (for tests): `apply`'s result
    /// wherever that is positive, some value ≤ 0 wherever it is ≤ 0. The same conditions as `apply`.
    public static func applyNonNegative(_ x: SIMD16<Int32>, multipliers: UnsafeRawPointer, constants: UnsafeRawPointer)
        -> SIMD16<Int32>? {
        #if SWIFTLITE_AVX512VNNI
        return applyWideNonNegative(x, multipliers: multipliers, constants: constants)
        #else
        return nil
        #endif
    }

    #if SWIFTLITE_AVX512VNNI
    @inline(never)
    private static func applyWideNonNegative(_ x: SIMD16<Int32>, multipliers: UnsafeRawPointer, constants: UnsafeRawPointer)
        -> SIMD16<Int32> {
        swiftlite_requantize_wide_nonnegative(x, multipliers, constants)
    }

    @inline(never)
    private static func applyWide(_ x: SIMD16<Int32>, multipliers: UnsafeRawPointer, constants: UnsafeRawPointer)
        -> SIMD16<Int32> {
        swiftlite_requantize_wide(x, multipliers, constants)
    }
    #endif
}
