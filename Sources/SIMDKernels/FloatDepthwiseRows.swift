/// The float 3×3 depthwise rows of the engine's `DepthwiseConv2DFloat32` (MobileNet's windows:
/// stride 1 or 2 across, no dilation), for the pixels whose window lies inside the input across.
///
/// Compiled twice, like `FloatTiles`: as `SIMDKernels` for the build's floor and as
/// `SIMDKernelsAVX512`. The taps of a pixel are summed in the same order in every copy, so the
/// tiers give the same bytes.
public enum FloatDepthwiseRows {
    typealias Lanes = SIMD16<Float>
    typealias Half = SIMD8<Float>
    /// The three input rows of a window, each at the window's left column.
    public typealias Rows = (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>)

    /// The inside pixels at stride 1 across, compiled for this module's CPU: `inside3x3Body` with
    /// AVX-512's 32 registers, `inside3x3Halves` with fewer.
    @inline(never)
    public static func inside3x3Stride1(_ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int, groups: Int,
                                        channels: Int, taps: UnsafePointer<Float>, lower: Float, upper: Float) {
        #if SWIFTLITE_AVX512
        inside3x3Body(stride: 1, rows, out, count: count, groups: groups, channels: channels, taps: taps, lower: lower, upper: upper)
        #else
        inside3x3Halves(stride: 1, rows, out, count: count, groups: groups, channels: channels, taps: taps, lower: lower, upper: upper)
        #endif
    }

    /// `inside3x3Stride1` at stride 2 across.
    @inline(never)
    public static func inside3x3Stride2(_ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int, groups: Int,
                                        channels: Int, taps: UnsafePointer<Float>, lower: Float, upper: Float) {
        #if SWIFTLITE_AVX512
        inside3x3Body(stride: 2, rows, out, count: count, groups: groups, channels: channels, taps: taps, lower: lower, upper: upper)
        #else
        inside3x3Halves(stride: 2, rows, out, count: count, groups: groups, channels: channels, taps: taps, lower: lower, upper: upper)
        #endif
    }

