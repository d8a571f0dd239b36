extension Tanh {
    /// Integer tanh (uint8, int8) over `count` elements: the 256-entry float-computed table of
    /// TFLite's `TanhPrepare<kReference>` (`ActivationLookupTable.tanh`).
    static func prepareQuantized(_ context: inout PrepareContext, count: Int) throws(ModelError) -> any Kernel {
        let (input, inputQ, _, outputQ) = try context.unaryQuantized()
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        if input.dataType == .int8 {
            let table = ActivationLookupTable.tanh(Int8.self, inputScale: inputQ.scale, inputZeroPoint: inputQ.zeroPoint,
                                                   outputScale: outputQ.scale, outputZeroPoint: outputQ.zeroPoint)
            return ByteLookupKernel(table: table, count: count, input: i, output: o)
        }
        let table = ActivationLookupTable.tanh(UInt8.self, inputScale: inputQ.scale, inputZeroPoint: inputQ.zeroPoint,
                                               outputScale: outputQ.scale, outputZeroPoint: outputQ.zeroPoint)
        return ByteLookupKernel(table: table, count: count, input: i, output: o)
    }
}
