extension DepthwiseConv2D {
    /// Whether this build has `DepthwiseConv2DTapRows` (AVX-512 VNNI or AVX2 targets).
    #if SWIFTLITE_AVX512VNNI || SWIFTLITE_AVX2
    static let buildsTapRows = true
    #else
    static let buildsTapRows = false
    #endif

    /// Integer depthwise convolution (uint8 per-tensor, int8 per-channel).
    static func prepareQuantized(_ context: inout PrepareContext, geometry: Geometry, activation: FusedActivation) throws(ModelError) -> any Kernel {
        #if SWIFTLITE_AVX512VNNI || SWIFTLITE_AVX2
        let quantization = try ConvolutionQuantization(
            context, input: input, filter: filter, bias: bias, output: output,
            channels: geometry.outputChannels, channelDimension: 3, activation: activation)
        let filterBytes = try context.constant(filter).bytes
        if let products = DepthwiseConv2DTapRows.products(for: geometry, quantization: quantization, filterBytes: filterBytes) {
            return try DepthwiseConv2DTapRows(&context, geometry: geometry, quantization: quantization, products: products)
        }
        #endif
        return try DepthwiseConv2DQuantized(&context, geometry: geometry, activation: activation)
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
/// with their own multipliers. Four output pixels of a row are computed together, in
/// independent accumulators that share each tap's weights.
struct DepthwiseConv2DQuantized: PartitionedKernel, TiledKernel {
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
        let channels = g.outputChannels, filter = quantization.filter
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
                let w = filter.value(filterBytes[tap * channels + c])
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
        let work = g.outputHeight * g.outputWidth * paddedChannels * g.filterHeight * g.filterWidth
        // Threads fill rows of each image's padded copy, then compute tiles of output rows and
        // groups of 16 channels from it: whole rows where they share out evenly over the threads.
        let grid = memory.grid {
            TileGrid.balanced(tasks: memory.taskCount(work: work), threads: memory.threadCount, rows: g.outputHeight,
                              rowGranularity: 1, columns: g.outputChannels, columnGranularity: 16)
        }
        for n in 0 ..< g.batches {
            memory.parallelize(self, step: 2 * n, count: paddedHeight, work: paddedHeight * paddedWidth * paddedChannels)
            memory.parallelize(self, step: 2 * n + 1, grid: grid)
        }
    }

    /// Step `2n`: rows of batch `n`'s padded copy.
    func evalPart(_ rows: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let g = geometry
        pad(memory.input(input, as: UInt8.self) + step / 2 * g.inputHeight * g.inputWidth * g.inputChannels,
            into: memory.scratch(as: UInt8.self), rows: rows)
    }

    /// Step `2n + 1`: output rows `rows`, channels `channels` (bounds at multiples of 16, or
    /// `outputChannels`) of batch `n`.
    func evalTile(rows: Range<Int>, columns channels: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let g = geometry
        convolve(memory.scratch(as: UInt8.self), memory.output(output, as: UInt8.self) + step / 2 * g.outputHeight * g.outputWidth * g.outputChannels,
                 rows: rows, channels: channels.lowerBound ..< min(paddedChannels, (channels.upperBound + 15) / 16 * 16))
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

    /// Output rows `rows`, padded channels `channels` (whole groups of 16) of one image from its padded copy.
    private func convolve(_ buffer: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, rows: Range<Int>, channels: Range<Int>) {
        let g = geometry
        for oy in rows {
            var ox = 0
            while ox + 4 <= g.outputWidth {
                convolveFourPixels(buffer, out, oy: oy, ox: ox, channels: channels)
                ox += 4
            }
            while ox < g.outputWidth {
                convolveOnePixel(buffer, out, oy: oy, ox: ox, channels: channels)
                ox += 1
            }
        }
    }

    // Separate functions so that each stays small enough for the `loadUnaligned` calls to be inlined.
    @inline(never)
    private func convolveFourPixels(_ buffer: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, oy: Int, ox: Int, channels: Range<Int>) {
        convolvePixels(buffer, out, oy: oy, ox: ox, channels: channels, four: true)
    }

    @inline(never)
    private func convolveOnePixel(_ buffer: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, oy: Int, ox: Int, channels: Range<Int>) {
        convolvePixels(buffer, out, oy: oy, ox: ox, channels: channels, four: false)
    }

    /// Output pixels `ox ..< ox + 4` (or just `ox`) of row `oy`, padded channels `channels` sixteen
    /// at a time: the pixels share each tap's weights and accumulate in independent chains.
    @inline(always)
    private func convolvePixels(_ buffer: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, oy: Int, ox: Int,
                                channels range: Range<Int>, four: Bool) {
        let g = geometry
        let cp = paddedChannels, channels = g.outputChannels
        let source = UnsafeRawPointer(buffer), filter = UnsafeRawPointer(weights.pointer)
        let biasRaw = UnsafeRawPointer(bias.pointer)
        let rowStep = g.dilationHeight * paddedWidth * cp, columnStep = g.dilationWidth * cp
        let pixelStep = g.strideWidth * cp
        let origin = (oy * g.strideHeight * paddedWidth + ox * g.strideWidth) * cp
        let dst = out + (oy * g.outputWidth + ox) * channels
        var ch = range.lowerBound
        while ch < range.upperBound {
            let b = biasRaw.loadUnaligned(fromByteOffset: ch &* 4, as: SIMD16<Int32>.self)
            var acc0 = b, acc1 = b, acc2 = b, acc3 = b
            var tap = ch
            for ky in 0 ..< g.filterHeight {
                var offset = origin &+ ky &* rowStep &+ ch
                for _ in 0 ..< g.filterWidth {
                    let w = widened(filter.loadUnaligned(fromByteOffset: tap &* 2, as: SIMD16<Int16>.self))
                    acc0 &+= widened(source.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self)) &* w
                    if four {
                        acc1 &+= widened(source.loadUnaligned(fromByteOffset: offset &+ pixelStep, as: SIMD16<UInt8>.self)) &* w
                        acc2 &+= widened(source.loadUnaligned(fromByteOffset: offset &+ 2 &* pixelStep, as: SIMD16<UInt8>.self)) &* w
                        acc3 &+= widened(source.loadUnaligned(fromByteOffset: offset &+ 3 &* pixelStep, as: SIMD16<UInt8>.self)) &* w
                    }
                    offset &+= columnStep
                    tap &+= cp
                }
            }
            storeLowBytes(requantization.apply(acc0, channel: ch), to: dst + ch, count: channels - ch)
            if four {
                storeLowBytes(requantization.apply(acc1, channel: ch), to: dst + channels + ch, count: channels - ch)
                storeLowBytes(requantization.apply(acc2, channel: ch), to: dst + 2 * channels + ch, count: channels - ch)
                storeLowBytes(requantization.apply(acc3, channel: ch), to: dst + 3 * channels + ch, count: channels - ch)
            }
            ch += 16
        }
    }
}
