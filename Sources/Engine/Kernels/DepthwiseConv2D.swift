/// DEPTHWISE_CONV_2D: each input channel `i` is convolved with its own `depthMultiplier` filters;
/// output channel `o = i · depthMultiplier + m`. Filter shape `[1, kh, kw, outputChannels]`.
enum DepthwiseConv2D {
    static let input = 0, filter = 1, bias = 2, output = 0

    struct Geometry: Sendable {
        var batches, inputHeight, inputWidth, inputChannels: Int
        var outputHeight, outputWidth, outputChannels, depthMultiplier: Int
        var filterHeight, filterWidth: Int
        var strideHeight, strideWidth, dilationHeight, dilationWidth: Int
        var padTop, padLeft: Int
    }

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .depthwiseConv2D(let options) = context.node.options else { throw context.invalid("missing DepthwiseConv2DOptions") }
        try context.expect(inputs: 2 ... 3, outputs: 1)
        let input = try context.input(Self.input), filter = try context.input(Self.filter)
        try context.expect(input, rank: 4, role: "input")
        try context.expect(filter, rank: 4, role: "filter")
        let inputChannels = input.shape[3], outputChannels = filter.shape[3]
        guard filter.shape[0] == 1, inputChannels > 0, outputChannels % inputChannels == 0 else {
            throw context.invalid("filter \(filter.shape) does not fit \(inputChannels) input channels")
        }
        // The options' depth_multiplier is redundant (and unreliable in old files): derive it.
        let multiplier = outputChannels / inputChannels
        let rows = try context.window(options.padding, input: input.shape[1], filter: filter.shape[1],
                                      stride: options.strideHeight, dilation: options.dilationHeight, axis: "height")
        let cols = try context.window(options.padding, input: input.shape[2], filter: filter.shape[2],
                                      stride: options.strideWidth, dilation: options.dilationWidth, axis: "width")
        let geometry = Geometry(
            batches: input.shape[0], inputHeight: input.shape[1], inputWidth: input.shape[2], inputChannels: inputChannels,
            outputHeight: rows.outputSize, outputWidth: cols.outputSize, outputChannels: outputChannels,
            depthMultiplier: multiplier, filterHeight: filter.shape[1], filterWidth: filter.shape[2],
            strideHeight: options.strideHeight, strideWidth: options.strideWidth,
            dilationHeight: options.dilationHeight, dilationWidth: options.dilationWidth,
            padTop: rows.paddingBefore, padLeft: cols.paddingBefore)
        if let bias = context.optionalInput(Self.bias), bias.elementCount != outputChannels {
            throw context.invalid("bias has \(bias.elementCount) elements, expected \(outputChannels)")
        }
        try context.setOutputShape(Self.output, [geometry.batches, geometry.outputHeight, geometry.outputWidth, outputChannels])
        switch input.dataType {
        case .float32 where filter.dataType == .int8:
            return try prepareHybrid(&context, geometry: geometry, activation: options.activation)
        case .float32:
            return try DepthwiseConv2DFloat32(&context, geometry: geometry, activation: options.activation)
        case .uint8, .int8:
            return try prepareQuantized(&context, geometry: geometry, activation: options.activation)
        default:
            throw context.unsupported("input type \(input.dataType)")
        }
    }
}

