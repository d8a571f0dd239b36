import Foundation
import XCTest
@testable import Engine
#if SWIFTLITE_AVX2
import SIMDKernelsAVX512
#endif

/// The vector `exp` behind the float LOGISTIC against the exact exponential (Double `exp`, which
/// is accurate far past a float's precision), and the vector LOGISTIC against TFLite's reference
/// formula evaluated with the C library's `expf`.
final class VectorExponentialTests: XCTestCase {
    typealias Lanes = VectorExponential.Lanes

    /// A float's place in the order of all floats: consecutive floats are consecutive integers
    /// (−0 and +0 both at 0).
    private func ordinal(_ x: Float) -> Int { x.sign == .minus ? -Int(x.magnitude.bitPattern) : Int(x.bitPattern) }

    private func float(ordinal n: Int) -> Float {
        n < 0 ? -Float(bitPattern: UInt32(-n)) : Float(bitPattern: UInt32(n))
    }

    /// Steps between two finite floats in units in the last place (zero and the denormals count
    /// like any other step).
    private func ulps(_ a: Float, _ b: Float) -> Int { abs(ordinal(a) - ordinal(b)) }

    /// Every `stride`-th float from `lower` up to `upper`.
    private func sweep(from lower: Float, to upper: Float, stride: Int) -> [Float] {
        Swift.stride(from: ordinal(lower), through: ordinal(upper), by: stride).map { float(ordinal: $0) }
    }

    private func vectorMap(_ values: [Float], _ f: (Lanes) -> Lanes) -> [Float] {
        var result = [Float](repeating: 0, count: values.count)
        var i = 0
        while i < values.count {
            var v = Lanes()
            for lane in 0 ..< Lanes.scalarCount { v[lane] = values[min(i + lane, values.count - 1)] }
            let y = f(v)
            for lane in 0 ..< Lanes.scalarCount where i + lane < values.count { result[i + lane] = y[lane] }
            i += Lanes.scalarCount
        }
        return result
    }

    func testExponentialIsWithinOneULPOverTheFloatRange() {
        // About half a million floats from −110 to 95, denormal and overflowing results included;
        // the error in units of the exact result's last place (its float's `ulp`), measured in Double.
        let xs = sweep(from: -110, to: 95, stride: 4099)
        let ys = vectorMap(xs, VectorExponential.exp(_:))
        var worst = 0.0, at: Float = 0
        for (x, y) in zip(xs, ys) {
            let exact = Foundation.exp(Double(x)), rounded = Float(exact)
            let error = rounded.isInfinite ? (y == rounded ? 0 : .infinity) : abs(Double(y) - exact) / Double(rounded.ulp)
            if error > worst { (worst, at) = (error, x) }
        }
        XCTAssertLessThan(worst, 1, "exp(\(at)) is \(worst) ulps from the exact value")
        XCTAssertGreaterThan(xs.count, 500_000)
    }

    func testExponentialSpecialValues() {
        let xs: [Float] = [0, -0, 1, -1, .infinity, -.infinity, .nan, 88.72283, 88.7229, 89, 1000, -87.33655, -103.9720,
                           -103.98, -104, -1000, Float.leastNonzeroMagnitude, -Float.leastNormalMagnitude, 1e-30]
        let ys = vectorMap(xs, VectorExponential.exp(_:))
        for (x, y) in zip(xs, ys) {
            let exact = Float(Foundation.exp(Double(x)))
            if x.isNaN {
                XCTAssert(y.isNaN, "exp(nan) = \(y)")
            } else if exact.isInfinite || exact == 0 {
                XCTAssertEqual(y, exact, "exp(\(x))")
            } else {
                XCTAssertLessThanOrEqual(ulps(y, exact), 1, "exp(\(x)) = \(y), exact \(exact)")
            }
        }
        XCTAssertEqual(ys[0], 1)
        XCTAssertEqual(ys[1], 1)
    }

