extension Tanh {
    /// Integer tanh (uint8, int8) over `count` elements.
    static func prepareQuantized(_ context: inout PrepareContext, count: Int) throws(ModelError) -> any Kernel {
        throw context.unsupported("quantized TANH is not implemented yet")
    }
}
