// gemmlowp's fixed-point transcendental functions (fixedpoint/fixedpoint.h), on
// raw Int32 values. gemmlowp encodes the format in the type,
// FixedPoint<int32_t, IntegerBits>; here the raw value is an Int32 and the
// integer-bit count is an explicit argument:
//
//     a value with k integer bits ("Qk.(31-k)") represents raw / 2^(31 - k).
//
// So 1.0 is 2^(31-k) for k > 0, while for k = 0 gemmlowp's One() is Int32.max.
// Products of Qa and Qb values (saturatingRoundingDoublingHighMul) are
// Q(a+b) values, exactly like gemmlowp's operator*.
//
// Additions and subtractions are plain int32 Add/Sub in gemmlowp (wrapping in
// practice); they use &+ / &- here for the same result.

/// Namespace for gemmlowp's fixed-point functions on raw `Int32` values.
enum FixedPoint {
    /// gemmlowp's `FixedPoint<int32_t, 0>::One()`: the largest Q0.31 value.
    static let oneQ0: Int32 = Int32.max

    /// 1.0 with `integerBits` integer bits (`FixedPoint<int32_t, k>::One()`).
    ///
    /// Examples: `one(integerBits: 0)` = `Int32.max`; `one(integerBits: 2)` = `1 << 29`.
    @inline(__always)
    static func one(integerBits: Int) -> Int32 {
        integerBits == 0 ? Int32.max : Int32(1) &<< (31 - integerBits)
    }

    /// `exp(a)` for `a` in `[-1/4, 0)`, both Q0.31 (gemmlowp's
    /// `exp_on_interval_between_negative_one_quarter_and_0_excl`): a 4th-order
    /// Taylor expansion around −1/8.
    ///
    /// Example: `a = -(1 << 29)` (−0.25) → `1_672_462_419`
    /// (exp(−0.25) × 2^31 = 1_672_461_946.7; the expansion is good to ~2.5e-7).
    @inline(__always)
    static func expOnIntervalBetweenNegativeOneQuarterAnd0Excl(_ a: Int32) -> Int32 {
        let constantTerm: Int32 = 1_895_147_668  // exp(-1/8)
        let constantOneOver3: Int32 = 715_827_883  // 1/3
        // ConstantPOT<-3> in Q0.31 is 2^28 (= 1/8).
        let x = a &+ (1 << 28)
        let x2 = saturatingRoundingDoublingHighMul(x, x)
        let x3 = saturatingRoundingDoublingHighMul(x2, x)
        let x4 = saturatingRoundingDoublingHighMul(x2, x2)
        let x4Over4 = saturatingRoundingMultiplyByPOT(x4, -2)
        let x4Over24PlusX3Over6PlusX2Over2 = saturatingRoundingMultiplyByPOT(
            saturatingRoundingDoublingHighMul(x4Over4 &+ x3, constantOneOver3) &+ x2, -1)
        // AddSaturatingIf16Bit is a plain add for 32-bit raws.
        return constantTerm &+ saturatingRoundingDoublingHighMul(
            constantTerm, x &+ x4Over24PlusX3Over6PlusX2Over2)
    }

