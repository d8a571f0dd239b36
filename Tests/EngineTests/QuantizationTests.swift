import Foundation
import XCTest

@testable import Engine
import TestSupport

// Tests for Sources/Engine/Quantization: wide-integer oracles for the fixed-point
// primitives, hand-worked examples, and golden values produced by TFLite's own
// reference kernels (Tests/Goldens/make_quant_math_goldens.py writes
// Tests/EngineTests/Fixtures/quant_math/goldens.json).

// MARK: - Test helpers

private let edgeInt32: [Int32] = [
    .min, .min + 1, .min + 2, -(1 << 30) - 1, -(1 << 30), -(1 << 30) + 1, -65_537, -65_536, -32_768,
    -255, -3, -2, -1, 0, 1, 2, 3, 255, 32_767, 65_536, 65_537, (1 << 30) - 1, 1 << 30, (1 << 30) + 1,
    .max - 2, .max - 1, .max,
]

/// Floor division on Int64 (Swift's `/` truncates).
private func floorDiv(_ n: Int64, _ d: Int64) -> Int64 {
    let q = n / d
    return (n % d != 0 && ((n < 0) != (d < 0))) ? q - 1 : q
}

/// Exact SaturatingRoundingDoublingHighMul: round(a*b / 2^31) with ties toward
/// +infinity, saturating the single overflow case.
private func oracleSRDHM(_ a: Int32, _ b: Int32) -> Int32 {
    if a == .min && b == .min { return .max }
    return Int32(floorDiv(Int64(a) * Int64(b) + (1 << 30), 1 << 31))
}

/// Exact rounding division by 2^e, ties away from zero.
private func oracleRDBPOT(_ x: Int64, _ exponent: Int) -> Int64 {
    if exponent == 0 { return x }
    let magnitude = (abs(x) + (Int64(1) << (exponent - 1))) >> exponent
    return x < 0 ? -magnitude : magnitude
}

/// MultiplyByQuantizedMultiplier from the oracles, with the C++ left-shift wrap.
private func oracleMBQM(_ x: Int32, _ q: QuantizedMultiplier) -> Int32 {
    let leftShift = max(q.shift, 0)
    let rightShift = max(-q.shift, 0)
    let shifted = Int32(truncatingIfNeeded: Int64(x) << leftShift)
    return Int32(oracleRDBPOT(Int64(oracleSRDHM(shifted, q.multiplier)), rightShift))
}

// MARK: - Golden file model

private struct Goldens: Decodable {
    struct Requantize: Decodable {
        var input_scale: Double
        var output_scale: Double
        var inputs: [Int32]
        var outputs: [Int32]
    }
    struct Table: Decodable {
        var op: String?
        var type: String
        var input_scale: Double
        var input_zero_point: Int32
        var output_scale: Double
        var output_zero_point: Int32
        var outputs: [Int32]
    }
    struct Softmax: Decodable {
        var input_type: String
        var output_type: String
        var beta: Double
        var input_scale: Double
        var rows: Int
        var depth: Int
        var inputs: [Int32]
        var outputs: [Int32]
    }
    struct Origin: Decodable { var runtime: String; var resolver: String }
    var origin: Origin
    var requantize: [Requantize]
    var lut: [Table]
    var hard_swish: [Table]
    var softmax: [Softmax]

    static func load() throws -> Goldens {
        // Tests/EngineTests/Fixtures/quant_math/goldens.json, next to this file.
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/quant_math/goldens.json")
        return try JSONDecoder().decode(Goldens.self, from: Data(contentsOf: url))
    }
}

// MARK: - Tests

final class QuantizationTests: XCTestCase {

    // MARK: SaturatingRoundingDoublingHighMul

    func testSRDHMEdgeValuesMatchOracle() {
        for a in edgeInt32 {
            for b in edgeInt32 {
                XCTAssertEqual(saturatingRoundingDoublingHighMul(a, b), oracleSRDHM(a, b), "a=\(a) b=\(b)")
            }
        }
        XCTAssertEqual(saturatingRoundingDoublingHighMul(Int32.min, Int32.min), Int32.max)
        XCTAssertEqual(saturatingRoundingDoublingHighMul(1 << 30, 1 << 30), 1 << 29)
        XCTAssertEqual(saturatingRoundingDoublingHighMul(1 << 30, 1), 1)   // +0.5 rounds up
        XCTAssertEqual(saturatingRoundingDoublingHighMul(1 << 30, -1), 0)  // -0.5 rounds up
        XCTAssertEqual(saturatingRoundingDoublingHighMul(Int32.max, 7), 7)
    }

    func testSRDHMRandomSweepMatchesOracle() {
        var rng = SplitMix64(seed: 0x5EED_0001)
        for i in 0..<200_000 {
            var a = rng.int32(), b = rng.int32()
            // Also cover small magnitudes, where rounding ties are common.
            if i % 4 == 1 { b >>= 16 }
            if i % 4 == 2 { a >>= 20; b >>= 8 }
            let got = saturatingRoundingDoublingHighMul(a, b)
            let expected = oracleSRDHM(a, b)
            if got != expected { XCTFail("a=\(a) b=\(b): \(got) != \(expected)"); return }
        }
    }

    // MARK: RoundingDivideByPOT

    func testRDBPOTEdgeValuesMatchOracle() {
        for x in edgeInt32 {
            for exponent in 0...31 {
                XCTAssertEqual(Int64(roundingDivideByPOT(x, exponent)), oracleRDBPOT(Int64(x), exponent),
                               "x=\(x) e=\(exponent)")
            }
        }
        XCTAssertEqual(roundingDivideByPOT(5, 1), 3)
        XCTAssertEqual(roundingDivideByPOT(-5, 1), -3)
        XCTAssertEqual(roundingDivideByPOT(-6, 2), -2)
        XCTAssertEqual(roundingDivideByPOT(-5, 2), -1)
        XCTAssertEqual(roundingDivideByPOT(Int32.min, 31), -1)
        XCTAssertEqual(roundingDivideByPOT(Int32.max, 31), 1)
    }

