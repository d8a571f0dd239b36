#if SWIFTLITE_AVX512VNNI || SWIFTLITE_AVX2
import CX86Intrinsics
import Microkernels
import SIMDKernels
import SIMDKernelsAVX512

/// The row kernels of `DepthwiseConv2DTapRows`: one output row from its tap rows, and the
/// requantizing store of sixteen channels.
extension DepthwiseConv2DTapRows {
    /// One output row from its tap rows (five; a 3×3 filter reads the first three), sixteen
    /// channels at a time across the row (the block's weights, bias and requantization stay in
    /// registers).
    @inline(never)
    func convolveRow(_ taps: (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer),
                     channels range: Range<Int>, _ out: UnsafeMutablePointer<UInt8>) {
        let g = geometry
        let filter = UnsafeRawPointer(weights.pointer), biasRaw = UnsafeRawPointer(bias.pointer)
        let (r0, r1, r2) = (taps.0, taps.1, taps.2)
        let stage = RequantizedGEMMOutput(base: out, rowStride: g.outputChannels, columns: g.outputChannels, stage: requantization)
        if products == .vnni && filterSize == 5 {
            return depthwise5x5RowVNNI(taps: taps, width: g.outputWidth, paddedChannels: paddedChannels,
                                       channels: range, weights: filter, bias: biasRaw, stage: stage)
        }
        if products == .vnniHalves {
            // Runs of blocks that are split, or not, each in one call.
            var start = range.lowerBound
            while start < range.upperBound {
                let split = splitBlocks[start / 16]
                var end = start + 16
                while end < range.upperBound && splitBlocks[end / 16] == split { end += 16 }
                if filterSize == 5 {
                    depthwise5x5RowVNNI(taps: taps, width: g.outputWidth, paddedChannels: paddedChannels,
                                        channels: start ..< end, weights: filter, halves: split, bias: biasRaw, stage: stage)
                } else {
                    depthwise3x3RowVNNI(taps: (r0, r1, r2), width: g.outputWidth, paddedChannels: paddedChannels,
                                        channels: start ..< end, weights: filter, halves: split, bias: biasRaw, stage: stage)
                }
                start = end
            }
            return
        }
        if products == .vnni {
            return depthwise3x3RowVNNI(taps: (r0, r1, r2), width: g.outputWidth, paddedChannels: paddedChannels,
                                       channels: range, weights: filter, bias: biasRaw, stage: stage)
        }
        #if !SWIFTLITE_AVX512VNNI
        if filterSize == 5 { return convolveRow5AVX2(taps, channels: range, out) }
        let cp = paddedChannels, channels = g.outputChannels
        var c = range.lowerBound
        while c < range.upperBound {
            let e0 = filter.loadUnaligned(fromByteOffset: c * 4, as: SIMD16<Int32>.self)
            let o0 = filter.loadUnaligned(fromByteOffset: (cp + c) * 4, as: SIMD16<Int32>.self)
            let e1 = filter.loadUnaligned(fromByteOffset: (2 * cp + c) * 4, as: SIMD16<Int32>.self)
            let o1 = filter.loadUnaligned(fromByteOffset: (3 * cp + c) * 4, as: SIMD16<Int32>.self)
            let e2 = filter.loadUnaligned(fromByteOffset: (4 * cp + c) * 4, as: SIMD16<Int32>.self)
            let o2 = filter.loadUnaligned(fromByteOffset: (5 * cp + c) * 4, as: SIMD16<Int32>.self)
            let b = biasRaw.loadUnaligned(fromByteOffset: c * 4, as: SIMD16<Int32>.self)
            let stage = requantization.block(at: c)
            let count = min(channels - c, 16)
            // The pixel loop with the stage's form as constants (see `stageForm`).
            @inline(always)
            func pixels(wide: Bool, nonnegative: Bool = false, saturating: Bool) {
                var offset = swiftlite_tap_row_offset(0, c, g.outputWidth, 1)
                var dst = out + c
                for _ in 0 ..< g.outputWidth {
                    var acc = swiftlite_dpbusd_pairs(b, r0.loadUnaligned(fromByteOffset: offset, as: SIMD16<Int32>.self), e0, o0)
                    acc = swiftlite_dpbusd_pairs(acc, r1.loadUnaligned(fromByteOffset: offset, as: SIMD16<Int32>.self), e1, o1)
                    acc = swiftlite_dpbusd_pairs(acc, r2.loadUnaligned(fromByteOffset: offset, as: SIMD16<Int32>.self), e2, o2)
                    store(acc, channel: c, stage, to: dst, count: count, wide: wide, nonnegative: nonnegative, saturating: saturating)
                    offset &+= 64
                    dst += channels
                }
            }
            let (wide, saturating) = stageForm(stage)
            if wide && requantization.clampsBelowZeroPoint {
                pixels(wide: true, nonnegative: true, saturating: false)
            } else if wide {
                pixels(wide: true, saturating: false)
            } else if saturating {
                pixels(wide: false, saturating: true)
            } else {
                pixels(wide: false, saturating: false)
            }
            c += 16
        }
        #endif
    }

