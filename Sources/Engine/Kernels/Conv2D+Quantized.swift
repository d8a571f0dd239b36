import Microkernels
#if SWIFTLITE_AVX512
import CX86Intrinsics
#endif

extension Conv2D {
    /// Integer convolution (uint8 per-tensor, int8 per-channel).
    static func prepareQuantized(_ context: inout PrepareContext, geometry: Geometry, activation: FusedActivation) throws(ModelError) -> any Kernel {
        try Conv2DQuantized(&context, geometry: geometry, activation: activation)
    }
}

/// Integer CONV_2D, byte-identical to TFLite's reference kernels (`reference_ops::Conv` for
/// uint8, `reference_integer_ops::ConvPerChannel` for int8):
///
/// - uint8: asymmetric uint8 weights with a zero point and one multiplier for the tensor,
///   derived from the *Float* product of the input and filter scales (TFLite's legacy path);
/// - int8: symmetric int8 weights with one scale per output channel (or one scale broadcast),
///   int8 activations with zero points, multipliers from the Double product of the scales.
///
/// Both run as `IntegerGEMM`, the requantization fused into the product's output. A 1×1
/// stride-1 convolution reads its input directly as the patch matrix (the product reads int8
/// activations as signed). Other convolutions lay out im2col patches already encoded as
/// unsigned bytes (int8 `x` as `x + 128`, so the product needs no sign-flipping copy of its
/// own), each patch padded to a multiple of 4 bytes (whole `vpdpbusd` groups; the extra taps have
/// zero weights). Padding is filled with the input zero point, which contributes exactly
/// nothing, as the reference's skipped taps do.
struct Conv2DQuantized: TiledKernel, AppliesOutputTable {
    let geometry: Conv2D.Geometry
    let input: Int
    /// The tensor written: the convolution's output, or that of the table operator fused after
    /// it (`followed(by:)`).
    var output: Int
    /// The fused table operator's table, applied to each block of output as it is computed.
    var outputTable: OutputTable?
    /// The input zero point as a raw byte of the input tensor.
    let zeroPointByte: UInt8
    /// What im2col `xor`s into each input byte: 0x80 for int8 (to `x + 128`), 0 for uint8.
    let patchFlip: UInt8
    /// Bytes per im2col patch: `patchSize` rounded up to a multiple of 4 (`patchSize` when the
    /// input is read directly).
    let patchStride: Int
    let gemm: IntegerGEMM
    let requantization: ChannelRequantization
    /// Output pixels whose patches are laid out at once (a block of about 64 KiB, a multiple of 16).
    let rowsPerBlock: Int
    /// Bytes of each worker's scratch that hold its patches; the product's scratch follows.
    let patchBytes: Int

    /// True when the input itself is the patch matrix: no im2col.
    private var readsInputDirectly: Bool { geometry.isPointwise }

