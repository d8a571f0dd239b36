/// Float32 convolution as a matrix product `output[pixels × o] = patches[pixels × ky·kx·i] · filterᵀ`,
/// with bias and activation applied as each tile of the output is stored. The patches are read:
///
/// - **pointwise** (1×1, stride 1): the input itself is the matrix;
/// - **in place** (dilation 1 across): for one output row, patch `x` is `filterHeight` runs of
///   `filterWidth · i` adjacent input values starting `strideWidth · i` after patch `x − 1`'s
///   (`FloatGEMM.Runs`); with padding, from a zero-padded copy of the input in scratch, or
///   (where that copy would be the larger) the windows that reach into the padding from their
///   patches, as im2col's (`Padding`);
/// - **im2col** otherwise: patches are copied out a chunk of pixels at a time into scratch.
///
/// Fused with the element-wise operators after it (`followed(by:output:)`), the kernel writes
/// their output instead of its own: each chunk of output rows goes through them once computed
/// (`FloatEpilogue`).
struct Conv2DFloat32: PartitionedKernel, TiledKernel {
    let geometry: Conv2D.Geometry
    let input: Int
    /// The tensor written: the convolution's output, or the last fused operator's.
    private(set) var output: Int
    /// The operators fused after the convolution, if any.
    private(set) var epilogue: FloatEpilogue?
    let weights: FloatGEMM.PackedWeights
    let range: ClosedRange<Float>
    let layout: Layout
    /// Scratch this kernel needs in `eval`.
    let scratchBytes: Int

    enum Layout {
        case pointwise
        /// Windows that reach into the padding taken as `padding` says (none do when nil).
        case inPlace(padding: Padding?)
        /// Output pixels per im2col chunk.
        case im2col(chunkPixels: Int)
    }

    /// How an in-place layout reads the windows that reach into the padding. The two copy
    /// different bytes at every evaluation: the frame the whole image, the patches
    /// `filterHeight · filterWidth` pixels per output pixel on the edges. A stem's few edge pixels
    /// (224 × 224 × 3 in, 112 × 112 out, padded on the right and at the bottom) take the patches;
    /// ResNet's 3 × 3 layers on 14 × 14 × 256, whose edge pixels' patches outweigh the image
    /// almost twice, the frame.
    enum Padding {
        /// The image copied into a `height × width` frame of zeros, shared by the threads, and
        /// every window read from it.
        case frame(height: Int, width: Int)
        /// The pixels of `inside` read from the image, every other one from its patch (the
        /// padding's values zeros) in the worker's scratch.
        case patches(inside: Inside)
    }

    /// The output pixels of one image whose windows lie inside the input: the rows whose
    /// windows' rows all do, the columns whose windows' columns all do.
    struct Inside {
        let rows: Range<Int>
        let columns: Range<Int>

        /// The outputs `0 ..< outputs` whose windows of `span` inputs, `stride` apart from
        /// `padding` before the first, lie inside `0 ..< inputs`.
        static func range(outputs: Int, inputs: Int, span: Int, stride: Int, padding: Int) -> Range<Int> {
            let first = min(outputs, (padding + stride - 1) / stride)
            let reach = inputs - span + padding
            let end = reach < 0 ? 0 : min(outputs, reach / stride + 1)
            return first ..< max(first, end)
        }
    }

    init(_ context: inout PrepareContext, geometry g: Conv2D.Geometry, activation: FusedActivation) throws(ModelError) {
        try context.expect(try context.input(Conv2D.filter), is: .float32, role: "filter")
        try context.expect(try context.output(Conv2D.output), is: .float32, role: "output")
        var biasData: UnsafeBufferPointer<Float>?
        if let biasTensor = context.optionalInput(Conv2D.bias) {
            try context.expect(biasTensor, is: .float32, role: "bias")
            biasData = try context.constant(Conv2D.bias).elements(as: Float.self)
        }
        self.init(geometry: g, filter: try context.constant(Conv2D.filter).elements(as: Float.self), bias: biasData,
                  range: try context.floatActivationRange(activation),
                  input: context.node.inputs[Conv2D.input], output: context.node.outputs[Conv2D.output])
        if sharesScratch {
            context.requestScratch(bytes: scratchBytes)
        } else {
            context.requestWorkerScratch(bytes: scratchBytes)
        }
        context.markPacked(Conv2D.filter)
        if biasData != nil { context.markPacked(Conv2D.bias) }
    }

