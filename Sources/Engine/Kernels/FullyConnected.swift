/// FULLY_CONNECTED: `output[b, u] = act(bias[u] + Σ_d input[b, d] · weights[u, d])`, with the input
/// flattened to `[batches, inputDepth]` where `inputDepth` is the weights' second dimension.
///
/// Float32 packs constant weights at prepare (`FloatGEMM.PackedWeights`) and runs `FloatGEMV` for a
/// single batch, `FloatGEMM` for several; weights computed at run time (by DEQUANTIZE, say) take a
/// plain SIMD dot product per output.
enum FullyConnected {
    static let input = 0, weights = 1, bias = 2, output = 0

    /// The matrix product's dimensions, shared by the float and quantized kernels.
    struct Shape: Sendable, Equatable {
        var batches, inputDepth, units: Int
    }

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .fullyConnected(let options) = context.node.options else { throw context.invalid("missing FullyConnectedOptions") }
        try context.expect(inputs: 2 ... 3, outputs: 1)
        guard options.weightsFormat == 0 else {
            throw context.unsupported("weights format \(options.weightsFormat) (shuffled weights); only the default row-major format is")
        }
        let input = try context.input(Self.input), weights = try context.input(Self.weights)
        try context.expect(weights, rank: 2, role: "weights")
        let units = weights.shape[0], depth = weights.shape[1]
        guard depth > 0 else { throw context.invalid("weights '\(weights.name)' have shape \(weights.shape): input depth 0") }
        guard input.elementCount % depth == 0 else {
            throw context.invalid("input '\(input.name)' \(input.shape) has \(input.elementCount) elements, not a multiple of the weights' input depth \(depth)")
        }
        let shape = Shape(batches: input.elementCount / depth, inputDepth: depth, units: units)
        if let bias = context.optionalInput(Self.bias), bias.elementCount != units {
            throw context.invalid("bias '\(bias.name)' has \(bias.elementCount) elements, expected \(units)")
        }
        if options.keepNumDims {
            guard input.shape.last == depth else {
                throw context.invalid("keep_num_dims: input '\(input.name)' \(input.shape) must end in the weights' input depth \(depth)")
            }
            try context.setOutputShape(Self.output, input.shape.dropLast() + [units])
        } else {
            try context.setOutputShape(Self.output, [shape.batches, units])
        }
        switch input.dataType {
        case .float32 where weights.dataType == .int8:
            return try prepareHybrid(&context, shape: shape, options: options)
        case .float32:
            return try FullyConnectedFloat32(&context, shape: shape, activation: options.activation)
        case .uint8, .int8:
            return try prepareQuantized(&context, shape: shape, activation: options.activation)
        default:
            throw context.unsupported("input type \(input.dataType)")
        }
    }
}

/// Float32 fully connected layer on the engine's own kernels.
///
/// Constant weights (the usual case) are packed at prepare, bias folded in, and the file's copy
/// is not read again: one batch runs `FloatGEMV` (each weight loaded once), several run
/// `FloatGEMM` with the batches as rows (two batches on cached weights: two GEMVs). Both add the
/// products of a column in the same order, so a row computes the same bits through either.
/// Weights that are computed at run time are read as stored, one SIMD dot product per output
/// (`FloatGEMV.dot`).
///
/// Threads take tiles of batches × units (`TileGrid.cheapest`): one batch, as in a classifier's
/// last layer, splits the units at whole blocks of the packing, so each thread reads only its
/// part of the weights. No tile splits a sum, so every thread count gives the same bytes.
struct FullyConnectedFloat32: TiledKernel {
    let shape: FullyConnected.Shape
    let input: Int, output: Int
    let weights: Weights
    let range: ClosedRange<Float>

    /// Two batches whose weights (this tile's part of them) are at most this many bytes run as two
    /// GEMVs rather than one GEMM tile, which computes seven rows whatever it is given: weights in
    /// L2 are cheap to read twice, weights streamed from L3 are not. The GEMV and the GEMM give a
    /// row the same bits, so the choice changes no result.
    static let cachedGEMVBytes = 1 << 20

    /// Where the weights (and bias) come from in `eval`.
    enum Weights {
        /// Packed at prepare, bias included.
        case packed(FloatGEMM.PackedWeights)
        /// Tensors read in `eval`: weights `[units][depth]` row-major, bias optional.
        case runTime(weights: Int, bias: Int?)
    }