    /// `groups` whole groups of 16 channels of `count` adjacent output
    /// pixels whose windows lie inside the input across; `rows` point at the first window's left
    /// column and `out` at the first pixel's output, both at the first group's channel. Eight pixels a step (at
    /// stride 1), then four; a last step of four that would run past `count` moves back to end at it
    /// (recomputing up to three pixels) rather than going one at a time. `taps` holds each group's
    /// bias and nine taps (10 vectors a group). `stride` is a constant at each call site.
    @inline(always)
    static func inside3x3Body(stride: Int, _ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int, groups: Int,
                                     channels c: Int, taps packed: UnsafePointer<Float>, lower: Float, upper: Float) {
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
                var filter = UnsafeRawPointer(packed), dst = UnsafeMutableRawPointer(out + x * c)
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
                    dst.storeBytes(of: FloatTiles.clamp(a0, lower, upper), as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a1, lower, upper), toByteOffset: pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a2, lower, upper), toByteOffset: 2 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a3, lower, upper), toByteOffset: 3 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a4, lower, upper), toByteOffset: 4 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a5, lower, upper), toByteOffset: 5 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a6, lower, upper), toByteOffset: 6 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a7, lower, upper), toByteOffset: 7 * pixel, as: Lanes.self)
                }
            case 4:
                forEachGroup { r0, r1, r2, filter, dst in
                    let b = filter.loadUnaligned(as: Lanes.self)
                    var a0 = b, a1 = b, a2 = b, a3 = b
                    taps(&a0, r0, 0, filter, 1); taps(&a1, r0, 1, filter, 1); taps(&a2, r0, 2, filter, 1); taps(&a3, r0, 3, filter, 1)
                    taps(&a0, r1, 0, filter, 4); taps(&a1, r1, 1, filter, 4); taps(&a2, r1, 2, filter, 4); taps(&a3, r1, 3, filter, 4)
                    taps(&a0, r2, 0, filter, 7); taps(&a1, r2, 1, filter, 7); taps(&a2, r2, 2, filter, 7); taps(&a3, r2, 3, filter, 7)
                    dst.storeBytes(of: FloatTiles.clamp(a0, lower, upper), as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a1, lower, upper), toByteOffset: pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a2, lower, upper), toByteOffset: 2 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a3, lower, upper), toByteOffset: 3 * pixel, as: Lanes.self)
                }
            default:
                forEachGroup { r0, r1, r2, filter, dst in
                    var a0 = filter.loadUnaligned(as: Lanes.self)
                    taps(&a0, r0, 0, filter, 1); taps(&a0, r1, 0, filter, 4); taps(&a0, r2, 0, filter, 7)
                    dst.storeBytes(of: FloatTiles.clamp(a0, lower, upper), as: Lanes.self)
                }
            }
            x += width
        }
    }

    /// `inside3x3Body`'s pixels and sums for 16 vector registers (AVX2's `ymm`): a group's two
    /// halves of 8 channels one after the other, up to eight pixels a step, so that the eight
    /// accumulators (one `SIMD8` each), a filter row's three taps and one input vector fit in
    /// registers. Each input vector of a filter row is loaded once and feeds every pixel of the
    /// step whose window covers it (up to three at stride 1). `inside3x3Body`'s eight pixels of
    /// 16 channels need all 16 `ymm` for their accumulators alone, and spilled them around every
    /// FMA. Every pixel's sum is the same: the bias, then the taps row by row, left to right.
    @inline(always)
    static func inside3x3Halves(stride: Int, _ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int, groups: Int,
                                channels c: Int, taps packed: UnsafePointer<Float>, lower: Float, upper: Float) {
        let pixel = c * MemoryLayout<Float>.stride
        let vector = MemoryLayout<Lanes>.stride, half = MemoryLayout<Half>.stride
        var x = 0
        while x < count {
            let width = count - x >= 8 ? 8 : count >= 4 ? 4 : 1
            x = min(x, count - width)
            let first = x * stride * c
            for h in 0 ..< 2 * groups {
                // Half `h % 2` of group `h / 2`: its channels' bytes in the input and output, its
                // half of each of the group's 10 vectors in `packed`.
                let at = h * half, filter = UnsafeRawPointer(packed) + (h / 2 * 10 * vector + h % 2 * half)
                let r0 = UnsafeRawPointer(rows.0 + first) + at, r1 = UnsafeRawPointer(rows.1 + first) + at
                let r2 = UnsafeRawPointer(rows.2 + first) + at, dst = UnsafeMutableRawPointer(out + x * c) + at
                switch (width, stride) {
                case (8, 1): halfStepStride1(Eight.self, r0, r1, r2, filter, dst, pixel: pixel, filterRows: 3, lower: lower, upper: upper)
                case (4, 1): halfStepStride1(Four.self, r0, r1, r2, filter, dst, pixel: pixel, filterRows: 3, lower: lower, upper: upper)
                case (_, 1): halfStepStride1(One.self, r0, r1, r2, filter, dst, pixel: pixel, filterRows: 3, lower: lower, upper: upper)
                case (8, _): halfStepStride2(Eight.self, r0, r1, r2, filter, dst, pixel: pixel, filterRows: 3, lower: lower, upper: upper)
                case (4, _): halfStepStride2(Four.self, r0, r1, r2, filter, dst, pixel: pixel, filterRows: 3, lower: lower, upper: upper)
                default: halfStepStride2(One.self, r0, r1, r2, filter, dst, pixel: pixel, filterRows: 3, lower: lower, upper: upper)
                }
            }
            x += width
        }
    }

    /// `halfStep` at stride 1 for `P.value` pixels. Not inlined: within one step the ten input
    /// columns of a filter row are runtime multiples of `pixel` from its pointer, and the loop
    /// around an inlined step kept all thirty of them as pointers, spilled to the stack.
    @inline(never)
    static func halfStepStride1<P: PixelCount>(_: P.Type, _ r0: UnsafeRawPointer, _ r1: UnsafeRawPointer, _ r2: UnsafeRawPointer,
                                               _ filter: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, pixel: Int,
                                               filterRows: Int, lower: Float, upper: Float) {
        halfStep(stride: 1, pixels: P.value, r0, r1, r2, filter, dst, pixel: pixel, filterRows: filterRows, lower: lower, upper: upper)
    }

    /// `halfStep` at stride 2 for `P.value` pixels.
    @inline(never)
    static func halfStepStride2<P: PixelCount>(_: P.Type, _ r0: UnsafeRawPointer, _ r1: UnsafeRawPointer, _ r2: UnsafeRawPointer,
                                               _ filter: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, pixel: Int,
                                               filterRows: Int, lower: Float, upper: Float) {
        halfStep(stride: 2, pixels: P.value, r0, r1, r2, filter, dst, pixel: pixel, filterRows: filterRows, lower: lower, upper: upper)
    }

    /// One step of `inside3x3Halves`: `pixels` (1, 4 or 8; a constant where inlined) adjacent
    /// output pixels of 8 channels; `r0`…`r2` point at the first window's left column, `filter` at
    /// the half's bias (its taps follow a 16-lane vector apart), `dst` at the first output.
    @inline(always)
    static func halfStep(stride s: Int, pixels p: Int, _ r0: UnsafeRawPointer, _ r1: UnsafeRawPointer, _ r2: UnsafeRawPointer,
                         _ filter: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, pixel: Int, filterRows: Int,
                         lower: Float, upper: Float) {
        let vector = MemoryLayout<Lanes>.stride
        let b = filter.loadUnaligned(as: Half.self)
        var a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b
        /// Adds `x · t` to pixel `j`'s sum.
        @inline(always)
        func add(_ j: Int, _ x: Half, _ t: Half) {
            switch j {
            case 0: a0 = a0.addingProduct(x, t)
            case 1: a1 = a1.addingProduct(x, t)
            case 2: a2 = a2.addingProduct(x, t)
            case 3: a3 = a3.addingProduct(x, t)
            case 4: a4 = a4.addingProduct(x, t)
            case 5: a5 = a5.addingProduct(x, t)
            case 6: a6 = a6.addingProduct(x, t)
            default: a7 = a7.addingProduct(x, t)
            }
        }
        // Filter row by filter row: the row's three taps, then its input columns left to right.
        // The input at column `q` is tap `q − s · j` of pixel `j`, so each pixel takes its taps
        // in order. `filterRows` (3) comes from the caller: as a loop of unknown count the rows
        // stay apart, where unrolled the compiler loaded all nine taps at once and spilled.
        var input = r0, next = r1, last = r2, taps = filter + vector
        for _ in 0 ..< filterRows {
            let t0 = taps.loadUnaligned(as: Half.self)
            let t1 = taps.loadUnaligned(fromByteOffset: vector, as: Half.self)
            let t2 = taps.loadUnaligned(fromByteOffset: 2 &* vector, as: Half.self)
            /// The input at column `q`.
            @inline(always)
            func column(_ q: Int) -> Half { input.loadUnaligned(fromByteOffset: q &* pixel, as: Half.self) }
            if s == 1 {
                for q in 0 ..< p + 2 {
                    let x = column(q)
                    if q < p { add(q, x, t0) }
                    if q >= 1 && q <= p { add(q - 1, x, t1) }
                    if q >= 2 { add(q - 2, x, t2) }
                }
            } else {
                // Even columns are the left tap of one pixel and the right tap of the one before;
                // odd columns the middle tap of one. (Written per pixel: the compiler left a loop
                // over all 17 columns of eight pixels rolled, with a jump table per tap.)
                for j in 0 ..< p {
                    let even = column(2 * j)
                    if j > 0 { add(j - 1, even, t2) }
                    add(j, even, t0)
                    add(j, column(2 * j + 1), t1)
                }
                add(p - 1, column(2 * p), t2)
            }
            (input, next, last) = (next, last, last)
            taps += 3 &* vector
        }
        dst.storeBytes(of: FloatTiles.clamp(a0, lower, upper), as: Half.self)
        if p > 1 {
            dst.storeBytes(of: FloatTiles.clamp(a1, lower, upper), toByteOffset: pixel, as: Half.self)
            dst.storeBytes(of: FloatTiles.clamp(a2, lower, upper), toByteOffset: 2 &* pixel, as: Half.self)
            dst.storeBytes(of: FloatTiles.clamp(a3, lower, upper), toByteOffset: 3 &* pixel, as: Half.self)
        }
        if p > 4 {
            dst.storeBytes(of: FloatTiles.clamp(a4, lower, upper), toByteOffset: 4 &* pixel, as: Half.self)
            dst.storeBytes(of: FloatTiles.clamp(a5, lower, upper), toByteOffset: 5 &* pixel, as: Half.self)
            dst.storeBytes(of: FloatTiles.clamp(a6, lower, upper), toByteOffset: 6 &* pixel, as: Half.self)
            dst.storeBytes(of: FloatTiles.clamp(a7, lower, upper), toByteOffset: 7 &* pixel, as: Half.self)
        }
    }

    /// The nine inputs of one window, filter row by filter row, each at the first group's
    /// channel: a tap outside the input points at a row of zeros.
    public typealias Window = (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer,
                               UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer)

    /// `groups` whole groups of 16 channels of one output pixel whose window crosses an edge across
    /// (`window`), into `out`: each group's bias, then its nine taps in `Window`'s order, the same
    /// sums as `inside3x3Body`'s. `taps` as there. Compiled for this module's CPU, so that the
    /// border pixels (two in each row; two of every seven at 7 × 7) run in the same registers as
    /// the inside ones.
    @inline(never)
    public static func edge3x3(_ window: Window, _ out: UnsafeMutablePointer<Float>, groups: Int, taps packed: UnsafePointer<Float>,
                               lower: Float, upper: Float) {
        let vector = MemoryLayout<Lanes>.stride
        var filter = UnsafeRawPointer(packed), offset = 0
        for _ in 0 ..< groups {
            var acc = filter.loadUnaligned(as: Lanes.self)
            /// Adds the tap `k` (1...9 in the group's vectors) reading `input`.
            @inline(always)
            func add(_ input: UnsafeRawPointer, _ k: Int) {
                acc = acc.addingProduct(input.loadUnaligned(fromByteOffset: offset, as: Lanes.self),
                                        filter.loadUnaligned(fromByteOffset: k * vector, as: Lanes.self))
            }
            add(window.0, 1); add(window.1, 2); add(window.2, 3)
            add(window.3, 4); add(window.4, 5); add(window.5, 6)
            add(window.6, 7); add(window.7, 8); add(window.8, 9)
            UnsafeMutableRawPointer(out).storeBytes(of: FloatTiles.clamp(acc, lower, upper), toByteOffset: offset, as: Lanes.self)
            offset += vector
            filter += 10 * vector
        }
    }
}

