/// Affine quantization: `real = scale * (quantized - zeroPoint)`.
///
/// Per-tensor quantization has one scale and zero point; per-channel quantization has one per
/// slice along `quantizedDimension`.
public struct QuantizationParameters: Sendable, Equatable {
    public var scales: [Float]
    public var zeroPoints: [Int]
    public var quantizedDimension: Int

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
    public var isPerChannel: Bool { scales.count > 1 }
}
