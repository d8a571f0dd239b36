extension Add {
    /// Quantized ADD (uint8, int8): `broadcast` holds the output shape and the loop plan.
    static func prepareQuantized(_ context: inout PrepareContext, broadcast: Broadcast, activation: FusedActivation) throws(ModelError) -> any Kernel {
        throw context.unsupported("quantized ADD is not implemented yet")
    }
}
