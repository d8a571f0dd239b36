/// The clamp range of a fused activation on a quantized output, mirroring
/// TFLite's `CalculateActivationRangeQuantized` (tflite/kernels/kernel_util.cc).
///
/// Each bound is quantized in `Float`, as TFLite's `Quantize` helper does:
///
///     q = zeroPoint + Int32(roundf(f / scale))
///
/// and combined with the type range `qmin...qmax`:
/// - `.relu`: `(max(qmin, q(0)), qmax)`
/// - `.relu6`: `(max(qmin, q(0)), min(qmax, q(6)))`
/// - `.reluN1To1`: `(max(qmin, q(-1)), min(qmax, q(1)))`
/// - `.none`, `.tanh`, `.signBit`: `(qmin, qmax)`
///
/// Returns `nil` where TFLite's prepare fails: `roundf(f / scale)` is NaN or
/// outside `[Float(Int32.min), Float(Int32.max)]` (e.g. a zero or tiny scale).
///
/// Example: `.relu6`, scale 0.05, zero point −128, int8 (−128...127) →
/// `q(0) = -128`, `q(6) = -128 + 120 = -8` → `(-128, -8)`.
func quantizedActivationRange(_ activation: FusedActivation, scale: Float, zeroPoint: Int32,
                              qmin: Int32, qmax: Int32) -> (min: Int32, max: Int32)? {
    func quantize(_ value: Float) -> Int32? {
        let rounded = (value / scale).rounded(.toNearestOrAwayFromZero)
        // Float(Int32.max) is 2^31, so 2^31 itself passes TFLite's check and
        // then converts to INT32_MIN on x86-64; reproduced faithfully.
        guard rounded >= Float(Int32.min), rounded <= Float(Int32.max) else { return nil }
        return zeroPoint &+ truncatingToInt32LikeX86(rounded)
    }
    switch activation {
    case .relu:
        guard let low = quantize(0) else { return nil }
        return (Swift.max(qmin, low), qmax)
    case .relu6:
        guard let low = quantize(0), let high = quantize(6) else { return nil }
        return (Swift.max(qmin, low), Swift.min(qmax, high))
    case .reluN1To1:
        guard let low = quantize(-1), let high = quantize(1) else { return nil }
        return (Swift.max(qmin, low), Swift.min(qmax, high))
    case .none, .tanh, .signBit:
        return (qmin, qmax)
    }
}

/// `quantizedActivationRange` for an output of integer type `T`
/// (`UInt8`, `Int8` or `Int16`), using `T.min...T.max` as `qmin...qmax`.
///
/// Example: `.relu`, scale 0.1, zero point 10, `UInt8.self` → `(10, 255)`.
func quantizedActivationRange<T: FixedWidthInteger>(
    _ activation: FusedActivation, scale: Float, zeroPoint: Int32, outputType _: T.Type
) -> (min: Int32, max: Int32)? {
    quantizedActivationRange(activation, scale: scale, zeroPoint: zeroPoint,
                             qmin: Int32(T.min), qmax: Int32(T.max))
}

/// The clamp range of a fused activation on a float output, mirroring
/// TFLite's `CalculateActivationRange<float>` (kernel_util.h).
///
/// Examples: `.relu6` → `(0, 6)`; `.none` → `(-Float.greatestFiniteMagnitude,
/// Float.greatestFiniteMagnitude)`; `.tanh` and `.signBit` are not clamps and
/// also give the full range, like TFLite.
func activationRange(_ activation: FusedActivation) -> (min: Float, max: Float) {
    switch activation {
    case .relu: return (0, Float.greatestFiniteMagnitude)
    case .relu6: return (0, 6)
    case .reluN1To1: return (-1, 1)
    case .none, .tanh, .signBit:
        return (-Float.greatestFiniteMagnitude, Float.greatestFiniteMagnitude)
    }
}

extension PrepareContext {
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

    /// The float clamp range of a fused activation: `activationRange(_:)`, TFLite's definition,
    /// for the clamps. A fused tanh or sign-bit is rejected instead: TFLite's float kernels would
    /// silently not apply it (its range is the full one), and the converter never fuses them.
    func floatActivationRange(_ activation: FusedActivation) throws(ModelError) -> ClosedRange<Float> {
        switch activation {
        case .none, .relu, .reluN1To1, .relu6:
            let range = activationRange(activation)
            return range.min ... range.max
        case .tanh, .signBit: throw unsupported("fused activation \(activation) is not supported")
        }
    }
}
