import SIMDKernels
import SIMDKernelsAVX512

/// The general float depthwise path of `DepthwiseConv2DFloat32`: any window size, stride and
/// dilation that neither the 3×3 path nor the 5×5 planes take (dilated windows, other sizes,
/// stride 3 across, 5×5 rows too wide for the planes' ring, fewer than 16 channels).
///
/// In each output row, the pixels whose window lies inside the input across go eight at a time
/// (then four): per group of 16 channels, each tap's filter vector is loaded once for eight
/// independent FMA chains, where one pixel at a time (`convolvePixel`) waits on the latency of a
/// single 25-FMA chain. Rows at the top and bottom skip the taps above or below the input, as
/// `convolvePixel` does, so every output is the same sum in the same order (bias, then taps row
/// by row) whichever path computes it. The pixels at the left and right edges go four at a time
/// too, each adding only its taps inside the input (`edgeWindows4`); channels past the last
/// whole group of 16 go through `convolvePixel`.
extension DepthwiseConv2DFloat32 {
    /// Output rows `rows`, channels `channels` (bounds at multiples of 16, or `outputChannels`) of
    /// one image, for shapes the 3×3 micro-kernels do not take.
    func convolveWindows(_ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, rows: Range<Int>, channels: Range<Int>) {
        let g = geometry
        let c = g.outputChannels
        // Output columns whose whole window is inside the input across.
        let reach = (g.filterWidth - 1) * g.dilationWidth
        let firstInside = min(g.outputWidth, (g.padLeft + g.strideWidth - 1) / g.strideWidth)
        let lastInside = g.inputWidth - 1 - reach + g.padLeft < 0
            ? 0 : min(g.outputWidth, (g.inputWidth - 1 - reach + g.padLeft) / g.strideWidth + 1)
        let vectorEnd = min(channels.upperBound, c - c % Lanes.scalarCount)
        let hasTail = vectorEnd < channels.upperBound
        let vectors = channels.lowerBound ..< vectorEnd
        let width = g.outputWidth
        for oy in rows {
            let dst = out + oy * width * c
            if !vectors.isEmpty {
                if width < 4 {
                    for ox in 0 ..< width { convolvePixel(source, dst + ox * c, oy: oy, ox: ox, channels: vectors) }
                } else {
                    // Left edge in groups of four (the last may take inside pixels: the same sums),
                    // inside pixels eight or four at a time while four remain, the rest with the
                    // right edge in groups of four, the last moved back to end at the row's end.
                    var x = 0
                    while x < firstInside {
                        edgeWindows4(source, dst, oy: oy, ox: min(x, width - 4), channels: vectors)
                        x += 4
                    }
                    while lastInside - x >= 4 {
                        if Self.eightPixels && lastInside - x >= 8 {
                            insideWindows8(source, dst, oy: oy, ox: x, channels: vectors)
                            x += 8
                        } else {
                            insideWindows4(source, dst, oy: oy, ox: x, channels: vectors)
                            x += 4
                        }
                    }
                    while x < width {
                        edgeWindows4(source, dst, oy: oy, ox: min(x, width - 4), channels: vectors)
                        x += 4
                    }
                }
            }
            if hasTail {
                for ox in 0 ..< width { convolvePixel(source, dst + ox * c, oy: oy, ox: ox, channels: vectorEnd ..< channels.upperBound) }
            }
        }
    }

