/// FULLY_CONNECTED: `output[b, u] = act(bias[u] + Σ_d input[b, d] · weights[u, d])`, with the input
/// flattened to `[batches, inputDepth]` where `inputDepth` is the weights' second dimension.
///
/// Float32 runs as one SGEMV (a single row) or SGEMM against the weights as stored, so weights that
/// are computed at run time (by DEQUANTIZE, say) work as well as constant ones.
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
        guard shape.batches <= Int(Int32.max), units <= Int(Int32.max), depth <= Int(Int32.max) else {
            throw context.unsupported("\(shape.batches)×\(depth) by \(units)×\(depth) is too large for BLAS")
        }
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

/// Float32 fully connected layer through BLAS.
struct FullyConnectedFloat32: PartitionedKernel {
    let shape: FullyConnected.Shape
    let input: Int, weights: Int, bias: Int?, output: Int
    let range: ClosedRange<Float>
    let hasActivation: Bool

    init(_ context: inout PrepareContext, shape: FullyConnected.Shape, activation: FusedActivation) throws(ModelError) {
        let weightsTensor = try context.input(FullyConnected.weights)
        if weightsTensor.dataType == .int8 || weightsTensor.dataType == .uint8 {
            throw context.unsupported("hybrid FULLY_CONNECTED (float32 input, \(weightsTensor.dataType) weights '\(weightsTensor.name)')")
        }
        try context.expect(weightsTensor, is: .float32, role: "weights")
        if let b = context.optionalInput(FullyConnected.bias) { try context.expect(b, is: .float32, role: "bias") }
        try context.expect(try context.output(FullyConnected.output), is: .float32, role: "output")
        self.shape = shape
        input = context.node.inputs[FullyConnected.input]
        weights = context.node.inputs[FullyConnected.weights]
        bias = context.optionalInput(FullyConnected.bias)?.index
        output = context.node.outputs[FullyConnected.output]
        range = try context.floatActivationRange(activation)
        hasActivation = activation != .none
    }

    func eval(_ memory: TensorMemory) {
        let s = shape
        guard s.batches > 0, s.units > 0 else { return }
        let out = memory.output(output, as: Float.self)
        // Start from the bias; BLAS accumulates the products onto it.
        if let bias {
            let b = memory.input(bias, as: Float.self)
            for row in 0 ..< s.batches { (out + row * s.units).update(from: b, count: s.units) }
        }
        // Threads take blocks of units (one batch) or of batches; OpenBLAS itself runs on one
        // thread, and a unit's dot product does not depend on where its block starts, as long
        // as blocks start at multiples of 16 (its kernels take units 4 and 8 at a time).
        memory.parallelize(self, count: s.batches == 1 ? s.units : s.batches, granularity: 16,
                           work: s.batches * s.units * s.inputDepth)
        if hasActivation {
            let lower = range.lowerBound, upper = range.upperBound
            for i in 0 ..< s.batches * s.units { out[i] = min(max(out[i], lower), upper) }
        }
    }

    /// Units `part` (one batch), or batches `part`.
    func evalPart(_ part: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let s = shape
        let x = memory.input(input, as: Float.self), w = memory.input(weights, as: Float.self)
        let out = memory.output(output, as: Float.self)
        if s.batches == 1 {
            BLAS.gemv(m: part.count, n: s.inputDepth, a: w + part.lowerBound * s.inputDepth, x: x,
                      y: out + part.lowerBound, accumulate: bias != nil)
        } else {
            BLAS.gemm(m: part.count, n: s.units, k: s.inputDepth, a: x + part.lowerBound * s.inputDepth, b: w,
                      c: out + part.lowerBound * s.units, transposeB: true, accumulate: bias != nil)
        }
    }
}