    func testTheOneFactorFormHasTheBitsOfTheTwoFactorForm() {
        // exp(notAbove88:) scales by one power of two where every lane of a vector is at least
        // −87.5 and falls back to exp(_:) otherwise: over every 1999th float up to 88, lanes in
        // order (so vectors on both sides of −87.5, and straddling it), the same bits.
        let xs = sweep(from: -110, to: 88, stride: 1999) + [Float(-87.5), Float(-87.5).nextDown, Float(-87.5).nextUp, 88, -0, 0, .nan, -.infinity]
        let one = vectorMap(xs, VectorExponential.exp(notAbove88:)), two = vectorMap(xs, VectorExponential.exp(_:))
        for (x, (a, b)) in zip(xs, zip(one, two)) where a.bitPattern != b.bitPattern {
            return XCTFail("exp(\(x)): \(a) in one factor, \(b) in two")
        }
        XCTAssertGreaterThan(xs.count, 1_000_000)
    }

    func testTheIntrinsicsLogisticHasTheBitsOfTheSwiftForm() {
        // On AVX2 `logistic` is `swiftlite_logistic_f32x8`, elsewhere `portableLogistic` itself.
        let specials: [Float] = [-87.5, Float(-87.5).nextDown, -9, Float(-9).nextDown, LogisticFloat32.upperCutoff,
                                 LogisticFloat32.upperCutoff.nextUp, 0, -0, .infinity, -.infinity, .nan, -.nan,
                                 Float.leastNonzeroMagnitude, -Float.leastNonzeroMagnitude, .greatestFiniteMagnitude,
                                 -.greatestFiniteMagnitude]
        let xs = sweep(from: -Float.greatestFiniteMagnitude, to: .greatestFiniteMagnitude, stride: 2477) + specials
        let fast = vectorMap(xs, LogisticFloat32.logistic(_:) as (VectorExponential.Lanes) -> VectorExponential.Lanes)
        let portable = vectorMap(xs, LogisticFloat32.portableLogistic)
        // NaN stays NaN in both; its sign is not part of the result (the compiler may order a sum's
        // operands either way, and x86 keeps the first operand's NaN).
        for (x, (a, b)) in zip(xs, zip(fast, portable)) where a.bitPattern != b.bitPattern && !(a.isNaN && b.isNaN) {
            return XCTFail("logistic(\(x)): \(a), the Swift form \(b)")
        }
    }

