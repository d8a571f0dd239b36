extension Softmax {
    /// Integer softmax (uint8 → uint8 or int16, int8 → int8 or int16) over rows of `depth`
    /// elements: TFLite's gemmlowp fixed-point reference (`QuantizedSoftmax`). The output is
    /// offset by its type's minimum whatever its zero point says, as in TFLite; for int8 → int8
    /// TFLite's prepare insists on zero point −128 and scale 1/256 (±0.1 %), and so does this one.
    static func prepareQuantized(_ context: inout PrepareContext, beta: Float, depth: Int) throws(ModelError) -> any Kernel {
        let input = try context.input(Self.input), output = try context.output(Self.output)
        let inputQ = try context.affineQuantization(of: input, role: "input")
        switch (input.dataType, output.dataType) {
        case (.uint8, .uint8), (.uint8, .int16), (.int8, .int16):
            break
        case (.int8, .int8):
            let outputQ = try context.affineQuantization(of: output, role: "output")
            let expected: Float = 1.0 / 256
            let tolerance: Float = 0.001 * expected
            guard outputQ.zeroPoint == -128, abs(outputQ.scale - expected) <= tolerance else {
                throw context.invalid("int8 output '\(output.name)' has scale \(outputQ.scale) and zero point \(outputQ.zeroPoint); SOFTMAX requires 1/256 and -128")
            }
        default:
            throw context.unsupported("\(input.dataType) input with \(output.dataType) output")
        }
        // The row sum is accumulated in Q12.19: 4096 or more elements can overflow it (TFLite
        // checks and aborts at run time); reject such rows up front.
        guard depth < 4096 else {
            throw context.unsupported("softmax over \(depth) elements: rows of 4096 or more overflow the Q12.19 sum of TFLite's fixed-point softmax")
        }
        guard let softmax = QuantizedSoftmax(beta: beta, inputScale: inputQ.scale) else {
            throw context.unsupported("beta \(beta) × input scale \(inputQ.scale) is too small for the fixed-point softmax")
        }
        let rows = depth == 0 ? 0 : input.elementCount / depth
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        switch (input.dataType, output.dataType) {
        case (.uint8, .uint8): return SoftmaxQuantized<UInt8, UInt8>(softmax: softmax, rows: rows, depth: depth, input: i, output: o)
        case (.uint8, _): return SoftmaxQuantized<UInt8, Int16>(softmax: softmax, rows: rows, depth: depth, input: i, output: o)
        case (_, .int8): return SoftmaxQuantized<Int8, Int8>(softmax: softmax, rows: rows, depth: depth, input: i, output: o)
        default: return SoftmaxQuantized<Int8, Int16>(softmax: softmax, rows: rows, depth: depth, input: i, output: o)
        }
    }
}

/// Fixed-point softmax of each row of `depth` 8-bit values.
struct SoftmaxQuantized<In: FixedWidthInteger & Sendable, Out: FixedWidthInteger & Sendable>: Kernel {
    let softmax: QuantizedSoftmax
    let rows: Int, depth: Int
    let input: Int, output: Int

    // Kernels run behind `any Kernel`, whose witness would be the unspecialised generic code (which
    // also allocated on every call); these make it jump to the four specialisations prepare builds.
    @_specialize(where In == UInt8, Out == UInt8)
    @_specialize(where In == UInt8, Out == Int16)
    @_specialize(where In == Int8, Out == Int8)
    @_specialize(where In == Int8, Out == Int16)
    func eval(_ memory: TensorMemory) {
        let x = memory.input(input, as: In.self), y = memory.output(output, as: Out.self)
        for row in 0 ..< rows {
            softmax.evaluate(row: UnsafeBufferPointer(start: x + row * depth, count: depth),
                             into: UnsafeMutableBufferPointer(start: y + row * depth, count: depth))
        }
    }
}
