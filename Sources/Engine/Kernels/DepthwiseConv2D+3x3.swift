/// The 3×3 depthwise micro-kernels of `DepthwiseConv2DFloat32` (MobileNet's windows: stride 1 or 2
/// across, no dilation): the pixels whose window lies inside the input across, eight or four at a
/// time per group of 16 channels, and the pixels at the left and right edges, whose taps outside
/// the input read a row of zeros. `convolve` chooses between them.
extension DepthwiseConv2DFloat32 {
    /// `inside3x3` at stride 1 across.
    @inline(never)
    func inside3x3Stride1(_ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int, groups: Int, firstGroup: Int) {
        inside3x3(stride: 1, rows, out, count: count, groups: groups, firstGroup: firstGroup)
    }

    /// `inside3x3` at stride 2 across.
    @inline(never)
    func inside3x3Stride2(_ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int, groups: Int, firstGroup: Int) {
        inside3x3(stride: 2, rows, out, count: count, groups: groups, firstGroup: firstGroup)
    }

    /// `groups` whole groups of 16 channels, from group `firstGroup`, of `count` adjacent output
    /// pixels whose windows lie inside the input across; `rows` point at the first window's left
    /// column and `out` at the first pixel's output, both at channel `16 · firstGroup`. Eight pixels a step (at
    /// stride 1), then four; a last step of four that would run past `count` moves back to end at it
    /// (recomputing up to three pixels) rather than going one at a time. `stride` is a constant at
    /// each call site.
    @inline(always)
    private func inside3x3(stride: Int, _ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int, groups: Int, firstGroup: Int) {
        let c = geometry.outputChannels
        let lower = range.lowerBound, upper = range.upperBound
        let pixel = c * MemoryLayout<Float>.stride, step = stride * pixel
        let vector = MemoryLayout<Lanes>.stride
        /// Adds one filter row's taps (at `w`, `w + 1`, `w + 2` in `filter`) for the `j`th pixel of a step.
        @inline(always)
        func taps(_ acc: inout Lanes, _ input: UnsafeRawPointer, _ j: Int, _ filter: UnsafeRawPointer, _ w: Int) {
            acc = acc.addingProduct(input.loadUnaligned(fromByteOffset: j * step, as: Lanes.self),
                                    filter.loadUnaligned(fromByteOffset: w * vector, as: Lanes.self))
            acc = acc.addingProduct(input.loadUnaligned(fromByteOffset: j * step + pixel, as: Lanes.self),
                                    filter.loadUnaligned(fromByteOffset: (w + 1) * vector, as: Lanes.self))
            acc = acc.addingProduct(input.loadUnaligned(fromByteOffset: j * step + 2 * pixel, as: Lanes.self),
                                    filter.loadUnaligned(fromByteOffset: (w + 2) * vector, as: Lanes.self))
        }
        var x = 0
        while x < count {
            let width = stride == 1 && count - x >= 8 ? 8 : count >= 4 ? 4 : 1
            x = min(x, count - width)
            let first = x * stride * c
            /// Runs `body` on each group of 16 channels with its input rows, filter and output.
            @inline(always)
            func forEachGroup(_ body: (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeMutableRawPointer) -> Void) {
                var r0 = UnsafeRawPointer(rows.0 + first), r1 = UnsafeRawPointer(rows.1 + first), r2 = UnsafeRawPointer(rows.2 + first)
                var filter = UnsafeRawPointer(packedTaps!.pointer + firstGroup * 10 * Lanes.scalarCount), dst = UnsafeMutableRawPointer(out + x * c)
                for _ in 0 ..< groups {
                    body(r0, r1, r2, filter, dst)
                    r0 += vector
                    r1 += vector
                    r2 += vector
                    filter += 10 * vector
                    dst += vector
                }
            }
            switch width {
            case 8:
                forEachGroup { r0, r1, r2, filter, dst in
                    let b = filter.loadUnaligned(as: Lanes.self)
                    var a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b
                    taps(&a0, r0, 0, filter, 1); taps(&a1, r0, 1, filter, 1); taps(&a2, r0, 2, filter, 1); taps(&a3, r0, 3, filter, 1)
                    taps(&a4, r0, 4, filter, 1); taps(&a5, r0, 5, filter, 1); taps(&a6, r0, 6, filter, 1); taps(&a7, r0, 7, filter, 1)
                    taps(&a0, r1, 0, filter, 4); taps(&a1, r1, 1, filter, 4); taps(&a2, r1, 2, filter, 4); taps(&a3, r1, 3, filter, 4)
                    taps(&a4, r1, 4, filter, 4); taps(&a5, r1, 5, filter, 4); taps(&a6, r1, 6, filter, 4); taps(&a7, r1, 7, filter, 4)
                    taps(&a0, r2, 0, filter, 7); taps(&a1, r2, 1, filter, 7); taps(&a2, r2, 2, filter, 7); taps(&a3, r2, 3, filter, 7)
                    taps(&a4, r2, 4, filter, 7); taps(&a5, r2, 5, filter, 7); taps(&a6, r2, 6, filter, 7); taps(&a7, r2, 7, filter, 7)
                    dst.storeBytes(of: FloatGEMM.clamp(a0, lower, upper), as: Lanes.self)
                    dst.storeBytes(of: FloatGEMM.clamp(a1, lower, upper), toByteOffset: pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatGEMM.clamp(a2, lower, upper), toByteOffset: 2 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatGEMM.clamp(a3, lower, upper), toByteOffset: 3 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatGEMM.clamp(a4, lower, upper), toByteOffset: 4 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatGEMM.clamp(a5, lower, upper), toByteOffset: 5 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatGEMM.clamp(a6, lower, upper), toByteOffset: 6 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatGEMM.clamp(a7, lower, upper), toByteOffset: 7 * pixel, as: Lanes.self)
                }
            case 4:
                forEachGroup { r0, r1, r2, filter, dst in
                    let b = filter.loadUnaligned(as: Lanes.self)
                    var a0 = b, a1 = b, a2 = b, a3 = b
                    taps(&a0, r0, 0, filter, 1); taps(&a1, r0, 1, filter, 1); taps(&a2, r0, 2, filter, 1); taps(&a3, r0, 3, filter, 1)
                    taps(&a0, r1, 0, filter, 4); taps(&a1, r1, 1, filter, 4); taps(&a2, r1, 2, filter, 4); taps(&a3, r1, 3, filter, 4)
                    taps(&a0, r2, 0, filter, 7); taps(&a1, r2, 1, filter, 7); taps(&a2, r2, 2, filter, 7); taps(&a3, r2, 3, filter, 7)
                    dst.storeBytes(of: FloatGEMM.clamp(a0, lower, upper), as: Lanes.self)
                    dst.storeBytes(of: FloatGEMM.clamp(a1, lower, upper), toByteOffset: pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatGEMM.clamp(a2, lower, upper), toByteOffset: 2 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatGEMM.clamp(a3, lower, upper), toByteOffset: 3 * pixel, as: Lanes.self)
                }
            default:
                forEachGroup { r0, r1, r2, filter, dst in
                    var a0 = filter.loadUnaligned(as: Lanes.self)
                    taps(&a0, r0, 0, filter, 1); taps(&a0, r1, 0, filter, 4); taps(&a0, r2, 0, filter, 7)
                    dst.storeBytes(of: FloatGEMM.clamp(a0, lower, upper), as: Lanes.self)
                }
            }
            x += width
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
