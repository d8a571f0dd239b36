// Sixteen-lane versions of the engine's fixed-point helpers (Engine/Quantization/FixedPoint.swift),
// for kernels that requantize sixteen output channels at once (CONV_2D, DEPTHWISE_CONV_2D). Each
// lane gives exactly what the scalar helper gives (IntegerGEMMTests checks them lane by lane
// against the scalar helpers, edge values included). They live here so that the kernels of this
// module and the engine's share one copy; plain `@inlinable` Swift, each caller compiles them for
// its own target.
//
// Everything here is branch-free lane arithmetic. Comparisons are written as sign tricks
// rather than masks except for the final clamp: the generic mask code compiles to lane-by-lane
// loops for `SIMD8<Int64>` and for `.==`. The functions are `@inline(always)` because
// `@inline(__always)` is only a hint and these would otherwise become calls in hot loops.

/// `saturatingRoundingDoublingHighMul` lane by lane.
///
/// The nudged, truncating division of the scalar helper equals `(a·b + 2^30) >> 31` (an
/// arithmetic shift) for every product, so each lane is one 64-bit multiply, add and shift.
/// Lanes are processed as even/odd halves of 64-bit words (`vpmuldq` multiplies the low
/// 32 bits of each word), which needs no lane shuffles.
///
/// Example: lanes `(1 << 30, 1 << 30)` → `1 << 29`; `(Int32.min, Int32.min)` → `Int32.max`.
@inlinable @inline(always)
public func saturatingRoundingDoublingHighMul(_ a: SIMD16<Int32>, _ b: SIMD16<Int32>) -> SIMD16<Int32> {
    let a64 = unsafeBitCast(a, to: SIMD8<Int64>.self), b64 = unsafeBitCast(b, to: SIMD8<Int64>.self)
    let half = SIMD8<Int64>(repeating: 1 << 30)
    // Even lanes sit in the low 32 bits of each word (little-endian; sign-extended by the
    // shift pair), odd lanes in the high 32 bits.
    let even = (((a64 &<< 32) &>> 32) &* ((b64 &<< 32) &>> 32) &+ half) &>> 31
    let odd = ((a64 &>> 32) &* (b64 &>> 32) &+ half) &>> 31
    let merged = (even & SIMD8(repeating: 0xFFFF_FFFF)) | (odd &<< 32)
    let result = unsafeBitCast(merged, to: SIMD16<Int32>.self)
    // Every product but Int32.min × Int32.min (= 2^62) gives a quotient in
    // -2^31 + 1 ... 2^31 - 1; that one gives 2^31, which wraps to Int32.min: subtract one
    // there to saturate to Int32.max. `t | -t` has its sign bit set unless t == 0, so
    // `isMinimum` is 1 exactly for Int32.min lanes (an `.==` mask here compiles to a loop).
    let t = result ^ SIMD16(repeating: Int32.min)
    let isMinimum = ((t | (SIMD16() &- t)) &>> 31) &+ SIMD16(repeating: 1)
    return result &- isMinimum
}

/// `saturatingRoundingDoublingHighMul` for multipliers other than `Int32.min`, the only value
/// whose product can overflow: the same quotients with no saturation step. Each quotient is
/// bits 31...62 of `a·b + 2^30`, moved into the low half of even words and the high half of
/// odd words and blended (`vpmuldq`, `vpaddq`, shifts and one masked move).
///
/// Example: lanes `(1 << 30, 1 << 30)` → `1 << 29`; `(-5, 1 << 30)` → `-2` (−2.5 rounds up).
@inlinable @inline(always)
public func roundingDoublingHighMul(_ a: SIMD16<Int32>, _ b: SIMD16<Int32>) -> SIMD16<Int32> {
    let a64 = unsafeBitCast(a, to: SIMD8<Int64>.self), b64 = unsafeBitCast(b, to: SIMD8<Int64>.self)
    let half = SIMD8<Int64>(repeating: 1 << 30)
    let even = ((a64 &<< 32) &>> 32) &* ((b64 &<< 32) &>> 32) &+ half
    let odd = (a64 &>> 32) &* (b64 &>> 32) &+ half
    let low = SIMD8<Int64>(repeating: 0xFFFF_FFFF)
    let merged = ((even &>> 31) & low) | ((odd &<< 1) & ~low)
    return unsafeBitCast(merged, to: SIMD16<Int32>.self)
}

