extension Logistic {
    /// Integer logistic (uint8, int8) over `count` elements.
    static func prepareQuantized(_ context: inout PrepareContext, count: Int) throws(ModelError) -> any Kernel {
        throw context.unsupported("quantized LOGISTIC is not implemented yet")
    }
}
