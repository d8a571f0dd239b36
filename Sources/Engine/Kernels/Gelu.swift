#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// GELU: `x · Φ(x)`, exactly (`0.5·x·erfc(−x/√2)`, TFLite's cancellation-free form of
/// `0.5·x·(1 + erf(x/√2))`) or, with `approximate`, `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`,
/// in Float with the C library's `erfcf` / `tanhf`, as TFLite's reference `GeluTransform*`.
/// uint8/int8 go through TFLite's 256-entry table of the same transform (`LUTPopulate`).
enum Gelu {
    static let input = 0, output = 0

    /// `√(2/π)` as TFLite's `constexpr float kSqrt2dPi = M_2_SQRTPI * M_SQRT1_2` (a double
    /// product rounded once to Float).
    static let sqrt2OverPi = Float(1.12837916709551257390 * 0.70710678118654752440)

    @inline(__always)
    static func exact(_ x: Float) -> Float {
        0.5 * x * erfcf(x * Float(-0.70710678118654752440))
    }

    @inline(__always)
    static func approximate(_ x: Float) -> Float {
        0.5 * x * (1 + tanhf(sqrt2OverPi * (x + 0.044715 * x * x * x)))
    }

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .gelu(let approximate) = context.node.options else { throw context.invalid("missing GeluOptions") }
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let input = try context.input(Self.input), output = try context.output(Self.output)
        try context.setOutputShape(Self.output, input.shape)
        let transform: @Sendable (Float) -> Float
        if approximate {
            transform = { Gelu.approximate($0) }
        } else {
            transform = { Gelu.exact($0) }
        }
        switch input.dataType {
        case .float32:
            return try context.floatUnaryKernel(input, output: output, transform)
        case .int8, .uint8:
            let (_, inputQ, _, outputQ) = try context.unaryQuantized()
            let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
            if input.dataType == .int8 {
                let table = ActivationLookupTable.make(Int8.self, inputScale: inputQ.scale, inputZeroPoint: inputQ.zeroPoint,
                                                       outputScale: outputQ.scale, outputZeroPoint: outputQ.zeroPoint, transform: transform)
                return ByteLookupKernel(table: table, count: input.elementCount, input: i, output: o)
            }
            let table = ActivationLookupTable.make(UInt8.self, inputScale: inputQ.scale, inputZeroPoint: inputQ.zeroPoint,
                                                   outputScale: outputQ.scale, outputZeroPoint: outputQ.zeroPoint, transform: transform)
            return ByteLookupKernel(table: table, count: input.elementCount, input: i, output: o)
        default:
            throw context.unsupported("input type \(input.dataType), expected float32, int8 or uint8")
        }
    }
}