    /// Output pixels `ox ..< ox + 4` of row `oy`, any of whose windows may cross the left or right
    /// edge of the input, whole groups of 16 channels `channels`. Each pixel adds only its taps
    /// inside the input, in the order `convolvePixel` adds them (taps outside are skipped, not
    /// multiplied by zero, so an infinite weight there cannot make a NaN).
    @inline(never)
    private func edgeWindows4(_ source: UnsafePointer<Float>, _ rowOut: UnsafeMutablePointer<Float>, oy: Int, ox: Int, channels: Range<Int>) {
        let g = geometry
        let c = g.outputChannels
        let lower = range.lowerBound, upper = range.upperBound
        let floatSize = MemoryLayout<Float>.stride
        let yOrigin = oy * g.strideHeight - g.padTop
        let kyStart = max(0, (-yOrigin + g.dilationHeight - 1) / g.dilationHeight)
        let kyEnd = min(g.filterHeight, (g.inputHeight - yOrigin + g.dilationHeight - 1) / g.dilationHeight)
        /// The taps of pixel `ox + j` inside the input across.
        func taps(_ j: Int) -> Range<Int> {
            let xOrigin = (ox + j) * g.strideWidth - g.padLeft
            let start = max(0, (-xOrigin + g.dilationWidth - 1) / g.dilationWidth)
            let end = min(g.filterWidth, (g.inputWidth - xOrigin + g.dilationWidth - 1) / g.dilationWidth)
            return start ..< max(start, end)
        }
        let t0 = taps(0), t1 = taps(1), t2 = taps(2), t3 = taps(3)
        let input = UnsafeRawPointer(source), filter = UnsafeRawPointer(weights.pointer), biases = UnsafeRawPointer(bias.pointer)
        let step = g.strideWidth * c * floatSize, tapStep = g.dilationWidth * c * floatSize, pixel = c * floatSize
        let xOrigin = ox * g.strideWidth - g.padLeft
        let dst = UnsafeMutableRawPointer(rowOut + ox * c)
        var ch = channels.lowerBound
        while ch < channels.upperBound {
            let b = biases.loadUnaligned(fromByteOffset: ch * floatSize, as: Lanes.self)
            var a0 = b, a1 = b, a2 = b, a3 = b
            var ky = kyStart
            while ky < kyEnd {
                // Byte offset of pixel 0's tap kx = 0 (possibly outside the input: only valid taps are read).
                let row = (((yOrigin + ky * g.dilationHeight) * g.inputWidth + xOrigin) * c + ch) * floatSize
                var tap = ((ky * g.filterWidth) * c + ch) * floatSize
                for kx in 0 ..< g.filterWidth {
                    let w = filter.loadUnaligned(fromByteOffset: tap, as: Lanes.self)
                    let at = row + kx * tapStep
                    if t0.contains(kx) { a0 = a0.addingProduct(input.loadUnaligned(fromByteOffset: at, as: Lanes.self), w) }
                    if t1.contains(kx) { a1 = a1.addingProduct(input.loadUnaligned(fromByteOffset: at + step, as: Lanes.self), w) }
                    if t2.contains(kx) { a2 = a2.addingProduct(input.loadUnaligned(fromByteOffset: at + 2 * step, as: Lanes.self), w) }
                    if t3.contains(kx) { a3 = a3.addingProduct(input.loadUnaligned(fromByteOffset: at + 3 * step, as: Lanes.self), w) }
                    tap += pixel
                }
                ky += 1
            }
            let offset = ch * floatSize
            dst.storeBytes(of: FloatGEMM.clamp(a0, lower, upper), toByteOffset: offset, as: Lanes.self)
            dst.storeBytes(of: FloatGEMM.clamp(a1, lower, upper), toByteOffset: offset + pixel, as: Lanes.self)
            dst.storeBytes(of: FloatGEMM.clamp(a2, lower, upper), toByteOffset: offset + 2 * pixel, as: Lanes.self)
            dst.storeBytes(of: FloatGEMM.clamp(a3, lower, upper), toByteOffset: offset + 3 * pixel, as: Lanes.self)
            ch += Lanes.scalarCount
        }
    }

    /// Whether inside pixels go eight at a time: eight accumulators of 16 lanes fit AVX-512's 32
    /// registers, but would spill out of AVX2's 16 `ymm` (two each) and NEON's 32 `q` (four each).
    private static var eightPixels: Bool { FloatGEMM.wide }

    /// The window geometry the inside rows read.
    private var windowShape: SIMDKernels.FloatDepthwiseRows.WindowShape {
        let g = geometry
        return (g.inputHeight, g.inputWidth, g.outputChannels, g.filterHeight, g.filterWidth, g.strideHeight, g.strideWidth,
                g.dilationHeight, g.dilationWidth, g.padTop, g.padLeft)
    }

    /// Eight inside pixels (`FloatDepthwiseRows.insideWindows8`), in `SIMDKernelsAVX512`.
    private func insideWindows8(_ source: UnsafePointer<Float>, _ rowOut: UnsafeMutablePointer<Float>, oy: Int, ox: Int, channels: Range<Int>) {
        SIMDKernelsAVX512.FloatDepthwiseRows.insideWindows8(source, rowOut, oy: oy, ox: ox, channels: channels, shape: windowShape,
                                                            weights: weights.pointer, bias: bias.pointer,
                                                            lower: range.lowerBound, upper: range.upperBound)
    }

    /// Four inside pixels, in the tier's module.
    private func insideWindows4(_ source: UnsafePointer<Float>, _ rowOut: UnsafeMutablePointer<Float>, oy: Int, ox: Int, channels: Range<Int>) {
        if FloatGEMM.wide {
            SIMDKernelsAVX512.FloatDepthwiseRows.insideWindows4(source, rowOut, oy: oy, ox: ox, channels: channels, shape: windowShape,
                                                                weights: weights.pointer, bias: bias.pointer,
                                                                lower: range.lowerBound, upper: range.upperBound)
        } else {
            SIMDKernels.FloatDepthwiseRows.insideWindows4(source, rowOut, oy: oy, ox: ox, channels: channels, shape: windowShape,
                                                          weights: weights.pointer, bias: bias.pointer,
                                                          lower: range.lowerBound, upper: range.upperBound)
        }
    }

