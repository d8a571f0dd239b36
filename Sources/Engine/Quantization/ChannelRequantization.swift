// Sixteen-lane versions of the fixed-point helpers in FixedPoint.swift, for kernels that
// requantize sixteen output channels at once (CONV_2D, DEPTHWISE_CONV_2D). Each lane gives
// exactly what the scalar helper gives (IntegerGEMMTests checks them lane by lane against the
// scalar helpers, edge values included).
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
@inline(always)
func saturatingRoundingDoublingHighMul(_ a: SIMD16<Int32>, _ b: SIMD16<Int32>) -> SIMD16<Int32> {
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
@inline(always)
func roundingDoublingHighMul(_ a: SIMD16<Int32>, _ b: SIMD16<Int32>) -> SIMD16<Int32> {
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
@inline(always)
func roundingDivideByPOT(_ x: SIMD16<Int32>, _ exponent: SIMD16<Int32>) -> SIMD16<Int32> {
    let one = SIMD16<Int32>(repeating: 1)
    let mask = (one &<< exponent) &- one
    let remainder = x & mask
    // threshold = mask / 2, plus one for negative x (x >> 31 is -1 then).
    let threshold = (mask &>> 1) &- (x &>> 31)
    // remainder and threshold are both in 0..<2^31, so threshold - remainder is negative
    // (its sign bit, shifted down, is -1) exactly when remainder > threshold.
    return (x &>> exponent) &- ((threshold &- remainder) &>> 31)
}

/// Per-output-channel requantization: `multiplyByQuantizedMultiplier`, then the output zero
/// point, then the activation clamp — TFLite's output stage for integer CONV_2D and
/// DEPTHWISE_CONV_2D, laid out for sixteen channels per step.
///
///     let stage = ChannelRequantization(multipliers, zeroPoint: -3, range: (-128, 127))
///     let q = stage.apply(accumulators, channel: 32)   // channels 32..<48
///
/// Channel arrays are padded with zeros to a multiple of 16, so `apply` may be called for the
/// last, partial block (the padded lanes produce garbage the caller does not store).
struct ChannelRequantization: Sendable {
    let channelCount: Int
    let multipliers: PackedBuffer<Int32>
    let leftShifts: PackedBuffer<Int32>
    let rightShifts: PackedBuffer<Int32>
    /// Some multiplier is `Int32.min`, whose square saturates: `apply` then takes the
    /// saturating product.
    let saturates: Bool
    /// Some channel shifts left (a real multiplier of 1 or more; below 1 in most convolutions).
    let shiftsLeft: Bool
    let zeroPoint: Int32
    let minimum: Int32
    let maximum: Int32

    init(_ quantized: [QuantizedMultiplier], zeroPoint: Int32, range: (min: Int32, max: Int32)) {
        channelCount = quantized.count
        let padded = (quantized.count + 15) / 16 * 16
        multipliers = PackedBuffer(count: padded, initializedTo: 0)
        leftShifts = PackedBuffer(count: padded, initializedTo: 0)
        rightShifts = PackedBuffer(count: padded, initializedTo: 0)
        for (c, q) in quantized.enumerated() {
            multipliers.pointer[c] = q.multiplier
            // Right shifts are at most 31 (QuantizedMultiplier flushes smaller exponents); a
            // left shift of 32 or more (a real multiplier of 2^31 or more) wraps modulo 32 in
            // the scalar helper's masking shift, and the same masking is stored here.
            leftShifts.pointer[c] = Int32(max(q.shift, 0) & 31)
            rightShifts.pointer[c] = Int32(max(-q.shift, 0))
        }
        saturates = quantized.contains { $0.multiplier == Int32.min }
        shiftsLeft = quantized.contains { max($0.shift, 0) & 31 != 0 }
        self.zeroPoint = zeroPoint
        minimum = range.min
        maximum = range.max
    }

    /// Requantizes the accumulators of channels `channel ..< channel + 16`; `channel` is a
    /// multiple of 16.
    @inline(always)
    func apply(_ accumulators: SIMD16<Int32>, channel: Int) -> SIMD16<Int32> {
        block(at: channel).apply(accumulators)
    }

    /// The parameters of channels `channel ..< channel + 16` (a multiple of 16), loaded once for
    /// a loop that requantizes many pixels of the same channels.
    @inline(always)
    func block(at channel: Int) -> Block {
        Block(multipliers: UnsafeRawPointer(multipliers.pointer + channel).loadUnaligned(as: SIMD16<Int32>.self),
              leftShifts: UnsafeRawPointer(leftShifts.pointer + channel).loadUnaligned(as: SIMD16<Int32>.self),
              rightShifts: UnsafeRawPointer(rightShifts.pointer + channel).loadUnaligned(as: SIMD16<Int32>.self),
              saturates: saturates, zeroPoint: SIMD16(repeating: zeroPoint),
              minimum: SIMD16(repeating: minimum), maximum: SIMD16(repeating: maximum))
    }

    /// The output stage of sixteen channels, held in registers (`block(at:)`); `apply` gives
    /// exactly what `ChannelRequantization.apply(_:channel:)` gives for those channels.
    struct Block {
        let multipliers, leftShifts, rightShifts: SIMD16<Int32>
        let saturates: Bool
        let zeroPoint, minimum, maximum: SIMD16<Int32>

        @inline(always)
        func apply(_ accumulators: SIMD16<Int32>) -> SIMD16<Int32> {
            apply(accumulators, saturating: saturates)
        }

        /// `apply` with `saturates` given by the caller (a constant in a loop that tests it once
        /// outside); `saturating: true` is exact for every multiplier.
        @inline(always)
        func apply(_ accumulators: SIMD16<Int32>, saturating: Bool) -> SIMD16<Int32> {
            let x = accumulators &<< leftShifts
            let product = saturating ? saturatingRoundingDoublingHighMul(x, multipliers) : roundingDoublingHighMul(x, multipliers)
            let shifted = roundingDivideByPOT(product, rightShifts) &+ zeroPoint
            // A lane loop, which LLVM makes one `vpmaxsd` and one `vpminsd`: `replacing(with:where:)`
            // compiled to a compare and a masked move per bound, and `pointwiseMin` to a call.
            var clamped = SIMD16<Int32>()
            for lane in 0 ..< 16 { clamped[lane] = min(max(shifted[lane], minimum[lane]), maximum[lane]) }
            return clamped
        }
    }

    /// The scalar output stage for one channel, through the scalar helpers: the reference the
    /// vector path is tested against.
    func apply(_ accumulator: Int32, channel: Int) -> Int32 {
        let shift = Int(leftShifts.pointer[channel]) - Int(rightShifts.pointer[channel])
        let scaled = multiplyByQuantizedMultiplier(accumulator, multiplier: multipliers.pointer[channel], shift: shift)
        return min(max(scaled &+ zeroPoint, minimum), maximum)
    }
}
