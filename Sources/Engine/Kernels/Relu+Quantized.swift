extension Relu {
    /// Integer RELU / RELU6 / RELU_N1_TO_1 (uint8, int8): clamp to the real range `lower ... upper`
    /// (`upper` is infinite for RELU).
    static func prepareQuantized(_ context: inout PrepareContext, lower: Float, upper: Float) throws(ModelError) -> any Kernel {
        throw context.unsupported("quantized \(context.node.opName) is not implemented yet")
    }
}
