/// RELU, RELU6 and RELU_N1_TO_1: each element clamped to `[0, ∞)`, `[0, 6]` or `[−1, 1]`.
/// One prepare serves all three; the operator code picks the bounds.
enum Relu {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        let lower: Float, upper: Float
        switch context.node.op {
        case .relu: (lower, upper) = (0, .infinity)
        case .relu6: (lower, upper) = (0, 6)
        case .reluN1To1: (lower, upper) = (-1, 1)
        default: throw context.invalid("not a RELU operator")
        }
        return try context.prepareElementwise(
            float: { ReluFloat32(count: $0, lower: lower, upper: upper, input: $1, output: $2) },
            quantized: { (context: inout PrepareContext, _: Int) throws(ModelError) -> any Kernel in
                try prepareQuantized(&context, lower: lower, upper: upper)
            })
    }
}

/// Threads take ranges of whole cache lines, as they do in the operators around it (the same
/// rows of an image stay with the same thread).
struct ReluFloat32: PartitionedKernel {
    let count: Int
    let lower: Float, upper: Float
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        memory.parallelize(self, count: count, granularity: 16, work: count * TensorMemory.elementWork)
    }

    func evalPart(_ range: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let x = memory.input(input, as: Float.self), y = memory.output(output, as: Float.self)
        let lower = lower, upper = upper
        for i in range { y[i] = FloatGEMM.clamp(x[i], lower, upper) }
    }
}
