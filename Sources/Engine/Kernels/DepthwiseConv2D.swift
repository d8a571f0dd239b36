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
        case .float32:
            return try DepthwiseConv2DFloat32(&context, geometry: geometry, activation: options.activation)
        case .uint8, .int8:
            return try prepareQuantized(&context, geometry: geometry, activation: options.activation)
        default:
            throw context.unsupported("input type \(input.dataType)")
        }
    }
}

/// Float32 depthwise convolution, vectorised across channels: each output pixel keeps 16 channels
/// of accumulators in registers over all filter taps.
struct DepthwiseConv2DFloat32: Kernel {
    typealias Lanes = SIMD16<Float>
    let geometry: DepthwiseConv2D.Geometry
    let input: Int, output: Int
    /// Filter `[kh·kw, outputChannels]`.
    let weights: PackedBuffer<Float>
    let bias: PackedBuffer<Float>
    let range: ClosedRange<Float>

    init(_ context: inout PrepareContext, geometry g: DepthwiseConv2D.Geometry, activation: FusedActivation) throws(ModelError) {
        try context.expect(try context.input(DepthwiseConv2D.filter), is: .float32, role: "filter")
        try context.expect(try context.output(DepthwiseConv2D.output), is: .float32, role: "output")
        geometry = g
        input = context.node.inputs[DepthwiseConv2D.input]
        output = context.node.outputs[DepthwiseConv2D.output]
        weights = PackedBuffer(try context.constant(DepthwiseConv2D.filter).elements(as: Float.self))
        if let b = context.optionalInput(DepthwiseConv2D.bias) {
            try context.expect(b, is: .float32, role: "bias")
            bias = PackedBuffer(try context.constant(DepthwiseConv2D.bias).elements(as: Float.self))
        } else {
            bias = PackedBuffer(count: g.outputChannels, initializedTo: 0)
        }
        range = try context.floatActivationRange(activation)
        if g.depthMultiplier > 1 {
            // Input channels are repeated `depthMultiplier` times so the inner loop stays contiguous.
            context.requestScratch(bytes: g.inputHeight * g.inputWidth * g.outputChannels * MemoryLayout<Float>.stride)
        }
    }

    func eval(_ memory: TensorMemory) {
        let g = geometry
        let c = g.outputChannels
        let inputPlane = g.inputHeight * g.inputWidth
        for n in 0 ..< g.batches {
            var source = memory.input(input, as: Float.self) + n * inputPlane * g.inputChannels
            if g.depthMultiplier > 1 {
                let expanded = memory.scratch(as: Float.self)
                for p in 0 ..< inputPlane {
                    for i in 0 ..< g.inputChannels {
                        let value = source[p * g.inputChannels + i]
                        for m in 0 ..< g.depthMultiplier { expanded[p * c + i * g.depthMultiplier + m] = value }
                    }
                }
                source = UnsafePointer(expanded)
            }
            let out = memory.output(output, as: Float.self) + n * g.outputHeight * g.outputWidth * c
            convolve(source, out)
        }
    }

    /// `source` has `outputChannels` channels per pixel (already expanded for depth multipliers).
    private func convolve(_ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>) {
        let g = geometry
        let c = g.outputChannels
        let vectorEnd = c - c % Lanes.scalarCount
        let lower = range.lowerBound, upper = range.upperBound
        let lowerLanes = Lanes(repeating: lower), upperLanes = Lanes(repeating: upper)
        let raw = UnsafeRawPointer(source), filter = UnsafeRawPointer(weights.pointer), biasRaw = UnsafeRawPointer(bias.pointer)
        let stride = MemoryLayout<Float>.stride
        for oy in 0 ..< g.outputHeight {
            let yOrigin = oy * g.strideHeight - g.padTop
            // Filter rows that land inside the input for this output row.
            let kyStart = max(0, (-yOrigin + g.dilationHeight - 1) / g.dilationHeight)
            let kyEnd = min(g.filterHeight, (g.inputHeight - yOrigin + g.dilationHeight - 1) / g.dilationHeight)
            for ox in 0 ..< g.outputWidth {
                let xOrigin = ox * g.strideWidth - g.padLeft
                let kxStart = max(0, (-xOrigin + g.dilationWidth - 1) / g.dilationWidth)
                let kxEnd = min(g.filterWidth, (g.inputWidth - xOrigin + g.dilationWidth - 1) / g.dilationWidth)
                let dst = out + (oy * g.outputWidth + ox) * c
                var ch = 0
                while ch < vectorEnd {
                    var acc = Lanes(repeating: 0)
                    var ky = kyStart
                    while ky < kyEnd {
                        let iy = yOrigin + ky * g.dilationHeight
                        var kx = kxStart
                        while kx < kxEnd {
                            let ix = xOrigin + kx * g.dilationWidth
                            let x = raw.loadUnaligned(fromByteOffset: ((iy * g.inputWidth + ix) * c + ch) * stride, as: Lanes.self)
                            let w = filter.loadUnaligned(fromByteOffset: ((ky * g.filterWidth + kx) * c + ch) * stride, as: Lanes.self)
                            acc += x * w
                            kx += 1
                        }
                        ky += 1
                    }
                    acc += biasRaw.loadUnaligned(fromByteOffset: ch * stride, as: Lanes.self)
                    // `SIMD.clamped` compiles to per-lane scalar code; masked replacement stays vectorised.
                    acc.replace(with: lowerLanes, where: acc .< lowerLanes)
                    acc.replace(with: upperLanes, where: acc .> upperLanes)
                    UnsafeMutableRawPointer(dst + ch).storeBytes(of: acc, as: Lanes.self)
                    ch += Lanes.scalarCount
                }
                while ch < c {
                    var acc: Float = 0
                    for ky in kyStart ..< max(kyStart, kyEnd) {
                        let iy = yOrigin + ky * g.dilationHeight
                        for kx in kxStart ..< max(kxStart, kxEnd) {
                            let ix = xOrigin + kx * g.dilationWidth
                            acc += source[(iy * g.inputWidth + ix) * c + ch] * weights.pointer[(ky * g.filterWidth + kx) * c + ch]
                        }
                    }
                    dst[ch] = min(max(acc + bias.pointer[ch], lower), upper)
                    ch += 1
                }
            }
        }
    }
}
