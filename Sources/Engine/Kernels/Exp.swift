#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// EXP: `e^x` elementwise. float32 calls the C library's `expf`, as TFLite's `std::exp`; int8
/// goes through TFLite's 256-entry table (`LUTPopulate<int8_t>` with `std::exp`: dequantize,
/// `expf`, multiply by `1 / outputScale`, round half away from zero, add the zero point).
enum Exp {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let input = try context.input(Self.input), output = try context.output(Self.output)
        try context.setOutputShape(Self.output, input.shape)
        switch input.dataType {
        case .float32:
            return try context.floatUnaryKernel(input, output: output) { expf($0) }
        case .int8:
            let (_, inputQ, _, outputQ) = try context.unaryQuantized()
            let table = ActivationLookupTable.make(Int8.self, inputScale: inputQ.scale, inputZeroPoint: inputQ.zeroPoint,
                                                   outputScale: outputQ.scale, outputZeroPoint: outputQ.zeroPoint) { expf($0) }
            return ByteLookupKernel(table: table, count: input.elementCount,
                                    input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
        default:
            throw context.unsupported("input type \(input.dataType), expected float32 or int8")
        }
    }
}
