import XCTest

@testable import Engine

/// QUANTIZE float32 → int8/uint8: the branch-free element (which LLVM vectorizes) against the definition
/// (`roundf(x / scale) + zp`, clamped, x86-64's conversion of NaN and out-of-range values), on
/// the values where rounding and conversion go wrong: exact ties, one ulp either side of them,
/// fractions just below one half, NaN, infinities, ±2³¹ and beyond, signed zeros.
final class QuantizeFloatTests: XCTestCase {
    func testVectorPathMatchesDefinition() {
        var rng = KernelTestRandom(seed: 71)
        for (scale, zeroPoint) in [(Float(1), Int32(0)), (0.5, -3), (0.0078125, 127), (0.1, -128), (3e-7, 5), (0.023529412, 0)] {
            var values: [Float] = [0, -0, .nan, -.nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
                                   2_147_483_648, -2_147_483_648, 2_147_483_520, -2_147_483_904, 8_388_608.5, 0.49999997, -0.49999997]
            for k in -300 ... 300 {
                let tie = (Float(k) + 0.5) * scale
                values += [tie, tie.nextUp, tie.nextDown, Float(k) * scale, (Float(k) * scale).nextUp]
            }
            for _ in 0 ..< 2000 { values.append(Float(Int.random(in: -1_000_000 ... 1_000_000, using: &rng)) / 1000 * scale) }
            check(Int8.self, values, scale: scale, zeroPoint: zeroPoint)
            check(UInt8.self, values, scale: scale, zeroPoint: zeroPoint &+ 128)
        }
    }

    private func check<T: FixedWidthInteger & Sendable>(_ type: T.Type, _ values: [Float], scale: Float, zeroPoint: Int32) {
        let kernel = QuantizeFloat32<T>(quantization: AffineQuantization(scale: scale, zeroPoint: zeroPoint),
                                        count: values.count, input: 0, output: 1)
        for x in values {
            let expected = kernel.quantized(x), actual = kernel.quantizedWithoutRoundf(x)
            XCTAssertEqual(actual, expected, "\(T.self) x = \(x) (bits \(String(x.bitPattern, radix: 16))) scale \(scale) zero point \(zeroPoint)")
            if actual != expected { return }
        }
    }
}
