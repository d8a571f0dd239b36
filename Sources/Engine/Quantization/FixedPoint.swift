// Integer primitives shared by every quantized kernel, mirroring gemmlowp's
// fixedpoint/fixedpoint.h and TFLite's tflite/kernels/internal/common.h{,.cc}
// bit for bit (default build: TFLITE_SINGLE_ROUNDING off, i.e. double rounding).
//
// C++ integer overflow in these helpers is undefined behaviour that compiles to
// two's-complement wrapping on every platform TFLite ships; where an operation
// can overflow at all we use Swift's wrapping operators to get that same result
// (and to stay well defined under -Ounchecked). Where it cannot, the comment says
// why and the wrapping operator is only there to skip the overflow check.
//
// The Int16 and Int64 overloads are @_disfavoredOverload so that calls with
// integer literals (`roundingDivideByPOT(5, 1)`) resolve to the Int32 versions.

// MARK: - 32-bit primitives

/// gemmlowp's `SaturatingRoundingDoublingHighMul` for `Int32` (ARM `VQRDMULH`):
/// the product of two Q0.31 values, `a * b / 2^31`, rounded to nearest with
/// ties toward +∞, and saturating the single overflow case
/// `Int32.min * Int32.min` (= +1.0, not representable) to `Int32.max`.
///
/// Examples:
/// - `(1 << 30, 1 << 30)` (0.5 × 0.5) → `1 << 29` (0.25)
/// - `(Int32.max, 7)` → `7` (× 0.99999999953)
/// - `(1 << 30, 1)` → `1` (0.5 rounds up), `(1 << 30, -1)` → `0` (−0.5 rounds up)
/// - `(Int32.min, Int32.min)` → `Int32.max`
@inline(__always)
func saturatingRoundingDoublingHighMul(_ a: Int32, _ b: Int32) -> Int32 {
    if a == b && a == Int32.min { return Int32.max }
    // |a * b| <= 2^62, and adding the ±2^30 nudge stays far inside Int64.
    let ab = Int64(a) &* Int64(b)
    let nudge: Int64 = ab >= 0 ? (1 << 30) : (1 - (1 << 30))
    // Division truncates toward zero, like C++'s `/`; with the sign-dependent
    // nudge this is floor((ab + 2^30) / 2^31). The quotient fits in Int32
    // because the only product that would not was excluded above.
    return Int32(truncatingIfNeeded: (ab &+ nudge) / (1 << 31))
}

/// gemmlowp's `RoundingDivideByPOT` for `Int32`: `x / 2^exponent` rounded to
/// nearest, ties away from zero (a rounding arithmetic right shift).
/// `exponent` must be in `0...31`.
///
/// Examples:
/// - `(5, 1)` → `3` (2.5 → 3), `(-5, 1)` → `-3` (−2.5 → −3)
/// - `(7, 2)` → `2` (1.75), `(-6, 2)` → `-2` (−1.5 → −2), `(-5, 2)` → `-1` (−1.25)
/// - `(Int32.min, 31)` → `-1`, `(Int32.max, 31)` → `1`
@inline(__always)
func roundingDivideByPOT(_ x: Int32, _ exponent: Int) -> Int32 {
    assert(exponent >= 0 && exponent <= 31, "RoundingDivideByPOT exponent out of range")
    // (1 << 31) wraps to Int32.min and Int32.min &- 1 == Int32.max: the wrap
    // reproduces C++'s `(1ll << exponent) - 1` narrowed to int32.
    let mask = (Int32(1) &<< exponent) &- 1
    let remainder = x & mask
    // mask >> 1 <= 2^30 - 1, so adding 1 cannot overflow.
    let threshold = (mask &>> 1) &+ (x < 0 ? 1 : 0)
    // For exponent 0 the mask is 0 and nothing is added; for exponent >= 1
    // x >> exponent <= 2^30 - 1, so adding 1 cannot overflow.
    return (x &>> exponent) &+ (remainder > threshold ? 1 : 0)
}

