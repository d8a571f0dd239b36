extension Softmax {
    /// Integer softmax (uint8, int8) over rows of `depth` elements.
    static func prepareQuantized(_ context: inout PrepareContext, beta: Float, depth: Int) throws(ModelError) -> any Kernel {
        throw context.unsupported("quantized SOFTMAX is not implemented yet")
    }
}