/// Float32 depthwise convolution, vectorised across channels (16 per `SIMD16<Float>`).
///
/// 3×3 filters with stride 1 or 2 across and no dilation (MobileNet's) take a fast path. Each output
/// row reads three input rows, a row of zeros standing in for any above or below the input. Pixels
/// whose window lies inside the input across go eight at a time at stride 1, four at stride 2
/// (where eight would wait on input loads): per group of 16 channels, the bias and 9 taps are
/// loaded once (`packedTaps`) for 72 (36) FMAs in eight (four) independent chains. One pixel's 9-FMA
/// chain would leave the FMA units waiting on its latency; neighbours at stride 1 also share input
/// column loads. The pixels at the left and right edges read zeros for taps outside the input.
/// The 3×3 micro-kernels are in `DepthwiseConv2D+3x3.swift`. 5×5 windows (EfficientNet-Lite's)
/// go through `convolvePlanes` (`DepthwiseConv2D+Planes.swift`), which copies each group of 16
/// channels into a ring of contiguous rows first. Other shapes (dilated windows) go through
/// `convolveWindows` (`DepthwiseConv2D+Windows.swift`): several pixels
/// at a time, each adding the same products in the same order as `convolvePixel`, which clips one
/// pixel's window. `reference` is the plain scalar definition all are tested against.
struct DepthwiseConv2DFloat32: TiledKernel {
    typealias Lanes = SIMD16<Float>
    typealias Half = SIMD8<Float>
    typealias Quarter = SIMD4<Float>
    typealias Rows = (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>)
    let geometry: DepthwiseConv2D.Geometry
    let input: Int
    /// The tensor written: the convolution's output, or the last fused operator's.
    private(set) var output: Int
    /// The element-wise operators fused after the convolution, if any: each tile goes through
    /// them once computed, while it is in cache.
    private(set) var epilogue: FloatEpilogue?
    /// Filter `[kh·kw, outputChannels]`.
    let weights: PackedBuffer<Float>
    let bias: PackedBuffer<Float>
    let range: ClosedRange<Float>
    /// For 3×3 and 5×5 windows (nil for others): per group of 16 channels, the bias then the
    /// k·k taps, `[groups][1 + k·k][16]`.
    let packedTaps: PackedBuffer<Float>?
    /// One input row of zeros, for the 3×3 fast path's rows and taps outside the input.
    let zeroRow: PackedBuffer<Float>?
    /// For the 3×3 fast path with 1, 2, 4 or 8 channels at stride 1 across (`insideNarrow`): the
    /// bias then the nine taps as 8-lane vectors, lane `l` holding channel `l % channels`.
    let narrowTaps: PackedBuffer<Float>?
    /// The ring of `convolvePlanes`, for the windows it takes.
    let planes: Planes?

    init(_ context: inout PrepareContext, geometry g: DepthwiseConv2D.Geometry, activation: FusedActivation) throws(ModelError) {
        try context.expect(try context.input(DepthwiseConv2D.filter), is: .float32, role: "filter")
        try context.expect(try context.output(DepthwiseConv2D.output), is: .float32, role: "output")
        var biasData: UnsafeBufferPointer<Float>?
        if let b = context.optionalInput(DepthwiseConv2D.bias) {
            try context.expect(b, is: .float32, role: "bias")
            biasData = try context.constant(DepthwiseConv2D.bias).elements(as: Float.self)
            context.markPacked(DepthwiseConv2D.bias)
        }
        self.init(geometry: g, filter: try context.constant(DepthwiseConv2D.filter).elements(as: Float.self), bias: biasData,
                  range: try context.floatActivationRange(activation),
                  input: context.node.inputs[DepthwiseConv2D.input], output: context.node.outputs[DepthwiseConv2D.output])
        context.markPacked(DepthwiseConv2D.filter)
        if g.depthMultiplier > 1 {
            // Input channels are repeated `depthMultiplier` times so the inner loop stays contiguous.
            context.requestScratch(bytes: g.inputHeight * g.inputWidth * g.outputChannels * MemoryLayout<Float>.stride)
        }
        if let planes { context.requestWorkerScratch(bytes: planes.bytes) }
    }

