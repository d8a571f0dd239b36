/// LEAKY_RELU: `x > 0 ? x : α·x`.
enum LeakyRelu {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .leakyRelu(let alpha) = context.node.options else { throw context.invalid("missing LeakyReluOptions") }
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let input = try context.input(Self.input)
        try context.setOutputShape(Self.output, input.shape)
        switch input.dataType {
        case .float32:
            try context.expect(try context.output(Self.output), is: .float32, role: "output")
            return LeakyReluFloat32(count: input.elementCount, alpha: alpha,
                                    input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
        case .uint8, .int8:
            return try prepareQuantized(&context, alpha: alpha)
        default:
            throw context.unsupported("input type \(input.dataType)")
        }
    }
}

struct LeakyReluFloat32: Kernel {
    let count: Int
    let alpha: Float
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        let x = memory.input(input, as: Float.self), y = memory.output(output, as: Float.self)
        let alpha = alpha
        for i in 0 ..< count { y[i] = x[i] > 0 ? x[i] : x[i] * alpha }
    }
}
