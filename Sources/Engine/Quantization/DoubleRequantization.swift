// LiteRT's reference FULLY_CONNECTED kernels (reference_ops::FullyConnected for uint8,
// reference_integer_ops::FullyConnected / FullyConnectedPerChannel for int8; "Make the
// fully_connected ref kernel do requant in float", 2025) do not use the fixed-point
// multiplier their Prepare computes: each accumulator is rescaled in Double,
//
//     effective = Double(inputScale) * Double(filterScale) / Double(outputScale)
//     scaled    = static_cast<int32_t>(round(Double(acc) * effective))
//
// with `filterScale` the per-tensor scale or the unit's per-channel scale. The result differs
// from `multiplyByQuantizedMultiplier` by one in the last place now and then, so a bit-exact
// FULLY_CONNECTED must follow this path.

/// The effective output scale of LiteRT's reference FULLY_CONNECTED, every factor widened to
/// Double before multiplying.
///
/// Example: input 0.5, filter 0.25, output 0.125 → `1.0`.
func fullyConnectedEffectiveScale(inputScale: Float, filterScale: Float, outputScale: Float) -> Double {
    Double(inputScale) * Double(filterScale) / Double(outputScale)
}

/// `static_cast<int32_t>(round(static_cast<double>(accumulator) * scale))` as x86-64 runs it:
/// C's `round` (halves away from zero), then truncation where NaN and values outside the
/// Int32 range become `Int32.min` (`cvttsd2si`'s "integer indefinite").
///
/// Examples: `(5, 0.5)` → `3`; `(-5, 0.5)` → `-3`; `(7, 0.1)` → `1`;
/// `(Int32.max, 2.0)` → `Int32.min`.
@inline(__always)
func requantizeInDouble(_ accumulator: Int32, scale: Double) -> Int32 {
    let rounded = (Double(accumulator) * scale).rounded(.toNearestOrAwayFromZero)
    // -2^31 is exactly representable; +2^31 is the first value that overflows.
    guard rounded >= -2_147_483_648.0, rounded < 2_147_483_648.0 else { return Int32.min }
    return Int32(rounded)
}
