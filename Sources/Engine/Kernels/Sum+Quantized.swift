extension Sum {
    /// Integer SUM (uint8, int8), as TFLite's reference `QuantizedMeanOrSum` with
    /// `compute_sum`: the inputs under each output are summed in Int32, and each output is
    /// `clamp(zpOut + q(sum − zpIn · n))` with `q` the multiplier of `inputScale / outputScale`
    /// (divided in Double) — MEAN's kernel without the `1 / n` folded into the multiplier.
    ///
    /// int8 reproduces what LiteRT's BUILTIN_REF resolver does: its reference branch passes the
    /// int8 tensors to the kernel as `uint8_t`, so the bytes are summed as uint8 values, the
    /// (int8) zero point is subtracted, and the result is clamped to 0...255 before its low byte
    /// is stored. Such outputs are far from the real sums (LiteRT's optimized kernels compute
    /// those); a model with int8 SUM is only bit-exact with the reference resolver this way.
    static func prepareQuantized(_ context: inout PrepareContext, reduction: Mean.Reduction) throws(ModelError) -> any Kernel {
        let (_, inputQ, _, outputQ) = try context.unaryQuantized()
        let multiplier = QuantizedMultiplier(Double(inputQ.scale) / Double(outputQ.scale))
        context.requestScratch(bytes: reduction.outputShape.reduce(1, *) * MemoryLayout<Int32>.stride)
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        // Both types run as uint8 (see above for int8).
        return MeanQuantized<UInt8>(reduction, multiplier: multiplier, inputZeroPoint: inputQ.zeroPoint,
                                    outputZeroPoint: outputQ.zeroPoint, input: i, output: o)
    }
}
