extension DepthwiseConv2D {
    /// Integer depthwise convolution (uint8 per-tensor, int8 per-channel).
    static func prepareQuantized(_ context: inout PrepareContext, geometry: Geometry, activation: FusedActivation) throws(ModelError) -> any Kernel {
        try DepthwiseConv2DQuantized(&context, geometry: geometry, activation: activation)
    }
}

/// Integer DEPTHWISE_CONV_2D, byte-identical to TFLite's reference kernels
/// (`reference_ops::DepthwiseConv` for uint8, `reference_integer_ops::DepthwiseConvPerChannel`
/// for int8, whose filter zero points are ignored as the reference ignores them).
///
/// Direct and vectorised across channels: each batch's input is first copied, encoded as
/// unsigned bytes, into a buffer padded with the input zero point (channels repeated
/// `depthMultiplier` times and rounded up to 16), so every tap of every output pixel is in
/// bounds and contributes `(x − x₀)·w` with no branches. The `x₀ · Σ taps` term is folded into
/// the bias at prepare time; sixteen channels accumulate in `Int32` lanes and are requantized
/// with their own multipliers. Eight output pixels of a row (then four, then one) are computed
/// together, in independent accumulators that share each tap's weights.
struct DepthwiseConv2DQuantized: Kernel {
    let geometry: DepthwiseConv2D.Geometry
    let input: Int, output: Int
    let encoding: ActivationEncoding
    /// Output channels rounded up to a multiple of 16.
    let paddedChannels: Int
    /// Rows and columns of the padded input copy: exactly what the output's windows cover.
    let paddedHeight: Int, paddedWidth: Int
    /// Filter minus its zero point, `[kh · kw, paddedChannels]` (zero past the real channels).
    let weights: PackedBuffer<Int16>
    /// `bias − x₀ · Σ_taps w`, per padded channel.
    let bias: PackedBuffer<Int32>
    let requantization: ChannelRequantization

    init(_ context: inout PrepareContext, geometry g: DepthwiseConv2D.Geometry, activation: FusedActivation) throws(ModelError) {
        let quantization = try ConvolutionQuantization(
            context, input: DepthwiseConv2D.input, filter: DepthwiseConv2D.filter, bias: DepthwiseConv2D.bias,
            output: DepthwiseConv2D.output, channels: g.outputChannels, channelDimension: 3, activation: activation)
        let type = quantization.type, channels = g.outputChannels, filterZeroPoint = quantization.filterZeroPoint
        encoding = quantization.encoding
        requantization = quantization.requantization

        let filterBytes = try context.constant(DepthwiseConv2D.filter).bytes
        var biasValues: UnsafeBufferPointer<Int32>?
        if quantization.hasBias { biasValues = try context.constant(DepthwiseConv2D.bias).elements(as: Int32.self) }
        let padded = (channels + 15) / 16 * 16
        let taps = g.filterHeight * g.filterWidth
        let weights = PackedBuffer<Int16>(count: taps * padded, initializedTo: 0)
        let bias = PackedBuffer<Int32>(count: padded, initializedTo: 0)
        let zeroPoint = Int32(encoding.zeroPoint)
        for c in 0 ..< channels {
            var sum: Int32 = 0
            for tap in 0 ..< taps {
                let byte = filterBytes[tap * channels + c]
                let w = (type == .int8 ? Int32(Int8(bitPattern: byte)) : Int32(byte)) - filterZeroPoint
                weights.pointer[tap * padded + c] = Int16(w)
                sum &+= w
            }
            bias.pointer[c] = (biasValues?[c] ?? 0) &- zeroPoint &* sum
        }
        self.weights = weights
        self.bias = bias
        paddedChannels = padded
        paddedHeight = (g.outputHeight - 1) * g.strideHeight + (g.filterHeight - 1) * g.dilationHeight + 1
        paddedWidth = (g.outputWidth - 1) * g.strideWidth + (g.filterWidth - 1) * g.dilationWidth + 1
        geometry = g
        input = context.node.inputs[DepthwiseConv2D.input]
        output = context.node.outputs[DepthwiseConv2D.output]
        context.requestScratch(bytes: paddedHeight * paddedWidth * padded)
        context.markPacked(DepthwiseConv2D.filter)
        if quantization.hasBias { context.markPacked(DepthwiseConv2D.bias) }
    }

    func eval(_ memory: TensorMemory) {
        let g = geometry
        let buffer = memory.scratch(as: UInt8.self)
        let work = g.outputHeight * g.outputWidth * paddedChannels * g.filterHeight * g.filterWidth
        for n in 0 ..< g.batches {
            let image = memory.input(input, as: UInt8.self) + n * g.inputHeight * g.inputWidth * g.inputChannels
            let out = memory.output(output, as: UInt8.self) + n * g.outputHeight * g.outputWidth * g.outputChannels
            // Threads fill rows of the padded copy, then compute whole output rows from it.
            memory.parallelize(count: paddedHeight, work: paddedHeight * paddedWidth * paddedChannels) { rows, _ in
                pad(image, into: buffer, rows: rows)
            }
            memory.parallelize(count: g.outputHeight, work: work) { rows, _ in
                convolve(buffer, out, rows: rows)
            }
        }
    }