    func testRDBPOTRandomSweepMatchesOracle() {
        var rng = SplitMix64(seed: 0x5EED_0002)
        for i in 0..<200_000 {
            let x = i % 2 == 0 ? rng.int32() : rng.int32() >> 20
            let exponent = Int(rng.next() % 32)
            let got = Int64(roundingDivideByPOT(x, exponent))
            let expected = oracleRDBPOT(Int64(x), exponent)
            if got != expected { XCTFail("x=\(x) e=\(exponent): \(got) != \(expected)"); return }
        }
    }

    // MARK: Other 32-bit primitives

    func testSaturatingRoundingMultiplyByPOT() {
        for x in edgeInt32 {
            for exponent in -31...31 {
                let expected: Int64 = exponent >= 0
                    ? min(max(Int64(x) << exponent, Int64(Int32.min)), Int64(Int32.max))
                    : oracleRDBPOT(Int64(x), -exponent)
                XCTAssertEqual(Int64(saturatingRoundingMultiplyByPOT(x, exponent)), expected,
                               "x=\(x) e=\(exponent)")
            }
        }
        XCTAssertEqual(saturatingRoundingMultiplyByPOT(3, 2), 12)
        XCTAssertEqual(saturatingRoundingMultiplyByPOT(1 << 29, 2), Int32.max)
        XCTAssertEqual(saturatingRoundingMultiplyByPOT(-(1 << 29), 2), Int32.min)
        XCTAssertEqual(saturatingRoundingMultiplyByPOT(6, -2), 2)
        XCTAssertEqual(rescale(Int32.max, fromIntegerBits: 0, toIntegerBits: 12), 1 << 19)
    }

    func testRoundingHalfSumAndCountLeadingZeros() {
        for a in edgeInt32 {
            for b in edgeInt32 {
                let sum = Int64(a) + Int64(b)
                let expected = sum >= 0 ? (sum + 1) / 2 : -((-sum + 1) / 2)
                XCTAssertEqual(Int64(roundingHalfSum(a, b)), expected, "a=\(a) b=\(b)")
            }
        }
        XCTAssertEqual(roundingHalfSum(1, 2), 2)
        XCTAssertEqual(roundingHalfSum(-1, -2), -2)
        XCTAssertEqual(countLeadingZeros(1), 31)
        XCTAssertEqual(countLeadingZeros(0), 32)
        XCTAssertEqual(countLeadingZeros(-1), 0)
        XCTAssertEqual(countLeadingZeros(Int32.max), 1)
    }

    func testTruncatingToInt32LikeX86() {
        XCTAssertEqual(truncatingToInt32LikeX86(2.9), 2)
        XCTAssertEqual(truncatingToInt32LikeX86(-2.9), -2)
        XCTAssertEqual(truncatingToInt32LikeX86(-2_147_483_648.0), Int32.min)
        XCTAssertEqual(truncatingToInt32LikeX86(2_147_483_648.0), Int32.min)
        XCTAssertEqual(truncatingToInt32LikeX86(.nan), Int32.min)
        XCTAssertEqual(truncatingToInt32LikeX86(.infinity), Int32.min)
    }

    // MARK: QuantizedMultiplier

    func testQuantizeMultiplierWorkedExamples() {
        func check(_ real: Double, _ multiplier: Int32, _ shift: Int, line: UInt = #line) {
            XCTAssertEqual(QuantizedMultiplier(real), QuantizedMultiplier(multiplier: multiplier, shift: shift),
                           "real=\(real)", line: line)
        }
        check(0.5, 1 << 30, 0)
        check(1.0, 1 << 30, 1)
        check(0.75, 1_610_612_736, 0)
        check(3.0, 1_610_612_736, 2)
        check(0.1, 1_717_986_918, -3)
        check(2.0, 1 << 30, 2)
        check(262_144.0, 1 << 30, 19)
        check(1.0 - 0x1p-40, 1 << 30, 1)      // q rounds to 2^31 → halved
        check(0x1p-31, 1 << 30, -30)
        check(0x1p-32, 1 << 30, -31)
        check(0x1p-33, 0, 0)                   // shift -32 < -31 → flushed
        check(Double.leastNonzeroMagnitude, 0, 0)
        check(0.0, 0, 0)
        check(-0.0, 0, 0)
        check(-0.5, -(1 << 30), 0)
        check(-(1.0 - 0x1p-40), Int32.min, 0)  // the negative twin is not halved
        check(.infinity, 0, 0)
        check(.nan, 0, 0)
        // 2^31 - 1 (the softmax cap): q * 2^31 is already the integer 2^31 - 1.
        check(Double(Int32.max), Int32.max, 31)
    }

    func testQuantizeMultiplierRandomRoundTrip() {
        var rng = SplitMix64(seed: 0x5EED_0003)
        for _ in 0..<20_000 {
            let exponent = Int(rng.next() % 60) - 30
            let mantissa = 0.5 + Double(rng.next() >> 11) * 0x1p-54  // [0.5, 1)
            let real = mantissa * pow(2.0, Double(exponent))
            let q = QuantizedMultiplier(real)
            XCTAssertGreaterThanOrEqual(q.multiplier, 1 << 30)
            let reconstructed = Double(q.multiplier) * pow(2.0, Double(q.shift - 31))
            XCTAssertLessThanOrEqual(abs(reconstructed - real) / real, 0x1p-31, "real=\(real)")
        }
    }

    func testQuantizeMultiplierVariants() {
        XCTAssertEqual(QuantizedMultiplier.smallerThanOneExp(0.25), QuantizedMultiplier(multiplier: 1 << 30, shift: -1))
        XCTAssertNil(QuantizedMultiplier.smallerThanOneExp(1.0))
        XCTAssertNil(QuantizedMultiplier.smallerThanOneExp(0.0))
        XCTAssertNil(QuantizedMultiplier.smallerThanOneExp(1.0 - 0x1p-40))  // rounds to shift +1
        XCTAssertEqual(QuantizedMultiplier.greaterThanOne(262_144.0), QuantizedMultiplier(multiplier: 1 << 30, shift: 19))
        XCTAssertNil(QuantizedMultiplier.greaterThanOne(1.0))
        XCTAssertEqual(QuantizedMultiplier(multiplier: 1 << 30, shift: 0).int16Multiplier, 16_384)
        XCTAssertEqual(QuantizedMultiplier(multiplier: Int32.max, shift: 0).int16Multiplier, Int16.max)
        XCTAssertEqual(QuantizedMultiplier(multiplier: Int32.max - (1 << 15) - 1, shift: 0).int16Multiplier, Int16.max)
        XCTAssertEqual(QuantizedMultiplier(multiplier: 1_610_612_736, shift: 0).int16Multiplier, 24_576)
    }