extension FloatDepthwiseRows {
    /// A general window's geometry: the input's height and width, the channels, the filter's
    /// height and width, the strides, the dilations, and the padding above and to the left.
    public typealias WindowShape = (inputHeight: Int, inputWidth: Int, channels: Int, filterHeight: Int, filterWidth: Int,
                                    strideHeight: Int, strideWidth: Int, dilationHeight: Int, dilationWidth: Int,
                                    padTop: Int, padLeft: Int)

    /// `insideWindows` for eight pixels.
    @inline(never)
    public static func insideWindows8(_ source: UnsafePointer<Float>, _ rowOut: UnsafeMutablePointer<Float>, oy: Int, ox: Int,
                                      channels: Range<Int>, shape: WindowShape, weights: UnsafePointer<Float>,
                                      bias: UnsafePointer<Float>, lower: Float, upper: Float) {
        insideWindows(pixels: 8, source, rowOut, oy: oy, ox: ox, channels: channels, shape: shape, weights: weights, bias: bias,
                      lower: lower, upper: upper)
    }

    /// `insideWindows` for four pixels.
    @inline(never)
    public static func insideWindows4(_ source: UnsafePointer<Float>, _ rowOut: UnsafeMutablePointer<Float>, oy: Int, ox: Int,
                                      channels: Range<Int>, shape: WindowShape, weights: UnsafePointer<Float>,
                                      bias: UnsafePointer<Float>, lower: Float, upper: Float) {
        insideWindows(pixels: 4, source, rowOut, oy: oy, ox: ox, channels: channels, shape: shape, weights: weights, bias: bias,
                      lower: lower, upper: upper)
    }