    init(_ context: inout PrepareContext, geometry g: Conv2D.Geometry, activation: FusedActivation) throws(ModelError) {
        let quantization = try ConvolutionQuantization(
            context, input: Conv2D.input, filter: Conv2D.filter, bias: Conv2D.bias, output: Conv2D.output,
            channels: g.outputChannels, channelDimension: 0, activation: activation)
        let channels = g.outputChannels, filter = quantization.filter
        let encoding = quantization.encoding
        zeroPointByte = encoding.rawZeroPoint
        requantization = quantization.requantization

        let weights = try context.constant(Conv2D.filter).bytes
        var biasValues: UnsafeBufferPointer<Int32>?
        if quantization.hasBias { biasValues = try context.constant(Conv2D.bias).elements(as: Int32.self) }
        let depth = g.patchSize
        let stride = g.isPointwise ? depth : (depth + 3) / 4 * 4
        // Pointwise: raw input bytes (int8 read as signed). im2col: encoded bytes, read as unsigned.
        let signedRows = g.isPointwise && encoding.isSigned
        let activationZeroPoint = g.isPointwise ? encoding.zeroPointValue : Int32(encoding.zeroPoint)
        patchFlip = !g.isPointwise && encoding.isSigned ? 0x80 : 0
        patchStride = stride
        gemm = IntegerGEMM(columns: channels, depth: stride, activationZeroPoint: activationZeroPoint,
                           signedActivations: signedRows, layout: .preferred(rows: g.outputHeight * g.outputWidth),
                           weightBytes: weights, rowLength: depth, encoding: filter,
                           bias: { n in biasValues?[n] ?? 0 })
        geometry = g
        input = context.node.inputs[Conv2D.input]
        output = context.node.outputs[Conv2D.output]
        // Whole 16-row tiles where the product takes them (see `IntegerGEMM`).
        rowsPerBlock = max(16, min(g.outputHeight * g.outputWidth, (1 << 16) / max(stride, 1)) / 16 * 16)
        // Each worker's scratch: its im2col patches (unless the input is the patch matrix), then
        // what the product needs for itself.
        // (im2col may write 16 bytes past the last patch: see `copyShortSpan`.)
        patchBytes = g.isPointwise ? 0 : (rowsPerBlock * stride + 16 + 63) / 64 * 64
        context.requestWorkerScratch(bytes: patchBytes + gemm.scratchBytes)
        context.markPacked(Conv2D.filter)
        if quantization.hasBias { context.markPacked(Conv2D.bias) }
    }

    var outputCount: Int { geometry.batches * geometry.outputHeight * geometry.outputWidth * geometry.outputChannels }

    func eval(_ memory: TensorMemory) {
        memory.parallelize(self, grid: memory.grid { grid(memory) })
    }

    /// Multiply-adds of the whole convolution.
    private var work: Int {
        let g = geometry
        return g.batches * g.outputHeight * g.outputWidth * g.outputChannels * g.patchSize
    }

    /// The tiles the threads take: blocks of
    /// output pixels (GEMM rows; whole 16-row tiles when the blocks are large, else 4-row ones,
    /// so small late layers still split evenly) down, and, for weights larger than
    /// `cachedWeightBytes`, blocks of whole GEMM panels of output channels across, cut so that
    /// the threads read the least (`TileGrid.cheapest`): each thread then reads only its part
    /// of the weights instead of all of them. Rows the product copies once per column part
    /// (im2col patches, int8 rows sign-flipped for `vpdpbusd`) count as read twice.
    private func grid(_ memory: TensorMemory) -> TileGrid {
        grid(tasks: memory.taskCount(work: work), threadCount: memory.threadCount)
    }

    /// The grid for at most `tasks` tiles on `threadCount` threads.
    func grid(tasks: Int, threadCount: Int) -> TileGrid {
        let g = geometry
        let rows = g.batches * g.outputHeight * g.outputWidth
        let rowGranularity = rows >= 64 * threadCount ? 16 : 4
        guard tasks > 1 else { return TileGrid(rows: rows, columns: g.outputChannels) }
        let weightBytes = gemm.panelCount * gemm.panelBytes
        guard weightBytes > Self.cachedWeightBytes else {
            // Every row part reads all the weights again (from its core's L2): no more parts
            // than give each `minimumPartRows`, but one per thread at least, and a whole number
            // per thread (3 parts on 2 threads would leave one thread two of them while the other
            // waits).
            let parts = max(1, min(tasks, rows / Self.minimumPartRows) / threadCount) * threadCount
            return TileGrid(rows: WorkPartition(count: rows, granularity: rowGranularity, maxParts: parts),
                            columns: WorkPartition(count: g.outputChannels, granularity: g.outputChannels, maxParts: 1))
        }
        // Four panels (64 channels) are the product's widest tiles; narrower cuts only where
        // the channels are few.
        let columnGranularity = IntegerGEMM.panelWidth * (g.outputChannels >= 512 ? 4 : 1)
        let copiesRows = !readsInputDirectly || gemm.scratchBytes > 0
        let patchBytes = rows * patchStride * (copiesRows ? 2 : 1)
        return TileGrid.cheapest(tasks: tasks, threads: threadCount, rows: rows, rowGranularity: rowGranularity,
                                 columns: g.outputChannels, columnGranularity: columnGranularity,
                                 bytesPerRowPart: weightBytes, bytesPerColumnPart: patchBytes)
    }

