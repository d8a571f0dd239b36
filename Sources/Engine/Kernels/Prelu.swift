/// PRELU: `output = x ≥ 0 ? x : x · alpha` with `alpha` (input 1, usually a constant of the
/// non-shared axes) broadcast against `x`; the output has the input's shape, as TFLite
/// requires. float32 here; uint8/int8 in `Prelu+Quantized.swift`.
enum Prelu {
    static let input = 0, alpha = 1, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 2 ... 2, outputs: 1)
        let input = try context.input(Self.input)
        let broadcast = try context.broadcast(lhs: Self.input, rhs: Self.alpha, output: Self.output)
        guard broadcast.outputShape == input.shape else {
            throw context.invalid("alpha '\(try context.input(Self.alpha).name)' \(try context.input(Self.alpha).shape) broadcasts input \(input.shape) to \(broadcast.outputShape); the output must keep the input's shape")
        }
        switch input.dataType {
        case .float32:
            return PreluFloat32(input: context.node.inputs[Self.input], alpha: context.node.inputs[Self.alpha],
                                output: context.node.outputs[Self.output], broadcast: broadcast)
        case .uint8, .int8:
            return try prepareQuantized(&context, broadcast: broadcast)
        case let type:
            throw context.unsupported("input type \(type), expected float32, uint8 or int8")
        }
    }
}

struct PreluFloat32: Kernel {
    let input: Int, alpha: Int, output: Int
    let broadcast: Broadcast

    func eval(_ memory: TensorMemory) {
        broadcast.apply(memory.input(input, as: Float.self), memory.input(alpha, as: Float.self),
                        memory.output(output, as: Float.self)) { x, a in x >= 0 ? x : x * a }
    }
}