    /// `exp(a)` for `a <= 0` with `integerBits` integer bits; the result is
    /// Q0.31 (gemmlowp's `exp_on_negative_values`). The input is split into a
    /// remainder in `[-1/4, 0)` handled by the Taylor expansion and a barrel
    /// shifter multiplying by `exp(-1/4)`, `exp(-1/2)`, …, `exp(-16)` for each
    /// set bit; inputs below −32 (only representable with more than 5 integer
    /// bits) give 0, and `a == 0` gives `Int32.max` (1.0).
    ///
    /// Softmax uses `integerBits: 5` (Q5.26).
    ///
    /// Examples (Q5.26 input): `0` → `Int32.max`; `-(1 << 26)` (−1.0) →
    /// `790_015_308`, computed as exp(−1/4) (Taylor) × exp(−1/4) × exp(−1/2)
    /// (barrel shifter); exp(−1) × 2^31 = 790_015_084.4.
    @inline(__always)
    static func expOnNegativeValues(_ a: Int32, integerBits: Int) -> Int32 {
        let fractionalBits = 31 - integerBits
        // ConstantPOT<-2> (1/4) in the input format.
        let oneQuarter = Int32(1) &<< (fractionalBits - 2)
        let mask = oneQuarter &- 1
        let aModQuarterMinusOneQuarter = (a & mask) &- oneQuarter
        var result = expOnIntervalBetweenNegativeOneQuarterAnd0Excl(
            rescale(aModQuarterMinusOneQuarter, fromIntegerBits: integerBits, toIntegerBits: 0))
        let remainder = aModQuarterMinusOneQuarter &- a

        // Barrel shifter: (exponent, Q0.31 multiplier exp(-2^exponent)).
        @inline(__always)
        func barrelStep(_ exponent: Int, _ multiplier: Int32) {
            guard integerBits > exponent else { return }
            let shiftAmount = fractionalBits + exponent
            if remainder & (Int32(1) &<< shiftAmount) != 0 {
                result = saturatingRoundingDoublingHighMul(result, multiplier)
            }
        }
        barrelStep(-2, 1_672_461_947)  // exp(-1/4)
        barrelStep(-1, 1_302_514_674)  // exp(-1/2)
        barrelStep(0, 790_015_084)     // exp(-1)
        barrelStep(1, 290_630_308)     // exp(-2)
        barrelStep(2, 39_332_535)      // exp(-4)
        barrelStep(3, 720_401)         // exp(-8)
        barrelStep(4, 242)             // exp(-16)

        if integerBits > 5 {
            // -32.0 in the input format.
            let clamp = -(Int32(1) &<< (36 - integerBits))
            if a < clamp { result = 0 }
        }
        if a == 0 { result = oneQ0 }
        return result
    }

    /// `1 / (1 + a)` for `a` in `[0, 1)`, Q0.31 in and out (gemmlowp's
    /// `one_over_one_plus_x_for_x_in_0_1`): three Newton–Raphson iterations on
    /// the half denominator, in Q2.29.
    ///
    /// Examples: `0` → `Int32.max` (≈ 1.0); `1 << 30` (0.5) → `1_431_655_762`
    /// (2/3 × 2^31 = 1_431_655_765.3).
    @inline(__always)
    static func oneOverOnePlusXForXIn01(_ a: Int32) -> Int32 {
        let x = newtonRaphsonReciprocalOfHalfDenominator(roundingHalfSum(a, oneQ0))
        // ExactMulByPot<-1> turns the Q2.29 raw into a Q1.30 raw unchanged,
        // then Rescale<0>.
        return rescale(x, fromIntegerBits: 1, toIntegerBits: 0)
    }

    /// `(1 - a) / (1 + a)` for `a` in `[0, 1)`, Q0.31 in and out (gemmlowp's
    /// `one_minus_x_over_one_plus_x_for_x_in_0_1`).
    ///
    /// Examples: `0` → `Int32.max` (≈ 1.0); `1 << 30` (0.5) → `715_827_876`
    /// (1/3 × 2^31 = 715_827_882.7).
    @inline(__always)
    static func oneMinusXOverOnePlusXForXIn01(_ a: Int32) -> Int32 {
        let x = newtonRaphsonReciprocalOfHalfDenominator(roundingHalfSum(a, oneQ0))
        // Rescale<0>(x - F2::One()).
        return rescale(x &- one(integerBits: 2), fromIntegerBits: 2, toIntegerBits: 0)
    }

    /// Shared core of the two functions above: given `halfDenominator` =
    /// (1 + a) / 2 in Q0.31, returns ≈ 1 / halfDenominator in Q2.29.
    @inline(__always)
    private static func newtonRaphsonReciprocalOfHalfDenominator(_ halfDenominator: Int32) -> Int32 {
        let constant48Over17: Int32 = 1_515_870_810      // Q2.29
        let constantNeg32Over17: Int32 = -1_010_580_540  // Q2.29
        let oneQ2 = one(integerBits: 2)
        // Q0 * Q2 → Q2.
        var x = constant48Over17 &+ saturatingRoundingDoublingHighMul(halfDenominator, constantNeg32Over17)
        for _ in 0..<3 {
            let halfDenominatorTimesX = saturatingRoundingDoublingHighMul(halfDenominator, x)
            let oneMinusHalfDenominatorTimesX = oneQ2 &- halfDenominatorTimesX
            // Q2 * Q2 → Q4, rescaled back to Q2.
            x = x &+ rescale(saturatingRoundingDoublingHighMul(x, oneMinusHalfDenominatorTimesX),
                             fromIntegerBits: 4, toIntegerBits: 2)
        }
        return x
    }

