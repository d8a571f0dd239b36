/// RESIZE_BILINEAR: resizes `[batch, height, width, channels]` to the constant int32 `size`
/// `[newHeight, newWidth]`, interpolating the four nearest input pixels.
///
/// Source coordinates follow TFLite's reference kernel in float arithmetic and in its operation
/// order: scale `in / out` (or `(in − 1) / (out − 1)` with align_corners), `y = (o + 0.5)·scale − 0.5`
/// with half_pixel_centers else `o·scale`, lower index `max(floor(y), 0)`, upper `min(ceil(y), in − 1)`.
enum ResizeBilinear {
    static let input = 0, size = 1, output = 0

    /// One output row's or column's sources: the two input indices and the fractional coordinate.
    struct Sample: Sendable, Equatable {
        var lower: Int, upper: Int
        var position: Float
    }

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .resizeBilinear(let options) = context.node.options else { throw context.invalid("missing ResizeBilinearOptions") }
        try context.expect(inputs: 2 ... 2, outputs: 1)
        let input = try context.input(Self.input), sizeTensor = try context.input(Self.size)
        try context.expect(input, rank: 4, role: "input")
        try context.expect(sizeTensor, is: .int32, role: "size")
        guard sizeTensor.shape == [2] else { throw context.invalid("size has shape \(sizeTensor.shape), expected [2]") }
        guard input.shape[1] > 0, input.shape[2] > 0 else { throw context.invalid("input shape \(input.shape) has no pixels to sample") }
        let size = try context.constant(Self.size).elements(as: Int32.self).map(Int.init)
        guard size.allSatisfy({ (1 ... 1 << 20).contains($0) }) else { throw context.invalid("output size \(size) must be positive") }
        guard !(options.alignCorners && options.halfPixelCenters) else {
            throw context.invalid("align_corners and half_pixel_centers cannot both be true")
        }
        let output = try context.output(Self.output)
        guard output.dataType == input.dataType else {
            throw context.invalid("output type \(output.dataType) differs from input type \(input.dataType)")
        }
        let shape = [input.shape[0], size[0], size[1], input.shape[3]]
        try context.setOutputShape(Self.output, shape)
        let rows = samples(input: input.shape[1], output: size[0], options)
        let columns = samples(input: input.shape[2], output: size[1], options)
        // Every row's and column's lower/upper index is in 0 ..< input size: checked here, and
        // eval reads the input only at those indices.
        try checkInBounds(rows.map { ($0.lower, $0.upper) }, input: input.shape[1], axis: "row", &context)
        try checkInBounds(columns.map { ($0.lower, $0.upper) }, input: input.shape[2], axis: "column", &context)
        switch input.dataType {
        case .float32:
            return ResizeBilinearFloatPath<Float>(input: context.node.inputs[Self.input], output: context.node.outputs[Self.output],
                                         inputShape: input.shape, rows: rows, columns: columns)
        case .uint8, .int8:
            return try prepareQuantized(&context, options: options)
        case let type:
            throw context.unsupported("input type \(type)")
        }
    }

    /// The source coordinates of every output index along one axis, computed as TFLite's
    /// `ComputeInterpolationValues` does (all in float).
    ///
    /// TFLite clamps the upper index to `in − 1` but not the lower one; here the lower index is
    /// clamped to `in − 1` as well, so that no rounding of the position can point it past the
    /// input. Where TFLite's lower index is inside the input the two agree; where it is not, TFLite
    /// reads outside its input and this kernel reads the last row or column instead (then both
    /// taps are the same pixel and the weights sum to one).
    static func samples(input: Int, output: Int, _ options: ResizeBilinearOptions) -> [Sample] {
        var scale = Float(input) / Float(output)
        if options.alignCorners && output > 1 { scale = Float(input - 1) / Float(output - 1) }
        return (0 ..< output).map { o in
            let position = options.halfPixelCenters ? (Float(o) + 0.5) * scale - 0.5 : Float(o) * scale
            let lower = min(max(Int(position.rounded(.down)), 0), input - 1)
            return Sample(lower: lower, upper: min(max(Int(position.rounded(.up)), 0), input - 1), position: position)
        }
    }

    /// Throws unless every `(lower, upper)` pair is inside `0 ..< input`: the invariant that lets
    /// eval address the input without checks.
    static func checkInBounds(_ indices: [(Int, Int)], input: Int, axis: String,
                              _ context: inout PrepareContext) throws(ModelError) {
        for (o, (lower, upper)) in indices.enumerated() where !(0 ..< input).contains(lower) || !(0 ..< input).contains(upper) {
            throw context.invalid("output \(axis) \(o) samples input \(axis)s \(lower) and \(upper), outside 0 ..< \(input)")
        }
    }
}

/// Element types that TFLite's reference RESIZE_BILINEAR interpolates in float: float32 itself,
/// and uint8 (read as float, rounded back by adding 0.5 and truncating like the C++ conversion).
protocol FloatInterpolated {
    var interpolationValue: Float { get }
    static func fromInterpolated(_ value: Float) -> Self
}

extension Float: FloatInterpolated {
    @inline(__always) var interpolationValue: Float { self }
    @inline(__always) static func fromInterpolated(_ value: Float) -> Float { value }
}

extension UInt8: FloatInterpolated {
    @inline(__always) var interpolationValue: Float { Float(self) }
    /// C++ converts to uint8 through a 32-bit truncation.
    @inline(__always) static func fromInterpolated(_ value: Float) -> UInt8 {
        UInt8(truncatingIfNeeded: truncatingToInt32LikeX86(value + 0.5))
    }
}

/// Bilinear resizing in float arithmetic (float32, and uint8 as the reference kernel does it).
/// Threads take ranges of the output rows (of all batches, in order).
struct ResizeBilinearFloatPath<T: FloatInterpolated>: PartitionedKernel {
    let input: Int, output: Int
    let inputShape: [Int]
    let rows: [ResizeBilinear.Sample], columns: [ResizeBilinear.Sample]

    func eval(_ memory: TensorMemory) {
        // Four products and three sums per element: counted as 8 of a convolution's multiply-adds.
        let outputRows = inputShape[0] * rows.count
        memory.parallelize(self, count: outputRows, work: outputRows * columns.count * inputShape[3] * 8)
    }

    // Kernels run behind `any Kernel`; these make the witness jump to the specialisations.
    @_specialize(where T == Float)
    @_specialize(where T == UInt8)
    func evalPart(_ units: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let (height, width, channels) = (inputShape[1], inputShape[2], inputShape[3])
        let source = memory.input(input, as: T.self)
        var out = memory.output(output, as: T.self) + units.lowerBound * columns.count * channels
        for unit in units {
            let image = source + unit / rows.count * height * width * channels, row = rows[unit % rows.count]
            let dy = row.position - Float(row.lower)
            let top = image + row.lower * width * channels, bottom = image + row.upper * width * channels
            for column in columns {
                let dx = column.position - Float(column.lower)
                let p00 = top + column.lower * channels, p01 = top + column.upper * channels
                let p10 = bottom + column.lower * channels, p11 = bottom + column.upper * channels
                // The reference kernel's expression, term by term and left to right.
                for c in 0 ..< channels {
                    let a = p00[c].interpolationValue * (1 - dy) * (1 - dx)
                    let b = p10[c].interpolationValue * dy * (1 - dx)
                    let d = p01[c].interpolationValue * (1 - dy) * dx
                    let e = p11[c].interpolationValue * dy * dx
                    out[c] = T.fromInterpolated(a + b + d + e)
                }
                out += channels
            }
        }
    }
}