/// gemmlowp's `SaturatingRoundingMultiplyByPOT` (and TFLite's runtime-exponent
/// `SaturatingRoundingMultiplyByPOTParam`) for `Int32`: `x * 2^exponent`,
/// saturating for `exponent > 0` and rounding (via `roundingDivideByPOT`) for
/// `exponent < 0`. `exponent` must be in `-31...31`.
///
/// Examples:
/// - `(3, 2)` → `12`; `(1 << 29, 2)` → `Int32.max` (saturated);
///   `(-(1 << 29), 2)` → `Int32.min`; `(-(1 << 29) + 1, 2)` → `-(1 << 31) + 4`
/// - `(6, -2)` → `2` (1.5 rounds away from zero)
@inline(__always)
func saturatingRoundingMultiplyByPOT(_ x: Int32, _ exponent: Int) -> Int32 {
    if exponent == 0 { return x }
    if exponent < 0 { return roundingDivideByPOT(x, -exponent) }
    assert(exponent <= 31, "SaturatingRoundingMultiplyByPOT exponent out of range")
    // (1 << (31 - exponent)) - 1 is in 0...2^30 - 1 for exponent in 1...31.
    let threshold = (Int32(1) &<< (31 - exponent)) &- 1
    if x > threshold { return Int32.max }
    if x < -threshold { return Int32.min }
    // |x| <= threshold, so the shift cannot overflow.
    return x &<< exponent
}

/// gemmlowp's `RoundingHalfSum` for `Int32`: `(a + b) / 2`, rounded to
/// nearest with ties away from zero, computed without overflow.
///
/// Examples: `(1, 2)` → `2`; `(-1, -2)` → `-2`; `(Int32.max, Int32.max)` → `Int32.max`.
@inline(__always)
func roundingHalfSum(_ a: Int32, _ b: Int32) -> Int32 {
    // The sum of two Int32 and the ±1 fit easily in Int64.
    let sum = Int64(a) &+ Int64(b)
    let sign: Int64 = sum >= 0 ? 1 : -1
    return Int32(truncatingIfNeeded: (sum &+ sign) / 2)
}

/// gemmlowp's fixed-point `Rescale<dst>(FixedPoint<int32, src>)`: converts a
/// raw value with `sourceIntegerBits` integer bits to one with
/// `destinationIntegerBits`, i.e. `saturatingRoundingMultiplyByPOT(x, src - dst)`.
///
/// Example: 1.0 in Q0.31 is `Int32.max`; rescaled from 0 to 12 integer bits it
/// is `roundingDivideByPOT(Int32.max, 12)` = `524_288` (= 2^19, 1.0 in Q12.19).
@inline(__always)
func rescale(_ x: Int32, fromIntegerBits sourceIntegerBits: Int,
             toIntegerBits destinationIntegerBits: Int) -> Int32 {
    saturatingRoundingMultiplyByPOT(x, sourceIntegerBits - destinationIntegerBits)
}

// MARK: - MultiplyByQuantizedMultiplier family

/// TFLite's `MultiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int shift)`
/// in its default (double-rounding) build:
///
///     RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x * (1 << max(shift, 0)),
///                                                           multiplier),
///                         max(-shift, 0))
///
/// i.e. `x * realMultiplier` rounded twice: once to nearest (ties up) in the
/// high-mul, once to nearest (ties away from zero) in the right shift.
///
/// Examples (`q = QuantizedMultiplier(r)`):
/// - `r = 0.5`  = `(1 << 30, 0)`:  `x = 5` → `3` (2.5 rounds up), `x = -5` → `-2`
/// - `r = 0.25` = `(1 << 30, -1)`: `x = 6` → SRDHM gives 3, then 3/2 → `2`
/// - `r = 3.0`  = `(1_610_612_736, 2)`: `x = 7` → `28 * 0.75` = `21`
///
/// The left shift wraps exactly like the C++ (whose overflow is a contract
/// violation TFLite does not check in release builds).
@inline(__always)
func multiplyByQuantizedMultiplier(_ x: Int32, multiplier: Int32, shift: Int) -> Int32 {
    let leftShift = shift > 0 ? shift : 0
    let rightShift = shift > 0 ? 0 : -shift
    return roundingDivideByPOT(
        saturatingRoundingDoublingHighMul(x &* (Int32(1) &<< leftShift), multiplier),
        rightShift)
}

/// `multiplyByQuantizedMultiplier(_:multiplier:shift:)` taking a `QuantizedMultiplier`.
///
/// Example: `multiplyByQuantizedMultiplier(1000, QuantizedMultiplier(0.1))` → `100`.
@inline(__always)
func multiplyByQuantizedMultiplier(_ x: Int32, _ q: QuantizedMultiplier) -> Int32 {
    multiplyByQuantizedMultiplier(x, multiplier: q.multiplier, shift: q.shift)
}

