/// TRANSPOSE_CONV: the gradient of a convolution ("deconvolution"). Inputs: the constant int32
/// output shape `[N, H, W, O]` (slot 0), the constant filter `[O, kH, kW, I]` (slot 1), the
/// input `[N, h, w, I]` (slot 2) and an optional bias `[O]` (slot 3); options padding, strides
/// and a fused activation.
///
/// TFLite's reference kernel scatters: every input pixel adds `input · filter` into the output
/// window at `(y·strideH − padTop, x·strideW − padLeft)`, looping over batch, input row, input
/// column, input channel, filter row, filter column, output channel — the float sums here run in
/// that order. Padding is the convolution padding that maps the *output* size back onto the input
/// (`ComputePaddingHeightWidth` on the output's height and width), the smaller half first.
/// float32 here; int8 and uint8 in `TransposeConv+Quantized.swift`.
enum TransposeConv {
    static let outputShape = 0, filter = 1, input = 2, bias = 3, output = 0

    /// The validated shapes and window placement.
    struct Geometry: Sendable {
        var batches: Int, inputHeight: Int, inputWidth: Int, inputChannels: Int
        var outputHeight: Int, outputWidth: Int, outputChannels: Int
        var filterHeight: Int, filterWidth: Int
        var strideHeight: Int, strideWidth: Int
        var padTop: Int, padLeft: Int
    }

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .transposeConv(let options) = context.node.options else { throw context.invalid("missing TransposeConvOptions") }
        try context.expect(inputs: 3 ... 4, outputs: 1)
        let input = try context.input(Self.input), filter = try context.input(Self.filter)
        let shape = try context.integerConstant(Self.outputShape, role: "output_shape")
        try context.expect(input, rank: 4, role: "input")
        try context.expect(filter, rank: 4, role: "filter")
        guard shape.count == 4, shape.allSatisfy({ $0 >= 1 }) else {
            throw context.invalid("output_shape \(shape) must hold four positive sizes")
        }
        guard shape[0] == input.shape[0], shape[3] == filter.shape[0], filter.shape[3] == input.shape[3] else {
            throw context.invalid("output_shape \(shape), filter \(filter.shape) and input \(input.shape) disagree (batch, output channels or input channels)")
        }
        guard options.strideHeight >= 1, options.strideWidth >= 1, options.strideHeight <= 1 << 16, options.strideWidth <= 1 << 16 else {
            throw context.invalid("strides \(options.strideHeight)x\(options.strideWidth) must be in 1...65536")
        }
        let rows = WindowGeometry(padding: options.padding, input: shape[1], filter: filter.shape[1], stride: options.strideHeight, dilation: 1)
        let columns = WindowGeometry(padding: options.padding, input: shape[2], filter: filter.shape[2], stride: options.strideWidth, dilation: 1)
        let geometry = Geometry(batches: input.shape[0], inputHeight: input.shape[1], inputWidth: input.shape[2], inputChannels: input.shape[3],
                                outputHeight: shape[1], outputWidth: shape[2], outputChannels: shape[3],
                                filterHeight: filter.shape[1], filterWidth: filter.shape[2],
                                strideHeight: options.strideHeight, strideWidth: options.strideWidth,
                                padTop: rows.paddingBefore, padLeft: columns.paddingBefore)
        guard filter.isConstant else { throw context.unsupported("filter '\(filter.name)' must be a constant tensor") }
        let bias = context.optionalInput(Self.bias)
        if let bias {
            guard bias.isConstant, bias.elementCount == shape[3] else {
                throw context.invalid("bias '\(bias.name)' must be a constant of \(shape[3]) elements, got \(bias.shape)")
            }
        }
        try context.setOutputShape(Self.output, shape)
        switch input.dataType {
        case .float32:
            try context.expect(filter, is: .float32, role: "filter")
            if let bias { try context.expect(bias, is: .float32, role: "bias") }
            let range = try context.floatActivationRange(options.activation)
            var biasValues: PackedBuffer<Float>?
            if bias != nil { biasValues = PackedBuffer(try context.constant(Self.bias).elements(as: Float.self)) }
            return TransposeConvFloat32(geometry: geometry, filter: PackedBuffer(try context.constant(Self.filter).elements(as: Float.self)),
                                        bias: biasValues, lower: range.lowerBound, upper: range.upperBound,
                                        input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
        case .int8, .uint8:
            return try prepareQuantized(&context, geometry: geometry, activation: options.activation)
        case let type:
            throw context.unsupported("input type \(type), expected float32, int8 or uint8")
        }
    }
}

struct TransposeConvFloat32: Kernel {
    let geometry: TransposeConv.Geometry
    /// `[O, kH, kW, I]`.
    let filter: PackedBuffer<Float>
    let bias: PackedBuffer<Float>?
    let lower: Float, upper: Float
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        let g = geometry
        let x = memory.input(input, as: Float.self), y = memory.output(output, as: Float.self), w = filter.pointer
        let outputCount = g.batches * g.outputHeight * g.outputWidth * g.outputChannels
        y.update(repeating: 0, count: outputCount)
        for b in 0 ..< g.batches {
            for inY in 0 ..< g.inputHeight {
                for inX in 0 ..< g.inputWidth {
                    for inC in 0 ..< g.inputChannels {
                        let value = x[((b * g.inputHeight + inY) * g.inputWidth + inX) * g.inputChannels + inC]
                        let originY = inY * g.strideHeight - g.padTop, originX = inX * g.strideWidth - g.padLeft
                        for fy in 0 ..< g.filterHeight {
                            let outY = originY + fy
                            guard outY >= 0 && outY < g.outputHeight else { continue }
                            for fx in 0 ..< g.filterWidth {
                                let outX = originX + fx
                                guard outX >= 0 && outX < g.outputWidth else { continue }
                                let out = y + ((b * g.outputHeight + outY) * g.outputWidth + outX) * g.outputChannels
                                for oc in 0 ..< g.outputChannels {
                                    out[oc] += value * w[((oc * g.filterHeight + fy) * g.filterWidth + fx) * g.inputChannels + inC]
                                }
                            }
                        }
                    }
                }
            }
        }
        for i in 0 ..< outputCount {
            let sum = y[i] + (bias?.pointer[i % g.outputChannels] ?? 0)
            y[i] = FloatGEMM.clamp(sum, lower, upper)
        }
    }
}
