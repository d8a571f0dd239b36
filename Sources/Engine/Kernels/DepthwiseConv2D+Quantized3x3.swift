#if SWIFTLITE_AVX512VNNI || SWIFTLITE_AVX2
import CX86Intrinsics
import Microkernels
import SIMDKernels
import SIMDKernelsAVX512

/// Quantized DEPTHWISE_CONV_2D with a 3×3 or a 5×5 filter (AVX-512 VNNI or AVX2), depth
/// multiplier 1, int8 per-channel or uint8 per-tensor: byte-identical to
/// `reference_integer_ops::DepthwiseConvPerChannel` and `reference_ops::DepthwiseConv` (and to
/// `DepthwiseConv2DQuantized`, the generic kernel it is tested against), any stride, dilation
/// and padding.
///
/// One `vpdpbusd` takes a whole filter row: each 32-bit lane holds the three taps of one row
/// of one channel's window as unsigned bytes (the fourth byte's weight is zero), and the
/// filter row as signed bytes. Per output row a worker needs three such *tap rows*, one per
/// filter row: tap row `py` holds, for every output column `ox` and channel `c`, the input
/// bytes at padded row `py`, columns `ox·sw + {0, dw, 2dw}` (zero point where the window leaves
/// the input), int8 encoded `x + 128`, uint8 as they are, block by block of 16 channels
/// (`swiftlite_tap_row_offset`: a block's columns are consecutive vectors, which the row
/// kernels read as one stream per tap row). Output pixel `(oy, ox)` is then three
/// loads and three `vpdpbusd` per sixteen channels, over tap rows `oy·sh + {0, dh, 2dh}`. Each
/// worker builds tap rows into its own ring of `2·dh + 1` rows, so a tap row shared by
/// neighbouring output rows (all three at stride 1) is built once; workers need no barrier.
/// Threads split the rows and the channels (see `grid`).
///
/// A uint8 filter minus its zero point spans −255...255, past a signed byte. Blocks of 16
/// channels whose weights all fit one keep one `vpdpbusd` per tap row; in the others (a few in
/// TF1 models: 17 of 233 blocks in SSD MobileNet v1) each weight `v` is split into
/// `⌊v/2⌋ + ⌈v/2⌉`, two signed bytes, and each tap row takes twice its `vpdpbusd`
/// (`Products.vnniHalves`). That covers every weight but 255 (a filter byte of 255
/// with zero point 0), which leaves the operator to the pairs below or to the generic kernel.
///
/// A 5×5 filter (EfficientNet-Lite's) takes two quads per filter row: taps 0...3, then tap 4 and
/// three zero bytes (zero weights), so two `vpdpbusd` per row; its tap rows hold both quads of
/// each output column, and each worker's ring `4·dh + 1` rows.
///
/// A tap row of a 5×5 filter (and, where the AVX-512 kernels run, of a 3×3 one at a stride
/// above 1) is built through a staging area in the worker's scratch behind its ring: the row's
/// encoded input columns, 16 channels each, then a few shuffles per quad
/// (`SIMDKernels.DepthwiseTapRows`).
///
/// The `x̂₀ · Σ w` term (`x̂₀` the encoded input zero point: `x₀ + 128` for int8, `x₀` for
/// uint8) is folded into the bias at prepare (as the generic kernel does); requantization runs
/// in registers on the sixteen accumulators.
///
/// The VNNI row is Microkernels' `depthwise3x3RowVNNI`, compiled for VNNI apart from the engine,
/// so the portable build runs it too where the machine has VNNI. Without VNNI
/// (`Products.pairs`, in builds whose engine does not target VNNI) each `vpdpbusd` becomes two
/// `vpmaddwd` per `ymm` (`swiftlite_dpbusd_pairs`): the tap quad's even bytes `(t₀, t₂)` and
/// odd bytes `(t₁, 0)`, zero-extended to halfwords, against the filter row as int16 pairs
/// `(w₀, w₂)` and `(w₁, 0)`, which prepare stores as two rows per filter row (every uint8
/// weight fits a halfword); a 5×5 row's second quad `(t₄, 0, 0, 0)` needs only its even bytes
/// (`swiftlite_dpbusd_even`, against `(w₄, 0)`), so three rows of pairs per filter row and six
/// `vpmaddwd` per sixteen channels. Tap rows and results are the same.
/// The AVX2 rows requantize in the one-shift form where it is exact (`applyWide`): on
/// EfficientNet-Lite0 int8 (portable build, VNNI off, one thread) the 3×3 layers took 15–18 %
/// less time with it; the 5×5 layers took the generic kernel before.
struct DepthwiseConv2DTapRows: TiledKernel, AppliesOutputTable {
    let geometry: DepthwiseConv2D.Geometry
    /// The filter's height and width: 3 or 5.
    let filterSize: Int
    /// Tap quads per output column and channel in a tap row: 1 (3×3) or 2 (5×5).
    let quads: Int
    let input: Int
    /// The tensor written: the convolution's output, or that of the table operator fused after
    /// it (`followed(by:)`).
    var output: Int
    /// The fused table operator's table, applied to each output row as it is computed.
    var outputTable: OutputTable?
    /// Channels rounded up to a multiple of 16.
    let paddedChannels: Int
    /// The input zero point as stored (an int8's bit pattern, or a uint8).
    let inputZeroPoint: UInt8
    /// What the tap rows XOR into every input byte to encode it (`ActivationEncoding`): 0x80
    /// for int8 (`x + 128`), 0 for uint8.
    let flip: UInt8
    /// Filter rows as tap quads `(w₀, w₁, w₂, 0)`, `[3, paddedChannels]` 32-bit lanes (5×5:
    /// `(w₀ … w₃)`, `(w₄, 0, 0, 0)`, `[5, 2, paddedChannels]`; halves: the same twice over);
    /// or as int16 pairs `(w₀, w₂)`, `(w₁, 0)`, `[3, 2, paddedChannels]` 32-bit lanes (5×5:
    /// `(w₀, w₂)`, `(w₁, w₃)`, `(w₄, 0)`, `[5, 3, paddedChannels]`).
    let weights: PackedBuffer<UInt32>
    /// `bias − x̂₀ · Σ_taps w`, per padded channel.
    let bias: PackedBuffer<Int32>
    let requantization: ChannelRequantization
    /// Tap rows in each worker's ring.
    let ringRows: Int
    /// The tap-row builders' view of the geometry across (`shape(_:)`).
    let tapRowShape: SIMDKernels.DepthwiseTapRows.Shape
    /// Whether this tier's builder stages the tap rows (`DepthwiseTapRows.form`, chosen at prepare).
    let stagesTapRows: Bool
    /// How the products are taken.
    let products: Products
    /// With `.vnniHalves`, whether each block of 16 channels has its weights split in two
    /// (else the second halves are zero and not computed).
    let splitBlocks: [Bool]

