/// The scale and zero point of a per-tensor quantized activation, as the 8-bit kernels read them
/// at prepare time: `real = scale · (q − zeroPoint)`.
struct AffineQuantization: Sendable, Equatable {
    var scale: Float
    var zeroPoint: Int32
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
        let range: ClosedRange<Int>
        switch tensor.dataType {
        case .uint8: range = 0 ... 255
        case .int8: range = -128 ... 127
        case .int16: range = -32768 ... 32767
        default: range = Int(Int32.min) ... Int(Int32.max)
        }
        guard range.contains(q.zeroPoint) else {
            throw invalid("\(role) '\(tensor.name)' has zero point \(q.zeroPoint), outside the \(tensor.dataType) range")
        }
        return AffineQuantization(scale: scale, zeroPoint: Int32(q.zeroPoint))
    }

    /// The integer clamp range of `activation` fused into an operator whose output is the 8-bit
    /// (or int16) tensor `output` (TFLite's `CalculateActivationRangeQuantized`).
    ///
    /// Not named like the global `quantizedActivationRange`: a member of that name would shadow
    /// it in every `PrepareContext` extension.
    func integerActivationRange(_ activation: FusedActivation, output: TensorDescriptor,
                                _ q: AffineQuantization) throws(ModelError) -> ClosedRange<Int32> {
        let range: (min: Int32, max: Int32)?
        switch output.dataType {
        case .uint8: range = quantizedActivationRange(activation, scale: q.scale, zeroPoint: q.zeroPoint, outputType: UInt8.self)
        case .int8: range = quantizedActivationRange(activation, scale: q.scale, zeroPoint: q.zeroPoint, outputType: Int8.self)
        case .int16: range = quantizedActivationRange(activation, scale: q.scale, zeroPoint: q.zeroPoint, outputType: Int16.self)
        default: throw unsupported("output '\(output.name)' has type \(output.dataType), expected uint8, int8 or int16")
        }
        guard let range, range.min <= range.max else {
            throw invalid("output '\(output.name)' (scale \(q.scale), zero point \(q.zeroPoint)) cannot represent the \(activation) clamp")
        }
        return range.min ... range.max
    }
}

/// The value range of an integer element type, as `Int32` bounds.
@inline(__always)
func int32Range<T: FixedWidthInteger>(of _: T.Type) -> ClosedRange<Int32> {
    Int32(T.min) ... Int32(T.max)
}
