import Foundation

/// LOGISTIC (sigmoid): `1 / (1 + exp(−x))`, with TFLite's reference cut-offs: exactly 1 above
/// 16.619047…, and `exp(x)` below −9 (where the two agree to float precision).
enum Logistic {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.prepareElementwise(float: { LogisticFloat32(count: $0, input: $1, output: $2) },
                                       quantized: prepareQuantized(_:count:))
    }
}

struct LogisticFloat32: Kernel {
    let count: Int
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        let x = memory.input(input, as: Float.self), y = memory.output(output, as: Float.self)
        let upperCutoff: Float = 16.619047164916992188, lowerCutoff: Float = -9
        for i in 0 ..< count {
            let v = x[i]
            if v > upperCutoff {
                y[i] = 1
            } else if v < lowerCutoff {
                y[i] = exp(v)
            } else {
                y[i] = 1 / (1 + exp(-v))
            }
        }
    }
}