    // MARK: MultiplyByQuantizedMultiplier

    func testMultiplyByQuantizedMultiplierWorkedExamples() {
        XCTAssertEqual(multiplyByQuantizedMultiplier(5, QuantizedMultiplier(0.5)), 3)
        XCTAssertEqual(multiplyByQuantizedMultiplier(-5, QuantizedMultiplier(0.5)), -2)
        XCTAssertEqual(multiplyByQuantizedMultiplier(6, QuantizedMultiplier(0.25)), 2)
        XCTAssertEqual(multiplyByQuantizedMultiplier(7, QuantizedMultiplier(3.0)), 21)
        XCTAssertEqual(multiplyByQuantizedMultiplier(1000, QuantizedMultiplier(0.1)), 100)
        XCTAssertEqual(multiplyByQuantizedMultiplierSmallerThanOneExp(10, QuantizedMultiplier(0.25)), 3)
        XCTAssertEqual(multiplyByQuantizedMultiplierGreaterThanOne(-3, QuantizedMultiplier(262_144.0)), -786_432)
        XCTAssertEqual(multiplyByQuantizedMultiplier(Int64(1) << 40, QuantizedMultiplier(0x1p-21)), 524_288)
    }

    func testMultiplyByQuantizedMultiplierMatchesOracleAndReal() {
        var rng = SplitMix64(seed: 0x5EED_0004)
        for i in 0..<100_000 {
            let real = (0.5 + Double(rng.next() >> 11) * 0x1p-54) * pow(2.0, Double(Int(rng.next() % 40) - 32))
            let q = QuantizedMultiplier(real)
            var x = rng.int32()
            if i % 3 != 0 { x >>= Int32(rng.next() % 31) }
            let got = multiplyByQuantizedMultiplier(x, q)
            if got != oracleMBQM(x, q) { XCTFail("x=\(x) q=\(q)"); return }
            // Where nothing overflows, the result is x * real to within one unit.
            let ideal = Double(x) * Double(q.multiplier) * pow(2.0, Double(q.shift - 31))
            if abs(Double(x) * pow(2.0, Double(max(q.shift, 0)))) < 0x1p31, abs(ideal) < 0x1p31 {
                if abs(Double(got) - ideal) > 1.0 { XCTFail("x=\(x) q=\(q): \(got) vs \(ideal)"); return }
            }
        }
        // The C++ left shift wraps; so does ours.
        let big = QuantizedMultiplier(multiplier: 1 << 30, shift: 2)
        XCTAssertEqual(multiplyByQuantizedMultiplier(1 << 30, big), oracleMBQM(1 << 30, big))
    }

    func testMultiplyByQuantizedMultiplier64() {
        var rng = SplitMix64(seed: 0x5EED_0005)
        for _ in 0..<20_000 {
            let x = Int64(truncatingIfNeeded: rng.next()) >> 17  // |x| < 2^47
            let shift = Int(rng.next() % 39) - 31                 // -31...7
            let multiplier = Int32(1 << 30) + Int32(truncatingIfNeeded: rng.next() >> 34)
            let reduced = Int64((multiplier + (1 << 15)) >> 16)
            let totalShift = 15 - shift
            // floor((x * reduced + 2^(t-1)) / 2^t), i.e. rounding half up.
            let expected = floorDiv(x * reduced + (Int64(1) << (totalShift - 1)), Int64(1) << totalShift)
            XCTAssertEqual(multiplyByQuantizedMultiplier(x, multiplier: multiplier, shift: shift),
                           Int32(truncatingIfNeeded: expected))
        }
        // Saturated reduction of multipliers >= 0x7FFF0000.
        XCTAssertEqual(multiplyByQuantizedMultiplier(Int64(1) << 20, multiplier: Int32.max, shift: 0),
                       Int32(((Int64(1) << 20) * 0x7FFF + (1 << 14)) >> 15))
    }

    // MARK: 16-bit primitives

    func testInt16Primitives() {
        var rng = SplitMix64(seed: 0x5EED_0006)
        for _ in 0..<50_000 {
            let a = Int16(truncatingIfNeeded: rng.next()), b = Int16(truncatingIfNeeded: rng.next())
            let ab = Int64(a) * Int64(b)
            let rounding = (a == .min && b == .min) ? Int64(Int16.max) : floorDiv(ab + (1 << 14), 1 << 15)
            XCTAssertEqual(Int64(saturatingRoundingDoublingHighMul(a, b)), rounding)
            let truncating = (a == .min && b == .min) ? Int64(Int16.max) : ab / (1 << 15)
            XCTAssertEqual(Int64(saturatingDoublingHighMul(a, b)), truncating)
            let exponent = Int(rng.next() % 16)
            XCTAssertEqual(Int64(roundingDivideByPOT(a, exponent)), oracleRDBPOT(Int64(a), exponent))
        }
        // Exponents >= 16: gemmlowp's int16 template narrows the mask to -1.
        XCTAssertEqual(roundingDivideByPOT(Int16(0), 16), 1)
        XCTAssertEqual(roundingDivideByPOT(Int16(1234), 20), 1)
        XCTAssertEqual(roundingDivideByPOT(Int16(-1234), 20), -1)
        XCTAssertEqual(saturatingRoundingDoublingHighMul(Int16(16_384), Int16(16_384)), 8_192)
        XCTAssertEqual(saturatingDoublingHighMul(Int16(3), Int16(16_384)), 1)
        XCTAssertEqual(saturatingDoublingHighMul(Int16(-3), Int16(16_384)), -1)
        XCTAssertEqual(saturatingLeftShift(Int16(100), 3), 800)
        XCTAssertEqual(saturatingLeftShift(Int16(5_000), 3), Int16.max)
        XCTAssertEqual(saturatingLeftShift(Int16(-5_000), 3), Int16.min)
    }

