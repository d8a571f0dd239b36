/// The real values of a uint8, int8 or int16 tensor, `scale · (q − zeroPoint)` per element
/// (`AffineQuantization.dequantize`), with one scale and zero point for the whole tensor or one
/// per channel along its quantized dimension. Used by DEQUANTIZE and the detection
/// post-processing, and meant for reading a quantized output as floats.
///
/// Usage:
///
///     let d = try Dequantization(of: tensor)   // rules checked once
///     d.dequantize(bytes, count: tensor.elementCount, into: floats)
///
/// Example: int8 `[2, 3]` with scales `[0.5, 2]` along dimension 0 and zero points `[0, 1]`:
/// `[2, 4, −2 | 1, 3, 0]` → `[1, 2, −1 | 0, 4, −2]`.
struct Dequantization: Sendable, Equatable {
    /// uint8, int8 or int16.
    let type: DataType
    /// One per channel (one in all when quantized per tensor).
    let channels: [AffineQuantization]
    /// Elements of one channel's contiguous run: element `i` belongs to channel
    /// `(i / inner) % channels.count`.
    let inner: Int

    /// The dequantization of `tensor`; `role` names it in errors ("input", "anchors").
    /// - Throws: `QuantizationRuleViolation` when `tensor` is not uint8, int8 or int16, has no
    ///   quantization parameters, has a zero point outside its type (`zeroPointRange(of:)`), or
    ///   per-channel parameters that do not match its shape.
    init(of tensor: TensorDescriptor, role: String = "tensor") throws(QuantizationRuleViolation) {
        guard [.uint8, .int8, .int16].contains(tensor.dataType) else {
            throw QuantizationRuleViolation(description: "\(role) '\(tensor.name)' has type \(tensor.dataType), expected uint8, int8 or int16")
        }
        guard let q = tensor.quantization, !q.scales.isEmpty else {
            throw QuantizationRuleViolation(description: "\(tensor.dataType) \(role) '\(tensor.name)' has no quantization parameters")
        }
        try checkZeroPoints(q, of: tensor, role: role)
        guard q.zeroPoints.count == q.scales.count || q.zeroPoints.count <= 1 else {
            throw QuantizationRuleViolation(description: "\(role) '\(tensor.name)' has \(q.scales.count) scales but \(q.zeroPoints.count) zero points")
        }
        var inner = tensor.elementCount
        if q.isPerChannel {
            let d = q.quantizedDimension
            guard d >= 0, d < tensor.shape.count, tensor.shape[d] == q.scales.count else {
                throw QuantizationRuleViolation(description: "\(role) '\(tensor.name)' has \(q.scales.count) scales along dimension \(d) of shape \(tensor.shape)")
            }
            inner = tensor.shape[(d + 1)...].reduce(1, *)
        }
        type = tensor.dataType
        channels = q.scales.indices.map { c in
            AffineQuantization(scale: q.scales[c], zeroPoint: Int32(q.zeroPoints.isEmpty ? 0 : q.zeroPoints[q.zeroPoints.count == 1 ? 0 : c]))
        }
        self.inner = inner
    }

    /// A per-tensor dequantization of `type` (uint8, int8 or int16) with the range-checked `q`.
    init(_ type: DataType, _ q: AffineQuantization) {
        self.type = type
        channels = [q]
        inner = 1
    }

    /// Writes the real values of the `count` elements at `source` (of `type`) to `out`.
    func dequantize(_ source: UnsafeRawPointer, count: Int, into out: UnsafeMutablePointer<Float>) {
        switch type {
        case .int8: affine(source.assumingMemoryBound(to: Int8.self), count: count, into: out)
        case .uint8: affine(source.assumingMemoryBound(to: UInt8.self), count: count, into: out)
        default: affine(source.assumingMemoryBound(to: Int16.self), count: count, into: out)
        }
    }

    @inline(__always)
    private func affine<Q: BinaryInteger>(_ source: UnsafePointer<Q>, count: Int, into out: UnsafeMutablePointer<Float>) {
        if channels.count == 1 {
            let q = channels[0]
            for i in 0 ..< count { out[i] = q.dequantize(Int32(source[i])) }
            return
        }
        var i = 0, c = 0
        while i < count {
            let q = channels[c], end = min(i + max(inner, 1), count)
            for j in i ..< end { out[j] = q.dequantize(Int32(source[j])) }
            i = end
            c = c + 1 == channels.count ? 0 : c + 1
        }
    }
}

extension PrepareContext {
    /// `Dequantization(of:)` with a broken rule as this operator's `ModelError`.
    func dequantization(of tensor: TensorDescriptor, role: String) throws(ModelError) -> Dequantization {
        do { return try Dequantization(of: tensor, role: role) } catch { throw invalid(error.description) }
    }
}
