/// SUB: `output = act(lhs - rhs)` with numpy broadcasting; either operand may be a constant.
/// Float32 and int32 share `Arithmetic`; the quantized rescaling is in `Sub+Quantized.swift`.
enum Sub {
    static let lhs = Arithmetic.lhs, rhs = Arithmetic.rhs, output = Arithmetic.output

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try Arithmetic.prepare(&context, Subtraction.self, quantized: prepareQuantized)
    }
}
