/// MUL: `output = act(lhs * rhs)` with numpy broadcasting; either operand may be a constant.
enum Mul {
    static let lhs = 0, rhs = 1, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .elementwise(let activation) = context.node.options else { throw context.invalid("missing MulOptions") }
        try context.expect(inputs: 2 ... 2, outputs: 1)
        let broadcast = try context.broadcast(lhs: Self.lhs, rhs: Self.rhs, output: Self.output)
        let lhs = context.node.inputs[Self.lhs], rhs = context.node.inputs[Self.rhs], output = context.node.outputs[Self.output]
        switch try context.input(Self.lhs).dataType {
        case .float32:
            let range = try context.floatActivationRange(activation)
            return MulFloat32(lhs: lhs, rhs: rhs, output: output, broadcast: broadcast,
                             lower: range.lowerBound, upper: range.upperBound)
        case .int32:
            let range = try context.int32ActivationRange(activation)
            return MulInt32(lhs: lhs, rhs: rhs, output: output, broadcast: broadcast,
                           lower: range.lowerBound, upper: range.upperBound)
        case .uint8, .int8:
            return try prepareQuantized(&context, broadcast: broadcast, activation: activation)
        case let type:
            throw context.unsupported("operand type \(type)")
        }
    }
}

struct MulFloat32: Kernel {
    let lhs: Int, rhs: Int, output: Int
    let broadcast: Broadcast
    let lower: Float, upper: Float

    func eval(_ memory: TensorMemory) {
        let lower = lower, upper = upper
        // Always clamped, as TFLite does: with no activation that still maps ±inf to ±max.
        broadcast.apply(memory.input(lhs, as: Float.self), memory.input(rhs, as: Float.self),
                        memory.output(output, as: Float.self)) { a, b in min(max(a * b, lower), upper) }
    }
}

/// Int32 arithmetic wraps on overflow (two's complement), which is what the reference kernel does in practice.
struct MulInt32: Kernel {
    let lhs: Int, rhs: Int, output: Int
    let broadcast: Broadcast
    let lower: Int32, upper: Int32

    func eval(_ memory: TensorMemory) {
        let lower = lower, upper = upper
        broadcast.apply(memory.input(lhs, as: Int32.self), memory.input(rhs, as: Int32.self),
                        memory.output(output, as: Int32.self)) { a, b in min(max(a &* b, lower), upper) }
    }
}
