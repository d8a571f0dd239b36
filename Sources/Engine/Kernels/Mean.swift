/// MEAN: the average of the input over the axes listed in the constant int32 input 1 (negative
/// axes count from the end; repeats count once). `keep_dims` keeps each reduced axis with size 1.
enum Mean {
    static let input = 0, axes = 1, output = 0

    /// A validated reduction, shared by the float and quantized kernels.
    struct Reduction: Sendable {
        var inputShape: [Int]
        /// The axes as the model lists them (TFLite picks its quantized special case from these).
        var declaredAxes: [Int]
        /// The reduced axes: normalised to `0 ..< rank`, sorted, without repeats.
        var axes: [Int]
        var keepDims: Bool
        var outputShape: [Int]
        /// Input elements averaged into each output element.
        var count: Int

        /// The input with size-1 dimensions dropped and neighbouring dimensions that are both reduced
        /// or both kept merged, outermost first; never empty. `[1, H, W, C]` over axes 1 and 2 becomes
        /// `([H·W, C], [true, false])`.
        func mergedDimensions() -> (extents: [Int], reduced: [Bool]) {
            var extents = [Int](), reduced = [Bool]()
            for (axis, extent) in inputShape.enumerated() where extent != 1 {
                let isReduced = axes.contains(axis)
                if let last = reduced.last, last == isReduced {
                    extents[extents.count - 1] *= extent
                } else {
                    extents.append(extent)
                    reduced.append(isReduced)
                }
            }
            return extents.isEmpty ? ([1], [false]) : (extents, reduced)
        }
    }

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        let reduction = try Self.reduction(&context)
        let input = try context.input(Self.input)
        switch input.dataType {
        case .float32:
            try context.expect(try context.output(Self.output), is: .float32, role: "output")
            return MeanFloat32(reduction, input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
        case .uint8, .int8:
            return try prepareQuantized(&context, reduction: reduction)
        default:
            throw context.unsupported("input type \(input.dataType)")
        }
    }

    /// Validates a reduction (MEAN, SUM, REDUCE_MAX: input 0, constant int32 axes in input 1,
    /// `keep_dims`) and sets the output's shape.
    static func reduction(_ context: inout PrepareContext) throws(ModelError) -> Reduction {
        guard case .reducer(let keepDims) = context.node.options else { throw context.invalid("missing ReducerOptions") }
        try context.expect(inputs: 2 ... 2, outputs: 1)
        let input = try context.input(Self.input), axesTensor = try context.input(Self.axes)
        try context.expect(axesTensor, is: .int32, role: "axes")
        let declared = try context.constant(Self.axes).elements(as: Int32.self).map(Int.init)
        let rank = input.shape.count
        var reduced = [Bool](repeating: false, count: rank)
        for axis in declared {
            guard axis >= -rank, axis < rank else {
                throw context.invalid("axis \(axis) is out of range for input '\(input.name)' of rank \(rank) (shape \(input.shape))")
            }
            reduced[axis < 0 ? axis + rank : axis] = true
        }
        let axes = (0 ..< rank).filter { reduced[$0] }
        let outputShape = keepDims
            ? input.shape.indices.map { reduced[$0] ? 1 : input.shape[$0] }
            : input.shape.indices.filter { !reduced[$0] }.map { input.shape[$0] }
        try context.setOutputShape(Self.output, outputShape)
        return Reduction(inputShape: input.shape, declaredAxes: declared, axes: axes, keepDims: keepDims,
                         outputShape: outputShape, count: axes.reduce(1) { $0 * input.shape[$1] })
    }
}

/// A reduction's input as the kernels walk it: merged dimensions in memory order (size-1
/// dimensions dropped, neighbours that are both reduced or both kept joined), with each
/// dimension's element stride in the output (0 where it is reduced). Computed once at prepare for
/// MEAN, SUM, REDUCE_MAX and REDUCE_PROD.
struct ReductionLayout: Sendable {
    /// Merged dimensions, outermost first; never empty.
    let extents: [Int]
    /// Element strides of each merged dimension in the output (0 where reduced).
    let outputStrides: [Int]
    let inputCount: Int, outputCount: Int
    /// Whether the merged dimensions are `[reduced, kept]`: a spatial mean's (`ColumnSums`).
    let sumsColumns: Bool

    init(_ r: Mean.Reduction) {
        let (extents, reduced) = r.mergedDimensions()
        var outputStrides = [Int](repeating: 0, count: extents.count), stride = 1
        for d in extents.indices.reversed() where !reduced[d] {
            outputStrides[d] = stride
            stride *= extents[d]
        }
        self.extents = extents
        self.outputStrides = outputStrides
        inputCount = r.inputShape.reduce(1, *)
        outputCount = r.outputShape.reduce(1, *)
        sumsColumns = reduced == [true, false]
    }

    /// Adds every element of `source` (the input, `inputCount` elements) into its output's sum
    /// in `sums` (`outputCount`, as they are: zero them first), each output's elements in input
    /// order: column sums for `[reduced, kept]`, else a walk in memory order.
    func addSums<Element: ColumnSummand>(_ source: UnsafePointer<Element>, into sums: UnsafeMutablePointer<Element.Sum>) {
        if sumsColumns {
            ColumnSums.add(source, rows: extents[0], columns: extents[1], into: sums)
        } else {
            var source = source
            accumulate(0, &source, sums)
        }
    }

    /// Adds the inputs under dimension `d` into their outputs, consuming `source` in memory order.
    private func accumulate<Element: ColumnSummand>(_ d: Int, _ source: inout UnsafePointer<Element>,
                                                    _ sums: UnsafeMutablePointer<Element.Sum>) {
        let n = extents[d], stride = outputStrides[d]
        if d == extents.count - 1 {
            if stride == 0 {
                var sum = sums[0]
                for i in 0 ..< n { sum = Element.adding(sum, source[i]) }
                sums[0] = sum
            } else {
                for i in 0 ..< n { sums[i] = Element.adding(sums[i], source[i]) }
            }
            source += n
            return
        }
        for i in 0 ..< n { accumulate(d + 1, &source, sums + i * stride) }
    }
}

/// Float32 mean. Sums each output element's inputs in input order (as TFLite's reference kernel
/// does), then divides by their count. The input is walked in memory order over its merged
/// dimensions (`ReductionLayout`), which is input order for every output: `[1, H, W, C]` over
/// axes 1 and 2 is `[H·W (reduced), C]`, one add of `C` channels per pixel (`ColumnSums`).
struct MeanFloat32: Kernel {
    let layout: ReductionLayout
    let count: Float
    let input: Int, output: Int

    init(_ r: Mean.Reduction, input: Int, output: Int) {
        layout = ReductionLayout(r)
        count = Float(r.count)
        self.input = input
        self.output = output
    }

    func eval(_ memory: TensorMemory) {
        let out = memory.output(output, as: Float.self)
        out.update(repeating: 0, count: layout.outputCount)
        layout.addSums(memory.input(input, as: Float.self), into: out)
        // An empty reduction gives 0 / 0 = NaN, as TFLite does.
        for i in 0 ..< layout.outputCount { out[i] = out[i] / count }
    }
}