    // MARK: gemmlowp fixed-point functions

    func testFixedPointFunctionsApproximateTheirRealCounterparts() {
        // exp on [-1/4, 0), Q0.31.
        for raw in stride(from: -(Int32(1) << 29), to: 0, by: 1 << 19) {
            let got = Double(FixedPoint.expOnIntervalBetweenNegativeOneQuarterAnd0Excl(raw)) * 0x1p-31
            // gemmlowp's 4th-order Taylor expansion is good to about 2.5e-7.
            XCTAssertEqual(got, exp(Double(raw) * 0x1p-31), accuracy: 3e-7)
        }
        // exp on negative values, Q5.26 (softmax) and Q0.31.
        XCTAssertEqual(FixedPoint.expOnNegativeValues(0, integerBits: 5), Int32.max)
        // exp(-1) as exp(-1/4) (Taylor) × exp(-1/4) × exp(-1/2) (barrel shifter).
        XCTAssertEqual(FixedPoint.expOnNegativeValues(-(1 << 26), integerBits: 5), 790_015_308)
        var previous = Int32.max
        for raw in stride(from: Int32(0), through: Int32.min + 1, by: -(1 << 21)) {
            let value = FixedPoint.expOnNegativeValues(raw, integerBits: 5)
            XCTAssertEqual(Double(value) * 0x1p-31, exp(Double(raw) * 0x1p-26), accuracy: 5e-7)
            XCTAssertLessThanOrEqual(value, previous)
            previous = value
        }
        for raw in stride(from: Int32(0), through: Int32.min + 1, by: -(1 << 22)) {
            let value = FixedPoint.expOnNegativeValues(raw, integerBits: 0)
            XCTAssertEqual(Double(value) * 0x1p-31, exp(Double(raw) * 0x1p-31), accuracy: 5e-7)
        }
        // Inputs below -32 vanish when the format can represent them.
        XCTAssertEqual(FixedPoint.expOnNegativeValues(-(33 << 24), integerBits: 7), 0)
        // 1 / (1 + x) and (1 - x) / (1 + x) on [0, 1).
        for raw in stride(from: Int32(0), to: Int32.max - (1 << 24), by: 1 << 24) {
            let x = Double(raw) * 0x1p-31
            XCTAssertEqual(Double(FixedPoint.oneOverOnePlusXForXIn01(raw)) * 0x1p-31, 1 / (1 + x), accuracy: 1e-8)
            XCTAssertEqual(Double(FixedPoint.oneMinusXOverOnePlusXForXIn01(raw)) * 0x1p-31,
                           (1 - x) / (1 + x), accuracy: 1e-8)
        }
        // logistic and tanh, Q4.27 inputs.
        XCTAssertEqual(FixedPoint.logistic(0, integerBits: 4), 1 << 30)
        XCTAssertEqual(FixedPoint.tanh(0, integerBits: 4), 0)
        for raw in stride(from: Int32.min + 1, to: Int32.max - (1 << 23), by: 1 << 23) {
            let x = Double(raw) * 0x1p-27
            XCTAssertEqual(Double(FixedPoint.logistic(raw, integerBits: 4)) * 0x1p-31, 1 / (1 + exp(-x)), accuracy: 1e-6)
            XCTAssertEqual(Double(FixedPoint.tanh(raw, integerBits: 4)) * 0x1p-31, Foundation.tanh(x), accuracy: 1e-6)
        }
        // Exact values pinned from this implementation (the doc-comment examples).
        // exp and the reciprocal are checked against TFLite through the softmax goldens.
        XCTAssertEqual(FixedPoint.expOnIntervalBetweenNegativeOneQuarterAnd0Excl(-(1 << 29)), 1_672_462_419)
        XCTAssertEqual(FixedPoint.oneOverOnePlusXForXIn01(0), Int32.max)
        XCTAssertEqual(FixedPoint.oneOverOnePlusXForXIn01(1 << 30), 1_431_655_762)
        XCTAssertEqual(FixedPoint.oneMinusXOverOnePlusXForXIn01(1 << 30), 715_827_876)
        XCTAssertEqual(FixedPoint.tanh(1 << 27, integerBits: 4), 1_635_510_876)
        XCTAssertEqual(FixedPoint.logistic(1 << 27, integerBits: 4), 1_569_936_226)
        XCTAssertEqual(FixedPoint.tanh(-(1 << 27), integerBits: 4), -1_635_510_876)
        XCTAssertEqual(FixedPoint.logistic(-(1 << 27), integerBits: 4), Int32.max - 1_569_936_226)
        // Reciprocal of a Q12.19 sum.
        let (reciprocal, bitsOverUnit) = FixedPoint.reciprocal(3 << 19, integerBits: 12)
        XCTAssertEqual(bitsOverUnit, 1)
        XCTAssertEqual(reciprocal, 1_431_655_762)
    }

    // MARK: Softmax / logistic preparation

    func testSoftmaxScalingAndInputRadius() {
        XCTAssertEqual(preprocessSoftmaxScaling(beta: 1, inputScale: 1.0 / 256, inputIntegerBits: 5),
                       QuantizedMultiplier(multiplier: 1 << 30, shift: 19))
        // Capped at 2^31 - 1.
        XCTAssertEqual(preprocessSoftmaxScaling(beta: 1, inputScale: 1000, inputIntegerBits: 5),
                       QuantizedMultiplier(multiplier: Int32.max, shift: 31))
        XCTAssertNil(preprocessSoftmaxScaling(beta: 1, inputScale: 0x1p-30, inputIntegerBits: 5))
        XCTAssertEqual(calculateInputRadius(inputIntegerBits: 5, inputLeftShift: 19), 3968)
        XCTAssertEqual(calculateInputRadius(inputIntegerBits: 4, inputLeftShift: 3, totalSignedBits: 15), 3840)
        XCTAssertEqual(calculateInputRadius(inputIntegerBits: 5, inputLeftShift: 31), 0)
        let softmax = QuantizedSoftmax(beta: 1, inputScale: 1.0 / 256)
        XCTAssertEqual(softmax?.inputBetaMultiplier, QuantizedMultiplier(multiplier: 1 << 30, shift: 19))
        XCTAssertEqual(softmax?.diffMin, -3968)
    }