    /// A kernel on the given constants; tests leave it unbound to tensors and call `convolve`
    /// (and may choose the padding's frame, `true`, or patches, `false`, over the cheaper one:
    /// either reads the windows in place wherever they are runs of the input, even where its rows
    /// would waste tiles).
    init(geometry g: Conv2D.Geometry, filter: UnsafeBufferPointer<Float>, bias: UnsafeBufferPointer<Float>?,
         range: ClosedRange<Float>, input: Int = -1, output: Int = -1, framesPadding: Bool? = nil) {
        geometry = g
        self.input = input
        self.output = output
        weights = FloatGEMM.PackedWeights(weights: filter, bias: bias, n: g.outputChannels, k: g.patchSize)
        self.range = range
        let floatSize = MemoryLayout<Float>.stride
        if g.isPointwise {
            layout = .pointwise
            scratchBytes = 0
        } else if framesPadding == nil ? !Self.copiesPatches(g) : Self.windowsAreRuns(g) {
            let inside = Inside(rows: Inside.range(outputs: g.outputHeight, inputs: g.inputHeight,
                                                   span: (g.filterHeight - 1) * g.dilationHeight + 1, stride: g.strideHeight,
                                                   padding: g.padTop),
                                columns: Inside.range(outputs: g.outputWidth, inputs: g.inputWidth, span: g.filterWidth,
                                                      stride: g.strideWidth, padding: g.padLeft))
            // Input pixels the windows reach, padding included: the frame.
            let height = max(g.padTop + g.inputHeight, (g.outputHeight - 1) * g.strideHeight + (g.filterHeight - 1) * g.dilationHeight + 1)
            let width = max(g.padLeft + g.inputWidth, (g.outputWidth - 1) * g.strideWidth + g.filterWidth)
            let edgePixels = g.outputHeight * g.outputWidth - inside.rows.count * inside.columns.count
            if edgePixels == 0 {
                layout = .inPlace(padding: nil)
                scratchBytes = 0
            } else if framesPadding ?? (height * width * g.inputChannels <= edgePixels * g.patchSize) {
                layout = .inPlace(padding: .frame(height: height, width: width))
                scratchBytes = height * width * g.inputChannels * floatSize
            } else {
                // The patches of one output row, or of one column's edge pixels in as many rows.
                layout = .inPlace(padding: .patches(inside: inside))
                scratchBytes = g.outputWidth * g.patchSize * floatSize
            }
        } else {
            // Every chunk is a product that reads all the weights again: a chunk's patches take
            // 64 KiB, or up to a quarter of the weights' bytes when those are larger (at most
            // 512 KiB), so that deep weights are read once for many pixels, not once per tile.
            let chunkBytes = min(512 * 1024, max(64 * 1024, g.patchSize * g.outputChannels * floatSize / 4))
            let pixels = max(FloatGEMM.tileRows, chunkBytes / (g.patchSize * floatSize) / FloatGEMM.tileRows * FloatGEMM.tileRows)
            layout = .im2col(chunkPixels: pixels)
            scratchBytes = min(pixels, g.outputHeight * g.outputWidth) * g.patchSize * floatSize
        }
    }

    /// This convolution followed by the operators of `epilogue`, writing `output` (theirs).
    func followed(by epilogue: FloatEpilogue, output: Int) -> Conv2DFloat32 {
        var fused = self
        fused.epilogue = epilogue
        fused.output = output
        return fused
    }

    /// Whether `scratchBytes` is one area shared by the threads (the padding's frame) rather than
    /// one per worker.
    var sharesScratch: Bool {
        if case .inPlace(padding: .frame) = layout { return true }
        return false
    }

    func eval(_ memory: TensorMemory) {
        convolve(memory.input(input, as: Float.self), memory.output(output, as: Float.self), memory: memory)
    }