    /// Output pixels `ox ..< ox + pixels` of row `oy` (`rowOut` is that row's output) of the
    /// engine's general float depthwise path (`convolveWindows`), whose windows lie inside the
    /// input across, whole groups of 16 channels `channels`. `pixels` (8 or
    /// 4) is a constant at each call site, so the unused accumulators and their branches fold away. `weights` are
    /// `[filterHeight][filterWidth][channels]`, `bias` one per channel.
    @inline(always)
    static func insideWindows(pixels: Int, _ source: UnsafePointer<Float>, _ rowOut: UnsafeMutablePointer<Float>,
                              oy: Int, ox: Int, channels: Range<Int>, shape g: WindowShape,
                              weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, lower: Float, upper: Float) {
        let c = g.channels
        let floatSize = MemoryLayout<Float>.stride
        let yOrigin = oy * g.strideHeight - g.padTop, xOrigin = ox * g.strideWidth - g.padLeft
        // Filter rows that land inside the input (the same clipping as `convolvePixel`).
        let kyStart = max(0, (-yOrigin + g.dilationHeight - 1) / g.dilationHeight)
        let kyEnd = min(g.filterHeight, (g.inputHeight - yOrigin + g.dilationHeight - 1) / g.dilationHeight)
        let input = UnsafeRawPointer(source), filter = UnsafeRawPointer(weights), biases = UnsafeRawPointer(bias)
        let step = g.strideWidth * c * floatSize, tapStep = g.dilationWidth * c * floatSize, pixel = c * floatSize
        let dst = UnsafeMutableRawPointer(rowOut + ox * c)
        var ch = channels.lowerBound
        while ch < channels.upperBound {
            let b = biases.loadUnaligned(fromByteOffset: ch * floatSize, as: Lanes.self)
            var a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b
            var ky = kyStart
            while ky < kyEnd {
                var at = (((yOrigin + ky * g.dilationHeight) * g.inputWidth + xOrigin) * c + ch) * floatSize
                var tap = ((ky * g.filterWidth) * c + ch) * floatSize
                for _ in 0 ..< g.filterWidth {
                    let w = filter.loadUnaligned(fromByteOffset: tap, as: Lanes.self)
                    a0 = a0.addingProduct(input.loadUnaligned(fromByteOffset: at, as: Lanes.self), w)
                    a1 = a1.addingProduct(input.loadUnaligned(fromByteOffset: at + step, as: Lanes.self), w)
                    a2 = a2.addingProduct(input.loadUnaligned(fromByteOffset: at + 2 * step, as: Lanes.self), w)
                    a3 = a3.addingProduct(input.loadUnaligned(fromByteOffset: at + 3 * step, as: Lanes.self), w)
                    if pixels > 4 {
                        a4 = a4.addingProduct(input.loadUnaligned(fromByteOffset: at + 4 * step, as: Lanes.self), w)
                        a5 = a5.addingProduct(input.loadUnaligned(fromByteOffset: at + 5 * step, as: Lanes.self), w)
                        a6 = a6.addingProduct(input.loadUnaligned(fromByteOffset: at + 6 * step, as: Lanes.self), w)
                        a7 = a7.addingProduct(input.loadUnaligned(fromByteOffset: at + 7 * step, as: Lanes.self), w)
                    }
                    at += tapStep
                    tap += pixel
                }
                ky += 1
            }
            let offset = ch * floatSize
            dst.storeBytes(of: FloatTiles.clamp(a0, lower, upper), toByteOffset: offset, as: Lanes.self)
            dst.storeBytes(of: FloatTiles.clamp(a1, lower, upper), toByteOffset: offset + pixel, as: Lanes.self)
            dst.storeBytes(of: FloatTiles.clamp(a2, lower, upper), toByteOffset: offset + 2 * pixel, as: Lanes.self)
            dst.storeBytes(of: FloatTiles.clamp(a3, lower, upper), toByteOffset: offset + 3 * pixel, as: Lanes.self)
            if pixels > 4 {
                dst.storeBytes(of: FloatTiles.clamp(a4, lower, upper), toByteOffset: offset + 4 * pixel, as: Lanes.self)
                dst.storeBytes(of: FloatTiles.clamp(a5, lower, upper), toByteOffset: offset + 5 * pixel, as: Lanes.self)
                dst.storeBytes(of: FloatTiles.clamp(a6, lower, upper), toByteOffset: offset + 6 * pixel, as: Lanes.self)
                dst.storeBytes(of: FloatTiles.clamp(a7, lower, upper), toByteOffset: offset + 7 * pixel, as: Lanes.self)
            }
            ch += Lanes.scalarCount
        }
    }
}

/// A number of pixels per step, as a type, so that each count gets its own specialisation.
protocol PixelCount: SendableMetatype { static var value: Int { get } }
enum One: PixelCount { static var value: Int { 1 } }
enum Two: PixelCount { static var value: Int { 2 } }
enum Three: PixelCount { static var value: Int { 3 } }
enum Four: PixelCount { static var value: Int { 4 } }
enum Five: PixelCount { static var value: Int { 5 } }
enum Six: PixelCount { static var value: Int { 6 } }
enum Seven: PixelCount { static var value: Int { 7 } }
enum Eight: PixelCount { static var value: Int { 8 } }
