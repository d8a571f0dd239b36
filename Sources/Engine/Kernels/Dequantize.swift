/// DEQUANTIZE: float16 → float32 (exact), and int8/uint8/int16 → float32 as
/// `scale · (q − zeroPoint)`, per tensor or per channel along the quantized dimension
/// (`Dequantization`).
///
/// A constant input (a weight stored as float16 or int8) is converted once at prepare time and the
/// output becomes a constant, so that the operator consuming it can pack it like any float weight.
enum Dequantize {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let input = try context.input(Self.input)
        try context.expect(try context.output(Self.output), is: .float32, role: "output")
        try context.setOutputShape(Self.output, input.shape)
        let dequantization: Dequantization?
        switch input.dataType {
        case .float16: dequantization = nil
        case .int8, .uint8, .int16: dequantization = try context.dequantization(of: input, role: "input")
        case let type: throw context.unsupported("input type \(type), expected float16, int8, uint8 or int16")
        }
        let kernel = DequantizeKernel(input: context.node.inputs[Self.input], output: context.node.outputs[Self.output],
                                      count: input.elementCount, dequantization: dequantization)
        guard let data = input.constantData else { return kernel }
        let values = PackedBuffer<Float>(count: input.elementCount, initializedTo: 0, discardable: true)
        // `elements(as:)` returns aligned memory (copying a misaligned constant).
        let source = input.dataType.byteSize == 1 ? data.bytes.baseAddress : UnsafeRawPointer(data.elements(as: UInt16.self).baseAddress)
        if let source { kernel.dequantize(source, into: values.pointer) }
        return try context.foldOutput(Self.output, into: values)
    }
}

struct DequantizeKernel: Kernel {
    let input: Int, output: Int
    let count: Int
    /// nil for float16 input.
    let dequantization: Dequantization?

    func eval(_ memory: TensorMemory) {
        dequantize(memory.raw(input), into: memory.output(output, as: Float.self))
    }

    func dequantize(_ source: UnsafeRawPointer, into out: UnsafeMutablePointer<Float>) {
        if let dequantization {
            dequantization.dequantize(source, count: count, into: out)
        } else {
            let s = source.assumingMemoryBound(to: Float16.self)
            for i in 0 ..< count { out[i] = Float(s[i]) }
        }
    }
}