    #if !SWIFTLITE_AVX512VNNI
    /// `convolveRow` for a 5 × 5 filter without VNNI: per filter row, the first tap quad through
    /// `swiftlite_dpbusd_pairs` (four `vpmaddwd`) and the second, `(t₄, 0, 0, 0)`, through
    /// `swiftlite_dpbusd_even` (two).
    private func convolveRow5AVX2(_ taps: (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer),
                                  channels range: Range<Int>, _ out: UnsafeMutablePointer<UInt8>) {
        let g = geometry
        let filter = UnsafeRawPointer(weights.pointer), biasRaw = UnsafeRawPointer(bias.pointer)
        let cp = paddedChannels, channels = g.outputChannels
        var c = range.lowerBound
        while c < range.upperBound {
            @inline(always)
            func pair(_ row: Int) -> SIMD16<Int32> { filter.loadUnaligned(fromByteOffset: (row * cp + c) * 4, as: SIMD16<Int32>.self) }
            let b = biasRaw.loadUnaligned(fromByteOffset: c * 4, as: SIMD16<Int32>.self)
            let stage = requantization.block(at: c)
            let count = min(channels - c, 16)
            // The pixel loop with the stage's form as constants (see `stageForm`).
            @inline(always)
            func pixels(wide: Bool, nonnegative: Bool = false, saturating: Bool) {
                var offset = swiftlite_tap_row_offset(0, c, g.outputWidth, 2)
                var dst = out + c
                for _ in 0 ..< g.outputWidth {
                    @inline(always)
                    func filterRow(_ acc: SIMD16<Int32>, _ r: UnsafeRawPointer, _ ky: Int) -> SIMD16<Int32> {
                        let first = swiftlite_dpbusd_pairs(acc, r.loadUnaligned(fromByteOffset: offset, as: SIMD16<Int32>.self),
                                                           pair(3 * ky), pair(3 * ky + 1))
                        return swiftlite_dpbusd_even(first, r.loadUnaligned(fromByteOffset: offset &+ 64, as: SIMD16<Int32>.self),
                                                     pair(3 * ky + 2))
                    }
                    let acc = filterRow(filterRow(filterRow(filterRow(filterRow(b, taps.0, 0), taps.1, 1), taps.2, 2), taps.3, 3),
                                        taps.4, 4)
                    store(acc, channel: c, stage, to: dst, count: count, wide: wide, nonnegative: nonnegative, saturating: saturating)
                    offset &+= 128
                    dst += channels
                }
            }
            let (wide, saturating) = stageForm(stage)
            if wide && requantization.clampsBelowZeroPoint {
                pixels(wide: true, nonnegative: true, saturating: false)
            } else if wide {
                pixels(wide: true, saturating: false)
            } else if saturating {
                pixels(wide: false, saturating: true)
            } else {
                pixels(wide: false, saturating: false)
            }
            c += 16
        }
    }

    /// The output stage's form for a row's pixel loop, chosen once per row and passed to it as
    /// constants: the one-shift form where it is exact (`wide`), else the two steps, saturating
    /// or not. Each row kernel branches on it at its own call sites: a helper that took the
    /// pixel loop as a closure got the loop compiled once, as a closure with the form as
    /// run-time arguments and exclusivity checks on its captures.
    @inline(always)
    private func stageForm(_ stage: RequantizationBlock) -> (wide: Bool, saturating: Bool) {
        (requantization.wide != nil, requantization.wide == nil && stage.saturates)
    }

    /// Channels `channel ..< channel + count` of one pixel requantized in the form `stageForm`
    /// chose and stored at `destination`.
    @inline(always)
    private func store(_ acc: SIMD16<Int32>, channel: Int, _ stage: RequantizationBlock, to destination: UnsafeMutablePointer<UInt8>,
                       count: Int, wide: Bool, nonnegative: Bool, saturating: Bool) {
        if wide {
            let r = requantization
            storeClampedBytes(r.applyWide(acc, channel: channel, nonnegative: nonnegative).unsafelyUnwrapped, offset: r.zeroPoint,
                              minimum: r.minimum, maximum: r.maximum, to: destination, count: count)
        } else {
            storeLowBytes(stage.apply(acc, saturating: saturating, shiftingLeft: true), to: destination, count: count)
        }
    }
    #endif
}
#endif