    /// A kernel on the given constants; tests leave it unbound to tensors and call `convolve`.
    init(geometry g: DepthwiseConv2D.Geometry, filter: UnsafeBufferPointer<Float>, bias: UnsafeBufferPointer<Float>?,
         range: ClosedRange<Float>, input: Int = -1, output: Int = -1) {
        geometry = g
        self.input = input
        self.output = output
        weights = PackedBuffer(filter)
        self.bias = bias.map { PackedBuffer($0) } ?? PackedBuffer(count: g.outputChannels, initializedTo: 0)
        self.range = range
        let c = g.outputChannels, groups = c / Lanes.scalarCount
        let window3x3 = g.filterHeight == 3 && g.filterWidth == 3 && g.dilationHeight == 1 && g.dilationWidth == 1
        let narrow = window3x3 && g.strideWidth == 1 && c < Lanes.scalarCount && Half.scalarCount % c == 0
        let fast3x3 = window3x3 && (g.strideWidth == 1 || g.strideWidth == 2) && groups > 0 || narrow
        planes = Planes(g)
        if narrow {
            let taps = PackedBuffer<Float>(count: 10 * Half.scalarCount, initializedTo: 0)
            for lane in 0 ..< Half.scalarCount {
                taps.pointer[lane] = self.bias.pointer[lane % c]
                for tap in 0 ..< 9 { taps.pointer[(tap + 1) * Half.scalarCount + lane] = filter[tap * c + lane % c] }
            }
            narrowTaps = taps
        } else {
            narrowTaps = nil
        }
        guard fast3x3 || planes != nil else {
            packedTaps = nil
            zeroRow = nil
            return
        }
        let taps = g.filterHeight * g.filterWidth
        let packed = PackedBuffer<Float>(count: groups * (taps + 1) * Lanes.scalarCount, initializedTo: 0)
        for channel in 0 ..< groups * Lanes.scalarCount {
            let base = channel / Lanes.scalarCount * (taps + 1) * Lanes.scalarCount + channel % Lanes.scalarCount
            packed.pointer[base] = self.bias.pointer[channel]
            for tap in 0 ..< taps { packed.pointer[base + (tap + 1) * Lanes.scalarCount] = filter[tap * c + channel] }
        }
        packedTaps = packed
        zeroRow = fast3x3 ? PackedBuffer(count: g.inputWidth * c, initializedTo: 0) : nil
    }

    func eval(_ memory: TensorMemory) {
        let g = geometry
        let c = g.outputChannels
        let inputPlane = g.inputHeight * g.inputWidth
        let grid = memory.grid { self.grid(memory) }
        for n in 0 ..< g.batches {
            if g.depthMultiplier > 1 {
                // Input channels repeated, so that the inner loop stays contiguous.
                let source = memory.input(input, as: Float.self) + n * inputPlane * g.inputChannels
                let expanded = memory.scratch(as: Float.self)
                for p in 0 ..< inputPlane {
                    for i in 0 ..< g.inputChannels {
                        let value = source[p * g.inputChannels + i]
                        for m in 0 ..< g.depthMultiplier { expanded[p * c + i * g.depthMultiplier + m] = value }
                    }
                }
            }
            memory.parallelize(self, step: n, grid: grid)
        }
    }

    /// Multiply-adds of one image.
    private var work: Int {
        let g = geometry
        return g.outputHeight * g.outputWidth * g.outputChannels * g.filterHeight * g.filterWidth
    }

    /// The tiles of one image: output rows down and, where the rows do not share out evenly over
    /// the threads (the late layers: 7 rows on 2 threads, hundreds of channels), groups of 16
    /// channels across as well (`TileGrid.balanced`). Through the planes, at most one tile per
    /// thread: a tile of r output rows copies r + 4 input rows into its ring, so the usual 4 tiles
    /// per thread (2 rows each at 14 × 14) would copy 3× the rows of one.
    private func grid(_ memory: TensorMemory) -> TileGrid {
        let g = geometry
        let tasks = memory.taskCount(work: work)
        return TileGrid.balanced(tasks: planes == nil ? tasks : min(tasks, memory.threadCount), threads: memory.threadCount,
                                 rows: g.outputHeight, rowGranularity: 1,
                                 columns: g.outputChannels, columnGranularity: Lanes.scalarCount)
    }

