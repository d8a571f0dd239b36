/// DIV: `output = act(lhs / rhs)` with numpy broadcasting. float32 divides in Float, as TFLite's
/// reference kernel; int32 truncates toward zero (a zero divisor, undefined in TFLite, gives 0;
/// `Int32.min / -1` wraps). uint8/int8 are in `Div+Quantized.swift`.
enum Div {
    static let lhs = Arithmetic.lhs, rhs = Arithmetic.rhs, output = Arithmetic.output

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try Arithmetic.prepare(&context, Division.self, quantized: prepareQuantized)
    }
}

enum Division: ArithmeticOperation {
    static let name = "Div"
    @inline(__always) static func apply(_ a: Float, _ b: Float) -> Float { a / b }
    @inline(__always) static func apply(_ a: Int32, _ b: Int32) -> Int32 {
        b == 0 ? 0 : a.dividedReportingOverflow(by: b).partialValue
    }
}
