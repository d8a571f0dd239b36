// x86-64 only: the byte loads are the intrinsics header's AVX2 and AVX-512 wrappers.
#if SWIFTLITE_AVX2
import CX86Intrinsics

/// The tap rows of the engine's quantized depthwise kernel (`DepthwiseConv2DTapRows`): each
/// input byte a window reads as an unsigned byte (for `vpdpbusd` or its AVX2 equivalent: int8
/// input encoded `x + 128`, uint8 input as it is), packed so that one 32-bit lane holds a filter
/// row's taps for one channel (three taps of a 3×3 filter; two quads, four taps and then one, of
/// a 5×5). Taps outside the input are the zero point. Compiled twice, like `FloatTiles`:
/// `SIMDKernels` for the build's floor and `SIMDKernelsAVX512`.
///
/// A tap row is block-major (`swiftlite_tap_row_offset`): for each block of 16 channels, the output columns in
/// order, each one vector of 16 lanes (two, one per quad, of a 5×5). So the kernel, walking a
/// row one block at a time, reads each tap row's quads from consecutive cache lines rather
/// than 64 bytes out of every pixel's whole channels.
///
/// Two forms build the same bytes. The column form widens each tap's 16 input bytes to 32-bit
/// lanes and shifts and ORs them into quads. The staged form (dilation 1) first copies the
/// row's encoded input columns, 16 channels each, to `staging` (the zero point in the padding),
/// then shuffles each quad out of four staged columns (`swiftlite_tap_quads`: two shuffles on
/// AVX-512, six in `ymm` on AVX2). The builders take the staged form for 5×5 filters, and on
/// AVX-512 for 3×3 ones at a stride above 1. A 3×3 filter's column form loads each column
/// once for three outputs at stride 1 and for two at stride 2, which the AVX2 staged form's
/// six shuffles per quad do not beat.
public enum DepthwiseTapRows {
    /// How a tap row is built (see above).
    public enum Form: Sendable {
        case columns, staged
    }

    /// The form the builders take for a `taps`×`taps` filter and `shape`.
    public static func form(taps: Int, shape g: Shape) -> Form {
        #if SWIFTLITE_AVX512
        g.dilation == 1 && (taps == 5 || g.stride > 1) ? .staged : .columns
        #else
        g.dilation == 1 && taps == 5 ? .staged : .columns
        #endif
    }

    /// The input's and the filter's geometry across: the input's height, width and channels, the
    /// output's width, the padding above and to the left, the stride and dilation across.
    public typealias Shape = (inputHeight: Int, inputWidth: Int, channels: Int, outputWidth: Int,
                              padTop: Int, padLeft: Int, stride: Int, dilation: Int)

    /// `swiftlite_tap_row_offset`: where in a tap row the quads of output column `ox` for the
    /// block of 16 channels at `c` start, in bytes.
    @inline(__always)
    static func offset(column ox: Int, channel c: Int, width: Int, quads: Int = 1) -> Int {
        swiftlite_tap_row_offset(ox, c, width, quads)
    }

    /// Bytes of `staging` the builders need for `shape`: 16 per padded column that one row of
    /// 16 channels spans at a dilation of 1, five columns past the last output's first (a 5×5
    /// filter's taps; `swiftlite_tap_quads` reads four columns of a 3×3 filter's three).
    public static func stagingBytes(shape g: Shape) -> Int {
        16 * ((g.outputWidth - 1) * g.stride + 5)
    }