    init(_ context: inout PrepareContext, shape: FullyConnected.Shape, activation: FusedActivation) throws(ModelError) {
        let weightsTensor = try context.input(FullyConnected.weights)
        if weightsTensor.dataType == .int8 || weightsTensor.dataType == .uint8 {
            throw context.unsupported("hybrid FULLY_CONNECTED (float32 input, \(weightsTensor.dataType) weights '\(weightsTensor.name)')")
        }
        try context.expect(weightsTensor, is: .float32, role: "weights")
        let biasTensor = context.optionalInput(FullyConnected.bias)
        if let biasTensor { try context.expect(biasTensor, is: .float32, role: "bias") }
        try context.expect(try context.output(FullyConnected.output), is: .float32, role: "output")
        self.shape = shape
        input = context.node.inputs[FullyConnected.input]
        output = context.node.outputs[FullyConnected.output]
        range = try context.floatActivationRange(activation)
        if weightsTensor.constantData != nil, biasTensor.map({ $0.constantData != nil }) ?? true {
            let w = try context.constant(FullyConnected.weights).elements(as: Float.self)
            let b = biasTensor == nil ? nil : try context.constant(FullyConnected.bias).elements(as: Float.self)
            weights = .packed(FloatGEMM.PackedWeights(weights: w, bias: b, n: shape.units, k: shape.inputDepth))
            context.markPacked(FullyConnected.weights)
            if biasTensor != nil { context.markPacked(FullyConnected.bias) }
        } else {
            weights = .runTime(weights: context.node.inputs[FullyConnected.weights], bias: biasTensor?.index)
        }
    }

    func eval(_ memory: TensorMemory) {
        let s = shape
        guard s.batches > 0, s.units > 0 else { return }
        memory.parallelize(self, grid: memory.grid { grid(tasks: memory.taskCount(work: s.batches * s.units * s.inputDepth), threadCount: memory.threadCount) })
    }

    /// The tiles for at most `tasks` tiles on `threadCount` threads:
    /// batches down in multiples of FloatGEMM's tile rows, units across at whole blocks, cut so
    /// that the threads read the least.
    func grid(tasks: Int, threadCount: Int) -> TileGrid {
        let s = shape, floatSize = MemoryLayout<Float>.stride
        return TileGrid.cheapest(tasks: tasks, threads: threadCount, rows: s.batches, rowGranularity: FloatGEMM.tileRows,
                                 columns: s.units, columnGranularity: FloatGEMM.columnGranularity,
                                 bytesPerRowPart: s.units * s.inputDepth * floatSize,
                                 bytesPerColumnPart: s.batches * s.inputDepth * floatSize)
    }

    /// Batches `rows`, units `columns`.
    func evalTile(rows: Range<Int>, columns: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        multiply(batches: rows, units: columns, memory: memory)
    }

    /// Outputs `[batches][units]`: `batches` at multiples of `FloatGEMM.tileRows`, `units` at
    /// multiples of `FloatGEMM.columnGranularity` (or ending at the last unit).
    func multiply(batches: Range<Int>, units: Range<Int>, memory: TensorMemory) {
        let s = shape
        guard !batches.isEmpty, !units.isEmpty else { return }
        let x = memory.input(input, as: Float.self) + batches.lowerBound * s.inputDepth
        let out = memory.output(output, as: Float.self) + batches.lowerBound * s.units
        switch weights {
        case .packed(let packed) where batches.count == 1
            || (batches.count == 2 && units.count * s.inputDepth * MemoryLayout<Float>.stride <= Self.cachedGEMVBytes):
            for b in 0 ..< batches.count {
                FloatGEMV.multiply(x: x + b * s.inputDepth, weights: packed, columns: units, range: range, y: out + b * s.units)
            }
        case .packed(let packed):
            FloatGEMM.multiply(m: batches.count, a: x, lda: s.inputDepth, weights: packed, columns: units,
                               range: range, c: out, ldc: s.units)
        case .runTime(let weightsIndex, let biasIndex):
            let w = memory.input(weightsIndex, as: Float.self)
            let bias = biasIndex.map { memory.input($0, as: Float.self) }
            let lower = range.lowerBound, upper = range.upperBound
            for b in 0 ..< batches.count {
                let row = x + b * s.inputDepth, y = out + b * s.units
                for u in units {
                    let sum = FloatGEMV.dot(row, w + u * s.inputDepth, count: s.inputDepth) + (bias?[u] ?? 0)
                    y[u] = FloatGEMM.clamp(sum, lower, upper)
                }
            }
        }
    }
}
