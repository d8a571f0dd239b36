/// The uint8 / int8 HARD_SWISH of TFLite's BUILTIN_REF resolver:
/// `HardSwishPrepare` (tflite/kernels/activations.cc, shared by all kernel
/// types) and `reference_ops::HardSwish<T>(const HardSwishParams&, ...)`
/// (internal/reference/hard_swish.h), a 16-bit fixed-point computation of
/// `x * relu6(x + 3) / 6`.
struct QuantizedHardSwish: Sendable, Equatable {
    var inputZeroPoint: Int32
    var outputZeroPoint: Int32
    /// Q0.15 significand of `inputScale / 128 / outputScale`.
    var outputMultiplier: Int16
    /// Exponent of that multiplier; TFLite requires it to be `<= 0`.
    var outputMultiplierExponent: Int
    /// Q0.15 significand of `inputScale / 128 / (3 / 32768)`.
    var reluishMultiplier: Int16
    /// Exponent of that multiplier (either sign).
    var reluishMultiplierExponent: Int

    init(inputZeroPoint: Int32, outputZeroPoint: Int32,
         outputMultiplier: Int16, outputMultiplierExponent: Int,
         reluishMultiplier: Int16, reluishMultiplierExponent: Int) {
        self.inputZeroPoint = inputZeroPoint
        self.outputZeroPoint = outputZeroPoint
        self.outputMultiplier = outputMultiplier
        self.outputMultiplierExponent = outputMultiplierExponent
        self.reluishMultiplier = reluishMultiplier
        self.reluishMultiplierExponent = reluishMultiplierExponent
    }

    /// Prepares the parameters as `HardSwishPrepare` does, in `Float`:
    ///
    ///     hiresInputScale    = (1.0f / 128.0f) * inputScale
    ///     outputMultiplier   = QuantizeMultiplier(Double(hiresInputScale / outputScale)) → int16
    ///     reluishMultiplier  = QuantizeMultiplier(Double(hiresInputScale / (3.0f / 32768.0f))) → int16
    ///
    /// Returns `nil` where TFLite's prepare fails (`outputMultiplierExponent > 0`,
    /// i.e. `inputScale / outputScale >= 128`, roughly).
    ///
    /// Example: input scale 0.1, output scale 0.05 → output real multiplier
    /// 0.015625 = 2^-6 → `(16_384, -5)`; reluish real multiplier
    /// 0.1 / 128 × 32768 / 3 ≈ 8.533 → exponent 4.
    init?(inputScale: Float, inputZeroPoint: Int32, outputScale: Float, outputZeroPoint: Int32) {
        let hiresInputScale: Float = (1.0 / 128.0) * inputScale
        let reluishScale: Float = 3.0 / 32768.0
        let output = QuantizedMultiplier(Double(hiresInputScale / outputScale))
        guard output.shift <= 0 else { return nil }
        let reluish = QuantizedMultiplier(Double(hiresInputScale / reluishScale))
        self.init(inputZeroPoint: inputZeroPoint, outputZeroPoint: outputZeroPoint,
                  outputMultiplier: output.int16Multiplier, outputMultiplierExponent: output.shift,
                  reluishMultiplier: reluish.int16Multiplier, reluishMultiplierExponent: reluish.shift)
    }

    /// Hard-swish of one quantized value, clamped to `outputMin...outputMax`
    /// (the output type's range: 0...255 for uint8, −128...127 for int8).
    /// The int16 intermediate narrowing matches the C++ exactly.
    ///
    /// Example: with the parameters of the `init` example and zero points 0,
    /// an input of 0 gives 0.
    @inline(__always)
    func apply(_ input: Int32, outputMin: Int32, outputMax: Int32) -> Int32 {
        let inputValue = Int16(truncatingIfNeeded: input &- inputZeroPoint)
        // C++ computes `input_value * (1 << 7)` in int and narrows to int16.
        let inputOnHiresScale = Int16(truncatingIfNeeded: Int32(inputValue) &* (1 << 7))
        let inputOnPreshiftOutputScale =
            saturatingRoundingDoublingHighMul(inputOnHiresScale, outputMultiplier)

        var reluish = inputOnHiresScale
        if reluishMultiplierExponent > 0 {
            reluish = saturatingLeftShift(reluish, reluishMultiplierExponent - 1)
        }
        reluish = saturatingRoundingDoublingHighMul(reluish, reluishMultiplier)
        if reluishMultiplierExponent > 0 {
            reluish = saturatingLeftShift(reluish, 1)
        }
        if reluishMultiplierExponent < 0 {
            reluish = roundingDivideByPOT(reluish, -reluishMultiplierExponent)
        }
        // [-1, 1] → [0, 1]: (reluish + 2^15) >> 1 in int, narrowed to int16.
        reluish = Int16(truncatingIfNeeded: (Int32(reluish) &+ (1 << 15)) &>> 1)

        let preshiftOutput = saturatingDoublingHighMul(reluish, inputOnPreshiftOutputScale)
        var outputValue = roundingDivideByPOT(preshiftOutput, -outputMultiplierExponent)
        // `output_value += zero_point` is an int add narrowed back to int16.
        outputValue = Int16(truncatingIfNeeded: Int32(outputValue) &+ outputZeroPoint)
        // std::min<int16_t>/std::max<int16_t> against the type limits.
        let clamped = Swift.max(Swift.min(outputValue, Int16(truncatingIfNeeded: outputMax)),
                                Int16(truncatingIfNeeded: outputMin))
        return Int32(clamped)
    }

    /// All 256 outputs for an 8-bit type, indexed by the input's bit pattern
    /// (`Int(UInt8(truncatingIfNeeded: x))`, like `ActivationLookupTable`), so a
    /// kernel can evaluate HARD_SWISH with one table look-up per element.
    ///
    /// Example: with input scale 0.1 (zero point 0) and output scale 0.05
    /// (zero point 0), `makeLookupTable(Int8.self)[30]` is `60`.
    func makeLookupTable<T: FixedWidthInteger>(_: T.Type) -> [T] {
        precondition(T.bitWidth == 8, "8-bit lookup tables only")
        var table = [T](repeating: 0, count: 256)
        for value in Int32(T.min)...Int32(T.max) {
            table[Int(UInt8(truncatingIfNeeded: value))] = apply(T(truncatingIfNeeded: value))
        }
        return table
    }

    /// `apply(_:outputMin:outputMax:)` for a uint8 / int8 element type.
    @inline(__always)
    func apply<T: FixedWidthInteger>(_ input: T) -> T {
        T(truncatingIfNeeded: apply(Int32(input), outputMin: Int32(T.min), outputMax: Int32(T.max)))
    }
}
