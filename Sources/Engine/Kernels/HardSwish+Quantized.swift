extension HardSwish {
    /// Integer hard swish (uint8, int8) over `count` elements: TFLite's 16-bit fixed-point
    /// computation (`QuantizedHardSwish`), tabulated for all 256 inputs.
    static func prepareQuantized(_ context: inout PrepareContext, count: Int) throws(ModelError) -> any Kernel {
        let (input, inputQ, _, outputQ) = try context.unaryQuantized()
        guard let params = QuantizedHardSwish(inputScale: inputQ.scale, inputZeroPoint: inputQ.zeroPoint,
                                              outputScale: outputQ.scale, outputZeroPoint: outputQ.zeroPoint) else {
            throw context.unsupported("input scale \(inputQ.scale) is too large for output scale \(outputQ.scale) (TFLite requires a non-positive output multiplier exponent)")
        }
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        if input.dataType == .int8 {
            return ByteLookupKernel(table: params.makeLookupTable(Int8.self), count: count, input: i, output: o)
        }
        return ByteLookupKernel(table: params.makeLookupTable(UInt8.self), count: count, input: i, output: o)
    }
}
