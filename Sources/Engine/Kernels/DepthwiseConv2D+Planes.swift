/// The float depthwise path of `DepthwiseConv2DFloat32` for 5×5 windows without dilation at
/// stride 1 or 2 across (EfficientNet-Lite's).
///
/// A few groups of 16 channels at a time (`Planes.groups`), the input rows a tile reads are
/// copied into a ring of 5 rows per group in which a pixel's 16 channels are 64 contiguous bytes
/// and the columns left and right of the input are zeros. Every tap is then a load at a
/// constant offset from one of 5 row pointers, and every output pixel is "inside": up to eight
/// pixels (`pixelsPerStep`) share each tap's filter vector and, across, each input vector, 40
/// FMAs in eight independent chains per filter row. Read in place (`convolveWindows`), each
/// pixel's 16 channels sit a whole pixel (hundreds of bytes) from its neighbour's: the offsets
/// are runtime multiples the compiler keeps in spilled registers, the loads do not share across
/// taps, and the edge pixels (4 of 14 in a row) need slower code of their own. The copy reads
/// each input vector of the tile once per group; the ring (16 KiB at most) stays in L1.
///
/// Each output is the bias, then the taps row by row, left to right, as in `reference`; rows
/// above or below the input are skipped, columns outside it add a product with zero (the 3×3
/// path's edges do the same), which gives the same value for finite weights.
extension DepthwiseConv2DFloat32 {
    /// The ring's shape for the windows this path takes (nil for others).
    struct Planes: Sendable {
        /// The window's height and width, and the ring's number of rows.
        let size: Int
        /// Columns in a ring row: the left padding, the input, and zeros up to the last column
        /// the last output pixel reads.
        let width: Int
        /// Groups of 16 channels in the ring at once: as many as fit `budget` bytes.
        let groups: Int
        /// Output pixels per step (`pixelsPerStep`) and the micro-kernel for them and the stride.
        let pixels: Int
        let kernel: RowKernel

        /// The shapes this path takes: 5×5 windows at stride 1 or 2 across, in rows short enough
        /// that one group's ring fits `budget` (51 columns). (Wider rows, whose ring would not stay
        /// in L1 — EfficientNet-Lite0's 56-pixel rows at stride 2 —, and 3×3 windows, 9 FMAs per
        /// output, ran faster in place, `convolveWindows` and `convolve3x3`, on two threads, where
        /// a tile of a few output rows copies the rows around them as well.)
        init?(_ g: DepthwiseConv2D.Geometry, budget: Int = Planes.budget) {
            guard g.filterHeight == g.filterWidth, g.dilationHeight == 1, g.dilationWidth == 1,
                  g.outputChannels >= Lanes.scalarCount, g.outputWidth > 0,
                  g.filterWidth == 5, g.strideWidth == 1 || g.strideWidth == 2 else { return nil }
            size = g.filterWidth
            width = max(g.padLeft + g.inputWidth, (g.outputWidth - 1) * g.strideWidth + size)
            let groupBytes = size * width * MemoryLayout<Lanes>.stride
            guard groupBytes <= budget else { return nil }
            groups = min(g.outputChannels / Lanes.scalarCount, budget / groupBytes)
            pixels = DepthwiseConv2DFloat32.pixelsPerStep(width: g.outputWidth)
            kernel = DepthwiseConv2DFloat32.rowKernel(stride: g.strideWidth, pixels: pixels)
        }

        /// Bytes of ring the groups share: 16 KiB, a third of a 48 KiB L1 (measured: 8 and 24 KiB
        /// no faster).
        static let budget = 16 * 1024

        /// Floats in one group's ring row.
        var rowFloats: Int { width * Lanes.scalarCount }
        /// Floats in one ring slot: one row of each group.
        var slotFloats: Int { groups * rowFloats }
        /// Bytes of one worker's ring.
        var bytes: Int { size * slotFloats * MemoryLayout<Float>.stride }
    }

