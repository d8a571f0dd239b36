extension Logistic {
    /// Integer logistic (uint8, int8) over `count` elements: the 256-entry float-computed table of
    /// TFLite's `SigmoidPrepare<kReference>` (`ActivationLookupTable.logistic`).
    static func prepareQuantized(_ context: inout PrepareContext, count: Int) throws(ModelError) -> any Kernel {
        let (input, inputQ, output, outputQ) = try context.unaryQuantized()
        // TFLite compares the float scale, widened, with the double 1/256 exactly.
        guard Double(outputQ.scale) == 1.0 / 256 else {
            throw context.unsupported("output '\(output.name)' has scale \(outputQ.scale); quantized LOGISTIC requires 1/256")
        }
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        if input.dataType == .int8 {
            let table = ActivationLookupTable.logistic(Int8.self, inputScale: inputQ.scale, inputZeroPoint: inputQ.zeroPoint,
                                                       outputScale: outputQ.scale, outputZeroPoint: outputQ.zeroPoint)
            return ByteLookupKernel(table: table, count: count, input: i, output: o)
        }
        let table = ActivationLookupTable.logistic(UInt8.self, inputScale: inputQ.scale, inputZeroPoint: inputQ.zeroPoint,
                                                   outputScale: outputQ.scale, outputZeroPoint: outputQ.zeroPoint)
        return ByteLookupKernel(table: table, count: count, input: i, output: o)
    }
}
