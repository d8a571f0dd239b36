extension FullyConnected {
    /// Integer fully connected layer (uint8 per-tensor, int8 per-tensor or per-channel).
    static func prepareQuantized(_ context: inout PrepareContext, shape: Shape, activation: FusedActivation) throws(ModelError) -> any Kernel {
        throw context.unsupported("quantized FULLY_CONNECTED is not implemented yet")
    }
}
