/// RESIZE_NEAREST_NEIGHBOR: resizes `[batch, height, width, channels]` to the constant int32 `size`
/// `[newHeight, newWidth]` by copying, for each output pixel, one input pixel.
///
/// The source index follows TFLite's reference kernel in float arithmetic: scale `in / out` (or
/// `(in − 1) / (out − 1)` with align_corners), `(o + offset) · scale` with offset 0.5 for
/// half_pixel_centers, then `round` (half away from zero) with align_corners or `floor` otherwise,
/// clamped to `0 ... in − 1`. Values are copied unchanged, so one kernel serves every element type;
/// quantized tensors must keep their quantization.
enum ResizeNearestNeighbor {
    static let input = 0, size = 1, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .resizeNearestNeighbor(let options) = context.node.options else {
            throw context.invalid("missing ResizeNearestNeighborOptions")
        }
        try context.expect(inputs: 2 ... 2, outputs: 1)
        let input = try context.input(Self.input), sizeTensor = try context.input(Self.size)
        let output = try context.output(Self.output)
        try context.expect(input, rank: 4, role: "input")
        try context.expect(sizeTensor, is: .int32, role: "size")
        guard sizeTensor.shape == [2] else { throw context.invalid("size has shape \(sizeTensor.shape), expected [2]") }
        guard input.shape[1] > 0, input.shape[2] > 0 else { throw context.invalid("input shape \(input.shape) has no pixels to copy") }
        let size = try context.constant(Self.size).elements(as: Int32.self).map(Int.init)
        guard size.allSatisfy({ (1 ... 1 << 20).contains($0) }) else { throw context.invalid("output size \(size) must be positive") }
        guard output.dataType == input.dataType, let elementSize = input.dataType.byteSize else {
            throw context.unsupported("input \(input.dataType) / output \(output.dataType): the types must match and have a fixed size")
        }
        if input.dataType != .float32 {
            let q = input.quantization, r = output.quantization
            guard q?.scale == r?.scale, q?.zeroPoint == r?.zeroPoint else {
                throw context.unsupported("output quantization differs from the input's; nearest-neighbour resizing only copies")
            }
        }
        try context.setOutputShape(Self.output, [input.shape[0], size[0], size[1], input.shape[3]])
        let rows = sources(input: input.shape[1], output: size[0], options)
        let columns = sources(input: input.shape[2], output: size[1], options)
        // Every source row and column is in 0 ..< input size (sources clamps them): checked here,
        // and eval reads the input only there.
        guard rows.allSatisfy({ (0 ..< input.shape[1]).contains($0) }), columns.allSatisfy({ (0 ..< input.shape[2]).contains($0) }) else {
            throw context.invalid("a source index falls outside input shape \(input.shape)")
        }
        return ResizeNearestNeighborKernel(
            input: context.node.inputs[Self.input], output: context.node.outputs[Self.output],
            batches: input.shape[0], inputHeight: input.shape[1], inputWidth: input.shape[2],
            pixelBytes: input.shape[3] * elementSize,
            rows: PackedBuffer(rows), columns: PackedBuffer(columns))
    }

    /// The input index each output index copies from, along one axis.
    static func sources(input: Int, output: Int, _ options: ResizeBilinearOptions) -> [Int] {
        let scale = options.alignCorners && output > 1 ? Float(input - 1) / Float(output - 1) : Float(input) / Float(output)
        let offset: Float = options.halfPixelCenters ? 0.5 : 0
        return (0 ..< output).map { o in
            let position = (Float(o) + offset) * scale
            // Float.rounded() rounds half away from zero, like TfLiteRound.
            let index = Int(options.alignCorners ? position.rounded() : position.rounded(.down))
            return max(0, min(index, input - 1))
        }
    }
}

/// Copies one input pixel (all channels) per output pixel.
struct ResizeNearestNeighborKernel: Kernel {
    let input: Int, output: Int
    let batches: Int, inputHeight: Int, inputWidth: Int
    let pixelBytes: Int
    let rows: PackedBuffer<Int>, columns: PackedBuffer<Int>

    func eval(_ memory: TensorMemory) {
        let source = UnsafeRawPointer(memory.raw(input))
        var destination = memory.raw(output)
        for n in 0 ..< batches {
            let image = source + n * inputHeight * inputWidth * pixelBytes
            for oy in 0 ..< rows.count {
                let row = image + rows.pointer[oy] * inputWidth * pixelBytes
                for ox in 0 ..< columns.count {
                    destination.copyMemory(from: row + columns.pointer[ox] * pixelBytes, byteCount: pixelBytes)
                    destination += pixelBytes
                }
            }
        }
    }
}