    /// Packed weights up to this size are split by pixels only: every thread reading them all
    /// costs little while they stay in its L2, where channel parts would each repeat the sign
    /// flip of their rows and narrow the product's tiles.
    static let cachedWeightBytes = 1 << 20

    /// Rows (output pixels) per part at least, when the threads split pixels only: eight of
    /// the product's 4-row tiles per pass over the weights, so that a small layer is not cut into
    /// parts that each read all of its weights again.
    static let minimumPartRows = 32

    /// Output pixels `rows` counted over all batches, output channels `columns`.
    func evalTile(rows: Range<Int>, columns: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        convolve(rows: rows, columns: columns, worker: worker, memory: memory)
    }

    /// Output pixels (GEMM rows) `part`, counted over all batches, channels `columns` (whole
    /// GEMM panels).
    func convolve(rows part: Range<Int>, columns: Range<Int>, worker: Int, memory: TensorMemory) {
        let g = geometry
        let pixels = g.outputHeight * g.outputWidth
        let channels = g.outputChannels
        let source = memory.input(input, as: UInt8.self)
        let destination = memory.output(output, as: UInt8.self)
        let patches = memory.scratch(as: UInt8.self, worker: worker)
        let gemmScratch = UnsafeMutableRawPointer(patches + patchBytes)
        // The fused table on the block of rows just computed, the tile's channels.
        func applyTable(rows: Range<Int>) {
            let width = min(columns.upperBound, channels) - columns.lowerBound
            outputTable?.apply(destination + rows.lowerBound * channels + columns.lowerBound, rows: rows.count, width: width,
                               stride: channels)
        }
        if readsInputDirectly {
            gemm.multiply(source + part.lowerBound * g.inputChannels, rows: part.count, rowStride: g.inputChannels,
                          columns: columns, scratch: gemmScratch,
                          into: RequantizedGEMMOutput(base: destination + part.lowerBound * channels, rowStride: channels,
                                                      columns: channels, stage: requantization))
            applyTable(rows: part)
            return
        }
        var row = part.lowerBound
        while row < part.upperBound {
            // A block stays inside one image and holds at most `rowsPerBlock` patches.
            let n = row / pixels, start = row % pixels
            let count = min(rowsPerBlock, pixels - start, part.upperBound - row)
            im2col(source + n * g.inputHeight * g.inputWidth * g.inputChannels, rows: start ..< start + count, into: patches)
            gemm.multiply(patches, rows: count, rowStride: patchStride, columns: columns, scratch: gemmScratch,
                          into: RequantizedGEMMOutput(base: destination + row * channels,
                                                      rowStride: channels, columns: channels, stage: requantization))
            applyTable(rows: row ..< row + count)
            row += count
        }
    }