    /// Output rows `rows`, channels `channels` of batch `step`, then the epilogue over them.
    func evalTile(rows: Range<Int>, columns channels: Range<Int>, step n: Int, worker: Int, memory: TensorMemory) {
        let g = geometry
        let source = g.depthMultiplier > 1 ? UnsafePointer(memory.scratch(as: Float.self))
            : memory.input(input, as: Float.self) + n * g.inputHeight * g.inputWidth * g.inputChannels
        let image = n * g.outputHeight * g.outputWidth * g.outputChannels
        convolve(source, memory.output(output, as: Float.self) + image, rows: rows, channels: channels,
                 ring: memory.scratch(as: Float.self, worker: worker))
        if let epilogue {
            let first = image + rows.lowerBound * g.outputWidth * g.outputChannels + channels.lowerBound
            epilogue.bound(memory: memory).apply(memory.output(output, as: Float.self) + first, offset: first, ldc: g.outputChannels,
                                                 rows: rows.count * g.outputWidth, columns: channels.count, channel: channels.lowerBound)
        }
    }

    /// This convolution (VALID, multiplier 1, no epilogue) reading `image`, the tensor a PAD with
    /// zeros across height and width (`padding`) made its input from: the same outputs, the
    /// padding now the convolution's own, without the padded copy (XNNPACK folds such a PAD
    /// too). Each output is the bias, then one FMA per tap inside the image; a tap in the
    /// padding adds a product with +0 or none, which for finite weights is the same sum. Nil for
    /// other shapes.
    func reading(_ image: Int, paddedBy padding: PadKernel.ImagePadding) -> DepthwiseConv2DFloat32? {
        var g = geometry
        guard epilogue == nil, g.depthMultiplier == 1, g.padTop == 0, g.padLeft == 0 else { return nil }
        g.inputHeight -= padding.top + padding.bottom
        g.inputWidth -= padding.left + padding.right
        guard g.inputHeight > 0, g.inputWidth > 0 else { return nil }
        g.padTop = padding.top
        g.padLeft = padding.left
        let taps = g.filterHeight * g.filterWidth * g.outputChannels
        return DepthwiseConv2DFloat32(geometry: g, filter: UnsafeBufferPointer(start: weights.pointer, count: taps),
                                      bias: UnsafeBufferPointer(start: bias.pointer, count: g.outputChannels), range: range,
                                      input: image, output: output)
    }

    /// Bytes of worker scratch `eval` needs (the planes' rings).
    var workerScratchBytes: Int { planes?.bytes ?? 0 }

    /// This convolution followed by the operators of `epilogue`, writing `output` (theirs).
    func followed(by epilogue: FloatEpilogue, output: Int) -> DepthwiseConv2DFloat32 {
        var fused = self
        fused.epilogue = epilogue
        fused.output = output
        return fused
    }

    /// One image: `source` has `outputChannels` channels per pixel (already expanded for depth multipliers).
    func convolve(_ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>) {
        let ring = UnsafeMutablePointer<Float>.allocate(capacity: (planes?.bytes ?? 0) / MemoryLayout<Float>.stride)
        defer { ring.deallocate() }
        convolve(source, out, rows: 0 ..< geometry.outputHeight, channels: 0 ..< geometry.outputChannels, ring: ring)
    }

    /// Output rows `rows`, channels `channels` (bounds at multiples of 16, or `outputChannels`) of
    /// one image; `ring` has `planes.bytes` for `convolvePlanes`.
    func convolve(_ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, rows outputRows: Range<Int>, channels: Range<Int>,
                  ring: UnsafeMutablePointer<Float>) {
        if planes != nil {
            convolvePlanes(source, out, rows: outputRows, channels: channels, ring: ring)
            return
        }
        guard hasFast3x3 else {
            convolveWindows(source, out, rows: outputRows, channels: channels)
            return
        }
        let rowElements = geometry.inputWidth * geometry.outputChannels
        convolve3x3(out, rows: outputRows, channels: channels) { source + $0 * rowElements }
    }

