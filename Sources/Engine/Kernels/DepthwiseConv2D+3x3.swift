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
    /// and moved the whole-network goldens' error from 6.4e-6 to 7.3e-6). The whole groups of 16
    /// go through `FloatDepthwiseRows.edge3x3`, in `SIMDKernelsAVX512`'s copy where it runs.
    func edge3x3(_ rows: Rows, xOrigin: Int, _ dst: UnsafeMutablePointer<Float>, channels: Range<Int>) {
        let c = geometry.outputChannels
        let groups = (min(channels.upperBound, c - c % Lanes.scalarCount) - channels.lowerBound) / Lanes.scalarCount
        if groups > 0 {
            let taps = packedTaps!.pointer + channels.lowerBound / Lanes.scalarCount * 10 * Lanes.scalarCount
            let inputs = window(rows, xOrigin: xOrigin, channel: channels.lowerBound)
            if FloatGEMM.wide {
                SIMDKernelsAVX512.FloatDepthwiseRows.edge3x3(inputs, dst + channels.lowerBound, groups: groups, taps: taps,
                                                             lower: range.lowerBound, upper: range.upperBound)
            } else {
                SIMDKernels.FloatDepthwiseRows.edge3x3(inputs, dst + channels.lowerBound, groups: groups, taps: taps,
                                                       lower: range.lowerBound, upper: range.upperBound)
            }
        }
        if channels.upperBound == c { tailChannels(rows, xOrigin: xOrigin, dst, from: channels.lowerBound) }
    }

    /// The nine inputs of the window whose left column is input column `xOrigin` (filter row by
    /// filter row), each at channel `channel`: a column outside the input reads the row of zeros.
    func window(_ rows: Rows, xOrigin: Int, channel: Int) -> SIMDKernels.FloatDepthwiseRows.Window {
        let g = geometry, c = g.outputChannels
        let zeros = UnsafeRawPointer(zeroRow!.pointer + channel)
        func tap(_ row: UnsafePointer<Float>, _ kx: Int) -> UnsafeRawPointer {
            let ix = xOrigin + kx
            return ix >= 0 && ix < g.inputWidth ? UnsafeRawPointer(row + ix * c + channel) : zeros
        }
        return (tap(rows.0, 0), tap(rows.0, 1), tap(rows.0, 2), tap(rows.1, 0), tap(rows.1, 1), tap(rows.1, 2),
                tap(rows.2, 0), tap(rows.2, 1), tap(rows.2, 2))
    }

    /// The channels past the last whole group of 16 of one output pixel whose window crosses an
    /// edge across, in a tile whose channels start at `lower`: the 8 of `hasTail8` (where there
    /// are) and the last 8 (`overlapsLast8`) as in `insideTail8`, taps outside the input reading
    /// the row of zeros; else the rest `scalarTail`.
    func tailChannels(_ rows: Rows, xOrigin: Int, _ dst: UnsafeMutablePointer<Float>, from lower: Int) {
        let c = geometry.outputChannels
        if hasTail8 { edgeTail8(rows, xOrigin: xOrigin, dst, first: c / Lanes.scalarCount * Lanes.scalarCount) }
        if c % Half.scalarCount != 0 {
            if overlapsLast8(from: lower) {
                edgeTail8(rows, xOrigin: xOrigin, dst, first: c - Half.scalarCount)
            } else {
                scalarTail(rows, xOrigin: xOrigin, dst)
            }
        }
    }

    /// Whether the channels past the last whole 8 (`outputChannels % 8` of them) go as the last 8
    /// channels of the pixel, `[c − 8, c)`, in a tile whose channels start at `lower`: those
    /// before the residue are computed again, to the same bits (the bias, then one FMA per tap,
    /// in order, as every path here), by the thread that computed them, before the tile's
    /// epilogue. So the tile must hold all 8. Where it does not (a tile of the residue alone),
    /// `scalarTail` gives the same bits one channel at a time.
    func overlapsLast8(from lower: Int) -> Bool {
        let c = geometry.outputChannels
        return c >= Half.scalarCount && c - Half.scalarCount >= lower
    }

    /// Channels `first ..< first + 8` of one output pixel whose window crosses an edge across:
    /// the bias, then the nine taps row by row, each one FMA, taps outside the input reading the
    /// row of zeros.
    func edgeTail8(_ rows: Rows, xOrigin: Int, _ dst: UnsafeMutablePointer<Float>, first: Int) {
        let c = geometry.outputChannels
        let t = window(rows, xOrigin: xOrigin, channel: first)
        let filter = UnsafeRawPointer(weights.pointer + first)
        // Tap `k` (row-major over the 3 × 3 window) of these channels.
        func w(_ k: Int) -> Half { filter.loadUnaligned(fromByteOffset: k * c * MemoryLayout<Float>.stride, as: Half.self) }
        var acc = UnsafeRawPointer(bias.pointer + first).loadUnaligned(as: Half.self)
        acc = acc.addingProduct(t.0.loadUnaligned(as: Half.self), w(0))
        acc = acc.addingProduct(t.1.loadUnaligned(as: Half.self), w(1))
        acc = acc.addingProduct(t.2.loadUnaligned(as: Half.self), w(2))
        acc = acc.addingProduct(t.3.loadUnaligned(as: Half.self), w(3))
        acc = acc.addingProduct(t.4.loadUnaligned(as: Half.self), w(4))
        acc = acc.addingProduct(t.5.loadUnaligned(as: Half.self), w(5))
        acc = acc.addingProduct(t.6.loadUnaligned(as: Half.self), w(6))
        acc = acc.addingProduct(t.7.loadUnaligned(as: Half.self), w(7))
        acc = acc.addingProduct(t.8.loadUnaligned(as: Half.self), w(8))
        UnsafeMutableRawPointer(dst + first).storeBytes(of: FloatGEMM.clamp(acc, range.lowerBound, range.upperBound), as: Half.self)
    }

    /// Channels `first ..< first + 8` (the 8 after the last whole group of 16, `hasTail8`, or the
    /// last 8, `overlapsLast8`) of the output pixels `pixels`, whose windows lie inside the input
    /// across; `dst` is the output row. Each pixel's sum is the bias, then one FMA per tap in the
    /// order of the groups of 16, so these channels round as the others do. The bias and taps,
    /// read from the filter as it is (`[9][c]`), stay in registers across the row's pixels.
    func insideTail8(_ rows: Rows, _ dst: UnsafeMutablePointer<Float>, pixels: Range<Int>, first: Int) {
        let g = geometry, c = g.outputChannels
        let filter = UnsafeRawPointer(weights.pointer + first)
        func w(_ k: Int) -> Half { filter.loadUnaligned(fromByteOffset: k * c * MemoryLayout<Float>.stride, as: Half.self) }
        let b = UnsafeRawPointer(bias.pointer + first).loadUnaligned(as: Half.self)
        let w1 = w(0), w2 = w(1), w3 = w(2), w4 = w(3), w5 = w(4), w6 = w(5), w7 = w(6), w8 = w(7), w9 = w(8)
        let lower = range.lowerBound, upper = range.upperBound
        let pixel = c * MemoryLayout<Float>.stride, step = g.strideWidth * pixel
        // Byte offset of the first pixel's left tap column, at the tail's first channel.
        let start = ((pixels.lowerBound * g.strideWidth - g.padLeft) * c + first) * MemoryLayout<Float>.stride
        let r0 = UnsafeRawPointer(rows.0) + start, r1 = UnsafeRawPointer(rows.1) + start, r2 = UnsafeRawPointer(rows.2) + start
        let out = UnsafeMutableRawPointer(dst + pixels.lowerBound * c + first)
        let taps = (w1, w2, w3, w4, w5, w6, w7, w8, w9)
        for i in 0 ..< pixels.count {
            let acc = Self.windowSum((r0, r1, r2), at: i &* step, column: pixel, bias: b, taps: taps)
            out.storeBytes(of: FloatGEMM.clamp(acc, lower, upper), toByteOffset: i &* pixel, as: Half.self)
        }
    }

    /// One 3 × 3 window's sum in 8 lanes: `bias`, then the nine taps row by row, left to right,
    /// each one fused multiply-add: filter row `k` reads `rows.k` at byte offset `at`, the taps
    /// across `column` bytes apart.
    @inline(__always)
    static func windowSum(_ rows: (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer), at: Int, column: Int, bias: Half,
                          taps w: (Half, Half, Half, Half, Half, Half, Half, Half, Half)) -> Half {
        var acc = bias
        acc = acc.addingProduct(rows.0.loadUnaligned(fromByteOffset: at, as: Half.self), w.0)
        acc = acc.addingProduct(rows.0.loadUnaligned(fromByteOffset: at &+ column, as: Half.self), w.1)
        acc = acc.addingProduct(rows.0.loadUnaligned(fromByteOffset: at &+ 2 &* column, as: Half.self), w.2)
        acc = acc.addingProduct(rows.1.loadUnaligned(fromByteOffset: at, as: Half.self), w.3)
        acc = acc.addingProduct(rows.1.loadUnaligned(fromByteOffset: at &+ column, as: Half.self), w.4)
        acc = acc.addingProduct(rows.1.loadUnaligned(fromByteOffset: at &+ 2 &* column, as: Half.self), w.5)
        acc = acc.addingProduct(rows.2.loadUnaligned(fromByteOffset: at, as: Half.self), w.6)
        acc = acc.addingProduct(rows.2.loadUnaligned(fromByteOffset: at &+ column, as: Half.self), w.7)
        acc = acc.addingProduct(rows.2.loadUnaligned(fromByteOffset: at &+ 2 &* column, as: Half.self), w.8)
        return acc
    }

    /// All the channels of the output pixels `pixels`, whose windows lie inside the input across,
    /// where there are 1, 2, 4 or 8 channels and the stride across is 1 (`narrowTaps`): the row's
    /// pixels side by side as one run of floats, 8 lanes a vector covering `8 / channels` pixels.
    /// Lane `l` of the vector at float `j` of the run (`j` a multiple of 8) is channel `l % channels`
    /// of its pixel, and the window's tap `kx` of every lane lies `kx · channels` floats further in
    /// the input row, so each vector is the bias and nine FMAs over three input rows. Four vectors
    /// a step (32 floats), for four independent chains, then one, then the last pixels (fewer
    /// than 8 floats) one float at a time; every sum the bias, then the taps row by row, left to
    /// right, each one fused multiply-add, as in the other 3×3 paths.
    func insideNarrow(_ rows: Rows, _ dst: UnsafeMutablePointer<Float>, pixels: Range<Int>) {
        let g = geometry, c = g.outputChannels
        let size = MemoryLayout<Float>.stride, lanes = Half.scalarCount
        let taps = UnsafeRawPointer(narrowTaps!.pointer)
        func tap(_ k: Int) -> Half { taps.loadUnaligned(fromByteOffset: k * lanes * size, as: Half.self) }
        let b = tap(0), w1 = tap(1), w2 = tap(2), w3 = tap(3), w4 = tap(4), w5 = tap(5), w6 = tap(6), w7 = tap(7), w8 = tap(8)
        let w9 = tap(9)
        // Byte offset of the first pixel's left tap column; the taps across are `c` floats apart.
        let start = (pixels.lowerBound - g.padLeft) * c * size, column = c * size
        let r0 = UnsafeRawPointer(rows.0) + start, r1 = UnsafeRawPointer(rows.1) + start, r2 = UnsafeRawPointer(rows.2) + start
        let out = UnsafeMutableRawPointer(dst + pixels.lowerBound * c)
        let count = pixels.count * c
        let weights = (w1, w2, w3, w4, w5, w6, w7, w8, w9)
        /// The clamped window sums of the 8 outputs from float `j` of the run.
        @inline(__always)
        func sum(_ j: Int) -> Half {
            FloatGEMM.clamp(Self.windowSum((r0, r1, r2), at: j &* size, column: column, bias: b, taps: weights),
                            range.lowerBound, range.upperBound)
        }
        var j = 0
        while j &+ 4 &* lanes <= count {
            let s0 = sum(j), s1 = sum(j &+ lanes), s2 = sum(j &+ 2 &* lanes), s3 = sum(j &+ 3 &* lanes)
            out.storeBytes(of: s0, toByteOffset: j &* size, as: Half.self)
            out.storeBytes(of: s1, toByteOffset: (j &+ lanes) &* size, as: Half.self)
            out.storeBytes(of: s2, toByteOffset: (j &+ 2 &* lanes) &* size, as: Half.self)
            out.storeBytes(of: s3, toByteOffset: (j &+ 3 &* lanes) &* size, as: Half.self)
            j &+= 4 &* lanes
        }
        while j &+ lanes <= count {
            out.storeBytes(of: sum(j), toByteOffset: j &* size, as: Half.self)
            j &+= lanes
        }
        // The last pixels: lane `j % 8` of the vectors, one float at a time.
        let r = (r0.assumingMemoryBound(to: Float.self), r1.assumingMemoryBound(to: Float.self), r2.assumingMemoryBound(to: Float.self))
        let o = out.assumingMemoryBound(to: Float.self)
        while j < count {
            let l = j % lanes
            var acc = b[l]
            acc = acc.addingProduct(r.0[j], w1[l])
            acc = acc.addingProduct(r.0[j + c], w2[l])
            acc = acc.addingProduct(r.0[j + 2 * c], w3[l])
            acc = acc.addingProduct(r.1[j], w4[l])
            acc = acc.addingProduct(r.1[j + c], w5[l])
            acc = acc.addingProduct(r.1[j + 2 * c], w6[l])
            acc = acc.addingProduct(r.2[j], w7[l])
            acc = acc.addingProduct(r.2[j + c], w8[l])
            acc = acc.addingProduct(r.2[j + 2 * c], w9[l])
            o[j] = min(max(acc, range.lowerBound), range.upperBound)
            j += 1
        }
    }

    /// The channels past the last whole group of 16 (and past the 8 of `hasTail8`, where there
    /// are) of one output pixel, one at a time: the bias, then the nine taps row by row, each one
    /// fused multiply-add, a tap outside the input across multiplying a zero, so that each channel
    /// has the bits the 8-lane paths give it (`overlapsLast8`).
    func scalarTail(_ rows: Rows, xOrigin: Int, _ dst: UnsafeMutablePointer<Float>) {
        let g = geometry
        let c = g.outputChannels
        let first = c / Lanes.scalarCount * Lanes.scalarCount + (hasTail8 ? Half.scalarCount : 0)
        for ch in first ..< c {
            var acc = bias.pointer[ch]
            for ky in 0 ..< 3 {
                let row = ky == 0 ? rows.0 : ky == 1 ? rows.1 : rows.2
                for kx in 0 ..< 3 {
                    let ix = xOrigin + kx
                    let x: Float = ix >= 0 && ix < g.inputWidth ? row[ix * c + ch] : 0
                    acc = acc.addingProduct(x, weights.pointer[(ky * 3 + kx) * c + ch])
                }
            }
            dst[ch] = FloatGEMM.clamp(acc, range.lowerBound, range.upperBound)
        }
    }
}