    /// Lays out the receptive fields of output pixels `rows` (row-major over the output image)
    /// as encoded input bytes, one patch of `patchStride` bytes per row; taps in the padding (and
    /// the bytes past `patchSize`) get the encoded input zero point.
    private func im2col(_ image: UnsafePointer<UInt8>, rows: Range<Int>, into patches: UnsafeMutablePointer<UInt8>) {
        let g = geometry
        let c = g.inputChannels
        // One filter row covers `span` bytes; without dilation they are contiguous in the input.
        let span = g.filterWidth * c
        let extra = patchStride - g.patchSize
        let imageBytes = g.inputHeight * g.inputWidth * c
        // Filter rows of at most 16 bytes (RGB inputs), undilated: the output pixels of a row
        // whose windows lie inside the image are copied in a loop of their own, one 16-byte load
        // and store per filter row (the bytes past the row are overwritten by what follows): in
        // the general loop the geometry does not fit the registers.
        let undilated = g.dilationHeight == 1 && g.dilationWidth == 1
        let runs = span <= 16 && undilated
        // Longer filter rows, undilated, likewise, each through `copyLongSpan`: whole vectors
        // where the generic per-pixel copy would go a byte range at a time through masks.
        let longRuns = span > 16 && undilated
        let padding = paddingWord
        var dst = patches
        // The pixel's coordinates advance with it, with no division per pixel.
        var oy = rows.lowerBound / g.outputWidth, ox = rows.lowerBound % g.outputWidth
        var remaining = rows.count
        while remaining > 0 {
            let y0 = oy * g.strideHeight - g.padTop, x0 = ox * g.strideWidth - g.padLeft
            // The pixels from this one on whose windows lie inside the image (none when this
            // one's does not) and, for rows of at most 16 bytes, whose last 16-byte read ends
            // inside it.
            var run = 0
            if (runs || longRuns) && y0 >= 0 && y0 + g.filterHeight <= g.inputHeight && x0 >= 0 && x0 + g.filterWidth <= g.inputWidth {
                run = min(remaining, g.outputWidth - ox, (g.inputWidth - g.filterWidth - x0) / g.strideWidth + 1)
                if runs {
                    let lastRead = (y0 + g.filterHeight - 1) * g.inputWidth * c + x0 * c + 16
                    run = lastRead <= imageBytes ? min(run, (imageBytes - lastRead) / (g.strideWidth * c) + 1) : 0
                }
            }
            if run > 0 {
                let rowBytes = g.inputWidth * c, step = g.strideWidth * c
                var source = image + (y0 * g.inputWidth + x0) * c
                @inline(__always)
                func copyRun(filterRows: Int, long: Bool) {
                    for _ in 0 ..< run {
                        var s = source, d = dst
                        for _ in 0 ..< filterRows {
                            if long { copyLongSpan(s, to: d, count: span) } else { copyShortSpan(s, to: d) }
                            s += rowBytes
                            d += span
                        }
                        if extra > 0 { fillPadding(d, with: padding) }
                        source += step
                        dst += patchStride
                    }
                }
                // The networks' stem has three filter rows: a constant count, which the compiler unrolls.
                if longRuns {
                    copyRun(filterRows: g.filterHeight, long: true)
                } else if g.filterHeight == 3 {
                    copyRun(filterRows: 3, long: false)
                } else {
                    copyRun(filterRows: g.filterHeight, long: false)
                }
            } else {
                run = 1
                im2colPixel(image, y0: y0, x0: x0, into: dst)
                dst += patchStride
            }
            remaining -= run
            ox += run
            if ox == g.outputWidth { ox = 0; oy += 1 }
        }
    }

    /// The patch of the output pixel whose window starts at input row `y0`, column `x0` (either
    /// may lie in the padding), at `patch`.
    private func im2colPixel(_ image: UnsafePointer<UInt8>, y0: Int, x0: Int, into patch: UnsafeMutablePointer<UInt8>) {
        let g = geometry
        let c = g.inputChannels
        let zeroPoint = zeroPointByte ^ patchFlip
        let span = g.filterWidth * c
        var dst = patch
        let rowInside = g.dilationWidth == 1 && x0 >= 0 && x0 + g.filterWidth <= g.inputWidth
        for ky in 0 ..< g.filterHeight {
            let iy = y0 + ky * g.dilationHeight
            if iy < 0 || iy >= g.inputHeight {
                dst.update(repeating: zeroPoint, count: span)
            } else if rowInside {
                copy(image + (iy * g.inputWidth + x0) * c, to: dst, count: span)
            } else {
                for kx in 0 ..< g.filterWidth {
                    let ix = x0 + kx * g.dilationWidth
                    if ix >= 0, ix < g.inputWidth {
                        copy(image + (iy * g.inputWidth + ix) * c, to: dst + kx * c, count: c)
                    } else {
                        (dst + kx * c).update(repeating: zeroPoint, count: c)
                    }
                }
            }
            dst += span
        }
        if patchStride > g.patchSize { fillPadding(dst, with: paddingWord) }
    }

