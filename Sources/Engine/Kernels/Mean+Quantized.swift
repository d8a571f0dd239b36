extension Mean {
    /// Integer mean (uint8, int8).
    static func prepareQuantized(_ context: inout PrepareContext, reduction: Reduction) throws(ModelError) -> any Kernel {
        throw context.unsupported("quantized MEAN is not implemented yet")
    }
}
