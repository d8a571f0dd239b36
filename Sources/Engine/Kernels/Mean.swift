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

/// Float32 mean. Sums each output element's inputs in input order (as TFLite's reference kernel
/// does), then divides by their count.
///
/// The input is viewed with size-1 dimensions dropped and neighbouring dimensions that are both
/// reduced or both kept merged, so `[1, H, W, C]` over axes 1 and 2 becomes `[H·W (reduced), C]`:
/// one contiguous, vectorisable add of `C` channels per pixel.
/// A reduction's input as the integer kernels walk it: merged dimensions in memory order, with
/// each dimension's element stride in the output (0 where it is reduced). Computed once at
/// prepare for quantized MEAN, SUM, REDUCE_MAX and REDUCE_PROD.
struct ReductionLayout: Sendable {
    /// Merged dimensions, outermost first; never empty.
    let extents: [Int]
    /// Element strides of each merged dimension in the output (0 where reduced).
    let outputStrides: [Int]
    let inputCount: Int, outputCount: Int

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
    }
}

struct MeanFloat32: Kernel {
    /// Merged dimensions, outermost first; never empty.
    let extents: [Int]
    let reduced: [Bool]
    /// Element strides of each merged dimension in the input and in the output (0 when reduced).
    let inputStrides: [Int], outputStrides: [Int]
    let outputCount: Int
    let count: Float
    let input: Int, output: Int

    init(_ r: Mean.Reduction, input: Int, output: Int) {
        let (extents, reduced) = r.mergedDimensions()
        var inputStrides = [Int](repeating: 0, count: extents.count), outputStrides = inputStrides
        var inputStride = 1, outputStride = 1
        for d in extents.indices.reversed() {
            inputStrides[d] = inputStride
            inputStride *= extents[d]
            if !reduced[d] {
                outputStrides[d] = outputStride
                outputStride *= extents[d]
            }
        }
        self.extents = extents
        self.reduced = reduced
        self.inputStrides = inputStrides
        self.outputStrides = outputStrides
        outputCount = r.outputShape.reduce(1, *)
        count = Float(r.count)
        self.input = input
        self.output = output
    }

    func eval(_ memory: TensorMemory) {
        let out = memory.output(output, as: Float.self)
        out.update(repeating: 0, count: outputCount)
        if reduced == [true, false] {
            Self.sumColumns(memory.input(input, as: Float.self), rows: extents[0], columns: extents[1], into: out)
        } else {
            accumulate(0, memory.input(input, as: Float.self), out)
        }
        // An empty reduction gives 0 / 0 = NaN, as TFLite does.
        for i in 0 ..< outputCount { out[i] = out[i] / count }
    }

    /// Adds each column of the row-major `rows × columns` matrix at `source` into `sums[column]`,
    /// row after row as `accumulate` does (so the same float sums): a spatial mean of an image's
    /// channels. Sixteen columns per vector and up to 64 per pass over a block of rows, the sums
    /// in registers instead of memory; the last columns (fewer than 16) one at a time. The rows
    /// go in blocks of about 16 KiB, so that every pass after a block's first reads it from L1.
    static func sumColumns(_ source: UnsafePointer<Float>, rows: Int, columns: Int, into sums: UnsafeMutablePointer<Float>) {
        let block = max(1, 16 * 1024 / max(1, columns * MemoryLayout<Float>.stride))
        var first = 0
        while first < rows {
            let count = min(block, rows - first)
            sumColumnsOfBlock(source + first * columns, rows: count, columns: columns, into: sums)
            first += count
        }
    }

    @inline(always)
    private static func sumColumnsOfBlock(_ source: UnsafePointer<Float>, rows: Int, columns: Int, into sums: UnsafeMutablePointer<Float>) {
        typealias Lanes = SIMD16<Float>
        @inline(always)
        func load(_ p: UnsafePointer<Float>) -> Lanes { UnsafeRawPointer(p).loadUnaligned(as: Lanes.self) }
        /// Columns `column ..< column + 16 · vectors` (`vectors` 1...4, a constant where inlined).
        @inline(always)
        func pass(_ vectors: Int, from column: Int) {
            var s0 = load(sums + column)
            var s1 = vectors > 1 ? load(sums + column + 16) : s0, s2 = vectors > 2 ? load(sums + column + 32) : s0
            var s3 = vectors > 3 ? load(sums + column + 48) : s0
            var p = source + column
            for _ in 0 ..< rows {
                s0 += load(p)
                if vectors > 1 { s1 += load(p + 16) }
                if vectors > 2 { s2 += load(p + 32) }
                if vectors > 3 { s3 += load(p + 48) }
                p += columns
            }
            UnsafeMutableRawPointer(sums + column).storeBytes(of: s0, as: Lanes.self)
            if vectors > 1 { UnsafeMutableRawPointer(sums + column + 16).storeBytes(of: s1, as: Lanes.self) }
            if vectors > 2 { UnsafeMutableRawPointer(sums + column + 32).storeBytes(of: s2, as: Lanes.self) }
            if vectors > 3 { UnsafeMutableRawPointer(sums + column + 48).storeBytes(of: s3, as: Lanes.self) }
        }
        var column = 0
        while columns - column >= 64 {
            pass(4, from: column)
            column += 64
        }
        switch (columns - column) / 16 {
        case 3: pass(3, from: column)
        case 2: pass(2, from: column)
        case 1: pass(1, from: column)
        default: break
        }
        column += (columns - column) / 16 * 16
        for c in column ..< columns {
            var sum = sums[c]
            var p = source + c
            for _ in 0 ..< rows {
                sum += p.pointee
                p += columns
            }
            sums[c] = sum
        }
    }

    /// Adds the inputs under dimension `d` into their outputs, in input order.
    private func accumulate(_ d: Int, _ source: UnsafePointer<Float>, _ sums: UnsafeMutablePointer<Float>) {
        let n = extents[d]
        if d == extents.count - 1 {
            if reduced[d] {
                var sum = sums[0]
                for i in 0 ..< n { sum += source[i] }
                sums[0] = sum
            } else {
                for i in 0 ..< n { sums[i] += source[i] }
            }
            return
        }
        let inputStride = inputStrides[d], outputStride = outputStrides[d]
        for i in 0 ..< n { accumulate(d + 1, source + i * inputStride, sums + i * outputStride) }
    }
}