    /// Tap row `py`: for each output column and each channel of `channels` (whole groups of
    /// 16), the encoded bytes of the three taps (of the five, in two quads), at `offset` in
    /// `row`; the other channels' lanes are left as they are. `flip` is XORed into every tap
    /// byte: 0x80 encodes int8 input as `x + 128`, 0 leaves uint8 input as it is.
    /// `staging` (`stagingBytes`) is the builder's own scratch; `form` is the form to take (the
    /// kernel chooses it at prepare with `form(taps:shape:)`; nil: that choice here; a dilation
    /// above 1 always takes the column form).
    @inline(never)
    public static func build3(_ image: UnsafePointer<UInt8>, paddedRow py: Int, channels range: Range<Int>, shape g: Shape,
                              zeroPoint inputZeroPoint: UInt8, flip: UInt8,
                              staging: UnsafeMutableRawPointer, form: Form? = nil, into row: UnsafeMutablePointer<UInt32>) {
        if g.dilation == 1 && (form ?? Self.form(taps: 3, shape: g)) == .staged {
            return buildStaged(image, paddedRow: py, channels: range, shape: g, zeroPoint: inputZeroPoint,
                               flip: flip, taps: 3, staging: staging, into: row)
        }
        let channels = g.channels
        let encode = SIMD16<UInt32>(repeating: UInt32(flip) * 0x0001_0101)
        let iy = py - g.padTop
        guard iy >= 0, iy < g.inputHeight else {
            let fill = SIMD16<UInt32>(repeating: UInt32(inputZeroPoint) * 0x0001_0101) ^ encode
            let raw = UnsafeMutableRawPointer(row)
            for ox in 0 ..< g.outputWidth {
                for c in stride(from: range.lowerBound, to: range.upperBound, by: 16) {
                    raw.storeBytes(of: fill, toByteOffset: offset(column: ox, channel: c, width: g.outputWidth), as: SIMD16<UInt32>.self)
                }
            }
            return
        }
        let source = UnsafeRawPointer(image + iy * g.inputWidth * channels)
        // Bytes of the image from the row's start: a load may read past a pixel's channels
        // into the next pixel's, never past the image.
        let readable = (g.inputHeight - iy) * g.inputWidth * channels
        let zero = SIMD16<UInt32>(repeating: UInt32(inputZeroPoint))
        let destination = UnsafeMutableRawPointer(row)
        let sw = g.stride, dw = g.dilation
        // Output columns whose three taps are all inside the input: `interior`.
        let first = min(g.outputWidth, (g.padLeft + sw - 1) / sw)
        let last = max(first, min(g.outputWidth, (g.inputWidth - 1 - 2 * dw + g.padLeft) / sw + 1))
        let interior = first ..< (g.inputWidth - 1 - 2 * dw + g.padLeft < 0 ? first : last)
        var c = range.lowerBound
        while c < range.upperBound {
            let count = channels - c
            @inline(always)
            func column(_ ix: Int) -> SIMD16<UInt32> {
                load(source + ix * channels + c, count: count, readable: readable - ix * channels - c)
            }
            @inline(always)
            func store(_ t0: SIMD16<UInt32>, _ t1: SIMD16<UInt32>, _ t2: SIMD16<UInt32>, _ ox: Int) {
                destination.storeBytes(of: (t0 | (t1 &<< 8) | (t2 &<< 16)) ^ encode,
                                       toByteOffset: offset(column: ox, channel: c, width: g.outputWidth),
                                       as: SIMD16<UInt32>.self)
            }
            // Columns with taps in the padding.
            @inline(always)
            func border(_ columns: Range<Int>) {
                for ox in columns {
                    let x0 = ox * sw - g.padLeft
                    @inline(always)
                    func tap(_ ix: Int) -> SIMD16<UInt32> { ix >= 0 && ix < g.inputWidth ? column(ix) : zero }
                    store(tap(x0), tap(x0 + dw), tap(x0 + 2 * dw), ox)
                }
            }
            border(0 ..< interior.lowerBound)
            border(interior.upperBound ..< g.outputWidth)
            if !interior.isEmpty {
                let x0 = interior.lowerBound * sw - g.padLeft
                if sw == 1 && dw == 1 {
                    // Each loaded column is the third, second and first tap of consecutive outputs.
                    var t0 = column(x0), t1 = column(x0 + 1)
                    for ox in interior {
                        let t2 = column(ox &+ 1 &- g.padLeft &+ 1)
                        store(t0, t1, t2, ox)
                        t0 = t1
                        t1 = t2
                    }
                } else if sw == 2 && dw == 1 {
                    // The third tap of one output is the first of the next.
                    var t0 = column(x0)
                    for ox in interior {
                        let ix = ox &* 2 &- g.padLeft
                        let t2 = column(ix &+ 2)
                        store(t0, column(ix &+ 1), t2, ox)
                        t0 = t2
                    }
                } else {
                    for ox in interior {
                        let ix = ox &* sw &- g.padLeft
                        store(column(ix), column(ix &+ dw), column(ix &+ 2 &* dw), ox)
                    }
                }
            }
            c += 16
        }
    }

    /// `build3` for a 5×5 filter: column `ox`'s quads `(t₀, t₁, t₂, t₃)` and `(t₄, 0, 0, 0)`,
    /// each tap the input byte XOR `flip` (the zero point where the window leaves the input), the
    /// zero bytes left zero (their weights are zero).
    @inline(never)
    public static func build5(_ image: UnsafePointer<UInt8>, paddedRow py: Int, channels range: Range<Int>, shape g: Shape,
                              zeroPoint inputZeroPoint: UInt8, flip: UInt8,
                              staging: UnsafeMutableRawPointer, form: Form? = nil, into row: UnsafeMutablePointer<UInt32>) {
        if g.dilation == 1 && (form ?? Self.form(taps: 5, shape: g)) == .staged {
            return buildStaged(image, paddedRow: py, channels: range, shape: g, zeroPoint: inputZeroPoint,
                               flip: flip, taps: 5, staging: staging, into: row)
        }
        let channels = g.channels
        let iy = py - g.padTop
        let destination = UnsafeMutableRawPointer(row)
        let zero = SIMD16<UInt32>(repeating: UInt32(inputZeroPoint))
        let sw = g.stride, dw = g.dilation
        let sourceRow = max(0, min(iy, g.inputHeight - 1))
        let source = UnsafeRawPointer(image + sourceRow * g.inputWidth * channels)
        let readable = (g.inputHeight - sourceRow) * g.inputWidth * channels
        let rowInside = iy >= 0 && iy < g.inputHeight
        var c = range.lowerBound
        while c < range.upperBound {
            let count = channels - c
            for ox in 0 ..< g.outputWidth {
                let x0 = ox * sw - g.padLeft
                @inline(always)
                func tap(_ kx: Int) -> SIMD16<UInt32> {
                    let ix = x0 + kx * dw
                    guard rowInside && ix >= 0 && ix < g.inputWidth else { return zero }
                    return load(source + ix * channels + c, count: count, readable: readable - ix * channels - c)
                }
                let first = (tap(0) | tap(1) &<< 8 | tap(2) &<< 16 | tap(3) &<< 24) ^ SIMD16(repeating: UInt32(flip) * 0x0101_0101)
                let second = tap(4) ^ SIMD16(repeating: UInt32(flip))
                let at = offset(column: ox, channel: c, width: g.outputWidth, quads: 2)
                destination.storeBytes(of: first, toByteOffset: at, as: SIMD16<UInt32>.self)
                destination.storeBytes(of: second, toByteOffset: at &+ 64, as: SIMD16<UInt32>.self)
            }
            c += 16
        }
    }