    /// The instructions the products take.
    enum Products {
        /// `vpdpbusd` on signed-byte weight quads.
        case vnni
        /// `vpdpbusd` on signed-byte weights, twice as many in the blocks of 16 channels whose
        /// weights are split into two halves.
        case vnniHalves
        /// `vpmaddwd` on int16 weight pairs (builds whose engine does not target VNNI).
        case pairs
    }

    /// How the kernel would take this operator's products, nil where it does not compute it:
    /// 3×3 or 5×5, multiplier 1, an int8 symmetric filter or a uint8 one on uint8 input;
    /// `filterBytes` decides whether a uint8 filter's weights split into halves.
    static func products(for g: DepthwiseConv2D.Geometry, quantization: ConvolutionQuantization,
                         filterBytes: UnsafeRawBufferPointer) -> Products? {
        guard g.filterHeight == g.filterWidth, g.filterHeight == 3 || g.filterHeight == 5, g.depthMultiplier == 1 else {
            return nil
        }
        #if SWIFTLITE_AVX512VNNI
        let pairs: Products? = nil
        #else
        let pairs: Products? = .pairs
        #endif
        let filter = quantization.filter
        if quantization.encoding.isSigned && filter.isSigned && filter.zeroPoint == 0 {
            return KernelSelection.runsVNNI ? .vnni : pairs
        }
        guard !quantization.encoding.isSigned, !filter.isSigned else { return nil }
        if KernelSelection.runsVNNI && filterBytes.allSatisfy({ filter.value($0) <= 254 }) {
            return .vnniHalves
        }
        return pairs
    }

