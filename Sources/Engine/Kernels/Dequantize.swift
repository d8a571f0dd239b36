/// DEQUANTIZE: float16 → float32 (exact), and int8/uint8/int16 → float32 as
/// `scale · (q − zeroPoint)`, per tensor or per channel along the quantized dimension.
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
        var scales: [Float] = [1], zeroPoints: [Int32] = [0], inner = input.elementCount
        switch input.dataType {
        case .float16:
            break
        case .int8, .uint8, .int16:
            guard let q = input.quantization, !q.scales.isEmpty else {
                throw context.invalid("\(input.dataType) input '\(input.name)' has no quantization parameters")
            }
            guard q.zeroPoints.allSatisfy({ (-1 << 16 ... 1 << 16).contains($0) }) else {
                throw context.invalid("zero points \(q.zeroPoints) of '\(input.name)' are outside the \(input.dataType) range")
            }
            scales = q.scales
            zeroPoints = q.zeroPoints.map { Int32($0) }
            if q.isPerChannel {
                // The graph checked that `scales.count == shape[quantizedDimension]`.
                inner = input.shape[(q.quantizedDimension + 1)...].reduce(1, *)
            }
        case let type:
            throw context.unsupported("input type \(type), expected float16, int8, uint8 or int16")
        }
        let kernel = DequantizeKernel(input: context.node.inputs[Self.input], output: context.node.outputs[Self.output],
                                      type: input.dataType, count: input.elementCount,
                                      scales: scales, zeroPoints: zeroPoints, inner: inner)
        guard let data = input.constantData else { return kernel }
        let values = PackedBuffer<Float>(count: input.elementCount, initializedTo: 0)
        // `elements(as:)` returns aligned memory (copying a misaligned constant).
        let source = input.dataType.byteSize == 1 ? data.bytes.baseAddress : UnsafeRawPointer(data.elements(as: UInt16.self).baseAddress)
        if let source { kernel.dequantize(source, into: values.pointer) }
        return try context.foldOutput(Self.output, into: values)
    }
}

struct DequantizeKernel: Kernel {
    let input: Int, output: Int
    let type: DataType
    let count: Int
    /// One scale and zero point per channel (one in all for per-tensor quantization); element `i`
    /// belongs to channel `(i / inner) % scales.count`.
    let scales: [Float], zeroPoints: [Int32]
    let inner: Int

    func eval(_ memory: TensorMemory) {
        dequantize(memory.raw(input), into: memory.output(output, as: Float.self))
    }

    func dequantize(_ source: UnsafeRawPointer, into out: UnsafeMutablePointer<Float>) {
        switch type {
        case .float16:
            let s = source.assumingMemoryBound(to: Float16.self)
            for i in 0 ..< count { out[i] = Float(s[i]) }
        case .int8: affine(source.assumingMemoryBound(to: Int8.self), into: out)
        case .uint8: affine(source.assumingMemoryBound(to: UInt8.self), into: out)
        default: affine(source.assumingMemoryBound(to: Int16.self), into: out)
        }
    }

    /// `Float(q − zeroPoint)` is exact and the product rounds once, so this equals TFLite's
    /// double-precision `scale · (q − zeroPoint)` rounded to float.
    @inline(__always)
    private func affine<Q: BinaryInteger>(_ source: UnsafePointer<Q>, into out: UnsafeMutablePointer<Float>) {
        if scales.count == 1 {
            let scale = scales[0], zeroPoint = zeroPoints[0]
            for i in 0 ..< count { out[i] = scale * Float(Int32(source[i]) - zeroPoint) }
            return
        }
        var i = 0
        while i < count {
            for c in 0 ..< scales.count {
                let scale = scales[c], zeroPoint = zeroPoints[c]
                for j in i ..< i + inner { out[j] = scale * Float(Int32(source[j]) - zeroPoint) }
                i += inner
            }
        }
    }
}
