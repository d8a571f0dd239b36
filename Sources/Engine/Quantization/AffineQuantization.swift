/// The scale and zero point of a per-tensor quantized activation, as the 8-bit kernels read them
/// at prepare time: `real = scale · (q − zeroPoint)`.
struct AffineQuantization: Sendable, Equatable {
    var scale: Float
    var zeroPoint: Int32

    /// `scale · (q − zeroPoint)` rounded to Float: TFLite's `Dequantize` (reference_ops and
    /// reference_integer_ops), which computes in Double, and its float formulations
    /// (`(q − zeroPoint) · scale` in the detection post-processing) all give this value:
    /// `q − zeroPoint` of an 8- or 16-bit `q` is exact in Float, so each rounds the one exact
    /// product once.
    ///
    /// Example: scale 0.5, zero point 128: q = 131 → 1.5; q = 0 → −64.
    @inline(__always)
    func dequantize(_ q: Int32) -> Float {
        scale * Float(q &- zeroPoint)
    }
}

/// A quantization parameter that breaks one of TFLite's rules, described for an error message
/// (prepare wraps it in a `ModelError` that names the operator).
struct QuantizationRuleViolation: Error, CustomStringConvertible {
    var description: String
}

/// The zero points TFLite's quantization spec allows a tensor of `type`: a value of the type
/// itself (uint8 0...255, int8 −128...127, int16 −32768...32767), since `real 0` must be
/// representable; any `Int32` for wider types. Stricter rules that depend on the role (symmetric
/// int8 weights, zero-point-0 int16 in some kernels) stay with the operators that impose them.
func zeroPointRange(of type: DataType) -> ClosedRange<Int> {
    switch type {
    case .uint8: 0 ... 255
    case .int8: -128 ... 127
    case .int16: -32768 ... 32767
    default: Int(Int32.min) ... Int(Int32.max)
    }
}

/// Checks every zero point of `q` (the quantization of `tensor`) against `zeroPointRange(of:)`.
/// - Throws: a `QuantizationRuleViolation` naming `role`, the tensor and the first bad zero point.
func checkZeroPoints(_ q: QuantizationParameters, of tensor: TensorDescriptor, role: String) throws(QuantizationRuleViolation) {
    let range = zeroPointRange(of: tensor.dataType)
    guard let bad = q.zeroPoints.first(where: { !range.contains($0) }) else { return }
    throw QuantizationRuleViolation(description: "\(role) '\(tensor.name)' has zero point \(bad), outside the \(tensor.dataType) range \(range.lowerBound)...\(range.upperBound)")
}

extension PrepareContext {
    /// The per-tensor quantization of `tensor`, a uint8, int8 or int16 activation.
    ///
    /// - Throws: `ModelError` when the tensor has no quantization parameters, is quantized per
    ///   channel, or has a zero point outside its element type (TFLite leaves that undefined).
    func affineQuantization(of tensor: TensorDescriptor, role: String) throws(ModelError) -> AffineQuantization {
        guard let q = tensor.quantization, let scale = q.scales.first else {
            throw invalid("\(role) '\(tensor.name)' (\(tensor.dataType)) has no quantization parameters")
        }
        guard q.scales.count == 1 else {
            throw unsupported("\(role) '\(tensor.name)' is quantized per channel (\(q.scales.count) scales); activations must be per tensor")
        }
        try checkZeroPoints(q, of: tensor, role: role)
        return AffineQuantization(scale: scale, zeroPoint: Int32(q.zeroPoint))
    }

    /// `checkZeroPoints` with the violation as this operator's `ModelError`.
    func checkZeroPoints(_ q: QuantizationParameters, of tensor: TensorDescriptor, role: String) throws(ModelError) {
        do { try Engine.checkZeroPoints(q, of: tensor, role: role) } catch { throw invalid(error.description) }
    }
}

/// The value range of an integer element type, as `Int32` bounds.
@inline(__always)
func int32Range<T: FixedWidthInteger>(of _: T.Type) -> ClosedRange<Int32> {
    Int32(T.min) ... Int32(T.max)
}
