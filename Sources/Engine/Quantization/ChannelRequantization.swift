// The output stage of the integer CONV_2D and DEPTHWISE_CONV_2D kernels, sixteen channels at a
// time, on the lane helpers of Microkernels/LaneArithmetic.swift.
import Microkernels
#if SWIFTLITE_AVX2
import CX86Intrinsics
#endif

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
    /// The same stage as `WideRequantization` constants, for the AVX-512 VNNI kernels: only when
    /// the wide form is exact, every channel shifting right (a real multiplier below ½; most
    /// convolutions) and none saturating.
    let wide: PackedBuffer<Int64>?

    /// Whether any kernel here reads `wide`: an x86-64 build for AVX2 (whose output stages take the
    /// AVX2 form, `applyWide`) or AVX-512, or a machine that runs the `Microkernels` module's VNNI
    /// code.
    #if SWIFTLITE_AVX2 || SWIFTLITE_AVX512VNNI
    static let buildsWide = true
    #else
    static var buildsWide: Bool { RunTimeCPU.runsVNNIKernels }
    #endif

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
        if Self.buildsWide && !saturates && quantized.allSatisfy({ $0.shift <= -1 }) {
            let wide = PackedBuffer<Int64>(count: padded / 16 * WideRequantization.valuesPerBlock, initializedTo: 0)
            WideRequantization.write(multipliers: multipliers.pointer, rightShifts: rightShifts.pointer, channels: padded,
                                     to: wide.pointer)
            self.wide = wide
        } else {
            wide = nil
        }
    }

    /// Requantizes the accumulators of channels `channel ..< channel + 16`; `channel` is a
    /// multiple of 16.
    @inline(always)
    func apply(_ accumulators: SIMD16<Int32>, channel: Int) -> SIMD16<Int32> {
        block(at: channel).apply(accumulators)
    }

    /// The parameters of channels `channel ..< channel + 16` (a multiple of 16), loaded once for
    /// a loop that requantizes many pixels of the same channels; its `apply` gives exactly what
    /// `apply(_:channel:)` gives for those channels.
    @inline(always)
    func block(at channel: Int) -> RequantizationBlock {
        RequantizationBlock(multipliers: loadLanes(UnsafeRawPointer(multipliers.pointer + channel)),
                            leftShifts: loadLanes(UnsafeRawPointer(leftShifts.pointer + channel)),
                            rightShifts: loadLanes(UnsafeRawPointer(rightShifts.pointer + channel)),
                            saturates: saturates, shiftsLeft: shiftsLeft,
                            zeroPoint: zeroPoint, minimum: minimum, maximum: maximum)
    }

    /// `multiplyByQuantizedMultiplier` of channels `channel ..< channel + 16` (a multiple of 16) in
    /// the one-shift form, in this build's vector registers (before the zero point and clamp); nil
    /// where the form is not exact for these channels (`wide` is nil) or this build has no code
    /// for it (no AVX2). `nonnegative`: without the correction for negative products, for
    /// stages that clamp at the zero point or above (`clampsBelowZeroPoint`), whose bytes it
    /// leaves the same.
    @inline(always)
    func applyWide(_ accumulators: SIMD16<Int32>, channel: Int, nonnegative: Bool = false) -> SIMD16<Int32>? {
        guard let wide else { return nil }
        return Self.applyWide(accumulators, multipliers: UnsafeRawPointer(multipliers.pointer + channel),
                              constants: UnsafeRawPointer(wide.pointer + channel / 16 * WideRequantization.valuesPerBlock),
                              nonnegative: nonnegative)
    }

    /// Whether every result below the zero point is clamped up to `minimum` or above.
    var clampsBelowZeroPoint: Bool { minimum >= zeroPoint }

    /// The one-shift form on one block of constants (`multipliers`: the block's 16 multipliers),
    /// nil without AVX2 in the build.
    @inline(always)
    static func applyWide(_ x: SIMD16<Int32>, multipliers: UnsafeRawPointer, constants: UnsafeRawPointer,
                          nonnegative: Bool = false) -> SIMD16<Int32>? {
        #if SWIFTLITE_AVX512VNNI
        return nonnegative ? swiftlite_requantize_wide_nonnegative(x, multipliers, constants)
                           : swiftlite_requantize_wide(x, multipliers, constants)
        #elseif SWIFTLITE_AVX2
        return nonnegative ? swiftlite_requantize_wide_nonnegative_avx2(x, multipliers, constants)
                           : swiftlite_requantize_wide_avx2(x, multipliers, constants)
        #else
        return nil
        #endif
    }

    /// The scalar output stage for one channel, through the scalar helpers: the reference the
    /// vector path is tested against.
    func apply(_ accumulator: Int32, channel: Int) -> Int32 {
        let shift = Int(leftShifts.pointer[channel]) - Int(rightShifts.pointer[channel])
        let scaled = multiplyByQuantizedMultiplier(accumulator, multiplier: multipliers.pointer[channel], shift: shift)
        return min(max(scaled &+ zeroPoint, minimum), maximum)
    }
}

/// Written here, in the engine (compiled for the build's target), not in Microkernels with the
/// layout: the AVX2 kernels read these constants on machines where no code of that module may run.
extension WideRequantization {
    /// The constants of `channels` (a multiple of 16) channels with multipliers `M` and right
    /// shifts `e`, written to `destination` (`channels / 16 · valuesPerBlock` values). Channels
    /// with `e` outside 1...31 get `e` = 1: their results are wrong, and the stage must not use
    /// these constants for them (padding lanes are never stored).
    static func write(multipliers: UnsafePointer<Int32>, rightShifts: UnsafePointer<Int32>, channels: Int,
                      to destination: UnsafeMutablePointer<Int64>) {
        for block in 0 ..< channels / 16 {
            let out = destination + block * valuesPerBlock
            let shifts = UnsafeMutableRawPointer(out + 24).assumingMemoryBound(to: Int32.self)
            for lane in 0 ..< 16 {
                let channel = block * 16 + lane, i = lane / 2
                let e = Int64(min(max(rightShifts[channel], 1), 31))
                if lane % 2 == 1 { out[i] = Int64(multipliers[channel]) }
                out[8 + 8 * (lane % 2) + i] = (1 << 30) + (1 << (30 + e))
                shifts[lane] = Int32(e - 1)
            }
        }
    }
}