    func testHardSwishAndSoftmaxWorkedExamples() {
        let hardSwish = QuantizedHardSwish(inputScale: 0.1, inputZeroPoint: 0, outputScale: 0.05, outputZeroPoint: 0)
        XCTAssertEqual(hardSwish, QuantizedHardSwish(inputZeroPoint: 0, outputZeroPoint: 0,
                                                     outputMultiplier: 16_384, outputMultiplierExponent: -5,
                                                     reluishMultiplier: 17_476, reluishMultiplierExponent: 4))
        XCTAssertEqual(hardSwish?.apply(Int8(0)), 0)
        XCTAssertEqual(hardSwish?.apply(Int8(30)), 60)  // hswish(3.0) = 3.0 → 60 × 0.05
        XCTAssertEqual(hardSwish?.apply(Int8(-10)), -7) // hswish(-1.0) = -1/3 → -6.67 → -7
        XCTAssertEqual(hardSwish?.makeLookupTable(Int8.self)[30], 60)
        // input / output scale >= 128 makes TFLite's prepare fail.
        XCTAssertNil(QuantizedHardSwish(inputScale: 1, inputZeroPoint: 0, outputScale: 0.001, outputZeroPoint: 0))

        let softmax = QuantizedSoftmax(beta: 1, inputScale: 1.0 / 256)!
        let input: [UInt8] = [7, 7]
        var output = [UInt8](repeating: 0, count: 2)
        input.withUnsafeBufferPointer { i in output.withUnsafeMutableBufferPointer { softmax.evaluate(row: i, into: $0) } }
        XCTAssertEqual(output, [128, 128])
        XCTAssertEqual(softmax.exponential(ofDifference: 0), Int32.max)
        // 511 equal values: each output is round(256 / 511) = 1 (TFLite agrees);
        // 512 or more: TFLite aborts, we write the type minimum.
        for (count, expected) in [(511, UInt8(1)), (512, UInt8(0)), (1000, UInt8(0))] {
            let flat = [UInt8](repeating: 5, count: count)
            var result = [UInt8](repeating: 99, count: count)
            flat.withUnsafeBufferPointer { i in result.withUnsafeMutableBufferPointer { softmax.evaluate(row: i, into: $0) } }
            XCTAssertEqual(Set(result), [expected], "count \(count)")
        }
        // The cached exponentials equal the direct computation.
        for d in Int32(0)...255 where -d >= softmax.diffMin {
            XCTAssertEqual(softmax.exponentialTable[Int(d)], FixedPoint.expOnNegativeValues(
                multiplyByQuantizedMultiplierGreaterThanOne(-d, softmax.inputBetaMultiplier), integerBits: 5))
        }

        let table = ActivationLookupTable.logistic(UInt8.self, inputScale: 0.1, inputZeroPoint: 128,
                                                   outputScale: 1.0 / 256, outputZeroPoint: 0)
        XCTAssertEqual([table[0], table[128], table[255]], [0, 128, 255])
        let signed = ActivationLookupTable.tanh(Int8.self, inputScale: 0.05, inputZeroPoint: 0,
                                                outputScale: 1.0 / 128, outputZeroPoint: 0)
        // Indexed by bit pattern: entry 0 is input 0, entry 128 is input -128.
        XCTAssertEqual(signed[0], 0)
        XCTAssertEqual(signed[128], -128)  // tanh(-6.4) × 128 = -127.9994 → -128
        XCTAssertEqual(signed[127], 127)   // tanh(6.35) × 128 = 127.9992 → 128, clamped
    }

    // MARK: Activation ranges

    func testQuantizedActivationRange() {
        func range(_ a: FusedActivation, _ scale: Float, _ zp: Int32, _ lo: Int32, _ hi: Int32) -> [Int32]? {
            quantizedActivationRange(a, scale: scale, zeroPoint: zp, qmin: lo, qmax: hi).map { [$0.min, $0.max] }
        }
        XCTAssertEqual(range(.relu6, 0.05, -128, -128, 127), [-128, -8])
        XCTAssertEqual(range(.relu, 0.1, 10, 0, 255), [10, 255])
        XCTAssertEqual(range(.reluN1To1, 0.01, 0, -128, 127), [-100, 100])
        XCTAssertEqual(range(.reluN1To1, 0.001, 0, -128, 127), [-128, 127])
        XCTAssertEqual(range(.relu6, 0.0235, 3, 0, 255), [3, 255])  // q(6) = 3 + 255 > qmax
        XCTAssertEqual(range(.relu6, 0.1, 200, 0, 255), [200, 255])
        XCTAssertEqual(range(.none, 0.1, 3, -128, 127), [-128, 127])
        XCTAssertEqual(range(.tanh, 0.1, 3, -128, 127), [-128, 127])
        XCTAssertEqual(range(.signBit, 0.1, 3, -32768, 32767), [-32768, 32767])
        // Rounding of the bound happens in Float: 6 / 0.04 = 150.00000x in Float.
        XCTAssertEqual(range(.relu6, 0.04, -128, -128, 127), [-128, 22])
        // A zero scale makes TFLite's prepare fail (0/0 is NaN, 6/0 is inf).
        XCTAssertNil(range(.relu6, 0, 0, -128, 127))
        XCTAssertNil(range(.relu, 0, 0, -128, 127))
        XCTAssertEqual(range(.none, 0, 0, -128, 127), [-128, 127])
        let typed = quantizedActivationRange(.relu, scale: 0.1, zeroPoint: 10, outputType: UInt8.self)
        XCTAssertEqual(typed.map { [$0.min, $0.max] }, [10, 255])

        XCTAssertEqual(activationRange(.relu6).min, 0)
        XCTAssertEqual(activationRange(.relu6).max, 6)
        XCTAssertEqual(activationRange(.reluN1To1).min, -1)
        XCTAssertEqual(activationRange(.relu).max, Float.greatestFiniteMagnitude)
        XCTAssertEqual(activationRange(.none).min, -Float.greatestFiniteMagnitude)
        XCTAssertEqual(activationRange(.tanh).max, Float.greatestFiniteMagnitude)
    }

    // MARK: Convolution multipliers