/// TFLite's `MultiplyByQuantizedMultiplier(int64_t x, int32_t multiplier, int shift)`
/// (default build), used by the 16x8 kernels with 64-bit accumulators.
/// The multiplier is first reduced to 16 bits (rounding half up, saturating at
/// `0x7FFF`), then `x * reduced` is shifted right by `15 - shift` with rounding
/// half up. TFLite's contract: `multiplier >= 0`, `shift` in `-31...7`,
/// `x` in `[-2^47, 2^47)`.
///
/// Example: `x = 1 << 40`, `q = (1 << 30, -20)` (2^-21): reduced multiplier is
/// `2^14`, total shift 35 → `2^54 / 2^35` = `524_288` (= 2^40 × 2^-21).
@inline(__always) @_disfavoredOverload
func multiplyByQuantizedMultiplier(_ x: Int64, multiplier: Int32, shift: Int) -> Int32 {
    assert(shift >= -31 && shift < 8, "64-bit MultiplyByQuantizedMultiplier shift out of range")
    // multiplier < 0x7FFF0000 on this branch, so adding 2^15 cannot overflow.
    let reducedMultiplier: Int32 =
        multiplier < 0x7FFF_0000 ? (multiplier &+ (1 << 15)) &>> 16 : 0x7FFF
    let totalShift = 15 - shift  // 8...46
    // Within the contract |x * reduced| < 2^47 * 2^15 = 2^62: no overflow.
    let rounded = x &* Int64(reducedMultiplier) &+ (Int64(1) &<< (totalShift - 1))
    return Int32(truncatingIfNeeded: rounded &>> totalShift)
}

/// `multiplyByQuantizedMultiplier(_:multiplier:shift:)` for 64-bit inputs,
/// taking a `QuantizedMultiplier`.
@inline(__always) @_disfavoredOverload
func multiplyByQuantizedMultiplier(_ x: Int64, _ q: QuantizedMultiplier) -> Int32 {
    multiplyByQuantizedMultiplier(x, multiplier: q.multiplier, shift: q.shift)
}

/// TFLite's `MultiplyByQuantizedMultiplierSmallerThanOneExp` (default build):
/// `RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, multiplier), -leftShift)`,
/// for a non-positive `leftShift` as produced by `QuantizedMultiplier.smallerThanOneExp`.
///
/// Example: `q = (1 << 30, -1)` (0.25): `x = 10` → SRDHM 5 → 5/2 → `3`.
@inline(__always)
func multiplyByQuantizedMultiplierSmallerThanOneExp(_ x: Int32, multiplier: Int32,
                                                    leftShift: Int) -> Int32 {
    roundingDivideByPOT(saturatingRoundingDoublingHighMul(x, multiplier), -leftShift)
}

/// `multiplyByQuantizedMultiplierSmallerThanOneExp` taking a `QuantizedMultiplier`
/// whose `shift` is the (non-positive) left shift.
@inline(__always)
func multiplyByQuantizedMultiplierSmallerThanOneExp(_ x: Int32,
                                                    _ q: QuantizedMultiplier) -> Int32 {
    multiplyByQuantizedMultiplierSmallerThanOneExp(x, multiplier: q.multiplier, leftShift: q.shift)
}

/// TFLite's `MultiplyByQuantizedMultiplierGreaterThanOne` (default build):
/// `SaturatingRoundingDoublingHighMul(x * (1 << leftShift), multiplier)`, for a
/// non-negative `leftShift` as produced by `QuantizedMultiplier.greaterThanOne`.
/// The left shift wraps like the C++.
///
/// Example: `q = (1 << 30, 19)` (2^18): `x = -3` → `-3 * 2^19 * 0.5` = `-786_432`.
@inline(__always)
func multiplyByQuantizedMultiplierGreaterThanOne(_ x: Int32, multiplier: Int32,
                                                 leftShift: Int) -> Int32 {
    saturatingRoundingDoublingHighMul(x &* (Int32(1) &<< leftShift), multiplier)
}

/// `multiplyByQuantizedMultiplierGreaterThanOne` taking a `QuantizedMultiplier`
/// whose `shift` is the (non-negative) left shift.
@inline(__always)
func multiplyByQuantizedMultiplierGreaterThanOne(_ x: Int32,
                                                 _ q: QuantizedMultiplier) -> Int32 {
    multiplyByQuantizedMultiplierGreaterThanOne(x, multiplier: q.multiplier, leftShift: q.shift)
}

// MARK: - 16-bit primitives (HARD_SWISH)

