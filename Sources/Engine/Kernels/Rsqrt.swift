/// RSQRT: `1 / sqrt(x)` elementwise. float32 computes `1 / sqrtf(x)` in Float, as TFLite; int8
/// reproduces TFLite's integer kernel through a table filled at prepare time:
///
///     v = q − zpIn;  v == 0 → 127
///     (m, s) = inverseSqrtMultiplier(v)                  // 1/√v, Newton–Raphson in Q3.28
///     d = mbqm(1, m, s + 20)                             // 2^20 / √v
///     out = clamp(mbqm(d, M, S − 20) + zpOut)            // M·2^S = 1 / (√inputScale · outputScale)
///
/// TFLite refuses to run on an input below the zero point (a negative value); a kernel here
/// cannot fail at run time, so such inputs give the result for `v ≤ 1`.
enum Rsqrt {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let input = try context.input(Self.input), output = try context.output(Self.output)
        try context.setOutputShape(Self.output, input.shape)
        switch input.dataType {
        case .float32:
            return try context.floatUnaryKernel(input, output: output) { 1 / $0.squareRoot() }
        case .int8:
            let (_, inputQ, _, outputQ) = try context.unaryQuantized()
            // C++: 1. / (std::sqrt(float) * float): a float product, divided in double.
            let multiplier = QuantizedMultiplier(1.0 / Double(inputQ.scale.squareRoot() * outputQ.scale))
            let shift = 20
            return context.byteLookupKernel(input) { q in
                let value = q - inputQ.zeroPoint
                if value == 0 { return 127 }
                let inverse = inverseSqrtMultiplier(value)
                let data = multiplyByQuantizedMultiplier(1, multiplier: inverse.multiplier, shift: inverse.shift + shift)
                let result = multiplyByQuantizedMultiplier(data, multiplier: multiplier.multiplier, shift: multiplier.shift - shift)
                    &+ outputQ.zeroPoint
                return min(max(result, -128), 127)
            }
        default:
            throw context.unsupported("input type \(input.dataType), expected float32 or int8")
        }
    }
}
