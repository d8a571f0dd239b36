/// How the integer convolution kernels read quantized activations: as unsigned bytes. uint8
/// values are used as they are; int8 values are offset by 128 (`x ^ 0x80`), which turns the
/// int8 range into 0...255 without changing any difference `x − zeroPoint`, as long as the
/// zero point is offset the same way.
///
/// Unsigned activations are what lets `IntegerGEMM` multiply bytes by 16-bit weights with one
/// `vpdpwssd`/`vpmaddwd` per 16 products.
struct ActivationEncoding: Sendable {
    /// True for int8 activations.
    let isSigned: Bool
    /// The zero point, encoded: the byte that stands for real 0 (and fills padding).
    let zeroPoint: UInt8

    /// The encoding of a uint8 or int8 tensor whose (range-checked) quantization is `q`.
    init(_ type: DataType, _ q: AffineQuantization) {
        isSigned = type == .int8
        zeroPoint = UInt8(truncatingIfNeeded: isSigned ? q.zeroPoint + 128 : q.zeroPoint)
    }

    @inline(__always)
    func encode(_ byte: UInt8) -> UInt8 { isSigned ? byte ^ 0x80 : byte }
}

extension PrepareContext {
    /// TFLite's legacy check on per-tensor bias scales (uint8 convolutions, and every
    /// per-tensor FULLY_CONNECTED): `|inputScale · filterScale − biasScale| / outputScale ≤ 0.02`,
    /// in Double. A bias without quantization parameters has scale 0, as in TFLite.
    func checkBiasScale(_ bias: TensorDescriptor?, inputScale: Float, filterScale: Float, outputScale: Float) throws(ModelError) {
        guard let bias else { return }
        let productScale = Double(inputScale) * Double(filterScale)
        let biasScale = Double(bias.quantization?.scale ?? 0)
        guard abs(productScale - biasScale) / Double(outputScale) <= 0.02 else {
            throw invalid("bias '\(bias.name)' scale \(biasScale) differs from input × filter scale \(productScale) (TFLite allows 2% of the output scale \(outputScale))")
        }
    }
}
