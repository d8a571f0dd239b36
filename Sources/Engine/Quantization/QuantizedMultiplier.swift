/// A real scale factor in the form TFLite's integer kernels consume it:
/// a Q0.31 significand and a power-of-two exponent, so that
///
///     realMultiplier ≈ Double(multiplier) / 2^31 * 2^shift
///
/// `shift > 0` is a left shift, `shift < 0` a right shift (TFLite's
/// `QuantizeMultiplier` convention, which the reference kernels pass straight
/// to `MultiplyByQuantizedMultiplier`).
///
/// Mirrors `tflite::QuantizeMultiplier` (tflite/kernels/internal/quantization_util.cc)
/// as built by default, i.e. without `TFLITE_SINGLE_ROUNDING` and without
/// `TFLITE_EMULATE_FLOAT`.
struct QuantizedMultiplier: Sendable, Equatable {
    /// Significand in Q0.31. For a positive real multiplier it lies in
    /// `[2^30, 2^31)`; it is 0 for a zero (or flushed-to-zero) multiplier.
    var multiplier: Int32
    /// Power-of-two exponent: positive shifts left, negative shifts right.
    var shift: Int

    init(multiplier: Int32, shift: Int) {
        self.multiplier = multiplier
        self.shift = shift
    }

    /// Quantizes `realMultiplier` exactly as TFLite's `QuantizeMultiplier`:
    ///
    /// 1. `q, shift = frexp(realMultiplier)`, so `0.5 <= |q| < 1`;
    /// 2. `qFixed = round(q * 2^31)` (round half away from zero, in `Double`);
    /// 3. if `qFixed == 2^31` (q rounded up to 1.0) it is halved and `shift` grows by one;
    /// 4. if `shift < -31` the multiplier is flushed to `(0, 0)`, since every bit
    ///    would be shifted out anyway.
    ///
    /// Worked examples (multiplier, shift):
    /// - `0.5`  → frexp = (0.5, 0)  → `(1 << 30, 0)`
    /// - `1.0`  → frexp = (0.5, 1)  → `(1 << 30, 1)`
    /// - `0.75` → frexp = (0.75, 0) → `(1_610_612_736, 0)`
    /// - `3.0`  → frexp = (0.75, 2) → `(1_610_612_736, 2)`
    /// - `0.1`  → frexp = (0.8, -3) → round(1_717_986_918.4) → `(1_717_986_918, -3)`
    /// - `1 - 2^-40` → q rounds to 2^31 → halved: `(1 << 30, 1)`
    /// - `2^-32` → `(1 << 30, -31)`; `2^-33` → shift -32 < -31 → `(0, 0)`
    /// - `0` → `(0, 0)`
    /// - `-0.5` → `(-(1 << 30), 0)` (negative multipliers are not special-cased;
    ///   `-(1 - 2^-40)` gives `(Int32.min, 0)` exactly as TFLite does).
    ///
    /// Non-finite input yields `(0, 0)`: that is what TFLite produces on x86-64
    /// with glibc (`frexp` reports exponent 0 and the out-of-range
    /// double→int64 conversion gives `INT64_MIN`, which truncates to 0).
    init(_ realMultiplier: Double) {
        guard realMultiplier != 0, realMultiplier.isFinite else {
            self.init(multiplier: 0, shift: 0)
            return
        }
        // frexp: realMultiplier == q * 2^exponent with 0.5 <= |q| < 1.
        // Swift's `exponent`/`significand` use [1, 2), hence the +1 / exponent -1.
        var exponent = Int(realMultiplier.exponent) + 1
        let q = Double(sign: realMultiplier.sign, exponent: -1,
                       significand: realMultiplier.significand)
        // |q * 2^31| < 2^31, so the rounded value always fits in Int64 (and in
        // Int32 except for the +2^31 case handled next).
        var qFixed = Int64((q * 2_147_483_648.0).rounded(.toNearestOrAwayFromZero))
        if qFixed == Int64(1) << 31 {
            qFixed /= 2
            exponent += 1
        }
        if exponent < -31 {
            exponent = 0
            qFixed = 0
        }
        self.init(multiplier: Int32(truncatingIfNeeded: qFixed), shift: exponent)
    }

    /// TFLite's `QuantizeMultiplierSmallerThanOneExp`: `QuantizeMultiplier`
    /// restricted to `0 < realMultiplier < 1`, returning a non-positive shift.
    ///
    /// Returns `nil` where TFLite aborts with a `TFLITE_CHECK` (input outside
    /// `(0, 1)`, or a value so close to 1 that it rounds up to shift +1).
    ///
    /// Example: `0.25` → `(1 << 30, -1)`; `1.0` → `nil`.
    static func smallerThanOneExp(_ realMultiplier: Double) -> QuantizedMultiplier? {
        guard realMultiplier < 1, realMultiplier > 0 else { return nil }
        let quantized = QuantizedMultiplier(realMultiplier)
        return quantized.shift <= 0 ? quantized : nil
    }

    /// TFLite's `QuantizeMultiplierGreaterThanOne`: `QuantizeMultiplier`
    /// restricted to `realMultiplier > 1`, returning a non-negative shift.
    ///
    /// Returns `nil` where TFLite aborts with a `TFLITE_CHECK`.
    ///
    /// Example: `262_144.0` (2^18) → `(1 << 30, 19)`; `1.0` → `nil`.
    static func greaterThanOne(_ realMultiplier: Double) -> QuantizedMultiplier? {
        guard realMultiplier > 1 else { return nil }
        let quantized = QuantizedMultiplier(realMultiplier)
        return quantized.shift >= 0 ? quantized : nil
    }

    /// TFLite's `DownScaleInt32ToInt16Multiplier` applied to `multiplier`: the
    /// Q0.15 significand used by 16-bit fixed-point kernels (HARD_SWISH),
    /// rounding half up and saturating at `Int16.max`.
    ///
    /// Example: `1 << 30` → `(2^30 + 2^15) >> 16` = `16_384`;
    /// `Int32.max` → `Int16.max`.
    var int16Multiplier: Int16 {
        // TFLite DCHECKs multiplier >= 0; release builds just compute.
        let roundingOffset: Int32 = 1 << 15
        if multiplier >= Int32.max - roundingOffset { return Int16.max }
        // No overflow: multiplier < Int32.max - 2^15 was checked just above.
        return Int16(truncatingIfNeeded: (multiplier &+ roundingOffset) &>> 16)
    }
}
