extension AveragePool2D {
    /// Integer average pooling (uint8, int8).
    static func prepareQuantized(_ context: inout PrepareContext, geometry: Pool2DGeometry, activation: FusedActivation) throws(ModelError) -> any Kernel {
        throw context.unsupported("quantized AVERAGE_POOL_2D is not implemented yet")
    }
}
