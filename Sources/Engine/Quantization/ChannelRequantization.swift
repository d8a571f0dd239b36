// The output stage of the integer CONV_2D and DEPTHWISE_CONV_2D kernels, sixteen channels at a
// time, on the lane helpers of Microkernels/LaneArithmetic.swift.
import Microkernels

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

    /// Whether any kernel here reads `wide`: a build for AVX-512 VNNI, or a machine that runs the
    /// `Microkernels` module's VNNI code. Elsewhere `WideRequantization.write`, which that module
    /// compiles for AVX-512 like the rest of it, is not called at all.
    #if SWIFTLITE_AVX512VNNI
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

    /// The scalar output stage for one channel, through the scalar helpers: the reference the
    /// vector path is tested against.
    func apply(_ accumulator: Int32, channel: Int) -> Int32 {
        let shift = Int(leftShifts.pointer[channel]) - Int(rightShifts.pointer[channel])
        let scaled = multiplyByQuantizedMultiplier(accumulator, multiplier: multipliers.pointer[channel], shift: shift)
        return min(max(scaled &+ zeroPoint, minimum), maximum)
    }
}
