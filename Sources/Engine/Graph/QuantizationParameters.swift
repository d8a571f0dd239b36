/// Affine quantization: `real = scale * (quantized - zeroPoint)`.
///
/// Per-tensor quantization has one scale and zero point; per-channel quantization has one per
/// slice along `quantizedDimension`.
public struct QuantizationParameters: Sendable, Equatable {
    /// One scale per tensor, or one per slice along `quantizedDimension`.
    public var scales: [Float]
    /// The quantized value of real 0, one per scale.
    public var zeroPoints: [Int]
    /// The dimension the per-channel scales run along (0 for per-tensor).
    public var quantizedDimension: Int

    /// Parameters as given; `scales` and `zeroPoints` should have the same count (the loader checks files).
    public init(scales: [Float], zeroPoints: [Int], quantizedDimension: Int = 0) {
        self.scales = scales
        self.zeroPoints = zeroPoints
        self.quantizedDimension = quantizedDimension
    }

    /// Per-tensor parameters.
    public init(scale: Float, zeroPoint: Int) {
        self.init(scales: [scale], zeroPoints: [zeroPoint])
    }

    /// The (first) scale, which is the scale of a per-tensor quantized tensor.
    public var scale: Float { scales.first ?? 0 }
    /// The (first) zero point.
    public var zeroPoint: Int { zeroPoints.first ?? 0 }
    /// Whether there is more than one scale.
    public var isPerChannel: Bool { scales.count > 1 }
}