    #if SWIFTLITE_AVX2
    /// The AVX-512 LOGISTIC and swish (`FloatElementwise`, sixteen lanes a register) have the bits
    /// of the eight-lane form: a sweep of the floats, the special values, outputs down to the
    /// denormals, and lanes below −87.5 (whose vector takes the two-factor exponential) beside
    /// ordinary ones; runs with a tail of 1–15 lanes; swish unclamped and clamped to ReLU6's range.
    func testSixteenLaneLogisticAndSwishHaveTheBitsOfTheEightLaneForm() throws {
        try XCTSkipUnless(KernelSelection.runsAVX512, "this machine does not run the AVX-512 kernels")
        let specials: [Float] = [-87.5, Float(-87.5).nextDown, -9, Float(-9).nextDown, LogisticFloat32.upperCutoff,
                                 LogisticFloat32.upperCutoff.nextUp, 0, -0, .infinity, -.infinity, .nan,
                                 Float.leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude]
        let mixed = (0 ..< 64).flatMap { i -> [Float] in [-100, Float(i) * 0.37 - 12] }
        let xs = sweep(from: -.greatestFiniteMagnitude, to: .greatestFiniteMagnitude, stride: 2477) + specials + mixed
            + sweep(from: -105, to: -80, stride: 997)
        let eight = vectorMap(xs, LogisticFloat32.logistic(_:) as (Lanes) -> Lanes)
        func same(_ a: Float, _ b: Float) -> Bool { a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN) }
        for count in [xs.count, (xs.count - 16) / 16 * 16, (xs.count - 7) / 16 * 16 + 7, 5] {
            var y = [Float](repeating: 0, count: count + 1)
            FloatElementwise.logistic(xs, &y, count: count)
            if let i = (0 ..< count).first(where: { !same(y[$0], eight[$0]) }) {
                return XCTFail("logistic(\(xs[i])): \(y[i]), the eight-lane form \(eight[i]) (\(count) elements)")
            }
            XCTAssertEqual(y[count], 0, "logistic wrote past \(count) elements")
            for (lower, upper) in [(-Float.infinity, Float.infinity), (0, 6)] {
                FloatElementwise.swish(xs, &y, count: count, lower: lower, upper: upper)
                if let i = (0 ..< count).first(where: { !same(y[$0], FloatGEMM.clamp(xs[$0] * eight[$0], lower, upper)) }) {
                    return XCTFail("swish(\(xs[i])) in \(lower)...\(upper): \(y[i]) (\(count) elements)")
                }
                XCTAssertEqual(y[count], 0, "swish wrote past \(count) elements")
            }
        }
    }
    #endif

    /// TFLite's `reference_ops::Logistic` for one float, with the C library's `expf`.
    private func referenceLogistic(_ x: Float) -> Float {
        if x > LogisticFloat32.upperCutoff { return 1 }
        if x < LogisticFloat32.lowerCutoff { return Foundation.exp(x) }
        return 1 / (1 + Foundation.exp(-x))
    }

    func testLogisticAgreesWithTheReferenceFormula() {
        let xs = sweep(from: -120, to: 30, stride: 4099) + [LogisticFloat32.upperCutoff, LogisticFloat32.upperCutoff.nextUp,
                                                          LogisticFloat32.lowerCutoff, LogisticFloat32.lowerCutoff.nextDown,
                                                          0, -0, .infinity, -.infinity]
        var ys = [Float](repeating: .nan, count: xs.count)
        xs.withUnsafeBufferPointer { x in
            ys.withUnsafeMutableBufferPointer { y in LogisticFloat32.logistic(x.baseAddress!, y.baseAddress!, count: x.count) }
        }
        var worst = 0, at: Float = 0
        for (x, y) in zip(xs, ys) {
            let error = ulps(y, referenceLogistic(x))
            if error > worst { (worst, at) = (error, x) }
        }
        XCTAssertLessThanOrEqual(worst, 2, "logistic(\(at)) is \(worst) ulps from the reference")
        // The cut-offs and the infinities give the reference's exact values.
        for (x, y) in zip(xs.suffix(8), ys.suffix(8)) where x > LogisticFloat32.upperCutoff || x.isInfinite {
            XCTAssertEqual(y, referenceLogistic(x), "logistic(\(x))")
        }
    }

    func testLogisticTailAndNaN() {
        // Counts that leave 1 ... 15 elements past the last whole vector, and a NaN among them.
        for count in [1, 7, 15, 17, 33, 40] {
            let xs = (0 ..< count).map { Float($0) * 0.37 - 5 }
            var ys = [Float](repeating: 7, count: count + 1)
            xs.withUnsafeBufferPointer { x in
                ys.withUnsafeMutableBufferPointer { y in LogisticFloat32.logistic(x.baseAddress!, y.baseAddress!, count: count) }
            }
            for i in 0 ..< count { XCTAssertLessThanOrEqual(ulps(ys[i], referenceLogistic(xs[i])), 2, "count \(count), element \(i)") }
            XCTAssertEqual(ys[count], 7, "count \(count): wrote past the end")
        }
        var y: [Float] = [0, 0]
        [Float.nan, -Float.nan].withUnsafeBufferPointer { x in
            y.withUnsafeMutableBufferPointer { out in LogisticFloat32.logistic(x.baseAddress!, out.baseAddress!, count: 2) }
        }
        XCTAssert(y[0].isNaN && y[1].isNaN, "logistic(nan) = \(y)")
    }
}
