import XCTest

@testable import Engine

/// The post-process's class arg-max (fast NMS takes one per anchor) against the scalar
/// definition: the first index of the largest non-NaN value, 0 when every value is NaN. Counts
/// around the vector width, NaNs anywhere (the first value too), ties, −0 against +0, and −∞.
final class DetectionArgMaxTests: XCTestCase {
    private func reference(_ values: [Float]) -> Int {
        guard !values.isEmpty else { return 0 }
        var best = 0, bestValue = values[0]
        for i in 1 ..< values.count {
            let v = values[i]
            if !v.isNaN, bestValue.isNaN || v > bestValue {
                best = i
                bestValue = v
            }
        }
        return bestValue.isNaN ? 0 : best
    }

    func testMatchesTheScalarDefinition() {
        var rng = KernelTestRandom(seed: 17)
        let specials: [Float] = [.nan, -.infinity, .infinity, 0, -0.0, 1, -1, 0.5]
        for count in [0, 1, 2, 7, 8, 9, 15, 16, 17, 90, 91] {
            for trial in 0 ..< 200 {
                let values: [Float] = (0 ..< count).map { _ in
                    switch trial % 4 {
                    case 0: Float.random(in: -1 ... 1, using: &rng)
                    case 1: specials[Int.random(in: 0 ..< specials.count, using: &rng)]
                    case 2: Float(Int.random(in: -2 ... 2, using: &rng))  // many ties
                    default: Bool.random(using: &rng) ? .nan : -.infinity
                    }
                }
                let actual = values.withUnsafeBufferPointer { p in
                    DetectionPostProcessKernel.argMax(p.baseAddress ?? UnsafePointer(bitPattern: 4)!, count: count)
                }
                XCTAssertEqual(actual, reference(values), "\(values)")
            }
        }
        let allNaN = [Float](repeating: .nan, count: 20)
        XCTAssertEqual(allNaN.withUnsafeBufferPointer { DetectionPostProcessKernel.argMax($0.baseAddress!, count: 20) }, 0)
        let zeros: [Float] = [-0.0, 0, -0.0, 0, 0, 0, 0, 0, 0]
        XCTAssertEqual(zeros.withUnsafeBufferPointer { DetectionPostProcessKernel.argMax($0.baseAddress!, count: 9) }, 0)
    }
}