    /// `-tanh(a)` for `a <= 0` with `integerBits` integer bits, Q0.31 result
    /// (gemmlowp's `neg_tanh_on_negative_values`).
    @inline(__always)
    static func negTanhOnNegativeValues(_ a: Int32, integerBits: Int) -> Int32 {
        // ExactMulByPot<1>: the same raw read with one more integer bit is 2a.
        oneMinusXOverOnePlusXForXIn01(expOnNegativeValues(a, integerBits: integerBits + 1))
    }

    /// `tanh(a)` with `integerBits` integer bits, Q0.31 result (gemmlowp's `tanh`).
    ///
    /// Note: TFLite's BUILTIN_REF resolver does not use this for uint8/int8
    /// TANH (it uses a float-built lookup table, see `ActivationLookupTable`).
    ///
    /// Examples (Q4.27): `0` → `0`; `1 << 27` (1.0) → `1_635_510_876`
    /// (tanh(1) × 2^31 = 1_635_510_996.3).
    @inline(__always)
    static func tanh(_ a: Int32, integerBits: Int) -> Int32 {
        let isNegative = a < 0
        let n = isNegative ? a : 0 &- a
        let t = negTanhOnNegativeValues(n, integerBits: integerBits)
        if a == 0 { return 0 }
        return isNegative ? 0 &- t : t
    }

    /// `1 / (1 + exp(-a))` for `a >= 0` with `integerBits` integer bits, Q0.31
    /// result (gemmlowp's `logistic_on_positive_values`).
    @inline(__always)
    static func logisticOnPositiveValues(_ a: Int32, integerBits: Int) -> Int32 {
        oneOverOnePlusXForXIn01(expOnNegativeValues(0 &- a, integerBits: integerBits))
    }

    /// The logistic function with `integerBits` integer bits, Q0.31 result
    /// (gemmlowp's `logistic`); `0` maps to exactly `1 << 30` (0.5).
    ///
    /// Note: TFLite's BUILTIN_REF resolver does not use this for uint8/int8
    /// LOGISTIC (it uses a float-built lookup table, see `ActivationLookupTable`).
    ///
    /// Examples (Q4.27): `0` → `1 << 30`; `1 << 27` (1.0) → `1_569_936_226`
    /// (σ(1) × 2^31 = 1_569_936_343.3).
    @inline(__always)
    static func logistic(_ a: Int32, integerBits: Int) -> Int32 {
        let isPositive = a > 0
        let absInput = isPositive ? a : 0 &- a
        let resultIfPositive = logisticOnPositiveValues(absInput, integerBits: integerBits)
        let resultIfNegative = oneQ0 &- resultIfPositive
        if a == 0 { return 1 << 30 }
        return isPositive ? resultIfPositive : resultIfNegative
    }

    /// TFLite's `GetReciprocal` (internal/common.h), used by quantized softmax:
    /// for a positive `x` with `xIntegerDigits` integer bits, returns
    /// `1 / (x / 2^numBitsOverUnit)` in Q0.31 together with `numBitsOverUnit`,
    /// the number of bits of `x` above 1.0 (so `1/x ≈ reciprocal / 2^31 / 2^numBitsOverUnit`).
    ///
    /// Example: `x = 3 << 19` (3.0 in Q12.19) → headroom+1 = 11,
    /// `numBitsOverUnit = 1`, `x` normalised to 1.5 → reciprocal `1_431_655_762`
    /// (≈ 2/3 × 2^31), i.e. 1/3 = 2/3 / 2^1.
    @inline(__always)
    static func reciprocal(_ x: Int32, integerBits xIntegerDigits: Int)
        -> (reciprocal: Int32, numBitsOverUnit: Int)
    {
        let headroomPlusOne = countLeadingZeros(x)
        let numBitsOverUnit = xIntegerDigits - headroomPlusOne
        // Normalise so the leading one sits at bit 31, then drop it: the
        // remaining bits are (x_normalised - 1) in Q0.31. Unsigned wrapping as in C++.
        let shiftedSumMinusOne = Int32(bitPattern:
            (UInt32(bitPattern: x) << UInt32(headroomPlusOne)) &- (UInt32(1) << 31))
        return (oneOverOnePlusXForXIn01(shiftedSumMinusOne), numBitsOverUnit)
    }
}
