/// CONV_2D: `output[n, y, x, o] = act(bias[o] + Σ input[n, y·s + ky·d − pad, x·s + kx·d − pad, i] · filter[o, ky, kx, i])`.
///
/// Float32 runs as im2col + SGEMM (1×1 stride-1 convolutions go straight to SGEMM); the filter is
/// transposed to `[ky·kx·i, o]` at prepare time.
enum Conv2D {
    static let input = 0, filter = 1, bias = 2, output = 0

    /// Shapes and window geometry shared by the float and quantized kernels.
    struct Geometry: Sendable {
        var batches, inputHeight, inputWidth, inputChannels: Int
        var outputHeight, outputWidth, outputChannels: Int
        var filterHeight, filterWidth: Int
        var strideHeight, strideWidth, dilationHeight, dilationWidth: Int
        var padTop, padLeft: Int
        /// Length of one im2col row: `filterHeight · filterWidth · inputChannels`.
        var patchSize: Int { filterHeight * filterWidth * inputChannels }
        /// True when every output pixel reads exactly its own input pixel (a plain matrix product).
        var isPointwise: Bool {
            filterHeight == 1 && filterWidth == 1 && strideHeight == 1 && strideWidth == 1 && padTop == 0 && padLeft == 0
        }
    }

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .conv2D(let options) = context.node.options else { throw context.invalid("missing Conv2DOptions") }
        try context.expect(inputs: 2 ... 3, outputs: 1)
        let input = try context.input(Self.input), filter = try context.input(Self.filter)
        try context.expect(input, rank: 4, role: "input")
        try context.expect(filter, rank: 4, role: "filter")
        guard input.shape[3] > 0, filter.shape[3] > 0, input.shape[3] % filter.shape[3] == 0 else {
            throw context.invalid("input has \(input.shape[3]) channels, filter \(filter.shape) expects \(filter.shape[3])")
        }
        guard input.shape[3] == filter.shape[3] else {
            throw context.unsupported("grouped convolution (input channels \(input.shape[3]), filter channels \(filter.shape[3]))")
        }
        let rows = try context.window(options.padding, input: input.shape[1], filter: filter.shape[1],
                                      stride: options.strideHeight, dilation: options.dilationHeight, axis: "height")
        let cols = try context.window(options.padding, input: input.shape[2], filter: filter.shape[2],
                                      stride: options.strideWidth, dilation: options.dilationWidth, axis: "width")
        let geometry = Geometry(
            batches: input.shape[0], inputHeight: input.shape[1], inputWidth: input.shape[2], inputChannels: input.shape[3],
            outputHeight: rows.outputSize, outputWidth: cols.outputSize, outputChannels: filter.shape[0],
            filterHeight: filter.shape[1], filterWidth: filter.shape[2],
            strideHeight: options.strideHeight, strideWidth: options.strideWidth,
            dilationHeight: options.dilationHeight, dilationWidth: options.dilationWidth,
            padTop: rows.paddingBefore, padLeft: cols.paddingBefore)
        if let bias = context.optionalInput(Self.bias) {
            guard bias.elementCount == geometry.outputChannels else {
                throw context.invalid("bias has \(bias.elementCount) elements, expected \(geometry.outputChannels)")
            }
        }
        try context.setOutputShape(Self.output, [geometry.batches, geometry.outputHeight, geometry.outputWidth, geometry.outputChannels])

        switch input.dataType {
        case .float32:
            return try Conv2DFloat32(&context, geometry: geometry, activation: options.activation)
        case .uint8, .int8:
            return try prepareQuantized(&context, geometry: geometry, activation: options.activation)
        default:
            throw context.unsupported("input type \(input.dataType)")
        }
    }
}

/// Float32 convolution through SGEMM.
struct Conv2DFloat32: Kernel {
    let geometry: Conv2D.Geometry
    let input: Int, output: Int
    /// Filter as a `[patchSize, outputChannels]` row-major matrix.
    let weights: PackedBuffer<Float>
    let bias: PackedBuffer<Float>
    let range: ClosedRange<Float>

