import SIMDKernels
import SIMDKernelsAVX512

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
/// each input vector of the tile once per group; the ring (32 KiB at most) stays in L1.
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
        /// that one group's ring fits `budget` (up to 102 columns). Wider rows go through the
        /// in-place windows (`convolveWindows`), and so do 3×3 windows (`convolve3x3`), 9 FMAs
        /// per output, where a tile of a few output rows would copy the rows around them as well.
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

        /// Bytes of ring the groups share: 32 KiB, the whole of a 32 KiB L1 (two thirds of a
        /// 48 KiB one). A step reads only a few pixels of each of the five rows at a time, so the
        /// rows a step needs stay in L1 while the rest of the ring is written; on both tiers
        /// the in-place windows are slower than such a ring for the rows it holds.
        static let budget = 32 * 1024

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
        let pixelBytes = c * MemoryLayout<Float>.stride, lower = range.lowerBound, upper = range.upperBound
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
                        kernel(rows.ring, rows.rowBytes, rows.firstSlot, rows.taps, filter, UnsafeMutableRawPointer(dst + x * c), pixelBytes, lower, upper)
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
    static var widest: Int { FloatGEMM.wide ? 8 : 4 }

    /// Pixels per step for rows of `width` output pixels: the fewest steps of at most `widest`,
    /// as equal as they go (the last step moves back to end at the row's end: 14 pixels go 7 + 7,
    /// 19 go 7 + 7 + 7 with two recomputed).
    static func pixelsPerStep(width: Int) -> Int {
        let steps = (width + widest - 1) / widest
        return (width + steps - 1) / steps
    }

    typealias RowKernel = SIMDKernels.FloatDepthwiseRows.PlaneRow

    /// The micro-kernel for a stride across and a number of pixels per step (chosen at prepare):
    /// `SIMDKernelsAVX512`'s where it runs, else `SIMDKernels`'.
    private static func rowKernel(stride: Int, pixels: Int) -> RowKernel {
        FloatGEMM.wide ? SIMDKernelsAVX512.FloatDepthwiseRows.planeRow5x5(stride: stride, pixels: pixels)
            : SIMDKernels.FloatDepthwiseRows.planeRow5x5(stride: stride, pixels: pixels)
    }
}
