extension ResizeBilinear {
    /// uint8/int8 resize (TFLite's fixed-point `ResizeBilinear` with 10 fractional bits). The
    /// output shape is set and the options validated.
    static func prepareQuantized(_ context: inout PrepareContext, options: ResizeBilinearOptions) throws(ModelError) -> any Kernel {
        throw context.unsupported("quantized RESIZE_BILINEAR is not implemented yet")
    }
}