    /// All batches; `scratch` holds `scratchBytes` (one thread). Without the epilogue, which reads
    /// tensors of a session.
    func convolve(_ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, scratch: UnsafeMutablePointer<Float>) {
        convolve(source, out, rows: 0 ..< geometry.batches * geometry.outputHeight * geometry.outputWidth,
                 columns: 0 ..< geometry.outputChannels, scratch: scratch, prepared: false, epilogue: nil)
    }

    /// All batches, the output split across the session's threads into a grid of tiles: whole rows
    /// of the output image (in place) or blocks of 7 pixels (one micro-tile) down, blocks of output
    /// channels across. Channels are split when the weights outweigh the input rows (the small
    /// late layers: 7 × 7 pixels, 1152 channels), so that each thread reads only its part of the
    /// weights instead of all of them.
    private func convolve(_ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, memory: TensorMemory) {
        let g = geometry
        let pixels = g.batches * g.outputHeight * g.outputWidth
        switch layout {
        case .inPlace(padding: .frame(let height, let width)) where g.batches == 1:
            // The padded copy is shared by every thread: its rows first, then the tiles.
            memory.parallelize(self, step: Self.padding, count: height, work: height * width * g.inputChannels)
            memory.parallelize(self, step: Self.paddedRows, grid: memory.grid { grid(memory, step: Self.paddedRows) })
        case .inPlace(padding: .frame):
            convolve(source, out, rows: 0 ..< pixels, columns: 0 ..< g.outputChannels, scratch: memory.scratch(as: Float.self), prepared: false,
                     epilogue: epilogue?.bound(memory: memory))
        case .inPlace:
            memory.parallelize(self, step: Self.imageRows, grid: memory.grid { grid(memory, step: Self.imageRows) })
        case .pointwise, .im2col:
            memory.parallelize(self, step: Self.pixelBlocks, grid: memory.grid { grid(memory, step: Self.pixelBlocks) })
        }
    }

    /// The parallel steps: the padded frame's rows, tiles of the one image from that frame, tiles
    /// of the input read in place (over all batches; with patches), tiles of pixel blocks.
    private static let padding = 0, paddedRows = 1, imageRows = 2, pixelBlocks = 3

    /// The tiles of step `step`: the cheapest split for the reads (`TileGrid.cheapest`). Under
    /// im2col each part of the channels copies its patches again, which deep weights (ResNet's
    /// last 3 × 3 layers: 9.4 MB against 0.9 MB of patches) more than pay for.
    private func grid(_ memory: TensorMemory, step: Int) -> TileGrid {
        let g = geometry
        let pixels = g.batches * g.outputHeight * g.outputWidth
        let tasks = memory.taskCount(work: pixels * g.outputChannels * g.patchSize)
        let floatSize = MemoryLayout<Float>.stride
        let (rows, rowGranularity) = step == Self.pixelBlocks ? (pixels, FloatGEMM.tileRows) : (g.batches * g.outputHeight, 1)
        // A part of the rows reads all its columns' weights; a part of the columns reads all its
        // rows' patches, and under im2col copies them first (written, then read).
        let patchPasses = if case .im2col = layout { 2 } else { 1 }
        return TileGrid.cheapest(tasks: tasks, threads: memory.threadCount, rows: rows, rowGranularity: rowGranularity,
                                 columns: g.outputChannels, columnGranularity: FloatGEMM.columnGranularity,
                                 bytesPerRowPart: g.outputChannels * g.patchSize * floatSize,
                                 bytesPerColumnPart: patchPasses * pixels * g.patchSize * floatSize)
    }

    /// Rows `units` of the padded frame (step `padding`).
    func evalPart(_ units: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        padFrame(memory.input(input, as: Float.self), into: memory.scratch(as: Float.self), rows: units)
    }

    /// Tile `rows` × `columns` of a tile step: output rows (in place) or pixels (pixel blocks),
    /// output channels.
    func evalTile(rows: Range<Int>, columns: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let g = geometry
        let source = memory.input(input, as: Float.self), out = memory.output(output, as: Float.self)
        let epilogue = epilogue?.bound(memory: memory)
        switch step {
        case Self.paddedRows, Self.imageRows:
            // The padded frame is the threads' shared scratch; patches are each worker's own.
            let framed = step == Self.paddedRows
            convolve(source, out, rows: rows.lowerBound * g.outputWidth ..< rows.upperBound * g.outputWidth, columns: columns,
                     scratch: framed ? memory.scratch(as: Float.self) : memory.scratch(as: Float.self, worker: worker), prepared: framed,
                     epilogue: epilogue)
        default:
            convolve(source, out, rows: rows, columns: columns, scratch: memory.scratch(as: Float.self, worker: worker), prepared: false,
                     epilogue: epilogue)
        }
    }