    /// Channels `channels` of output pixel (`oy`, `ox`), with the window clipped to the input.
    func convolvePixel(_ source: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>, oy: Int, ox: Int, channels: Range<Int>) {
        let g = geometry
        let c = g.outputChannels, end = channels.upperBound
        let vectorEnd = min(end, c - c % Lanes.scalarCount)
        let lower = range.lowerBound, upper = range.upperBound
        let raw = UnsafeRawPointer(source), filter = UnsafeRawPointer(weights.pointer), biasRaw = UnsafeRawPointer(bias.pointer)
        let stride = MemoryLayout<Float>.stride
        let yOrigin = oy * g.strideHeight - g.padTop, xOrigin = ox * g.strideWidth - g.padLeft
        // Filter taps that land inside the input.
        let kyStart = max(0, (-yOrigin + g.dilationHeight - 1) / g.dilationHeight)
        let kyEnd = min(g.filterHeight, (g.inputHeight - yOrigin + g.dilationHeight - 1) / g.dilationHeight)
        let kxStart = max(0, (-xOrigin + g.dilationWidth - 1) / g.dilationWidth)
        let kxEnd = min(g.filterWidth, (g.inputWidth - xOrigin + g.dilationWidth - 1) / g.dilationWidth)
        /// The window's sum for the `V.scalarCount` channels from `ch`: bias, then one FMA per tap
        /// inside the input, row by row.
        @inline(__always)
        func windowSum<V: SIMD>(_: V.Type, channel ch: Int) -> V where V.Scalar == Float {
            var acc = biasRaw.loadUnaligned(fromByteOffset: ch * stride, as: V.self)
            var ky = kyStart
            while ky < kyEnd {
                let iy = yOrigin + ky * g.dilationHeight
                var kx = kxStart
                while kx < kxEnd {
                    let ix = xOrigin + kx * g.dilationWidth
                    let x = raw.loadUnaligned(fromByteOffset: ((iy * g.inputWidth + ix) * c + ch) * stride, as: V.self)
                    let w = filter.loadUnaligned(fromByteOffset: ((ky * g.filterWidth + kx) * c + ch) * stride, as: V.self)
                    acc = acc.addingProduct(x, w)
                    kx += 1
                }
                ky += 1
            }
            return acc
        }
        var ch = channels.lowerBound
        while ch < vectorEnd {
            UnsafeMutableRawPointer(dst + ch).storeBytes(of: FloatGEMM.clamp(windowSum(Lanes.self, channel: ch), lower, upper), as: Lanes.self)
            ch += Lanes.scalarCount
        }
        // Eight, then four of the channels past the last group of 16 in narrower vectors, then one
        // at a time: the same sums, each tap one FMA.
        if ch + Half.scalarCount <= end {
            UnsafeMutableRawPointer(dst + ch).storeBytes(of: FloatGEMM.clamp(windowSum(Half.self, channel: ch), lower, upper), as: Half.self)
            ch += Half.scalarCount
        }
        if ch + Quarter.scalarCount <= end {
            UnsafeMutableRawPointer(dst + ch).storeBytes(of: FloatGEMM.clamp(windowSum(Quarter.self, channel: ch), lower, upper),
                                                         as: Quarter.self)
            ch += Quarter.scalarCount
        }
        while ch < end {
            var acc = bias.pointer[ch]
            for ky in kyStart ..< max(kyStart, kyEnd) {
                let iy = yOrigin + ky * g.dilationHeight
                for kx in kxStart ..< max(kxStart, kxEnd) {
                    let ix = xOrigin + kx * g.dilationWidth
                    acc = acc.addingProduct(source[(iy * g.inputWidth + ix) * c + ch], weights.pointer[(ky * g.filterWidth + kx) * c + ch])
                }
            }
            dst[ch] = FloatGEMM.clamp(acc, lower, upper)
            ch += 1
        }
    }

    /// Plain scalar depthwise convolution of one image (`source` already expanded to `outputChannels`
    /// channels per pixel): the oracle for `convolve`.
    func reference(_ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>) {
        let g = geometry
        let c = g.outputChannels
        for oy in 0 ..< g.outputHeight {
            for ox in 0 ..< g.outputWidth {
                for ch in 0 ..< c {
                    var acc = bias.pointer[ch]
                    for ky in 0 ..< g.filterHeight {
                        for kx in 0 ..< g.filterWidth {
                            let iy = oy * g.strideHeight - g.padTop + ky * g.dilationHeight
                            let ix = ox * g.strideWidth - g.padLeft + kx * g.dilationWidth
                            guard iy >= 0, iy < g.inputHeight, ix >= 0, ix < g.inputWidth else { continue }
                            acc += source[(iy * g.inputWidth + ix) * c + ch] * weights.pointer[(ky * g.filterWidth + kx) * c + ch]
                        }
                    }
                    out[(oy * g.outputWidth + ox) * c + ch] = FloatGEMM.clamp(acc, range.lowerBound, range.upperBound)
                }
            }
        }
    }
}
