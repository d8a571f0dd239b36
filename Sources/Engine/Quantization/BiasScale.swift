extension PrepareContext {
    /// TFLite's legacy check on per-tensor bias scales (uint8 convolutions, and every
    /// per-tensor FULLY_CONNECTED; `GetQuantizedConvolutionMultipler` in kernel_util.cc):
    /// `|inputScale · filterScale − biasScale| / outputScale ≤ 0.02`, in Double. A bias without
    /// quantization parameters has scale 0, as in TFLite.
    ///
    /// Example: input 0.5, filter 0.25, output 1: bias scales 0.105...0.145 pass, 0.1 does not.
    func checkBiasScale(_ bias: TensorDescriptor?, inputScale: Float, filterScale: Float, outputScale: Float) throws(ModelError) {
        guard let bias else { return }
        let productScale = Double(inputScale) * Double(filterScale)
        let biasScale = Double(bias.quantization?.scale ?? 0)
        guard abs(productScale - biasScale) / Double(outputScale) <= 0.02 else {
            throw invalid("bias '\(bias.name)' scale \(biasScale) differs from input × filter scale \(productScale) (TFLite allows 2% of the output scale \(outputScale))")
        }
    }
}