    /// Output pixels `rows` (counted over all batches; whole output rows for the in-place layout),
    /// output channels `columns` (bounds at multiples of `FloatGEMM.columnGranularity`); `scratch`
    /// holds `scratchBytes`. `prepared`: the in-place layout's padded frame of the (single) image
    /// is already in `scratch`. `epilogue`: bound for `C` at `out`.
    private func convolve(_ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, rows: Range<Int>, columns: Range<Int>,
                          scratch: UnsafeMutablePointer<Float>, prepared: Bool, epilogue: FloatEpilogue.Bound?) {
        let g = geometry
        let pixels = g.outputHeight * g.outputWidth
        let c = g.inputChannels, n = g.outputChannels
        switch layout {
        case .pointwise:
            FloatGEMM.multiply(m: rows.count, a: source + rows.lowerBound * c, lda: c, weights: weights, columns: columns,
                               range: range, c: out + rows.lowerBound * n, ldc: n, epilogue: epilogue?.advanced(by: rows.lowerBound * n))
        case .inPlace:
            // The rows of one image at a time, from its padded frame where the layout pads.
            var row = rows.lowerBound / g.outputWidth
            let end = rows.upperBound / g.outputWidth
            while row < end {
                let b = row / g.outputHeight, oy = row % g.outputHeight, count = min(end - row, g.outputHeight - oy)
                var image = source + b * g.inputHeight * g.inputWidth * c
                if frameHeight > 0 {
                    if !prepared { padFrame(image, into: scratch, rows: 0 ..< frameHeight) }
                    image = UnsafePointer(scratch)
                }
                let first = (b * pixels + oy * g.outputWidth) * n
                outputRows(image, rows: oy ..< oy + count, columns: columns, c: out + first, ldc: n, patches: scratch,
                           epilogue: epilogue?.advanced(by: first))
                row += count
            }
        case .im2col(let chunkPixels):
            var first = rows.lowerBound
            while first < rows.upperBound {
                // A chunk stays inside one image.
                let b = first / pixels, start = first % pixels
                let count = FloatGEMM.nextChunk(remaining: min(pixels - start, rows.upperBound - first), limit: chunkPixels)
                im2col(source + b * g.inputHeight * g.inputWidth * c, pixels: start ..< start + count, into: scratch)
                FloatGEMM.multiply(m: count, a: scratch, lda: g.patchSize, weights: weights, columns: columns, range: range,
                                   c: out + first * n, ldc: n, epilogue: epilogue?.advanced(by: first * n))
                first += count
            }
        }
    }

    /// Whether `outputRows` computes this convolution's rows: the pointwise layout, or in place
    /// (on one image where it reads its padded frame, `padFrame`).
    var computesRows: Bool {
        switch layout {
        case .pointwise, .inPlace(padding: nil), .inPlace(padding: .patches): true
        case .inPlace(padding: .frame): geometry.batches == 1
        case .im2col: false
        }
    }

    /// Bytes of patches `outputRows` needs (0 where it reads no patches).
    var patchBytes: Int {
        if case .inPlace(padding: .patches) = layout { return scratchBytes }
        return 0
    }

