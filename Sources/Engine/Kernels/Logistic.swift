import Foundation

/// LOGISTIC (sigmoid): `1 / (1 + exp(−x))`, with TFLite's reference cut-offs: exactly 1 above
/// 16.619047…, and `exp(x)` below −9 (where the two agree to float precision).
enum Logistic {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let input = try context.input(Self.input)
        try context.setOutputShape(Self.output, input.shape)
        switch input.dataType {
        case .float32:
            try context.expect(try context.output(Self.output), is: .float32, role: "output")
            return LogisticFloat32(count: input.elementCount, input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
        case .uint8, .int8:
            return try prepareQuantized(&context, count: input.elementCount)
        default:
            throw context.unsupported("input type \(input.dataType)")
        }
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