    init(_ context: inout PrepareContext, geometry g: DepthwiseConv2D.Geometry, quantization: ConvolutionQuantization,
         products: Products) throws(ModelError) {
        let channels = g.outputChannels
        let filterBytes = try context.constant(DepthwiseConv2D.filter).bytes
        var biasValues: UnsafeBufferPointer<Int32>?
        if quantization.hasBias { biasValues = try context.constant(DepthwiseConv2D.bias).elements(as: Int32.self) }
        let padded = (channels + 15) / 16 * 16
        let k = g.filterHeight, quads = (k + 3) / 4
        // As int16 pairs, each filter row: (w₀, w₂), (w₁, w₃) (w₃ = 0 in a 3 × 3 row), then
        // (w₄, 0) in a 5 × 5 one.
        let pairRows = k == 3 ? 2 : 3
        let lanes: Int
        switch products {
        case .vnni: lanes = k * quads * padded
        case .vnniHalves: lanes = 2 * k * quads * padded
        case .pairs: lanes = k * pairRows * padded
        }
        let weights = PackedBuffer<UInt32>(count: lanes, initializedTo: 0)
        let bias = PackedBuffer<Int32>(count: padded, initializedTo: 0)
        let encodedZeroPoint = Int32(quantization.encoding.zeroPoint)
        // Tap `kx` of filter row `ky` of channel `c` minus the filter's zero point (0 past the row's end).
        func weight(_ c: Int, _ ky: Int, _ kx: Int) -> Int32 {
            kx < k ? quantization.filter.value(filterBytes[(ky * k + kx) * channels + c]) : 0
        }
        let splitBlocks = products != .vnniHalves ? [] : (0 ..< padded / 16).map { block in
            (16 * block ..< min(channels, 16 * block + 16)).contains { c in
                (0 ..< k).contains { ky in (0 ..< k).contains { kx in !(-128 ... 127).contains(weight(c, ky, kx)) } }
            }
        }
        for c in 0 ..< channels {
            func tap(_ ky: Int, _ kx: Int) -> Int32 { weight(c, ky, kx) }
            var sum: Int32 = 0
            for ky in 0 ..< k {
                for kx in 0 ..< k { sum &+= tap(ky, kx) }
                switch products {
                case .vnni:
                    for q in 0 ..< quads {
                        var quad: UInt32 = 0
                        for kx in 4 * q ..< 4 * q + 4 { quad |= UInt32(UInt8(truncatingIfNeeded: tap(ky, kx))) << (8 * (kx - 4 * q)) }
                        weights.pointer[(ky * quads + q) * padded + c] = quad
                    }
                case .vnniHalves:
                    // v = ⌊v/2⌋ + ⌈v/2⌉, both in −128...127 for v in −256...254; v + 0 in a
                    // block that is not split. The second halves follow all of the first.
                    for q in 0 ..< quads {
                        var first: UInt32 = 0, second: UInt32 = 0
                        for kx in 4 * q ..< 4 * q + 4 {
                            let v = tap(ky, kx), low = splitBlocks[c / 16] ? v >> 1 : v
                            first |= UInt32(UInt8(truncatingIfNeeded: low)) << (8 * (kx - 4 * q))
                            second |= UInt32(UInt8(truncatingIfNeeded: v - low)) << (8 * (kx - 4 * q))
                        }
                        weights.pointer[(ky * quads + q) * padded + c] = first
                        weights.pointer[((k + ky) * quads + q) * padded + c] = second
                    }
                case .pairs:
                    // Taps `a` and `b` as int16 bit patterns in one 32-bit lane.
                    func pair(_ a: Int, _ b: Int) -> UInt32 {
                        UInt32(UInt16(truncatingIfNeeded: tap(ky, a))) | UInt32(UInt16(truncatingIfNeeded: tap(ky, b))) << 16
                    }
                    let row = weights.pointer + pairRows * ky * padded + c
                    row[0] = pair(0, 2)
                    row[padded] = pair(1, 3)
                    if k == 5 { row[2 * padded] = pair(4, 5) }
                }
            }
            bias.pointer[c] = (biasValues?[c] ?? 0) &- encodedZeroPoint &* sum
        }
        self.weights = weights
        self.bias = bias
        self.products = products
        self.splitBlocks = splitBlocks
        requantization = quantization.requantization
        inputZeroPoint = quantization.encoding.rawZeroPoint
        flip = quantization.encoding.encode(0)
        paddedChannels = padded
        filterSize = k
        self.quads = quads
        ringRows = (k - 1) * g.dilationHeight + 1
        geometry = g
        input = context.node.inputs[DepthwiseConv2D.input]
        output = context.node.outputs[DepthwiseConv2D.output]
        tapRowShape = Self.shape(g)
        stagesTapRows = KernelSelection.runsAVX512
            ? SIMDKernelsAVX512.DepthwiseTapRows.form(taps: k, shape: tapRowShape) == .staged
            : SIMDKernels.DepthwiseTapRows.form(taps: k, shape: tapRowShape) == .staged
        // The ring, then the tap-row builder's staging.
        context.requestWorkerScratch(bytes: ringRows * g.outputWidth * quads * padded * 4
                                         + (stagesTapRows ? SIMDKernels.DepthwiseTapRows.stagingBytes(shape: tapRowShape) : 0))
        context.markPacked(DepthwiseConv2D.filter)
        if quantization.hasBias { context.markPacked(DepthwiseConv2D.bias) }
    }