    /// Output rows `outputRows`, channels `channels` (bounds at multiples of 16, or `outputChannels`)
    /// of one image, through a worker's `ring` of `Planes.bytes`.
    func convolvePlanes(_ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, rows outputRows: Range<Int>,
                        channels: Range<Int>, ring: UnsafeMutablePointer<Float>) {
        let g = geometry, planes = planes!
        let c = g.outputChannels, k = planes.size, lanes = Lanes.scalarCount
        let vectorEnd = min(channels.upperBound, c - c % lanes)
        // The zero columns; the copies below write only the input's.
        for row in 0 ..< k * planes.groups {
            let start = ring + row * planes.rowFloats
            start.initialize(repeating: 0, count: g.padLeft * lanes)
            let right = (g.padLeft + g.inputWidth) * lanes
            (start + right).initialize(repeating: 0, count: planes.rowFloats - right)
        }
        let pixels = planes.pixels, kernel = planes.kernel
        var group = channels.lowerBound / lanes
        while group * lanes < vectorEnd {
            let count = min(planes.groups, vectorEnd / lanes - group)
            var next = 0
            for oy in outputRows {
                let top = oy * g.strideHeight - g.padTop
                let first = max(0, top), end = min(g.inputHeight, top + k)
                next = max(next, first)
                while next < end {
                    copyRow(source + (next * g.inputWidth * c + group * lanes), groups: count,
                            into: ring + (next % k * planes.slotFloats + g.padLeft * lanes), rowFloats: planes.rowFloats)
                    next += 1
                }
                let taps = first - top ..< max(first, end) - top
                for member in 0 ..< count {
                    let filter = UnsafeRawPointer(packedTaps!.pointer + (group + member) * (k * k + 1) * lanes)
                    let dst = out + (oy * g.outputWidth * c + (group + member) * lanes)
                    let plane = ring + member * planes.rowFloats
                    var x = 0
                    while x < g.outputWidth {
                        x = min(x, g.outputWidth - pixels)
                        let rows = Window(ring: UnsafeRawPointer(plane + x * g.strideWidth * lanes),
                                          rowBytes: planes.slotFloats * MemoryLayout<Float>.stride, firstSlot: first % k, taps: taps)
                        kernel(self, rows, filter, UnsafeMutableRawPointer(dst + x * c))
                        x += pixels
                    }
                }
            }
            group += count
        }
        if vectorEnd < channels.upperBound {
            for oy in outputRows {
                for ox in 0 ..< g.outputWidth {
                    convolvePixel(source, out + (oy * g.outputWidth + ox) * c, oy: oy, ox: ox, channels: vectorEnd ..< channels.upperBound)
                }
            }
        }
    }

    /// The ring rows of one output row's window: filter row `ky` (in `taps`, the rows inside the
    /// input) reads ring slot `(firstSlot + ky - taps.lowerBound) % size`; `ring` points at the
    /// first pixel's first column.
    struct Window {
        let ring: UnsafeRawPointer
        let rowBytes: Int
        let firstSlot: Int
        let taps: Range<Int>
    }

    /// One input row's `groups` groups of 16 channels from `source` (a pixel every
    /// `outputChannels` floats) into 64-byte pixels, each group's row `rowFloats` after the last.
    private func copyRow(_ source: UnsafePointer<Float>, groups: Int, into destination: UnsafeMutablePointer<Float>, rowFloats: Int) {
        let c = geometry.outputChannels
        let from = UnsafeRawPointer(source), to = UnsafeMutableRawPointer(destination)
        let pixel = c * MemoryLayout<Float>.stride, vector = MemoryLayout<Lanes>.stride, row = rowFloats * MemoryLayout<Float>.stride
        for ix in 0 ..< geometry.inputWidth {
            for member in 0 ..< groups {
                to.storeBytes(of: from.loadUnaligned(fromByteOffset: ix * pixel + member * vector, as: Lanes.self),
                              toByteOffset: member * row + ix * vector, as: Lanes.self)
            }
        }
    }

    /// Pixels per step: eight accumulators of 16 lanes fit AVX-512's 32 registers, but would
    /// spill out of AVX2's 16 `ymm` (two each) and NEON's 32 `q` (four each).
    static var widest: Int {
        #if SWIFTLITE_AVX512
        8
        #else
        4
        #endif
    }

    /// Pixels per step for rows of `width` output pixels: the fewest steps of at most `widest`,
    /// as equal as they go (the last step moves back to end at the row's end: 14 pixels go 7 + 7,
    /// 19 go 7 + 7 + 7 with two recomputed).
    static func pixelsPerStep(width: Int) -> Int {
        let steps = (width + widest - 1) / widest
        return (width + steps - 1) / steps
    }

    typealias RowKernel = @Sendable (DepthwiseConv2DFloat32, Window, UnsafeRawPointer, UnsafeMutableRawPointer) -> Void

