/// The 8-bit-input SOFTMAX of TFLite's BUILTIN_REF resolver:
/// `SoftmaxPrepare<kReference>` (tflite/kernels/activations.cc) followed by
/// `reference_ops::Softmax<InputT, OutputT>` (internal/reference/softmax.h),
/// a gemmlowp fixed-point computation:
///
/// - each difference `x - max` (in input quanta) is scaled by
///   `beta * inputScale` into Q5.26 with `multiplyByQuantizedMultiplierGreaterThanOne`;
/// - `exp` is `FixedPoint.expOnNegativeValues` (Q0.31), summed in Q12.19;
/// - the sum's reciprocal comes from `FixedPoint.reciprocal`;
/// - each output is `exp * reciprocal` shifted to the output width and offset by
///   the output type's minimum (the output zero point TFLite requires: 0 for
///   uint8, −128 for int8, −32768 for int16; scale 1/256 or 1/32768).
///
/// Differences below `diffMin` contribute nothing and output the type minimum.
///
/// One deliberate deviation: for 8-bit outputs TFLite aborts the process
/// (`TFLITE_CHECK(exponent <= 31)`) when a row's sum of exponentials reaches
/// 512 (e.g. 512 or more equal inputs; verified with LiteRT 2.3.0). Every
/// output of such a row is below 0.5 quanta, and continuing the same arithmetic
/// with exponent 32 rounds each one to 0, so `evaluate` writes the output
/// type's minimum for the whole row instead of trapping.
struct QuantizedSoftmax: Sendable, Equatable {
    /// Integer bits of the scaled input difference (Q5.26).
    static let scaledDiffIntegerBits = 5
    /// Integer bits of the sum of exponentials (Q12.19).
    static let accumulationIntegerBits = 12

    /// `beta * inputScale * 2^26` quantized; `shift` is a left shift (>= 0).
    let inputBetaMultiplier: QuantizedMultiplier
    /// Smallest `x - max` that still contributes: `-calculateInputRadius(5, shift)`.
    let diffMin: Int32
    /// `exponential(ofDifference: -d)` for `d` in `0...255`, the only differences
    /// 8-bit inputs can produce; 0 below `diffMin`, which `output` turns into the type's
    /// minimum, TFLite's value for such an element.
    /// A pure cache: the values are exactly what the per-element computation gives.
    let exponentialTable: [Int32]
    /// Each `exponentialTable` entry rescaled to the sum's Q12.19: what a difference adds to the
    /// row's sum (0 below `diffMin`).
    let summandTable: [Int32]

    init(inputBetaMultiplier: QuantizedMultiplier, diffMin: Int32) {
        self.inputBetaMultiplier = inputBetaMultiplier
        self.diffMin = diffMin
        let exponentials = (0..<256).map { d in
            -Int32(d) >= diffMin
                ? Self.exponential(ofDifference: -Int32(d), multiplier: inputBetaMultiplier) : 0
        }
        exponentialTable = exponentials
        summandTable = exponentials.map {
            rescale($0, fromIntegerBits: 0, toIntegerBits: Self.accumulationIntegerBits)
        }
    }

    /// Rows at least this long compute each output once per difference from their maximum (at
    /// most 256), then look the elements up (`evaluate`); shorter rows compute it per element.
    static let tableRowLength = 128

    /// Prepares the parameters as `SoftmaxPrepare<kReference>` does:
    /// `beta` and `inputScale` are widened from `Float` to `Double` first.
    /// Returns `nil` where TFLite's prepare aborts (see `preprocessSoftmaxScaling`).
    ///
    /// Example: `beta = 1, inputScale = 1/256` → multiplier `(1 << 30, 19)`,
    /// `diffMin = -3968`.
    init?(beta: Float, inputScale: Float) {
        guard let multiplier = preprocessSoftmaxScaling(
            beta: Double(beta), inputScale: Double(inputScale),
            inputIntegerBits: Self.scaledDiffIntegerBits)
        else { return nil }
        // TFLite: diff_min = -1.0 * CalculateInputRadius(...), stored as int32 (exact).
        self.init(inputBetaMultiplier: multiplier,
                  diffMin: -calculateInputRadius(inputIntegerBits: Self.scaledDiffIntegerBits,
                                                 inputLeftShift: multiplier.shift))
    }

    /// `exp(x - max)` in Q0.31 for a difference that passed the `diffMin` test:
    /// the difference is scaled into Q5.26 and fed to `expOnNegativeValues`.
    ///
    /// Example: with the parameters of `init(beta: 1, inputScale: 1/256)`,
    /// a difference of 0 gives `Int32.max` (1.0).
    @inline(__always)
    func exponential(ofDifference difference: Int32) -> Int32 {
        if difference <= 0 && difference > -256 {
            return exponentialTable[Int(-difference)]
        }
        return Self.exponential(ofDifference: difference, multiplier: inputBetaMultiplier)
    }

