/// CONV_2D: `output[n, y, x, o] = act(bias[o] + Σ input[n, y·s + ky·d − pad, x·s + kx·d − pad, i] · filter[o, ky, kx, i])`.
///
/// Float32 is a matrix product (`FloatGEMM`) of the pixels' receptive fields by the filter, which is
/// packed at prepare time; see `Conv2DFloat32` for how the receptive fields are read.
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

        if input.shape[3] != filter.shape[3] {
            return try prepareGrouped(&context, geometry: geometry, groups: input.shape[3] / filter.shape[3], activation: options.activation)
        }
        switch input.dataType {
        case .float32 where filter.dataType == .int8:
            return try prepareHybrid(&context, geometry: geometry, activation: options.activation)
        case .float32:
            return try Conv2DFloat32(&context, geometry: geometry, activation: options.activation)
        case .uint8, .int8:
            return try prepareQuantized(&context, geometry: geometry, activation: options.activation)
        default:
            throw context.unsupported("input type \(input.dataType)")
        }
    }
}

extension Conv2D.Geometry {
    /// Calls `body` for every output pixel, batch by batch and row by row: its batch, the input
    /// position of its window's top-left tap (padding included), and the element offset of its
    /// channel 0 in the output.
    @inline(__always)
    func forEachOutputPixel(_ body: (_ batch: Int, _ originY: Int, _ originX: Int, _ outputOffset: Int) -> Void) {
        for b in 0 ..< batches {
            for outY in 0 ..< outputHeight {
                for outX in 0 ..< outputWidth {
                    body(b, outY * strideHeight - padTop, outX * strideWidth - padLeft,
                         ((b * outputHeight + outY) * outputWidth + outX) * outputChannels)
                }
            }
        }
    }

    /// Calls `body(pixelOffset, tap)` for each filter tap of the window at `originY`, `originX`
    /// (top-left, padding included) of batch `batch` that falls inside the input, row by row:
    /// `pixelOffset` is the element offset of that input pixel's channel 0, `tap` is
    /// `fy · filterWidth + fx`. Taps in the padding are skipped (they would read zeros).
    @inline(__always)
    func forEachTapInside(batch: Int, originY: Int, originX: Int, _ body: (_ pixelOffset: Int, _ tap: Int) -> Void) {
        for fy in 0 ..< filterHeight {
            let inY = originY + fy * dilationHeight
            guard inY >= 0 && inY < inputHeight else { continue }
            for fx in 0 ..< filterWidth {
                let inX = originX + fx * dilationWidth
                guard inX >= 0 && inX < inputWidth else { continue }
                body(((batch * inputHeight + inY) * inputWidth + inX) * inputChannels, fy * filterWidth + fx)
            }
        }
    }
}