    /// The micro-kernel for a stride across and a number of pixels per step (chosen at prepare).
    private static func rowKernel(stride: Int, pixels: Int) -> RowKernel {
        switch pixels {
        case 8: rowKernel(stride: stride, Eight.self)
        case 7: rowKernel(stride: stride, Seven.self)
        case 6: rowKernel(stride: stride, Six.self)
        case 5: rowKernel(stride: stride, Five.self)
        case 4: rowKernel(stride: stride, Four.self)
        case 3: rowKernel(stride: stride, Three.self)
        case 2: rowKernel(stride: stride, Two.self)
        default: rowKernel(stride: stride, One.self)
        }
    }

    private static func rowKernel<P: PixelCount>(stride: Int, _: P.Type) -> RowKernel {
        if stride == 1 { return { kernel, rows, filter, dst in kernel.pixels5x5Stride1(P.self, rows, filter, dst) } }
        return { kernel, rows, filter, dst in kernel.pixels5x5Stride2(P.self, rows, filter, dst) }
    }

    @inline(never)
    private func pixels5x5Stride1<P: PixelCount>(_: P.Type, _ rows: Window, _ filter: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer) {
        pixels(size: 5, stride: 1, count: P.value, rows, filter, dst)
    }

    @inline(never)
    private func pixels5x5Stride2<P: PixelCount>(_: P.Type, _ rows: Window, _ filter: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer) {
        pixels(size: 5, stride: 2, count: P.value, rows, filter, dst)
    }

    /// `count` (1 to 8) adjacent output pixels of one group of 16 channels: `filter` is the
    /// group's packed bias and taps, `dst` the first pixel's output. `size`, `stride` and `count`
    /// are constants in each specialisation, so the unused accumulators fold away.
    @inline(__always)
    private func pixels(size k: Int, stride s: Int, count p: Int, _ rows: Window, _ filter: UnsafeRawPointer,
                        _ dst: UnsafeMutableRawPointer) {
        let vector = MemoryLayout<Lanes>.stride
        let b = filter.loadUnaligned(as: Lanes.self)
        var a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b
        var slot = rows.firstSlot
        for ky in rows.taps {
            let row = rows.ring + slot * rows.rowBytes
            let taps = filter + (1 + ky * k) * vector
            /// Filter row `ky`'s taps for pixel `j`: the same input vectors recur across pixels
            /// (at stride 1, pixel `j`'s tap `kx + 1` is pixel `j + 1`'s tap `kx`) and load once.
            @inline(__always)
            func add(_ a: inout Lanes, _ j: Int) {
                for kx in 0 ..< k {
                    a = a.addingProduct(row.loadUnaligned(fromByteOffset: (j * s + kx) * vector, as: Lanes.self),
                                        taps.loadUnaligned(fromByteOffset: kx * vector, as: Lanes.self))
                }
            }
            add(&a0, 0)
            if p > 1 { add(&a1, 1) }
            if p > 2 { add(&a2, 2) }
            if p > 3 { add(&a3, 3) }
            if p > 4 { add(&a4, 4) }
            if p > 5 { add(&a5, 5) }
            if p > 6 { add(&a6, 6) }
            if p > 7 { add(&a7, 7) }
            slot = slot + 1 == k ? 0 : slot + 1
        }
        let lower = range.lowerBound, upper = range.upperBound
        let pixel = geometry.outputChannels * MemoryLayout<Float>.stride
        dst.storeBytes(of: FloatGEMM.clamp(a0, lower, upper), as: Lanes.self)
        if p > 1 { dst.storeBytes(of: FloatGEMM.clamp(a1, lower, upper), toByteOffset: pixel, as: Lanes.self) }
        if p > 2 { dst.storeBytes(of: FloatGEMM.clamp(a2, lower, upper), toByteOffset: 2 * pixel, as: Lanes.self) }
        if p > 3 { dst.storeBytes(of: FloatGEMM.clamp(a3, lower, upper), toByteOffset: 3 * pixel, as: Lanes.self) }
        if p > 4 { dst.storeBytes(of: FloatGEMM.clamp(a4, lower, upper), toByteOffset: 4 * pixel, as: Lanes.self) }
        if p > 5 { dst.storeBytes(of: FloatGEMM.clamp(a5, lower, upper), toByteOffset: 5 * pixel, as: Lanes.self) }
        if p > 6 { dst.storeBytes(of: FloatGEMM.clamp(a6, lower, upper), toByteOffset: 6 * pixel, as: Lanes.self) }
        if p > 7 { dst.storeBytes(of: FloatGEMM.clamp(a7, lower, upper), toByteOffset: 7 * pixel, as: Lanes.self) }
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