    func testConvolutionMultipliers() {
        XCTAssertEqual(
            QuantizedMultiplier.perChannel(inputScale: 0.5, filterScales: [0.25, 0.5], outputScale: 1, channelCount: 2),
            [QuantizedMultiplier(multiplier: 1 << 30, shift: -2), QuantizedMultiplier(multiplier: 1 << 30, shift: -1)])
        XCTAssertEqual(
            QuantizedMultiplier.perChannel(inputScale: 0.5, filterScales: [0.25], outputScale: 1, channelCount: 3),
            Array(repeating: QuantizedMultiplier(multiplier: 1 << 30, shift: -2), count: 3))
        XCTAssertEqual(QuantizedMultiplier.perTensorConvolution(inputScale: 0.5, filterScale: 0.25, outputScale: 1),
                       QuantizedMultiplier(multiplier: 1 << 30, shift: -2))
        // The two TFLite formulas differ in the last bits: Double products vs a Float product.
        let (input, filter, output): (Float, Float, Float) = (0.0078125 * 1.1, 0.003, 0.0235)
        let perChannel = QuantizedMultiplier.perChannel(
            inputScale: input, filterScales: [filter], outputScale: output, channelCount: 1)[0]
        let perTensor = QuantizedMultiplier.perTensorConvolution(inputScale: input, filterScale: filter, outputScale: output)
        XCTAssertEqual(perChannel, QuantizedMultiplier(Double(input) * Double(filter) / Double(output)))
        XCTAssertEqual(perTensor, QuantizedMultiplier(Double(input * filter) / Double(output)))
        XCTAssertNotEqual(perChannel, perTensor)
    }

    // MARK: Goldens from TFLite (BUILTIN_REF)

    func testGoldenRequantizeFromTFLite() throws {
        let goldens = try Goldens.load()
        XCTAssertFalse(goldens.requantize.isEmpty)
        for golden in goldens.requantize {
            let q = QuantizedMultiplier(golden.input_scale / golden.output_scale)
            for (x, expected) in zip(golden.inputs, golden.outputs) {
                let got = min(max(multiplyByQuantizedMultiplier(x, q), Int32(Int16.min)), Int32(Int16.max))
                XCTAssertEqual(got, expected, "scales \(golden.input_scale)/\(golden.output_scale) x=\(x)")
            }
        }
    }

    func testGoldenLogisticAndTanhTablesFromTFLite() throws {
        let goldens = try Goldens.load()
        XCTAssertEqual(goldens.lut.count, 10)
        for golden in goldens.lut {
            let isLogistic = golden.op == "LOGISTIC"
            func table<T: FixedWidthInteger>(_ type: T.Type) -> [Int32] {
                let lut = isLogistic
                    ? ActivationLookupTable.logistic(type, inputScale: Float(golden.input_scale),
                                                     inputZeroPoint: golden.input_zero_point,
                                                     outputScale: Float(golden.output_scale),
                                                     outputZeroPoint: golden.output_zero_point)
                    : ActivationLookupTable.tanh(type, inputScale: Float(golden.input_scale),
                                                 inputZeroPoint: golden.input_zero_point,
                                                 outputScale: Float(golden.output_scale),
                                                 outputZeroPoint: golden.output_zero_point)
                // Golden outputs are listed for inputs T.min...T.max.
                return lut.withUnsafeBufferPointer { buffer in
                    (Int32(T.min)...Int32(T.max)).map {
                        Int32(ActivationLookupTable.lookup(T(truncatingIfNeeded: $0), in: buffer))
                    }
                }
            }
            let got = golden.type == "uint8" ? table(UInt8.self) : table(Int8.self)
            XCTAssertEqual(got, golden.outputs, "\(golden.op ?? "") \(golden.type) \(golden.input_scale)")
        }
    }

    func testGoldenHardSwishFromTFLite() throws {
        let goldens = try Goldens.load()
        XCTAssertFalse(goldens.hard_swish.isEmpty)
        for golden in goldens.hard_swish {
            guard let params = QuantizedHardSwish(
                inputScale: Float(golden.input_scale), inputZeroPoint: golden.input_zero_point,
                outputScale: Float(golden.output_scale), outputZeroPoint: golden.output_zero_point)
            else { XCTFail("prepare failed for \(golden)"); continue }
            let got: [Int32] = golden.type == "uint8"
                ? (0...255).map { Int32(params.apply(UInt8($0))) }
                : (-128...127).map { Int32(params.apply(Int8($0))) }
            XCTAssertEqual(got, golden.outputs, "\(golden.type) \(golden.input_scale) → \(golden.output_scale)")
            // The 256-entry table gives the same values, indexed by bit pattern.
            let viaTable: [Int32] = golden.type == "uint8"
                ? params.makeLookupTable(UInt8.self).map { Int32($0) }
                : { table in (-128...127).map { Int32(table[Int(UInt8(truncatingIfNeeded: $0))]) } }(
                    params.makeLookupTable(Int8.self))
            XCTAssertEqual(viaTable, golden.outputs)
        }
    }

    func testGoldenSoftmaxFromTFLite() throws {
        let goldens = try Goldens.load()
        XCTAssertFalse(goldens.softmax.isEmpty)
        for golden in goldens.softmax {
            guard let softmax = QuantizedSoftmax(beta: Float(golden.beta), inputScale: Float(golden.input_scale))
            else { XCTFail("prepare failed"); continue }
            func run<In: FixedWidthInteger, Out: FixedWidthInteger>(_: In.Type, _: Out.Type) -> [Int32] {
                let input = golden.inputs.map { In(truncatingIfNeeded: $0) }
                var output = [Out](repeating: 0, count: input.count)
                input.withUnsafeBufferPointer { inBuffer in
                    output.withUnsafeMutableBufferPointer { outBuffer in
                        for row in 0..<golden.rows {
                            let range = row * golden.depth..<(row + 1) * golden.depth
                            softmax.evaluate(row: UnsafeBufferPointer(rebasing: inBuffer[range]),
                                             into: UnsafeMutableBufferPointer(rebasing: outBuffer[range]))
                        }
                    }
                }
                return output.map { Int32($0) }
            }
            let got: [Int32]
            switch (golden.input_type, golden.output_type) {
            case ("uint8", "uint8"): got = run(UInt8.self, UInt8.self)
            case ("int8", "int8"): got = run(Int8.self, Int8.self)
            case ("int8", "int16"): got = run(Int8.self, Int16.self)
            case ("uint8", "int16"): got = run(UInt8.self, Int16.self)
            default: XCTFail("unexpected types"); continue
            }
            XCTAssertEqual(got, golden.outputs, "\(golden.input_type)→\(golden.output_type) beta \(golden.beta)")
        }
    }
    // MARK: One rule, one place (zero points, dequantization, encodings, activation ranges)

