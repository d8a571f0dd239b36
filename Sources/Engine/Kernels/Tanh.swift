import Foundation

/// TANH: the hyperbolic tangent of each element (the C library's `tanhf`, as TFLite's reference).
enum Tanh {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.prepareElementwise(float: { TanhFloat32(count: $0, input: $1, output: $2) },
                                       quantized: prepareQuantized(_:count:))
    }
}

/// Threads take ranges of whole cache lines (`ReluFloat32`); one C library call per element.
struct TanhFloat32: PartitionedKernel {
    let count: Int
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        memory.parallelize(self, count: count, granularity: 16, work: count * LogisticFloat32.elementWork)
    }

    func evalPart(_ range: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let x = memory.input(input, as: Float.self), y = memory.output(output, as: Float.self)
        for i in range { y[i] = tanh(x[i]) }
    }
}