    var outputCount: Int { geometry.batches * geometry.outputHeight * geometry.outputWidth * geometry.outputChannels }

    func eval(_ memory: TensorMemory) {
        let g = geometry
        let grid = memory.grid { self.grid(memory) }
        for n in 0 ..< g.batches {
            memory.parallelize(self, step: n, grid: grid)
        }
    }

    /// Multiply-adds of one image.
    private var work: Int { geometry.outputHeight * geometry.outputWidth * paddedChannels * filterSize * filterSize }

    /// The tiles of one image: one part of the rows per thread, every channel. The pool keeps a
    /// thread on the same rows from operator to operator, so it reads input in its own cache; a
    /// part of the rows builds the two or three tap rows above its first output row again, so
    /// more row parts than threads cost building (at 7 or 14 rows in 8 parts, most of the work).
    /// More tiles by cutting the channels as well cost the per-tile setup, and a tile taken from
    /// the other thread's rows leaves its output in the other core's cache for the next operator.
    ///
    /// Where the rows do not share out about evenly over the threads (`TileGrid.sharesOutEvenly`;
    /// 7 rows on 2 threads: 3 and 4), the channels alone are cut, in groups of 16 (a thread's
    /// neighbour then writes the other lanes of one cache line per pixel at the one boundary
    /// between them).
    private func grid(_ memory: TensorMemory) -> TileGrid {
        let g = geometry
        let tasks = memory.taskCount(work: work), threads = memory.threadCount
        guard tasks > 1 else { return TileGrid(rows: g.outputHeight, columns: g.outputChannels) }
        let byRows = TileGrid(rows: WorkPartition(count: g.outputHeight, granularity: 1, maxParts: threads),
                              columns: WorkPartition(count: g.outputChannels, granularity: 16, maxParts: 1))
        let byChannels = TileGrid(rows: WorkPartition(count: g.outputHeight, granularity: 1, maxParts: 1),
                                  columns: WorkPartition(count: g.outputChannels, granularity: 16, maxParts: tasks))
        return TileGrid.sharesOutEvenly(byRows.makespan(threads: threads), comparedTo: byChannels.makespan(threads: threads)) ? byRows : byChannels
    }

