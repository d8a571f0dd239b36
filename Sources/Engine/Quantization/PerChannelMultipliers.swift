// Output-rescale multipliers of the convolution-like kernels (CONV_2D,
// DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED). TFLite computes them in
// two slightly different ways, and the difference is visible in the last bit:
//
// * per channel (`PopulateConvolutionQuantizationParams`, kernel_util.cc, and
//   FULLY_CONNECTED's per-channel branch): every scale is widened to Double
//   *before* multiplying —
//       Double(inputScale) * Double(filterScale) / Double(outputScale);
//   CONV_2D / DEPTHWISE_CONV_2D / TRANSPOSE_CONV use these per-channel values
//   for int8 and int16 even when the filter has a single (per-tensor) scale,
//   which is then broadcast to every output channel;
//
// * per tensor, legacy (`GetQuantizedConvolutionMultipler`): the product
//   `inputScale * filterScale` is taken in *Float*, then widened and divided in
//   Double. CONV_2D / DEPTHWISE_CONV_2D use it for uint8, FULLY_CONNECTED for
//   every per-tensor filter (uint8 and int8 alike).

extension QuantizedMultiplier {
    /// One multiplier per output channel, as `PopulateConvolutionQuantizationParams`
    /// computes them. A single filter scale is broadcast to `channelCount`
    /// channels; otherwise `filterScales.count` must equal `channelCount`.
    ///
    /// Example: input 0.5, filter scales [0.25, 0.5], output 1.0, 2 channels →
    /// reals [0.125, 0.25] → `[(1 << 30, -2), (1 << 30, -1)]`.
    static func perChannel(inputScale: Float, filterScales: [Float], outputScale: Float,
                           channelCount: Int) -> [QuantizedMultiplier] {
        precondition(filterScales.count == 1 || filterScales.count == channelCount,
                     "filter scale count must be 1 or the channel count")
        let isPerChannel = filterScales.count > 1
        return (0..<channelCount).map { channel in
            let filterScale = Double(isPerChannel ? filterScales[channel] : filterScales[0])
            let effectiveOutputScale = Double(inputScale) * filterScale / Double(outputScale)
            return QuantizedMultiplier(effectiveOutputScale)
        }
    }

    /// The legacy per-tensor multiplier of `GetQuantizedConvolutionMultipler`:
    /// `Double(inputScale * filterScale) / Double(outputScale)` — note the
    /// `Float` product. Returns `nil` where TFLite fails (negative product).
    ///
    /// TFLite's uint8 CONV_2D stores the negated exponent and negates it back
    /// before `MultiplyByQuantizedMultiplier`; the value returned here is
    /// already in the usual convention (positive = left shift).
    ///
    /// Example: input 0.5, filter 0.25, output 1.0 → real 0.125 → `(1 << 30, -2)`.
    static func perTensorConvolution(inputScale: Float, filterScale: Float,
                                     outputScale: Float) -> QuantizedMultiplier? {
        let inputProductScale = Double(inputScale * filterScale)
        guard inputProductScale >= 0 else { return nil }
        return QuantizedMultiplier(inputProductScale / Double(outputScale))
    }
}