    private func quantized(_ type: DataType, _ shape: [Int], scales: [Float], zeroPoints: [Int], dimension: Int = 0,
                           name: String = "q") -> TensorDescriptor {
        TensorDescriptor(index: 0, name: name, dataType: type, shape: shape, shapeSignature: nil,
                         quantization: QuantizationParameters(scales: scales, zeroPoints: zeroPoints, quantizedDimension: dimension),
                         isVariable: false, constantData: nil)
    }

    private func context(_ tensors: [TensorDescriptor], op: BuiltinOperator = .dequantize) -> PrepareContext {
        let node = Node(index: 7, op: op, customName: nil, version: 1, inputs: [0], outputs: [tensors.count - 1],
                        options: .none, customOptions: nil)
        return PrepareContext(node: node, tensors: tensors)
    }

    /// TFLite's quantization spec: a zero point is a value of the tensor's own type.
    func testZeroPointRangePerType() {
        XCTAssertEqual(zeroPointRange(of: .uint8), 0 ... 255)
        XCTAssertEqual(zeroPointRange(of: .int8), -128 ... 127)
        XCTAssertEqual(zeroPointRange(of: .int16), -32768 ... 32767)
        XCTAssertEqual(zeroPointRange(of: .int32), Int(Int32.min) ... Int(Int32.max))
        for (type, good, bad) in [(DataType.uint8, [0, 255], [-1, 256]), (.int8, [-128, 127], [128, -129, 200]),
                                  (.int16, [-32768, 32767], [32768, 65536])] {
            for zp in good {
                XCTAssertNoThrow(try checkZeroPoints(QuantizationParameters(scale: 1, zeroPoint: zp),
                                                     of: quantized(type, [1], scales: [1], zeroPoints: [zp]), role: "input"))
            }
            for zp in bad {
                let t = quantized(type, [1], scales: [1], zeroPoints: [zp])
                XCTAssertThrowsError(try checkZeroPoints(t.quantization!, of: t, role: "input")) { error in
                    XCTAssertTrue("\(error)".contains("input 'q' has zero point \(zp), outside the \(type) range"), "\(error)")
                }
            }
        }
        // Per channel, the first bad one is named.
        let t = quantized(.int8, [3], scales: [1, 1, 1], zeroPoints: [0, 130, 140])
        XCTAssertThrowsError(try checkZeroPoints(t.quantization!, of: t, role: "filter")) { XCTAssertTrue("\($0)".contains("zero point 130"), "\($0)") }
    }

