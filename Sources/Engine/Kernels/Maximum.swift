/// MAXIMUM: `output = lhs > rhs ? lhs : rhs` elementwise with numpy broadcasting, exactly TFLite's
/// reference expression (so `max(NaN, x)` is `x` and `max(x, NaN)` is NaN). float32, int32, int64,
/// int16 and 8-bit quantized tensors, which compare raw values: both inputs and the output must
/// share one scale and zero point (as the converter emits them).
enum Maximum {
    static let lhs = 0, rhs = 1, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try Selection.prepare(&context, selectsMinimum: false)
    }
}

/// What MAXIMUM and MINIMUM share: validation and the kernel (only the comparison differs).
enum Selection {
    static func prepare(_ context: inout PrepareContext, selectsMinimum: Bool) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 2 ... 2, outputs: 1)
        let broadcast = try context.broadcast(lhs: Maximum.lhs, rhs: Maximum.rhs, output: Maximum.output)
        let a = try context.input(Maximum.lhs), b = try context.input(Maximum.rhs), out = try context.output(Maximum.output)
        if [.uint8, .int8, .int16].contains(a.dataType) {
            let qa = try context.affineQuantization(of: a, role: "input 0"), qb = try context.affineQuantization(of: b, role: "input 1")
            let qo = try context.affineQuantization(of: out, role: "output")
            guard qa == qb, qa == qo else {
                throw context.unsupported("inputs and output must share one quantization, got \(qa), \(qb) and \(qo)")
            }
        }
        let (l, r, o) = (context.node.inputs[Maximum.lhs], context.node.inputs[Maximum.rhs], context.node.outputs[Maximum.output])
        func make<T: Comparable & Sendable>(_: T.Type) -> any Kernel {
            SelectionKernel<T>(lhs: l, rhs: r, output: o, broadcast: broadcast, selectsMinimum: selectsMinimum)
        }
        switch a.dataType {
        case .float32: return make(Float.self)
        case .uint8: return make(UInt8.self)
        case .int8: return make(Int8.self)
        case .int16: return make(Int16.self)
        case .int32: return make(Int32.self)
        case .int64: return make(Int64.self)
        default: throw context.unsupported("operand type \(a.dataType)")
        }
    }
}

struct SelectionKernel<T: Comparable & Sendable>: Kernel {
    let lhs: Int, rhs: Int, output: Int
    let broadcast: Broadcast
    let selectsMinimum: Bool

    @_specialize(where T == Float)
    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func eval(_ memory: TensorMemory) {
        let x = memory.input(lhs, as: T.self), y = memory.input(rhs, as: T.self), out = memory.output(output, as: T.self)
        if selectsMinimum {
            broadcast.apply(x, y, out) { a, b in a < b ? a : b }
        } else {
            broadcast.apply(x, y, out) { a, b in a > b ? a : b }
        }
    }
}
