// Preparation helpers shared by the fixed-point SOFTMAX / LOG_SOFTMAX kernels,
// mirroring tflite/kernels/internal/quantization_util.cc (default build: no
// TFLITE_EMULATE_FLOAT, no TFLITE_SINGLE_ROUNDING).

/// TFLite's `PreprocessSoftmaxScaling`: the multiplier that maps an input
/// difference `x - max` (in input quanta) to a fixed-point value with
/// `inputIntegerBits` integer bits, already scaled by `beta`.
///
///     real = min(beta * inputScale * 2^(31 - inputIntegerBits), 2^31 - 1)
///
/// quantized with `QuantizeMultiplierGreaterThanOne`; the returned `shift` is
/// the (non-negative) left shift for `multiplyByQuantizedMultiplierGreaterThanOne`.
/// The arithmetic is in `Double`, left to right, as in TFLite.
///
/// Returns `nil` where TFLite aborts (`real <= 1`, e.g. an absurdly small
/// `beta * inputScale`).
///
/// Example: `beta = 1, inputScale = 1/256, inputIntegerBits = 5` →
/// real = 2^-8 × 2^26 = 2^18 → `(1 << 30, 19)`.
func preprocessSoftmaxScaling(beta: Double, inputScale: Double,
                              inputIntegerBits: Int) -> QuantizedMultiplier? {
    let maxRealMultiplier = Double(Int64(1) << 31) - 1.0
    // C++ evaluates `1 << (31 - input_integer_bits)` in int; for 0 integer bits
    // that wraps to INT_MIN, reproduced here.
    let scale = Double(Int32(truncatingIfNeeded: Int64(1) << (31 - inputIntegerBits)))
    let real = Swift.min(beta * inputScale * scale, maxRealMultiplier)
    return QuantizedMultiplier.greaterThanOne(real)
}

/// TFLite's `CalculateInputRadius`: the largest input difference (in the
/// rescaled domain before the left shift) whose scaled value still fits in a
/// fixed-point number with `inputIntegerBits` integer bits:
///
///     floor((2^inputIntegerBits - 1) * 2^(totalSignedBits - inputIntegerBits) / 2^inputLeftShift)
///
/// computed in `Double` as TFLite does. Softmax uses `-radius` as `diff_min`.
///
/// Examples: `(5, 19)` → `31 × 2^26 / 2^19` = `3968`;
/// `(4, 3, totalSignedBits: 15)` → `15 × 2^11 / 8` = `3840`.
func calculateInputRadius(inputIntegerBits: Int, inputLeftShift: Int,
                          totalSignedBits: Int = 31) -> Int32 {
    let maxInputRescaled =
        1.0 * Double((1 << inputIntegerBits) - 1)
        * Double(Int64(1) << (totalSignedBits - inputIntegerBits))
        / Double(Int64(1) << inputLeftShift)
    // Tighten with floor: the exact bound itself would already saturate.
    return Int32(maxInputRescaled.rounded(.down))
}