    /// DEQUANTIZE used to accept any zero point within ±65536; an int8 input with zero point 200
    /// is now rejected by the same rule as every other quantized tensor, naming op, index and role.
    func testDequantizeRejectsAZeroPointOutsideItsType() {
        let output = TensorDescriptor(index: 1, name: "out", dataType: .float32, shape: [2], shapeSignature: nil,
                                      quantization: nil, isVariable: false, constantData: nil)
        var c = context([quantized(.int8, [2], scales: [0.5], zeroPoints: [200]), output])
        XCTAssertThrowsError(try Dequantize.prepare(&c)) { error in
            guard case let ModelError.invalidOperator(op, index, reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(op, "DEQUANTIZE")
            XCTAssertEqual(index, 7)
            XCTAssertTrue(reason.contains("input 'q' has zero point 200, outside the int8 range -128...127"), reason)
        }
        var ok = context([quantized(.int8, [2], scales: [0.5], zeroPoints: [127]), output])
        XCTAssertNoThrow(try Dequantize.prepare(&ok))
    }

    /// `scale · (q − zeroPoint)` by hand, per tensor and per channel.
    func testDequantizationWorkedExamples() throws {
        func run(_ d: Dequantization, _ raw: [UInt8]) -> [Float] {
            let count = raw.count / (d.type == .int16 ? 2 : 1)
            var out = [Float](repeating: .nan, count: count)
            raw.withUnsafeBytes { r in out.withUnsafeMutableBufferPointer { d.dequantize(r.baseAddress!, count: count, into: $0.baseAddress!) } }
            return out
        }
        XCTAssertEqual(AffineQuantization(scale: 0.5, zeroPoint: 128).dequantize(131), 1.5)
        XCTAssertEqual(AffineQuantization(scale: 0.5, zeroPoint: 128).dequantize(0), -64)
        let u8 = try Dequantization(of: quantized(.uint8, [4], scales: [0.5], zeroPoints: [128]))
        XCTAssertEqual(run(u8, [0, 127, 128, 255]), [-64, -0.5, 0, 63.5])
        // int8 [2, 3], dimension 0: scales [0.5, 2], zero points [0, 1].
        let perChannel = try Dequantization(of: quantized(.int8, [2, 3], scales: [0.5, 2], zeroPoints: [0, 1]))
        XCTAssertEqual(perChannel.inner, 3)
        let bytes: [Int8] = [2, 4, -2, 1, 3, 0]
        XCTAssertEqual(run(perChannel, bytes.map { UInt8(bitPattern: $0) }), [1, 2, -1, 0, 4, -2])
        // Dimension 1 of [2, 2]: channels alternate.
        let alternating = try Dequantization(of: quantized(.int8, [2, 2], scales: [1, 10], zeroPoints: [0, 0], dimension: 1))
        XCTAssertEqual(run(alternating, [1, 1, 2, 2]), [1, 10, 2, 20])
        // int16 at both ends of its range with an extreme zero point: q − zeroPoint = −65535 is exact.
        let i16 = try Dequantization(of: quantized(.int16, [2], scales: [1], zeroPoints: [32767]))
        let values: [Int16] = [-32768, 32767]
        XCTAssertEqual(run(i16, values.flatMap { v in withUnsafeBytes(of: v) { Array($0) } }), [-65535, 0])
        XCTAssertThrowsError(try Dequantization(of: quantized(.int8, [2, 3], scales: [1, 1, 1], zeroPoints: [0, 0, 0])))
        XCTAssertThrowsError(try Dequantization(of: quantized(.float32, [1], scales: [1], zeroPoints: [0])))
    }

    /// TFLite's reference `Dequantize` computes `static_cast<float>(double(scale) · (q − zp))`;
    /// the Float product rounds the same exact value once, so the two agree for every scale.
    func testDequantizeMatchesTFLitesDoubleFormula() {
        var rng = SplitMix64(seed: 13)
        for _ in 0 ..< 20000 {
            let scale = Float(bitPattern: UInt32.random(in: 0x3000_0000 ... 0x4700_0000, using: &rng))
            let zeroPoint = Int32.random(in: -32768 ... 32767, using: &rng), q = Int32.random(in: -32768 ... 32767, using: &rng)
            let tflite = Float(Double(scale) * Double(q - zeroPoint))
            XCTAssertEqual(AffineQuantization(scale: scale, zeroPoint: zeroPoint).dequantize(q), tflite, "\(scale) \(q) \(zeroPoint)")
        }
    }

    func testWeightAndActivationEncodings() {
        let u8 = WeightEncoding(.uint8, zeroPoint: 128), s8 = WeightEncoding(.int8, zeroPoint: 0)
        XCTAssertEqual([u8.value(0x00), u8.value(0x80), u8.value(0xFF)], [-128, 0, 127])
        XCTAssertEqual([s8.value(0xFF), s8.value(0x80), s8.value(0x7F)], [-1, -128, 127])
        let signed = ActivationEncoding(.int8, AffineQuantization(scale: 1, zeroPoint: -3))
        XCTAssertEqual(signed.zeroPoint, 125)
        XCTAssertEqual(signed.rawZeroPoint, UInt8(bitPattern: -3))
        XCTAssertEqual(signed.zeroPointValue, -3)
        XCTAssertEqual(signed.encode(signed.rawZeroPoint), signed.zeroPoint)
        for byte in UInt8.min ... UInt8.max {
            // The difference to the zero point survives the encoding.
            XCTAssertEqual(Int(signed.encode(byte)) - Int(signed.zeroPoint), Int(Int8(bitPattern: byte)) + 3)
            XCTAssertEqual(signed.decode(signed.encode(byte)), byte)
        }
        let unsigned = ActivationEncoding(.uint8, AffineQuantization(scale: 1, zeroPoint: 7))
        XCTAssertEqual([unsigned.zeroPoint, unsigned.rawZeroPoint, unsigned.encode(200)], [7, 7, 200])
    }

    /// The float kernels' clamp is TFLite's `CalculateActivationRange<float>` for every clamp; a
    /// fused TANH or SIGN_BIT, which that function would silently ignore, is rejected.
    func testFloatActivationRangeIsTFLitesForClamps() throws {
        let c = context([quantized(.float32, [1], scales: [1], zeroPoints: [0])], op: .add)
        for a in [FusedActivation.none, .relu, .reluN1To1, .relu6] {
            let r = try c.floatActivationRange(a)
            XCTAssertEqual(r.lowerBound, activationRange(a).min)
            XCTAssertEqual(r.upperBound, activationRange(a).max)
        }
        for a in [FusedActivation.tanh, .signBit] {
            XCTAssertThrowsError(try c.floatActivationRange(a)) { XCTAssertTrue("\($0)".contains("\(a)"), "\($0)") }
        }
    }
    /// The scale-count rule of hybrid weights: one per channel along the operator's dimension, or
    /// one in all where the operator allows it; a single scale where it does not is unsupported
    /// (TFLite's hybrid DEPTHWISE_CONV_2D reads past it), any other count invalid.
    func testHybridWeightScaleRule() throws {
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 8, alignment: 16)
        defer { bytes.deallocate() }
        bytes.initializeMemory(as: UInt8.self, repeating: 1)
        func weights(_ scales: [Float]) -> TensorDescriptor {
            TensorDescriptor(index: 1, name: "w", dataType: .int8, shape: [4, 2], shapeSignature: nil,
                             quantization: QuantizationParameters(scales: scales, zeroPoints: scales.map { _ in 0 }),
                             isVariable: false, constantData: ConstantData(bytes: UnsafeRawBufferPointer(bytes)))
        }
        func float(_ index: Int) -> TensorDescriptor {
            TensorDescriptor(index: index, name: "f\(index)", dataType: .float32, shape: [1, 2], shapeSignature: nil,
                             quantization: nil, isVariable: false, constantData: nil)
        }
        func check(_ scales: [Float], perTensor: Bool, _ activation: FusedActivation = .relu) throws -> ClosedRange<Float> {
            let node = Node(index: 3, op: .fullyConnected, customName: nil, version: 1, inputs: [0, 1, -1], outputs: [2],
                            options: .none, customOptions: nil)
            let c = PrepareContext(node: node, tensors: [float(0), weights(scales), float(2)])
            return try c.hybridOperands(weights: 1, bias: 2, output: 0, role: "weights", channels: 4, dimension: 0,
                                        perTensor: perTensor, what: "unit", activation: activation).range
        }
        XCTAssertEqual(try check([0.5], perTensor: true), 0 ... Float.greatestFiniteMagnitude)
        XCTAssertNoThrow(try check([1, 2, 3, 4], perTensor: false))
        XCTAssertThrowsError(try check([0.5], perTensor: false)) { error in
            guard case let ModelError.unsupportedOperator(_, index, reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(index, 3)
            XCTAssertTrue(reason.contains("hybrid weights 'w' has one scale"), reason)
        }
        XCTAssertThrowsError(try check([1, 2, 3], perTensor: true)) { error in
            guard case let ModelError.invalidOperator(_, _, reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("has 3 scales along dimension 0, expected one scale or one per unit (dimension 0)"), reason)
        }
        XCTAssertThrowsError(try check([0.5], perTensor: true, .tanh)) { XCTAssertTrue("\($0)".contains("TANH"), "\($0)") }
    }
}
