/// SQUARED_DIFFERENCE: `output = (lhs − rhs)²` elementwise with numpy broadcasting, unclamped, in
/// float32 or int32 (wrapping), as TFLite's reference kernel; int8 is in
/// `SquaredDifference+Quantized.swift` (TFLite has no uint8 kernel).
enum SquaredDifference {
    static let lhs = 0, rhs = 1, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 2 ... 2, outputs: 1)
        let broadcast = try context.broadcast(lhs: Self.lhs, rhs: Self.rhs, output: Self.output)
        let (l, r, o) = (context.node.inputs[Self.lhs], context.node.inputs[Self.rhs], context.node.outputs[Self.output])
        switch try context.input(Self.lhs).dataType {
        case .float32: return SquaredDifferenceFloat32(lhs: l, rhs: r, output: o, broadcast: broadcast)
        case .int32: return SquaredDifferenceInt32(lhs: l, rhs: r, output: o, broadcast: broadcast)
        case .int8: return try prepareQuantized(&context, broadcast: broadcast)
        case let type: throw context.unsupported("operand type \(type), expected float32, int32 or int8")
        }
    }
}

struct SquaredDifferenceFloat32: Kernel {
    let lhs: Int, rhs: Int, output: Int
    let broadcast: Broadcast

    func eval(_ memory: TensorMemory) {
        broadcast.apply(memory.input(lhs, as: Float.self), memory.input(rhs, as: Float.self),
                        memory.output(output, as: Float.self)) { a, b in
            let d = a - b
            return d * d
        }
    }
}

struct SquaredDifferenceInt32: Kernel {
    let lhs: Int, rhs: Int, output: Int
    let broadcast: Broadcast

    func eval(_ memory: TensorMemory) {
        broadcast.apply(memory.input(lhs, as: Int32.self), memory.input(rhs, as: Int32.self),
                        memory.output(output, as: Int32.self)) { a, b in
            let d = a &- b
            return d &* d
        }
    }
}