/// gemmlowp's `SaturatingRoundingDoublingHighMul` for `Int16` (Q0.15 product,
/// ties toward +∞, `Int16.min * Int16.min` → `Int16.max`).
///
/// Examples: `(16_384, 16_384)` (0.5 × 0.5) → `8_192`; `(-32_768, -32_768)` → `32_767`.
@inline(__always) @_disfavoredOverload
func saturatingRoundingDoublingHighMul(_ a: Int16, _ b: Int16) -> Int16 {
    if a == b && a == Int16.min { return Int16.max }
    // |a * b| <= 2^30 fits in Int32, and so does adding the ±2^14 nudge.
    let ab = Int32(a) &* Int32(b)
    let nudge: Int32 = ab >= 0 ? (1 << 14) : (1 - (1 << 14))
    return Int16(truncatingIfNeeded: (ab &+ nudge) / (1 << 15))
}

/// TFLite's `SaturatingDoublingHighMul` for `Int16` (ARM `SQDMULH`,
/// reference/hard_swish.h): like the rounding version but the division by 2^15
/// truncates toward zero.
///
/// Examples: `(3, 16_384)` → `1` (1.5 → 1); `(-3, 16_384)` → `-1`.
@inline(__always)
func saturatingDoublingHighMul(_ a: Int16, _ b: Int16) -> Int16 {
    if a == b && a == Int16.min { return Int16.max }
    // |a * b| <= 2^30 fits in Int32.
    return Int16(truncatingIfNeeded: (Int32(a) &* Int32(b)) / (1 << 15))
}

/// gemmlowp's `RoundingDivideByPOT` instantiated for `Int16`: ties away from
/// zero. `exponent` must be in `0...31`; exponents of 16 and more reproduce the
/// template's int16 arithmetic exactly (the mask narrows to -1), which is what
/// TFLite computes for such (unusual) output scales.
///
/// Examples: `(5, 1)` → `3`; `(-5, 1)` → `-3`; `(1000, 4)` → `63` (62.5).
@inline(__always) @_disfavoredOverload
func roundingDivideByPOT(_ x: Int16, _ exponent: Int) -> Int16 {
    assert(exponent >= 0 && exponent <= 31, "RoundingDivideByPOT exponent out of range")
    let mask = Int16(truncatingIfNeeded: (Int32(1) &<< exponent) &- 1)
    let remainder = x & mask
    // mask >> 1 is at most 2^14 - 1 (or -1 once narrowed), so +1 cannot overflow.
    let threshold = (mask &>> 1) &+ (x < 0 ? 1 : 0)
    // C++ promotes x to int before the shift, so exponents up to 31 are fine.
    let shifted = Int16(truncatingIfNeeded: Int32(x) &>> exponent)
    return shifted &+ (remainder > threshold ? 1 : 0)
}

/// TFLite's `SaturatingLeftShift` for `Int16` (reference/hard_swish.h):
/// `value * 2^amount` clamped to the `Int16` range.
///
/// Examples: `(100, 3)` → `800`; `(5_000, 3)` → `32_767`; `(-5_000, 3)` → `-32_768`.
@inline(__always)
func saturatingLeftShift(_ value: Int16, _ amount: Int) -> Int16 {
    assert(amount >= 0 && amount < 48, "SaturatingLeftShift amount out of range")
    // |value| <= 2^15 and amount < 48 keep the product inside Int64.
    let result = Int64(value) &* (Int64(1) &<< amount)
    return Int16(clamping: result)
}

// MARK: - Bit counting

/// TFLite's `CountLeadingZeros<uint32_t>` applied to the bit pattern of `x`
/// (32 for zero).
///
/// Examples: `1` → `31`; `Int32.max` → `1`; `-1` → `0`; `0` → `32`.
@inline(__always)
func countLeadingZeros(_ x: Int32) -> Int {
    UInt32(bitPattern: x).leadingZeroBitCount
}

// MARK: - Float → integer conversion

/// C++'s `static_cast<int32_t>(float)` as x86-64 executes it (`cvttss2si`):
/// truncation toward zero, with NaN and out-of-range values becoming
/// `Int32.min` (the "integer indefinite" value) instead of trapping.
///
/// Examples: `2.9` → `2`; `-2.9` → `-2`; `2_147_483_648.0` → `Int32.min`; `.nan` → `Int32.min`.
@inline(__always)
func truncatingToInt32LikeX86(_ value: Float) -> Int32 {
    // -2^31 is exactly representable; +2^31 is the first value that overflows.
    guard value >= -2_147_483_648.0, value < 2_147_483_648.0 else { return Int32.min }
    return Int32(value)
}
