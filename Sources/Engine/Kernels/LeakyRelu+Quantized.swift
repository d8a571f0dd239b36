extension LeakyRelu {
    /// Integer leaky ReLU (uint8, int8).
    static func prepareQuantized(_ context: inout PrepareContext, alpha: Float) throws(ModelError) -> any Kernel {
        throw context.unsupported("quantized LEAKY_RELU is not implemented yet")
    }
}