    /// Output rows `rows` of one image, channels `columns` (bounds at multiples of
    /// `FloatGEMM.columnGranularity`), to `c`: pixel `x` of row `rows.lowerBound + r` at
    /// `c + (r · outputWidth + x) · ldc` — the same sums as `convolve` (`computesRows` layouts
    /// only). `image` is the image itself, or its frame (`padFrame`) where the layout pads so;
    /// `patches` holds `patchBytes`. `epilogue`: bound for `C` at `c` (none from the fused
    /// depthwise kernels, which take only convolutions without one).
    ///
    /// With patches, each row's inside pixels are one product on the image; a row whose windows
    /// reach above or below the input, one product on its patches; and the pixels of each edge
    /// column in the other rows, one product on their patches, rows `outputWidth · ldc` apart in
    /// `C`. A patch holds the values the frame would give the runs, in the same order, so every
    /// sum is the same bias and products in the same order, whichever product and tile computes it.
    func outputRows(_ image: UnsafePointer<Float>, rows: Range<Int>, columns: Range<Int>, c: UnsafeMutablePointer<Float>, ldc: Int,
                    patches: UnsafeMutablePointer<Float>? = nil, epilogue: FloatEpilogue.Bound? = nil) {
        let g = geometry
        let channels = g.inputChannels, outputWidth = g.outputWidth
        switch layout {
        case .pointwise:
            FloatGEMM.multiply(m: rows.count * outputWidth, a: image + rows.lowerBound * g.inputWidth * channels, lda: channels,
                               weights: weights, columns: columns, range: range, c: c, ldc: ldc, epilogue: epilogue)
        case .inPlace(padding: .patches(let inside)):
            let runs = FloatGEMM.Runs(count: g.filterHeight, length: g.filterWidth * channels, stride: g.dilationHeight * g.inputWidth * channels)
            let patches = patches!
            for oy in rows {
                let first = (oy - rows.lowerBound) * outputWidth * ldc
                if inside.rows.contains(oy) {
                    guard !inside.columns.isEmpty else { continue }
                    let start = first + inside.columns.lowerBound * ldc
                    let origin = (oy * g.strideHeight - g.padTop) * g.inputWidth + inside.columns.lowerBound * g.strideWidth - g.padLeft
                    FloatGEMM.multiply(m: inside.columns.count, a: image + origin * channels, lda: g.strideWidth * channels,
                                       runs: runs, weights: weights, columns: columns, range: range,
                                       c: c + start, ldc: ldc, epilogue: epilogue?.advanced(by: start))
                } else {
                    for ox in 0 ..< outputWidth { patch(image, row: oy, column: ox, into: patches + ox * g.patchSize) }
                    FloatGEMM.multiply(m: outputWidth, a: patches, lda: g.patchSize, weights: weights, columns: columns, range: range,
                                       c: c + first, ldc: ldc, epilogue: epilogue?.advanced(by: first))
                }
            }
            let middle = rows.clamped(to: inside.rows)
            guard !middle.isEmpty else { return }
            // Each edge column down the inside rows, up to `outputWidth` rows (the scratch) per product.
            func edgeColumn(_ ox: Int) {
                var y = middle.lowerBound
                while y < middle.upperBound {
                    let count = min(outputWidth, middle.upperBound - y)
                    for r in 0 ..< count { patch(image, row: y + r, column: ox, into: patches + r * g.patchSize) }
                    let start = ((y - rows.lowerBound) * outputWidth + ox) * ldc
                    FloatGEMM.multiply(m: count, a: patches, lda: g.patchSize, weights: weights, columns: columns, range: range,
                                       c: c + start, ldc: outputWidth * ldc, epilogue: epilogue?.advanced(by: start))
                    y += count
                }
            }
            for ox in 0 ..< inside.columns.lowerBound { edgeColumn(ox) }
            for ox in max(inside.columns.lowerBound, inside.columns.upperBound) ..< outputWidth { edgeColumn(ox) }
        case .inPlace(let padding):
            var width = g.inputWidth
            if case .frame(_, let frameWidth) = padding { width = frameWidth }
            let runs = FloatGEMM.Runs(count: g.filterHeight, length: g.filterWidth * channels, stride: g.dilationHeight * width * channels)
            for oy in rows {
                let first = (oy - rows.lowerBound) * outputWidth * ldc
                FloatGEMM.multiply(m: outputWidth, a: image + oy * g.strideHeight * width * channels, lda: g.strideWidth * channels,
                                   runs: runs, weights: weights, columns: columns, range: range,
                                   c: c + first, ldc: ldc, epilogue: epilogue?.advanced(by: first))
            }
        case .im2col:
            preconditionFailure("outputRows needs the pointwise or in-place layout")
        }
    }
}