    /// The shape takes the 3×3 fast path (`convolve3x3`).
    var hasFast3x3: Bool { zeroRow != nil }

    /// Whether the channels end 8 or more past the last whole group of 16: those 8 go in
    /// half-width vectors (`insideTail8`, `tailChannels`, `convolvePixel`).
    var hasTail8: Bool { geometry.outputChannels % Lanes.scalarCount >= Half.scalarCount }

    /// The 3×3 fast path (`hasFast3x3`) for output rows `rows`, channels `channels`, with input row
    /// `iy` (`0 ..< inputHeight`; `outputChannels` values per pixel) at `inputRow(iy)`: the image,
    /// or a ring of rows (`PointwiseDepthwiseFloat32`). Each output row asks for its three rows.
    /// Output row `oy` goes `oy − firstRow` rows past `out` (a band buffer starts at its first row).
    @inline(__always)
    func convolve3x3(_ out: UnsafeMutablePointer<Float>, rows outputRows: Range<Int>, channels: Range<Int>, firstRow: Int = 0,
                     inputRow: (Int) -> UnsafePointer<Float>) {
        let g = geometry
        let c = g.outputChannels
        // Output columns whose three input columns are all inside the input.
        let firstInside = min(g.outputWidth, (g.padLeft + g.strideWidth - 1) / g.strideWidth)
        let lastInside = g.inputWidth - 3 + g.padLeft < 0 ? 0 : min(g.outputWidth, (g.inputWidth - 3 + g.padLeft) / g.strideWidth + 1)
        let zeros = UnsafePointer(zeroRow!.pointer)
        let groups = (min(channels.upperBound, c - c % Lanes.scalarCount) - channels.lowerBound) / Lanes.scalarCount
        let hasTail = c % Lanes.scalarCount != 0 && channels.upperBound == c
        for oy in outputRows {
            func row(_ ky: Int) -> UnsafePointer<Float> {
                let iy = oy * g.strideHeight - g.padTop + ky
                return iy >= 0 && iy < g.inputHeight ? inputRow(iy) : zeros
            }
            let rows = (row(0), row(1), row(2))
            let dst = out + (oy - firstRow) * g.outputWidth * c
            for ox in 0 ..< g.outputWidth where ox < firstInside || ox >= lastInside {
                edge3x3(rows, xOrigin: ox * g.strideWidth - g.padLeft, dst + ox * c, channels: channels)
            }
            guard firstInside < lastInside else { continue }
            let offset = (firstInside * g.strideWidth - g.padLeft) * c + channels.lowerBound
            let start = (rows.0 + offset, rows.1 + offset, rows.2 + offset)
            let first = dst + firstInside * c + channels.lowerBound
            if groups > 0 {
                if g.strideWidth == 1 {
                    inside3x3Stride1(start, first, count: lastInside - firstInside, groups: groups, firstGroup: channels.lowerBound / Lanes.scalarCount)
                } else {
                    inside3x3Stride2(start, first, count: lastInside - firstInside, groups: groups, firstGroup: channels.lowerBound / Lanes.scalarCount)
                }
            }
            if narrowTaps != nil {
                insideNarrow(rows, dst, pixels: firstInside ..< lastInside)
            } else if hasTail {
                if hasTail8 { insideTail8(rows, dst, pixels: firstInside ..< lastInside, first: c / Lanes.scalarCount * Lanes.scalarCount) }
                if c % Half.scalarCount != 0 {
                    if overlapsLast8(from: channels.lowerBound) {
                        insideTail8(rows, dst, pixels: firstInside ..< lastInside, first: c - Half.scalarCount)
                    } else {
                        for ox in firstInside ..< lastInside { scalarTail(rows, xOrigin: ox * g.strideWidth - g.padLeft, dst + ox * c) }
                    }
                }
            }
        }
    }
}
