#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The 256-entry lookup tables that TFLite's BUILTIN_REF resolver uses for
/// uint8 / int8 LOGISTIC and TANH.
///
/// `SigmoidPrepare<kReference>` / `TanhPrepare<kReference>`
/// (tflite/kernels/activations.cc) call `LUTPopulate<uint8_t|int8_t>`
/// (`detail::LUTPopulateInt8`, tflite/kernels/internal/common.h) with a float
/// transform, and the Eval functions just index the table
/// (`optimized_integer_ops::LookupTable`). Every entry is computed in `Float`
/// with the same operations in the same order:
///
///     dequantized = inputScale * Float(value - inputZeroPoint)
///     transformed = f(dequantized)            // expf / tanhf from the C library
///     rescaled    = roundf(transformed * (1 / outputScale))
///     quantized   = Int32(rescaled + Float(outputZeroPoint))   // truncation
///     entry       = clamp(quantized, T.min, T.max)
///
/// The table is indexed by the input's bit pattern, `Int(UInt8(truncatingIfNeeded: x))`,
/// exactly like TFLite's (so for int8 the order is 0, 1, …, 127, −128, …, −1).
enum ActivationLookupTable {
    /// TFLite's sigmoid transform, `1.0f / (1.0f + std::exp(-value))` in `Float`.
    ///
    /// Example: `0` → `0.5`.
    @inline(__always)
    static func logisticTransform(_ value: Float) -> Float {
        1.0 / (1.0 + expf(-value))
    }

    /// TFLite's tanh transform, `std::tanh(value)` in `Float` (`tanhf`).
    ///
    /// Example: `0` → `0`.
    @inline(__always)
    static func tanhTransform(_ value: Float) -> Float {
        tanhf(value)
    }

    /// Builds a table like `detail::LUTPopulateInt8<T>` for `T` = `UInt8` or `Int8`.
    ///
    /// Example: uint8 LOGISTIC with input scale 0.1, zero point 128, output
    /// scale 1/256, zero point 0: entry 128 is `roundf(0.5 * 256) + 0` = `128`,
    /// entry 255 is `clamp(roundf(sigmoid(12.7) * 256))` = `255` (256 clamped).
    static func make<T: FixedWidthInteger>(
        _: T.Type, inputScale: Float, inputZeroPoint: Int32,
        outputScale: Float, outputZeroPoint: Int32,
        transform: (Float) -> Float
    ) -> [T] {
        precondition(T.bitWidth == 8, "8-bit lookup tables only")
        let inverseScale: Float = 1 / outputScale
        let minValue = Int32(T.min)
        let maxValue = Int32(T.max)
        let input = AffineQuantization(scale: inputScale, zeroPoint: inputZeroPoint)
        var table = [T](repeating: 0, count: 256)
        for value in minValue...maxValue {
            // (value - zp) is an int subtraction converted to float, as in C++.
            let dequantized = input.dequantize(value)
            let transformed = transform(dequantized)
            let rescaled = (transformed * inverseScale).rounded(.toNearestOrAwayFromZero)
            // C++: static_cast<int32_t>(rescaled + output_zero_point), a float add.
            let quantized = truncatingToInt32LikeX86(rescaled + Float(outputZeroPoint))
            let clamped = Swift.max(Swift.min(maxValue, quantized), minValue)
            table[Int(UInt8(truncatingIfNeeded: value))] = T(truncatingIfNeeded: clamped)
        }
        return table
    }

    /// The uint8 / int8 LOGISTIC table (`SigmoidPrepare<kReference>`).
    /// TFLite requires `outputScale == 1/256` (and the converter emits
    /// zero point 0 for uint8, −128 for int8); this builder does not check.
    static func logistic<T: FixedWidthInteger>(
        _ type: T.Type, inputScale: Float, inputZeroPoint: Int32,
        outputScale: Float, outputZeroPoint: Int32
    ) -> [T] {
        make(type, inputScale: inputScale, inputZeroPoint: inputZeroPoint,
             outputScale: outputScale, outputZeroPoint: outputZeroPoint,
             transform: logisticTransform)
    }

    /// The uint8 / int8 TANH table (`TanhPrepare<kReference>`).
    static func tanh<T: FixedWidthInteger>(
        _ type: T.Type, inputScale: Float, inputZeroPoint: Int32,
        outputScale: Float, outputZeroPoint: Int32
    ) -> [T] {
        make(type, inputScale: inputScale, inputZeroPoint: inputZeroPoint,
             outputScale: outputScale, outputZeroPoint: outputZeroPoint,
             transform: tanhTransform)
    }

    /// Looks `value` up in a table built by `make` (TFLite's `LUTLookup`).
    @inline(__always)
    static func lookup<T: FixedWidthInteger>(_ value: T, in table: UnsafeBufferPointer<T>) -> T {
        table[Int(UInt8(truncatingIfNeeded: value))]
    }
}
