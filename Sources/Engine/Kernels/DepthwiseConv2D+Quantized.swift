extension DepthwiseConv2D {
    /// Integer depthwise convolution (uint8 per-tensor, int8 per-channel).
    static func prepareQuantized(_ context: inout PrepareContext, geometry: Geometry, activation: FusedActivation) throws(ModelError) -> any Kernel {
        throw context.unsupported("quantized DEPTHWISE_CONV_2D is not implemented yet")
    }
}