    init(_ context: inout PrepareContext, geometry g: Conv2D.Geometry, activation: FusedActivation) throws(ModelError) {
        let filter = try context.input(Conv2D.filter)
        try context.expect(filter, is: .float32, role: "filter")
        try context.expect(try context.output(Conv2D.output), is: .float32, role: "output")
        let filterData = try context.constant(Conv2D.filter).elements(as: Float.self)
        geometry = g
        input = context.node.inputs[Conv2D.input]
        output = context.node.outputs[Conv2D.output]
        let weights = PackedBuffer<Float>(count: g.patchSize * g.outputChannels, initializedTo: 0)
        for o in 0 ..< g.outputChannels {
            for p in 0 ..< g.patchSize { weights.pointer[p * g.outputChannels + o] = filterData[o * g.patchSize + p] }
        }
        self.weights = weights
        if let biasTensor = context.optionalInput(Conv2D.bias) {
            try context.expect(biasTensor, is: .float32, role: "bias")
            bias = PackedBuffer(try context.constant(Conv2D.bias).elements(as: Float.self))
        } else {
            bias = PackedBuffer(count: g.outputChannels, initializedTo: 0)
        }
        range = try context.floatActivationRange(activation)
        if !g.isPointwise {
            context.requestScratch(bytes: g.outputHeight * g.outputWidth * g.patchSize * MemoryLayout<Float>.stride)
        }
    }

    func eval(_ memory: TensorMemory) {
        let g = geometry
        let pixels = g.outputHeight * g.outputWidth
        let inputBatchSize = g.inputHeight * g.inputWidth * g.inputChannels
        let outputBatchSize = pixels * g.outputChannels
        let out = memory.output(output, as: Float.self)
        // Start from the bias; SGEMM accumulates the products onto it.
        for row in 0 ..< g.batches * pixels {
            (out + row * g.outputChannels).update(from: bias.pointer, count: g.outputChannels)
        }
        for n in 0 ..< g.batches {
            let source = memory.input(input, as: Float.self) + n * inputBatchSize
            let patches: UnsafePointer<Float>
            if g.isPointwise {
                patches = source
            } else {
                let columns = memory.scratch(as: Float.self)
                im2col(source, into: columns)
                patches = UnsafePointer(columns)
            }
            BLAS.gemm(m: pixels, n: g.outputChannels, k: g.patchSize, a: patches, b: weights.pointer,
                      c: out + n * outputBatchSize, accumulate: true)
        }
        // Clamped even without an activation, as TFLite does (±inf becomes ±greatestFiniteMagnitude).
        let lower = range.lowerBound, upper = range.upperBound
        for i in 0 ..< g.batches * outputBatchSize { out[i] = min(max(out[i], lower), upper) }
    }

    /// Lays out each output pixel's receptive field as one row, zero where it falls in the padding.
    private func im2col(_ source: UnsafePointer<Float>, into columns: UnsafeMutablePointer<Float>) {
        let g = geometry
        let c = g.inputChannels
        var row = columns
        for oy in 0 ..< g.outputHeight {
            for ox in 0 ..< g.outputWidth {
                var dst = row
                for ky in 0 ..< g.filterHeight {
                    let iy = oy * g.strideHeight - g.padTop + ky * g.dilationHeight
                    for kx in 0 ..< g.filterWidth {
                        let ix = ox * g.strideWidth - g.padLeft + kx * g.dilationWidth
                        if iy >= 0, iy < g.inputHeight, ix >= 0, ix < g.inputWidth {
                            dst.update(from: source + (iy * g.inputWidth + ix) * c, count: c)
                        } else {
                            dst.update(repeating: 0, count: c)
                        }
                        dst += c
                    }
                }
                row += g.patchSize
            }
        }
    }
}