/// `roundingDivideByPOT` lane by lane, with a per-lane exponent in `0...31`.
///
/// Example: lanes `(5, 1)` → `3`, `(-5, 1)` → `-3`, `(-6, 2)` → `-2`.
@inlinable @inline(always)
public func roundingDivideByPOT(_ x: SIMD16<Int32>, _ exponent: SIMD16<Int32>) -> SIMD16<Int32> {
    let one = SIMD16<Int32>(repeating: 1)
    let mask = (one &<< exponent) &- one
    let remainder = x & mask
    // threshold = mask / 2, plus one for negative x (x >> 31 is -1 then).
    let threshold = (mask &>> 1) &- (x &>> 31)
    // remainder and threshold are both in 0..<2^31, so threshold - remainder is negative
    // (its sign bit, shifted down, is -1) exactly when remainder > threshold.
    return (x &>> exponent) &- ((threshold &- remainder) &>> 31)
}

/// The per-channel output stage of sixteen channels, held in registers: TFLite's
/// `MultiplyByQuantizedMultiplier` lane by lane (left shift, doubling high multiply, rounding
/// right shift), then the output zero point and the clamp. The engine's `ChannelRequantization`
/// loads one per block of channels; this module's kernels and the engine's apply it alike.
public struct RequantizationBlock {
    public let multipliers, leftShifts, rightShifts: SIMD16<Int32>
    /// Some multiplier is `Int32.min`, whose square saturates.
    public let saturates: Bool
    /// Some channel shifts left (else `leftShifts` is all zero and the shift is skipped).
    public let shiftsLeft: Bool
    public let zeroPoint, minimum, maximum: SIMD16<Int32>

    @inlinable @inline(always)
    public init(multipliers: SIMD16<Int32>, leftShifts: SIMD16<Int32>, rightShifts: SIMD16<Int32>, saturates: Bool,
                shiftsLeft: Bool, zeroPoint: Int32, minimum: Int32, maximum: Int32) {
        self.multipliers = multipliers
        self.leftShifts = leftShifts
        self.rightShifts = rightShifts
        self.saturates = saturates
        self.shiftsLeft = shiftsLeft
        self.zeroPoint = SIMD16(repeating: zeroPoint)
        self.minimum = SIMD16(repeating: minimum)
        self.maximum = SIMD16(repeating: maximum)
    }

    @inlinable @inline(always)
    public func apply(_ accumulators: SIMD16<Int32>) -> SIMD16<Int32> {
        apply(accumulators, saturating: saturates, shiftingLeft: shiftsLeft)
    }

    /// `apply` with the two flags given by the caller (constants in a loop that tests them once
    /// outside); `saturating: true` is exact for every multiplier, `shiftingLeft: true` for every
    /// shift.
    @inlinable @inline(always)
    public func apply(_ accumulators: SIMD16<Int32>, saturating: Bool, shiftingLeft: Bool) -> SIMD16<Int32> {
        let x = shiftingLeft ? accumulators &<< leftShifts : accumulators
        let product = saturating ? saturatingRoundingDoublingHighMul(x, multipliers) : roundingDoublingHighMul(x, multipliers)
        return clamped(roundingDivideByPOT(product, rightShifts) &+ zeroPoint, minimum, maximum)
    }
}

/// `x` clamped to `minimum ... maximum` lane by lane. A lane loop, which LLVM makes one `vpmaxsd`
/// and one `vpminsd`: `replacing(with:where:)` compiled to a compare and a masked move per bound,
/// and `pointwiseMin` to a call.
@inlinable @inline(always)
public func clamped(_ x: SIMD16<Int32>, _ minimum: SIMD16<Int32>, _ maximum: SIMD16<Int32>) -> SIMD16<Int32> {
    var result = SIMD16<Int32>()
    for lane in 0 ..< 16 { result[lane] = min(max(x[lane], minimum[lane]), maximum[lane]) }
    return result
}

@inlinable @inline(always)
public func clamped(_ x: SIMD16<Int32>, _ minimum: Int32, _ maximum: Int32) -> SIMD16<Int32> {
    clamped(x, SIMD16(repeating: minimum), SIMD16(repeating: maximum))
}
