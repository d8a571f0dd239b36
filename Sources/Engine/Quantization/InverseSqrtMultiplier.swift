/// TFLite's `GetInvSqrtQuantizedMultiplierExp(input, reverse_shift = -1, ...)`
/// (tflite/kernels/internal/common.h): `1 / sqrt(input)` as a Q0.31 multiplier and a
/// power-of-two left shift, by five Newton–Raphson steps in Q3.28 fixed point.
///
/// 1. `input ≤ 1` (0 is invalid, 1 would overflow the iteration) gives `(Int32.max, 0)`.
/// 2. Otherwise the shift starts at 11; while `input ≥ 2^29` it is divided by 4 (shift + 1);
///    then it is scaled up by 4^k into `[2^27, 2^29)` (shift − k).
/// 3. With `x = 1.0`, `h = input / 2` in Q3.28: `x ← 1.5·x − h·x³`, five times (each product
///    a saturating rounding doubling high-mul, rescaled back to 3 integer bits).
/// 4. `x · (√2 / 2)`; a negative shift is folded into the multiplier; the shift is negated
///    (the caller multiplies `1` by it, then rescales with `shift + 20`).
///
/// Example: `input = 4` → the result multiplies `1 << 20` to about `2^19` (1/√4 = 0.5).
func inverseSqrtMultiplier(_ value: Int32) -> QuantizedMultiplier {
    if value <= 1 { return QuantizedMultiplier(multiplier: Int32.max, shift: 0) }
    var input = value
    var shift = 11
    while input >= 1 << 29 {
        input /= 4
        shift += 1
    }
    let maxLeftShiftBits = countLeadingZeros(input) - 1
    let leftShiftBitPairs = maxLeftShiftBits / 2 - 1
    shift -= leftShiftBitPairs
    input <<= 2 * leftShiftBitPairs
    // Q3.28 values: one is 2^28; products of two Q3.28 values are Q6.25, of three Q9.22.
    let fixedInput = input >> 1
    let halfInput = roundingDivideByPOT(fixedInput, 1)
    let halfThree: Int32 = (1 << 28) + (1 << 27)
    var x: Int32 = 1 << 28
    for _ in 0 ..< 5 {
        let x2 = saturatingRoundingDoublingHighMul(x, x)                 // Q6
        let x3 = rescale(saturatingRoundingDoublingHighMul(x2, x), fromIntegerBits: 9, toIntegerBits: 3)
        let a = saturatingRoundingDoublingHighMul(halfThree, x)          // Q6
        let b = saturatingRoundingDoublingHighMul(halfInput, x3)         // Q6
        x = rescale(a &- b, fromIntegerBits: 6, toIntegerBits: 3)
    }
    let halfSqrt2: Int32 = 1_518_500_250                                  // √2 / 2 in Q0.31
    var multiplier = saturatingRoundingDoublingHighMul(x, halfSqrt2)      // Q3
    if shift < 0 {
        multiplier <<= -shift
        shift = 0
    }
    return QuantizedMultiplier(multiplier: multiplier, shift: -shift)
}
