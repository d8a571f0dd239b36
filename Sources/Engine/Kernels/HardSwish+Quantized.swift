extension HardSwish {
    /// Integer hard swish (uint8, int8) over `count` elements.
    static func prepareQuantized(_ context: inout PrepareContext, count: Int) throws(ModelError) -> any Kernel {
        throw context.unsupported("quantized HARD_SWISH is not implemented yet")
    }
}