    /// Output rows `rows`, channels `channels` (bounds at multiples of 16, or `outputChannels`)
    /// of batch `n`, from an empty ring in worker `worker`'s scratch.
    func evalTile(rows: Range<Int>, columns channelRange: Range<Int>, step n: Int, worker: Int, memory: TensorMemory) {
        let g = geometry
        let image = memory.input(input, as: UInt8.self) + n * g.inputHeight * g.inputWidth * g.inputChannels
        let out = memory.output(output, as: UInt8.self) + n * g.outputHeight * g.outputWidth * g.outputChannels
        let ring = memory.scratch(as: UInt32.self, worker: worker)
        let rowLanes = g.outputWidth * quads * paddedChannels
        let staging = UnsafeMutableRawPointer(ring + ringRows * rowLanes)
        // Whole groups of 16 (the last one padded).
        let channels = channelRange.lowerBound ..< min(paddedChannels, (channelRange.upperBound + 15) / 16 * 16)
        // The padded row each ring slot holds (-1: none yet), then the tap rows of the output
        // row. Slots are `py mod ringRows`; the rows of one output row are `dh` apart, so they
        // never share a slot. On the stack (a few slots): `invoke` allocates nothing.
        withUnsafeTemporaryAllocation(of: Int.self, capacity: ringRows + filterSize) { slots in
            let held = UnsafeMutableBufferPointer(rebasing: slots[0 ..< ringRows])
            let taps = UnsafeMutableBufferPointer(rebasing: slots[ringRows...])
            held.initialize(repeating: -1)
            for oy in rows {
                for ky in 0 ..< filterSize {
                    let py = oy * g.strideHeight + ky * g.dilationHeight
                    let slot = py % ringRows
                    if held[slot] != py {
                        buildTapRow(image, paddedRow: py, channels: channels, staging: staging, into: ring + slot * rowLanes)
                        held[slot] = py
                    }
                    taps[ky] = slot * rowLanes
                }
                func row(_ ky: Int) -> UnsafeRawPointer { UnsafeRawPointer(ring + taps[ky]) }
                let outputRow = out + oy * g.outputWidth * g.outputChannels
                convolveRow(filterSize == 3 ? (row(0), row(1), row(2), row(2), row(2)) : (row(0), row(1), row(2), row(3), row(4)),
                            channels: channels, outputRow)
                outputTable?.apply(outputRow + channels.lowerBound, rows: g.outputWidth,
                                   width: min(channels.upperBound, g.outputChannels) - channels.lowerBound, stride: g.outputChannels)
            }
        }
    }

    /// The tap-row builders' view of the geometry across.
    static func shape(_ g: DepthwiseConv2D.Geometry) -> SIMDKernels.DepthwiseTapRows.Shape {
        (inputHeight: g.inputHeight, inputWidth: g.inputWidth, channels: g.inputChannels, outputWidth: g.outputWidth,
         padTop: g.padTop, padLeft: g.padLeft, stride: g.strideWidth, dilation: g.dilationWidth)
    }

    /// Tap row `py` of `channels` (whole groups of 16) into `row`: `SIMDKernelsAVX512`'s builder
    /// where the AVX-512 kernels run, else `SIMDKernels`'.
    private func buildTapRow(_ image: UnsafePointer<UInt8>, paddedRow py: Int, channels range: Range<Int>,
                             staging: UnsafeMutableRawPointer, into row: UnsafeMutablePointer<UInt32>) {
        let shape = tapRowShape
        switch (filterSize, KernelSelection.runsAVX512) {
        case (5, true):
            SIMDKernelsAVX512.DepthwiseTapRows.build5(image, paddedRow: py, channels: range, shape: shape,
                                                     zeroPoint: inputZeroPoint, flip: flip, staging: staging,
                                                     form: stagesTapRows ? .staged : .columns, into: row)
        case (5, false):
            SIMDKernels.DepthwiseTapRows.build5(image, paddedRow: py, channels: range, shape: shape,
                                               zeroPoint: inputZeroPoint, flip: flip, staging: staging,
                                               form: stagesTapRows ? .staged : .columns, into: row)
        case (_, true):
            SIMDKernelsAVX512.DepthwiseTapRows.build3(image, paddedRow: py, channels: range, shape: shape,
                                                     zeroPoint: inputZeroPoint, flip: flip, staging: staging,
                                                     form: stagesTapRows ? .staged : .columns, into: row)
        case (_, false):
            SIMDKernels.DepthwiseTapRows.build3(image, paddedRow: py, channels: range, shape: shape,
                                               zeroPoint: inputZeroPoint, flip: flip, staging: staging,
                                               form: stagesTapRows ? .staged : .columns, into: row)
        }
    }
}
#endif
