/// Shapes and window placement of a 2-D pooling operator (AVERAGE_POOL_2D, MAX_POOL_2D), shared by
/// the float and quantized kernels. Tensors are NHWC; pooling never mixes channels.
struct Pool2DGeometry: Sendable, Equatable {
    var batches, inputHeight, inputWidth, channels: Int
    var outputHeight, outputWidth: Int
    var filterHeight, filterWidth: Int
    var strideHeight, strideWidth: Int
    var padTop, padLeft: Int

    /// The input rows under the window of output row `oy`, clipped to the input (the padding
    /// contributes nothing, not even to an average's count).
    @inline(__always)
    func inputRows(_ oy: Int) -> Range<Int> {
        let origin = oy * strideHeight - padTop
        return max(origin, 0) ..< min(origin + filterHeight, inputHeight)
    }

    /// The input columns under the window of output column `ox`, clipped to the input.
    @inline(__always)
    func inputColumns(_ ox: Int) -> Range<Int> {
        let origin = ox * strideWidth - padLeft
        return max(origin, 0) ..< min(origin + filterWidth, inputWidth)
    }

    var outputShape: [Int] { [batches, outputHeight, outputWidth, channels] }
}

extension PrepareContext {
    /// Validates a pooling operator's input and window, and places the window as TFLite does
    /// (dilation 1; SAME puts any odd padding pixel at the end).
    func pool2DGeometry(_ options: Pool2DOptions, input: TensorDescriptor) throws(ModelError) -> Pool2DGeometry {
        try expect(input, rank: 4, role: "input")
        let rows = try window(options.padding, input: input.shape[1], filter: options.filterHeight,
                              stride: options.strideHeight, dilation: 1, axis: "height")
        let cols = try window(options.padding, input: input.shape[2], filter: options.filterWidth,
                              stride: options.strideWidth, dilation: 1, axis: "width")
        let geometry = Pool2DGeometry(
            batches: input.shape[0], inputHeight: input.shape[1], inputWidth: input.shape[2], channels: input.shape[3],
            outputHeight: rows.outputSize, outputWidth: cols.outputSize,
            filterHeight: options.filterHeight, filterWidth: options.filterWidth,
            strideHeight: options.strideHeight, strideWidth: options.strideWidth,
            padTop: rows.paddingBefore, padLeft: cols.paddingBefore)
        // Every output's window rows and columns form a non-empty range inside the input (the
        // kernels read only those and divide by their count; `inputRows`/`inputColumns` would trap
        // on a window past the input's end): checked here, without building the ranges.
        func covers(_ outputs: Int, stride: Int, pad: Int, filter: Int, input: Int) -> Bool {
            (0 ..< outputs).allSatisfy { o in
                let origin = o * stride - pad
                return max(origin, 0) < min(origin + filter, input)
            }
        }
        guard covers(geometry.outputHeight, stride: geometry.strideHeight, pad: geometry.padTop,
                     filter: geometry.filterHeight, input: geometry.inputHeight),
              covers(geometry.outputWidth, stride: geometry.strideWidth, pad: geometry.padLeft,
                     filter: geometry.filterWidth, input: geometry.inputWidth) else {
            throw invalid("a pooling window of \(geometry.filterHeight)x\(geometry.filterWidth) (stride \(geometry.strideHeight)x\(geometry.strideWidth)) covers no pixel of input \(input.shape)")
        }
        return geometry
    }

    /// What AVERAGE_POOL_2D and MAX_POOL_2D prepare alike: their options, one input and one
    /// output, the window, the output shape; for a float32 input also the output type and the
    /// clamp. The caller picks its kernel by `type` (the quantized ones compute their own clamp).
    mutating func pool2D(input slot: Int, output: Int) throws(ModelError)
        -> (geometry: Pool2DGeometry, activation: FusedActivation, type: DataType, floatRange: ClosedRange<Float>) {
        guard case .pool2D(let options) = node.options else { throw invalid("missing Pool2DOptions") }
        try expect(inputs: 1 ... 1, outputs: 1)
        let input = try self.input(slot)
        let geometry = try pool2DGeometry(options, input: input)
        try setOutputShape(output, geometry.outputShape)
        var range = -Float.greatestFiniteMagnitude ... Float.greatestFiniteMagnitude
        switch input.dataType {
        case .float32:
            try expect(try self.output(output), is: .float32, role: "output")
            range = try floatActivationRange(options.activation)
        case .uint8, .int8: break
        default: throw unsupported("input type \(input.dataType)")
        }
        return (geometry, options.activation, input.dataType, range)
    }
}