    /// `build3` or `build5` (`taps`) at a dilation of 1, by way of `staging`. For each group of
    /// 16 channels: first the encoded bytes of the padded columns `0 ..< span` of the row, 16
    /// per column (padded column `p` is input column `p − padLeft`; the zero point where the
    /// column or the row lies outside the input), then each output column's quads from the
    /// staged columns `ox · stride …`.
    @inline(never)
    private static func buildStaged(_ image: UnsafePointer<UInt8>, paddedRow py: Int, channels range: Range<Int>, shape g: Shape,
                                    zeroPoint inputZeroPoint: UInt8, flip: UInt8, taps: Int,
                                    staging: UnsafeMutableRawPointer, into row: UnsafeMutablePointer<UInt32>) {
        let channels = g.channels, sw = g.stride
        let span = (g.outputWidth - 1) * sw + (taps == 5 ? 5 : 4)
        let encode = SIMD16<UInt8>(repeating: flip)
        let fill = SIMD16<UInt8>(repeating: inputZeroPoint) ^ encode
        let iy = py - g.padTop
        // Padded columns that hold input: `inputColumns` (none where the row is padding).
        let first = min(span, g.padLeft)
        let inputColumns = iy >= 0 && iy < g.inputHeight ? first ..< max(first, min(span, g.padLeft + g.inputWidth)) : first ..< first
        let sourceRow = max(0, min(iy, g.inputHeight - 1))
        let source = image + sourceRow * g.inputWidth * channels
        let readable = (g.inputHeight - sourceRow) * g.inputWidth * channels
        let destination = UnsafeMutableRawPointer(row)
        var c = range.lowerBound
        while c < range.upperBound {
            let count = channels - c
            for p in 0 ..< inputColumns.lowerBound { staging.storeBytes(of: fill, toByteOffset: p &* 16, as: SIMD16<UInt8>.self) }
            for p in inputColumns {
                let at = (p &- g.padLeft) &* channels &+ c
                let bytes = swiftlite_load_16_bytes(UnsafeRawPointer(source + at), count, readable &- at) ^ encode
                staging.storeBytes(of: bytes, toByteOffset: p &* 16, as: SIMD16<UInt8>.self)
            }
            for p in inputColumns.upperBound ..< span { staging.storeBytes(of: fill, toByteOffset: p &* 16, as: SIMD16<UInt8>.self) }
            if taps == 5 {
                for ox in 0 ..< g.outputWidth {
                    let at = staging + ox &* sw &* 16, to = offset(column: ox, channel: c, width: g.outputWidth, quads: 2)
                    destination.storeBytes(of: unsafeBitCast(swiftlite_tap_quads(at, 4), to: SIMD16<UInt32>.self),
                                           toByteOffset: to, as: SIMD16<UInt32>.self)
                    destination.storeBytes(of: unsafeBitCast(swiftlite_load_widened_bytes(at + 64, 16, 16), to: SIMD16<UInt32>.self),
                                           toByteOffset: to &+ 64, as: SIMD16<UInt32>.self)
                }
            } else {
                for ox in 0 ..< g.outputWidth {
                    destination.storeBytes(of: unsafeBitCast(swiftlite_tap_quads(staging + ox &* sw &* 16, 3), to: SIMD16<UInt32>.self),
                                           toByteOffset: offset(column: ox, channel: c, width: g.outputWidth), as: SIMD16<UInt32>.self)
                }
            }
            c += 16
        }
    }

    /// Sixteen bytes zero-extended to 32-bit lanes, the lanes past `count` zero; `readable`
    /// bytes from `p` may be read (`swiftlite_load_16_bytes`).
    @inline(always)
    private static func load(_ p: UnsafeRawPointer, count: Int, readable: Int) -> SIMD16<UInt32> {
        unsafeBitCast(swiftlite_load_widened_bytes(p, count, readable), to: SIMD16<UInt32>.self)
    }
}
#endif
