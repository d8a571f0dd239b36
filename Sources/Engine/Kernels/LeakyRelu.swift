/// LEAKY_RELU: `x > 0 ? x : α·x`.
enum LeakyRelu {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .leakyRelu(let alpha) = context.node.options else { throw context.invalid("missing LeakyReluOptions") }
        return try context.prepareElementwise(
            float: { LeakyReluFloat32(count: $0, alpha: alpha, input: $1, output: $2) },
            quantized: { (context: inout PrepareContext, _: Int) throws(ModelError) -> any Kernel in
                try prepareQuantized(&context, alpha: alpha)
            })
    }
}

/// Threads take ranges of whole cache lines, as in `ReluFloat32`.
struct LeakyReluFloat32: PartitionedKernel {
    let count: Int
    let alpha: Float
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        memory.parallelize(self, count: count, granularity: 16, work: count * TensorMemory.elementWork)
    }

    func evalPart(_ range: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let x = memory.input(input, as: Float.self), y = memory.output(output, as: Float.self)
        let alpha = alpha
        for i in range { y[i] = x[i] > 0 ? x[i] : x[i] * alpha }
    }
}