    @inline(__always)
    private static func exponential(ofDifference difference: Int32,
                                    multiplier: QuantizedMultiplier) -> Int32 {
        let scaled = multiplyByQuantizedMultiplierGreaterThanOne(difference, multiplier)
        return FixedPoint.expOnNegativeValues(scaled, integerBits: scaledDiffIntegerBits)
    }

    /// Softmax of one row (the innermost dimension), written to `output`.
    /// `In` is `UInt8` or `Int8`; `Out` is `UInt8`, `Int8` or `Int16`.
    /// `input` and `output` must have the same count.
    ///
    /// Each element's difference from the row's maximum is in `0...255`, the tables' indices:
    /// the sum adds `summandTable` entries (the per-element rescaled exponentials, 0 below
    /// `diffMin`). A row of at least `tableRowLength` elements then computes the output once for
    /// each difference from 0 to `max − min` and looks every element up; a shorter one computes
    /// it per element. The same arithmetic either way.
    ///
    /// Example (beta 1, input scale 1/256, uint8 → uint8): a row of equal values
    /// gives 256 / n per element, e.g. `[7, 7]` → `[128, 128]`.
    func evaluate<In: FixedWidthInteger, Out: FixedWidthInteger>(
        row input: UnsafeBufferPointer<In>, into output: UnsafeMutableBufferPointer<Out>
    ) {
        precondition(input.count == output.count, "softmax row size mismatch")
        precondition(In.bitWidth == 8, "softmax tables are indexed by differences of 8-bit values")
        guard let first = input.first else { return }
        var maxInRow = first, minInRow = first
        for value in input {
            maxInRow = Swift.max(maxInRow, value)
            minInRow = Swift.min(minInRow, value)
        }
        let maxValue = Int32(maxInRow)
        @inline(__always)
        func difference(_ index: Int) -> Int { Int(maxValue &- Int32(input[index])) }

        // Q12.19. Wraps (as TFLite's does) only for rows longer than 4096 at the max.
        let sumOfExps = summandTable.withUnsafeBufferPointer { summands in
            var sum: Int32 = 0
            for index in 0..<input.count { sum &+= summands[difference(index)] }
            return sum
        }
        let (shiftedScale, numBitsOverUnit) = FixedPoint.reciprocal(
            sumOfExps, integerBits: Self.accumulationIntegerBits)
        let exponent = numBitsOverUnit + 31 - Out.bitWidth
        // TFLite: TFLITE_CHECK(0 <= exponent && exponent <= 31). A negative
        // exponent would need a sum below 1.0, impossible since the maximum
        // contributes exactly 1.0. Past 31 TFLite aborts; see the type's doc.
        precondition(exponent >= 0, "softmax output exponent out of range")
        if exponent > 31 {
            for index in 0..<output.count { output[index] = Out.min }
            return
        }

        exponentialTable.withUnsafeBufferPointer { exponentials in
            @inline(__always)
            func value(_ d: Int) -> Out { Self.output(exponentials[d], shiftedScale: shiftedScale, exponent: exponent) }
            guard input.count >= Self.tableRowLength else {
                for index in 0..<input.count { output[index] = value(difference(index)) }
                return
            }
            withUnsafeTemporaryAllocation(of: Out.self, capacity: 256) { outputs in
                for d in 0...Int(maxValue &- Int32(minInRow)) { outputs[d] = value(d) }
                for index in 0..<input.count { output[index] = outputs[difference(index)] }
            }
        }
    }

    /// One output: `exp(x − max)` in Q0.31 times the reciprocal of the row's sum, shifted to the
    /// output's width (`exponent` in `0...31`) and offset by the type's minimum. An exponential
    /// of 0 gives the minimum (the doubling high multiply of 0 rounds to 0).
    @inline(__always)
    private static func output<Out: FixedWidthInteger>(_ exponential: Int32, shiftedScale: Int32, exponent: Int) -> Out {
        let unsaturated = roundingDivideByPOT(saturatingRoundingDoublingHighMul(shiftedScale, exponential), exponent)
        // unsaturated is in [0, 2^bitWidth], so adding the type minimum cannot overflow.
        let shifted = unsaturated &+ Int32(Out.min)
        return Out(truncatingIfNeeded: Swift.max(Swift.min(shifted, Int32(Out.max)), Int32(Out.min)))
    }
}