    /// The 1–3 bytes that round a patch up to `patchStride` (a multiple of 4), at `end`: zero-point
    /// bytes, as one 4-byte store. The byte or bytes past them belong to the next patch, written
    /// after this one, or to the 16 bytes the scratch keeps after the last patch.
    @inline(always)
    private func fillPadding(_ end: UnsafeMutablePointer<UInt8>, with word: UInt32) {
        UnsafeMutableRawPointer(end).storeBytes(of: word, as: UInt32.self)
    }

    /// Four encoded zero-point bytes, the word `fillPadding` stores.
    private var paddingWord: UInt32 { UInt32(zeroPointByte ^ patchFlip) &* 0x0101_0101 }

    /// The 16 input bytes at `source`, `xor`ed with `patchFlip`, stored at `destination`: one
    /// unaligned load and store for a filter row of up to 16 bytes, whose copy through masks
    /// (`copy`) took half the time of the first convolution of an RGB image. The caller makes
    /// sure the 16 bytes lie in the input and the patches (which have 16 bytes to spare).
    @inline(always)
    private func copyShortSpan(_ source: UnsafePointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>) {
        let bytes = UnsafeRawPointer(source).loadUnaligned(as: SIMD16<UInt8>.self)
        UnsafeMutableRawPointer(destination).storeBytes(of: bytes ^ SIMD16(repeating: patchFlip), as: SIMD16<UInt8>.self)
    }

    /// `count` (17 or more) input bytes at `source`, `xor`ed with `patchFlip`, stored at
    /// `destination`: 32 at a time (two 16-byte copies below 32), the last copy ending at
    /// `count` and overlapping the one before it, which stores the same bytes there. Nothing
    /// outside the `count` bytes is read or written.
    @inline(always)
    private func copyLongSpan(_ source: UnsafePointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>, count: Int) {
        if count < 32 {
            copyShortSpan(source, to: destination)
            copyShortSpan(source + count - 16, to: destination + count - 16)
            return
        }
        // As four 64-bit lanes: an `xor` of `SIMD32<UInt8>` compiles to a loop over its bytes.
        let flip = SIMD4(repeating: UInt64(patchFlip) &* 0x0101_0101_0101_0101)
        @inline(always)
        func copy32(_ k: Int) {
            let bytes = UnsafeRawPointer(source + k).loadUnaligned(as: SIMD4<UInt64>.self)
            UnsafeMutableRawPointer(destination + k).storeBytes(of: bytes ^ flip, as: SIMD4<UInt64>.self)
        }
        var k = 0
        while k + 32 < count {
            copy32(k)
            k += 32
        }
        copy32(count - 32)
    }

    /// `count` input bytes, `xor`ed with `patchFlip`: 64 at a time by masked loads and stores
    /// on AVX-512 (spans of a few bytes are the common case: `memmove` calls cost most of the
    /// first convolution of an RGB image); elsewhere a byte loop, which LLVM vectorises.
    @inline(always)
    private func copy(_ source: UnsafePointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>, count: Int) {
        #if SWIFTLITE_AVX512
        let flip = SIMD16<Int32>(repeating: Int32(bitPattern: UInt32(patchFlip) &* 0x0101_0101))
        var k = 0
        while k < count {
            let n = min(64, count - k)
            swiftlite_store_bytes(destination + k, swiftlite_load_bytes(source + k, n) ^ flip, n)
            k += 64
        }
        #else
        for k in 0 ..< count { destination[k] = source[k] ^ patchFlip }
        #endif
    }
}
