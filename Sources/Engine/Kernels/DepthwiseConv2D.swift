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
/// loaded once (`packed3x3`) for 72 (36) FMAs in eight (four) independent chains. One pixel's 9-FMA
/// chain would leave the FMA units waiting on its latency; neighbours at stride 1 also share input
/// column loads. The pixels at the left and right edges read zeros for taps outside the input.
/// Other shapes go through `convolvePixel`, which clips the window. `reference` is the plain
/// scalar definition both are tested against.
struct DepthwiseConv2DFloat32: PartitionedKernel {
    typealias Lanes = SIMD16<Float>
    typealias Rows = (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>)
    let geometry: DepthwiseConv2D.Geometry
    let input: Int, output: Int
    /// Filter `[kh·kw, outputChannels]`.
    let weights: PackedBuffer<Float>
    let bias: PackedBuffer<Float>
    let range: ClosedRange<Float>
    /// For the 3×3 fast path (nil when the shape does not take it): per group of 16 channels, the
    /// bias then the 9 taps, `[groups][10][16]`.
    let packed3x3: PackedBuffer<Float>?
    /// One input row of zeros, for the 3×3 fast path's rows and taps outside the input.
    let zeroRow: PackedBuffer<Float>?

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
        guard g.filterHeight == 3, g.filterWidth == 3, g.dilationHeight == 1, g.dilationWidth == 1,
              g.strideWidth == 1 || g.strideWidth == 2, groups > 0 else {
            packed3x3 = nil
            zeroRow = nil
            return
        }
        let packed = PackedBuffer<Float>(count: groups * 10 * Lanes.scalarCount, initializedTo: 0)
        for channel in 0 ..< groups * Lanes.scalarCount {
            let base = channel / Lanes.scalarCount * 10 * Lanes.scalarCount + channel % Lanes.scalarCount
            packed.pointer[base] = self.bias.pointer[channel]
            for tap in 0 ..< 9 { packed.pointer[base + (tap + 1) * Lanes.scalarCount] = filter[tap * c + channel] }
        }
        packed3x3 = packed
        zeroRow = PackedBuffer(count: g.inputWidth * c, initializedTo: 0)
    }

    func eval(_ memory: TensorMemory) {
        let g = geometry
        let c = g.outputChannels
        let inputPlane = g.inputHeight * g.inputWidth
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
            // Threads take whole output rows.
            memory.parallelize(self, step: n, count: g.outputHeight, work: g.outputHeight * g.outputWidth * c * g.filterHeight * g.filterWidth)
        }
    }

    /// Output rows `rows` of batch `step`.
    func evalPart(_ rows: Range<Int>, step n: Int, worker: Int, memory: TensorMemory) {
        let g = geometry
        let c = g.outputChannels
        let source = g.depthMultiplier > 1 ? UnsafePointer(memory.scratch(as: Float.self))
            : memory.input(input, as: Float.self) + n * g.inputHeight * g.inputWidth * g.inputChannels
        convolve(source, memory.output(output, as: Float.self) + n * g.outputHeight * g.outputWidth * c, rows: rows)
    }

    /// One image: `source` has `outputChannels` channels per pixel (already expanded for depth multipliers).
    func convolve(_ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>) {
        convolve(source, out, rows: 0 ..< geometry.outputHeight)
    }

    /// Output rows `rows` of one image.
    func convolve(_ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, rows outputRows: Range<Int>) {
        let g = geometry
        let c = g.outputChannels
        guard let zeroRow else {
            for oy in outputRows {
                for ox in 0 ..< g.outputWidth { convolvePixel(source, out + (oy * g.outputWidth + ox) * c, oy: oy, ox: ox) }
            }
            return
        }
        // Output columns whose three input columns are all inside the input.
        let firstInside = min(g.outputWidth, (g.padLeft + g.strideWidth - 1) / g.strideWidth)
        let lastInside = g.inputWidth - 3 + g.padLeft < 0 ? 0 : min(g.outputWidth, (g.inputWidth - 3 + g.padLeft) / g.strideWidth + 1)
        let zeros = UnsafePointer(zeroRow.pointer)
        for oy in outputRows {
            func row(_ ky: Int) -> UnsafePointer<Float> {
                let iy = oy * g.strideHeight - g.padTop + ky
                return iy >= 0 && iy < g.inputHeight ? source + iy * g.inputWidth * c : zeros
            }
            let rows = (row(0), row(1), row(2))
            let dst = out + oy * g.outputWidth * c
            for ox in 0 ..< g.outputWidth where ox < firstInside || ox >= lastInside {
                edge3x3(rows, xOrigin: ox * g.strideWidth - g.padLeft, dst + ox * c)
            }
            guard firstInside < lastInside else { continue }
            let offset = (firstInside * g.strideWidth - g.padLeft) * c
            let start = (rows.0 + offset, rows.1 + offset, rows.2 + offset)
            if g.strideWidth == 1 {
                inside3x3Stride1(start, dst + firstInside * c, count: lastInside - firstInside)
            } else {
                inside3x3Stride2(start, dst + firstInside * c, count: lastInside - firstInside)
            }
            if c % Lanes.scalarCount != 0 {
                for ox in firstInside ..< lastInside { tailChannels(rows, xOrigin: ox * g.strideWidth - g.padLeft, dst + ox * c) }
            }
        }
    }

    @inline(never)
    private func inside3x3Stride1(_ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int) {
        inside3x3(stride: 1, rows, out, count: count)
    }

    @inline(never)
    private func inside3x3Stride2(_ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int) {
        inside3x3(stride: 2, rows, out, count: count)
    }

    /// The whole groups of 16 channels of `count` adjacent output pixels whose windows lie inside
    /// the input across; `rows` point at the first window's left column. Eight pixels a step (at
    /// stride 1), then four; a last step of four that would run past `count` moves back to end at it
    /// (recomputing up to three pixels) rather than going one at a time. `stride` is a constant at
    /// each call site.
    @inline(always)
    private func inside3x3(stride: Int, _ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int) {
        let c = geometry.outputChannels
        let groups = c / Lanes.scalarCount
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
                var filter = UnsafeRawPointer(packed3x3!.pointer), dst = UnsafeMutableRawPointer(out + x * c)
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

    /// Every channel of one output pixel whose window crosses the left or right edge of the input:
    /// taps outside it read the row of zeros, so the 9 taps stay unconditional. The taps are summed
    /// in the same order as inside (splitting the chain to hide latency gained nothing measurable
    /// and moved the whole-network goldens' error from 6.4e-6 to 7.3e-6).
    private func edge3x3(_ rows: Rows, xOrigin: Int, _ dst: UnsafeMutablePointer<Float>) {
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
        var filter = UnsafeRawPointer(packed3x3!.pointer)
        var offset = 0
        for _ in 0 ..< c / Lanes.scalarCount {
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
        tailChannels(rows, xOrigin: xOrigin, dst)
    }

    /// The channels past the last whole group of 16 of one output pixel, scalar, clipped across.
    private func tailChannels(_ rows: Rows, xOrigin: Int, _ dst: UnsafeMutablePointer<Float>) {
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

    /// Every channel of output pixel (`oy`, `ox`), with the window clipped to the input.
    private func convolvePixel(_ source: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>, oy: Int, ox: Int) {
        let g = geometry
        let c = g.outputChannels
        let vectorEnd = c - c % Lanes.scalarCount
        let lower = range.lowerBound, upper = range.upperBound
        let raw = UnsafeRawPointer(source), filter = UnsafeRawPointer(weights.pointer), biasRaw = UnsafeRawPointer(bias.pointer)
        let stride = MemoryLayout<Float>.stride
        let yOrigin = oy * g.strideHeight - g.padTop, xOrigin = ox * g.strideWidth - g.padLeft
        // Filter taps that land inside the input.
        let kyStart = max(0, (-yOrigin + g.dilationHeight - 1) / g.dilationHeight)
        let kyEnd = min(g.filterHeight, (g.inputHeight - yOrigin + g.dilationHeight - 1) / g.dilationHeight)
        let kxStart = max(0, (-xOrigin + g.dilationWidth - 1) / g.dilationWidth)
        let kxEnd = min(g.filterWidth, (g.inputWidth - xOrigin + g.dilationWidth - 1) / g.dilationWidth)
        var ch = 0
        while ch < vectorEnd {
            var acc = biasRaw.loadUnaligned(fromByteOffset: ch * stride, as: Lanes.self)
            var ky = kyStart
            while ky < kyEnd {
                let iy = yOrigin + ky * g.dilationHeight
                var kx = kxStart
                while kx < kxEnd {
                    let ix = xOrigin + kx * g.dilationWidth
                    let x = raw.loadUnaligned(fromByteOffset: ((iy * g.inputWidth + ix) * c + ch) * stride, as: Lanes.self)
                    let w = filter.loadUnaligned(fromByteOffset: ((ky * g.filterWidth + kx) * c + ch) * stride, as: Lanes.self)
                    acc = acc.addingProduct(x, w)
                    kx += 1
                }
                ky += 1
            }
            UnsafeMutableRawPointer(dst + ch).storeBytes(of: FloatGEMM.clamp(acc, lower, upper), as: Lanes.self)
            ch += Lanes.scalarCount
        }
        while ch < c {
            var acc = bias.pointer[ch]
            for ky in kyStart ..< max(kyStart, kyEnd) {
                let iy = yOrigin + ky * g.dilationHeight
                for kx in kxStart ..< max(kxStart, kxEnd) {
                    let ix = xOrigin + kx * g.dilationWidth
                    acc += source[(iy * g.inputWidth + ix) * c + ch] * weights.pointer[(ky * g.filterWidth + kx) * c + ch]
                }
            }
            dst[ch] = min(max(acc, lower), upper)
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
                    out[(oy * g.outputWidth + ox) * c + ch] = min(max(acc, range.lowerBound), range.upperBound)
                }
            }
        }
    }
}
