import Foundation

/// TANH: the hyperbolic tangent of each element (the C library's `tanhf`, as TFLite's reference).
enum Tanh {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let input = try context.input(Self.input)
        try context.setOutputShape(Self.output, input.shape)
        switch input.dataType {
        case .float32:
            try context.expect(try context.output(Self.output), is: .float32, role: "output")
            return TanhFloat32(count: input.elementCount, input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
        case .uint8, .int8:
            return try prepareQuantized(&context, count: input.elementCount)
        default:
            throw context.unsupported("input type \(input.dataType)")
        }
    }
}

struct TanhFloat32: Kernel {
    let count: Int
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        let x = memory.input(input, as: Float.self), y = memory.output(output, as: Float.self)
        for i in 0 ..< count { y[i] = tanh(x[i]) }
    }
}
