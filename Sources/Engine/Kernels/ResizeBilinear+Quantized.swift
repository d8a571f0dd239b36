extension ResizeBilinear {
    /// uint8/int8 resize. The output shape is set and the options validated.
    ///
    /// TFLite's BUILTIN_REF resolver runs two different kernels here: int8 uses the fixed-point
    /// `ResizeBilinearInteger` (coordinates with 10 fractional bits, a 64-bit weighted sum rounded
    /// half away from zero), uint8 the float `ResizeBilinear<uint8_t>` (the float kernel's
    /// coordinates and expression, plus 0.5, truncated).
    static func prepareQuantized(_ context: inout PrepareContext, options: ResizeBilinearOptions) throws(ModelError) -> any Kernel {
        let input = try context.input(Self.input), output = try context.output(Self.output)
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        if input.dataType == .uint8 {
            // The float samples' indices were checked in `prepare`.
            return ResizeBilinearFloatPath<UInt8>(input: i, output: o, inputShape: input.shape,
                                       rows: samples(input: input.shape[1], output: output.shape[1], options),
                                       columns: samples(input: input.shape[2], output: output.shape[2], options))
        }
        let rows = fixedPointSamples(input: input.shape[1], output: output.shape[1], options)
        let columns = fixedPointSamples(input: input.shape[2], output: output.shape[2], options)
        // Every row's and column's lower/upper index is in 0 ..< input size: checked here, and
        // eval reads the input only at those indices.
        try checkInBounds(rows.map { ($0.lower, $0.upper) }, input: input.shape[1], axis: "row", &context)
        try checkInBounds(columns.map { ($0.lower, $0.upper) }, input: input.shape[2], axis: "column", &context)
        return ResizeBilinearInt8(input: i, output: o, inputShape: input.shape, rows: rows, columns: columns)
    }

    /// One output row's or column's sources in 10-bit fixed point (TFLite's
    /// `ComputeInterpolationValuesInteger`): the two input indices and the weight of the upper
    /// one, `position − 1024 · lower` (it can leave 0 ... 1024 at a half-pixel border).
    ///
    /// The scale is rounded to 10 bits, so the last positions can pass the input's end: 8 rows
    /// resized to 242 give scale `(8192 + 121) / 242 = 34` and position `241 · 34 = 8194`, lower
    /// index 8. TFLite reads that row outside its input (its bytes are whatever follows the
    /// tensor). Here the lower index is clamped to `in − 1`, where the upper index already is, so
    /// both taps read the last row or column and the result is that pixel (the weights sum to
    /// 1024); wherever TFLite's lower index is inside the input the bytes are TFLite's. The weight
    /// stays TFLite's, from the unclamped index.
    struct FixedPointSample: Sendable, Equatable {
        var lower: Int, upper: Int
        var weight: Int64
    }

    static func fixedPointSamples(input: Int, output: Int, _ options: ResizeBilinearOptions) -> [FixedPointSample] {
        let one = 1 << 10
        // Integer divisions truncate toward zero, as in C++.
        var scale = (one * input + output / 2) / output
        if options.alignCorners && output > 1 { scale = (one * (input - 1) + (output - 1) / 2) / (output - 1) }
        return (0 ..< output).map { o in
            let position = options.halfPixelCenters ? o * scale + scale / 2 - one / 2 : o * scale
            let lower = max(position / one, 0), upper = min((position + one - 1) / one, input - 1)
            return FixedPointSample(lower: min(lower, input - 1), upper: max(upper, 0), weight: Int64(position - one * lower))
        }
    }
}

/// int8 bilinear resize in 10-bit fixed point.
struct ResizeBilinearInt8: Kernel {
    let input: Int, output: Int
    let inputShape: [Int]
    let rows: [ResizeBilinear.FixedPointSample], columns: [ResizeBilinear.FixedPointSample]

    func eval(_ memory: TensorMemory) {
        let (batches, height, width, channels) = (inputShape[0], inputShape[1], inputShape[2], inputShape[3])
        let source = memory.input(input, as: Int8.self)
        var out = memory.output(output, as: Int8.self)
        let one: Int64 = 1 << 10, half: Int64 = 1 << 19
        for b in 0 ..< batches {
            let image = source + b * height * width * channels
            for row in rows {
                let dy = row.weight
                let top = image + row.lower * width * channels, bottom = image + row.upper * width * channels
                for column in columns {
                    let dx = column.weight
                    let p00 = top + column.lower * channels, p01 = top + column.upper * channels
                    let p10 = bottom + column.lower * channels, p11 = bottom + column.upper * channels
                    for c in 0 ..< channels {
                        let sum = Int64(p00[c]) * (one - dy) * (one - dx) + Int64(p10[c]) * dy * (one - dx)
                            + Int64(p01[c]) * (one - dy) * dx + Int64(p11[c]) * dy * dx
                        // Division truncates toward zero: with the signed offset this rounds half away.
                        let rounded = (sum + (sum > 0 ? half : -half)) / (1 << 20)
                        out[c] = Int8(truncatingIfNeeded: rounded)
                    }
                    out += channels
                }
            }
        }
    }
}
