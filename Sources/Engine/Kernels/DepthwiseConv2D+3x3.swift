import SIMDKernels
import SIMDKernelsAVX512

/// The 3×3 depthwise micro-kernels of `DepthwiseConv2DFloat32` (MobileNet's windows: stride 1 or 2
/// across, no dilation): the pixels whose window lies inside the input across, eight or four at a
/// time per group of 16 channels (`FloatDepthwiseRows`), and the pixels at the left and right
/// edges, whose taps outside the input read a row of zeros. `convolve` chooses between them.
extension DepthwiseConv2DFloat32 {
    /// The pixels of `count` whose windows lie inside the input across, at stride 1: groups of 16
    /// channels from `firstGroup` (`FloatDepthwiseRows`), in `SIMDKernelsAVX512`'s copy where
    /// it runs, else in `SIMDKernels`'.
    func inside3x3Stride1(_ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int, groups: Int, firstGroup: Int) {
        let taps = packedTaps!.pointer + firstGroup * 10 * Lanes.scalarCount, c = geometry.outputChannels
        if FloatGEMM.wide {
            SIMDKernelsAVX512.FloatDepthwiseRows.inside3x3Stride1(rows, out, count: count, groups: groups, channels: c, taps: taps,
                                                                  lower: range.lowerBound, upper: range.upperBound)
        } else {
            SIMDKernels.FloatDepthwiseRows.inside3x3Stride1(rows, out, count: count, groups: groups, channels: c, taps: taps,
                                                            lower: range.lowerBound, upper: range.upperBound)
        }
    }

    /// `inside3x3Stride1` at stride 2 across.
    func inside3x3Stride2(_ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int, groups: Int, firstGroup: Int) {
        let taps = packedTaps!.pointer + firstGroup * 10 * Lanes.scalarCount, c = geometry.outputChannels
        if FloatGEMM.wide {
            SIMDKernelsAVX512.FloatDepthwiseRows.inside3x3Stride2(rows, out, count: count, groups: groups, channels: c, taps: taps,
                                                                  lower: range.lowerBound, upper: range.upperBound)
        } else {
            SIMDKernels.FloatDepthwiseRows.inside3x3Stride2(rows, out, count: count, groups: groups, channels: c, taps: taps,
                                                            lower: range.lowerBound, upper: range.upperBound)
        }
    }

    /// Channels `channels` of one output pixel whose window crosses the left or right edge of the input:
    /// taps outside it read the row of zeros, so the 9 taps stay unconditional. The taps are summed
    /// in the same order as inside (splitting the chain to hide latency gained nothing measurable
    /// and moved the whole-network goldens' error from 6.4e-6 to 7.3e-6).
    func edge3x3(_ rows: Rows, xOrigin: Int, _ dst: UnsafeMutablePointer<Float>, channels: Range<Int>) {
        let g = geometry
        let c = g.outputChannels
        let zeros = UnsafeRawPointer(zeroRow!.pointer)
        func tap(_ row: UnsafePointer<Float>, _ kx: Int) -> UnsafeRawPointer {
            let ix = xOrigin + kx
            return ix >= 0 && ix < g.inputWidth ? UnsafeRawPointer(row + ix * c) : zeros
        }
        let t0 = tap(rows.0, 0), t1 = tap(rows.0, 1), t2 = tap(rows.0, 2), t3 = tap(rows.1, 0), t4 = tap(rows.1, 1)
        let t5 = tap(rows.1, 2), t6 = tap(rows.2, 0), t7 = tap(rows.2, 1), t8 = tap(rows.2, 2)
        let lower = range.lowerBound, upper = range.upperBound
        let vector = MemoryLayout<Lanes>.stride
        var filter = UnsafeRawPointer(packedTaps!.pointer + channels.lowerBound / Lanes.scalarCount * 10 * Lanes.scalarCount)
        var offset = channels.lowerBound * MemoryLayout<Float>.stride
        for _ in 0 ..< (min(channels.upperBound, c - c % Lanes.scalarCount) - channels.lowerBound) / Lanes.scalarCount {
            func w(_ k: Int) -> Lanes { filter.loadUnaligned(fromByteOffset: k * vector, as: Lanes.self) }
            var acc = w(0)
            acc = acc.addingProduct(t0.loadUnaligned(fromByteOffset: offset, as: Lanes.self), w(1))
            acc = acc.addingProduct(t1.loadUnaligned(fromByteOffset: offset, as: Lanes.self), w(2))
            acc = acc.addingProduct(t2.loadUnaligned(fromByteOffset: offset, as: Lanes.self), w(3))
            acc = acc.addingProduct(t3.loadUnaligned(fromByteOffset: offset, as: Lanes.self), w(4))
            acc = acc.addingProduct(t4.loadUnaligned(fromByteOffset: offset, as: Lanes.self), w(5))
            acc = acc.addingProduct(t5.loadUnaligned(fromByteOffset: offset, as: Lanes.self), w(6))
            acc = acc.addingProduct(t6.loadUnaligned(fromByteOffset: offset, as: Lanes.self), w(7))
            acc = acc.addingProduct(t7.loadUnaligned(fromByteOffset: offset, as: Lanes.self), w(8))
            acc = acc.addingProduct(t8.loadUnaligned(fromByteOffset: offset, as: Lanes.self), w(9))
            UnsafeMutableRawPointer(dst).storeBytes(of: FloatGEMM.clamp(acc, lower, upper), toByteOffset: offset, as: Lanes.self)
            offset += vector
            filter += 10 * vector
        }
        if channels.upperBound == c { tailChannels(rows, xOrigin: xOrigin, dst) }
    }

    /// The channels past the last whole group of 16 of one output pixel, scalar, clipped across.
    func tailChannels(_ rows: Rows, xOrigin: Int, _ dst: UnsafeMutablePointer<Float>) {
        let g = geometry
        let c = g.outputChannels
        for ch in c / Lanes.scalarCount * Lanes.scalarCount ..< c {
            var acc = bias.pointer[ch]
            for ky in 0 ..< 3 {
                let row = ky == 0 ? rows.0 : ky == 1 ? rows.1 : rows.2
                for kx in 0 ..< 3 where xOrigin + kx >= 0 && xOrigin + kx < g.inputWidth {
                    acc += row[(xOrigin + kx) * c + ch] * weights.pointer[(ky * 3 + kx) * c + ch]
                }
            }
            dst[ch] = min(max(acc, range.lowerBound), range.upperBound)
        }
    }
}
