extension Concatenation {
    /// uint8/int8 concatenation whose inputs are quantized differently from the output (or with a
    /// fused activation): each input is requantized to the output's scale and zero point. The
    /// output shape is set; `axis` is non-negative.
    static func prepareQuantized(_ context: inout PrepareContext, axis: Int, activation: FusedActivation) throws(ModelError) -> any Kernel {
        throw context.unsupported("quantized CONCATENATION with differing input and output quantization is not implemented yet")
    }
}
