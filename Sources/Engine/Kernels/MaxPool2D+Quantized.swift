extension MaxPool2D {
    /// Integer max pooling (uint8, int8).
    static func prepareQuantized(_ context: inout PrepareContext, geometry: Pool2DGeometry, activation: FusedActivation) throws(ModelError) -> any Kernel {
        throw context.unsupported("quantized MAX_POOL_2D is not implemented yet")
    }
}