    /// Rows `rows` of the padded, encoded, channel-expanded copy of one image.
    private func pad(_ image: UnsafePointer<UInt8>, into buffer: UnsafeMutablePointer<UInt8>, rows: Range<Int>) {
        let g = geometry
        let cp = paddedChannels, cin = g.inputChannels, multiplier = g.depthMultiplier
        let rowBytes = paddedWidth * cp
        let inside = max(0, min(g.inputWidth, paddedWidth - g.padLeft))
        for py in rows {
            let row = buffer + py * rowBytes
            let iy = py - g.padTop
            guard iy >= 0, iy < g.inputHeight else {
                row.update(repeating: encoding.zeroPoint, count: rowBytes)
                continue
            }
            row.update(repeating: encoding.zeroPoint, count: g.padLeft * cp)
            (row + (g.padLeft + inside) * cp).update(repeating: encoding.zeroPoint, count: rowBytes - (g.padLeft + inside) * cp)
            for ix in 0 ..< inside {
                let src = image + (iy * g.inputWidth + ix) * cin
                let dst = row + (ix + g.padLeft) * cp
                if multiplier == 1 {
                    if encoding.isSigned {
                        for c in 0 ..< cin { dst[c] = src[c] ^ 0x80 }
                    } else {
                        dst.update(from: src, count: cin)
                    }
                    (dst + cin).update(repeating: encoding.zeroPoint, count: cp - cin)
                } else {
                    for c in 0 ..< cin {
                        let value = encoding.encode(src[c])
                        for m in 0 ..< multiplier { dst[c * multiplier + m] = value }
                    }
                    (dst + cin * multiplier).update(repeating: encoding.zeroPoint, count: cp - cin * multiplier)
                }
            }
        }
    }

    /// Output rows `rows` of one image from its padded copy: eight pixels at a time, then four,
    /// then one.
    private func convolve(_ buffer: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, rows: Range<Int>) {
        let g = geometry
        for oy in rows {
            var ox = 0
            while ox + 8 <= g.outputWidth {
                convolveEightPixels(buffer, out, oy: oy, ox: ox)
                ox += 8
            }
            if ox + 4 <= g.outputWidth {
                convolveFourPixels(buffer, out, oy: oy, ox: ox)
                ox += 4
            }
            while ox < g.outputWidth {
                convolveOnePixel(buffer, out, oy: oy, ox: ox)
                ox += 1
            }
        }
    }

    // Separate functions so that each stays small enough for the `loadUnaligned` calls to be inlined.
    @inline(never)
    private func convolveEightPixels(_ buffer: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, oy: Int, ox: Int) {
        convolvePixels(buffer, out, oy: oy, ox: ox, count: 8)
    }

    @inline(never)
    private func convolveFourPixels(_ buffer: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, oy: Int, ox: Int) {
        convolvePixels(buffer, out, oy: oy, ox: ox, count: 4)
    }

    @inline(never)
    private func convolveOnePixel(_ buffer: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, oy: Int, ox: Int) {
        convolvePixels(buffer, out, oy: oy, ox: ox, count: 1)
    }

    /// Output pixels `ox ..< ox + count` of row `oy` (`count` is 1, 4 or 8, a constant at each
    /// call site), sixteen channels at a time: the pixels share each tap's weights (one widening
    /// load for `count` multiply-adds) and accumulate in independent chains.
    @inline(always)
    private func convolvePixels(_ buffer: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, oy: Int, ox: Int, count: Int) {
        let g = geometry
        let cp = paddedChannels, channels = g.outputChannels
        let source = UnsafeRawPointer(buffer), filter = UnsafeRawPointer(weights.pointer)
        let biasRaw = UnsafeRawPointer(bias.pointer)
        let rowStep = g.dilationHeight * paddedWidth * cp, columnStep = g.dilationWidth * cp
        let pixelStep = g.strideWidth * cp
        let origin = (oy * g.strideHeight * paddedWidth + ox * g.strideWidth) * cp
        let dst = out + (oy * g.outputWidth + ox) * channels
        @inline(always)
        func input(_ offset: Int, _ pixel: Int) -> SIMD16<Int32> {
            widened(source.loadUnaligned(fromByteOffset: offset &+ pixel &* pixelStep, as: SIMD16<UInt8>.self))
        }
        var ch = 0
        while ch < cp {
            let b = biasRaw.loadUnaligned(fromByteOffset: ch &* 4, as: SIMD16<Int32>.self)
            var acc0 = b, acc1 = b, acc2 = b, acc3 = b, acc4 = b, acc5 = b, acc6 = b, acc7 = b
            var tap = ch
            for ky in 0 ..< g.filterHeight {
                var offset = origin &+ ky &* rowStep &+ ch
                for _ in 0 ..< g.filterWidth {
                    let w = widened(filter.loadUnaligned(fromByteOffset: tap &* 2, as: SIMD16<Int16>.self))
                    acc0 &+= input(offset, 0) &* w
                    if count >= 4 {
                        acc1 &+= input(offset, 1) &* w
                        acc2 &+= input(offset, 2) &* w
                        acc3 &+= input(offset, 3) &* w
                    }
                    if count == 8 {
                        acc4 &+= input(offset, 4) &* w
                        acc5 &+= input(offset, 5) &* w
                        acc6 &+= input(offset, 6) &* w
                        acc7 &+= input(offset, 7) &* w
                    }
                    offset &+= columnStep
                    tap &+= cp
                }
            }
            @inline(always)
            func store(_ acc: SIMD16<Int32>, _ pixel: Int) {
                storeLowBytes(requantization.apply(acc, channel: ch), to: dst + pixel * channels + ch, count: channels - ch)
            }
            store(acc0, 0)
            if count >= 4 { store(acc1, 1); store(acc2, 2); store(acc3, 3) }
            if count == 8 { store(acc4, 4); store(acc5, 5); store(acc6, 6); store(acc7, 7) }
            ch += 16
        }
    }
}
