import XCTest
@testable import Engine
import TestSupport

/// The float GEMM against its plain scalar reference, over edge sizes: rows not a multiple of the
/// 7-row tile, columns below, at and above each block width (8, 16, 24, 32). The convolutions
/// built on it are checked in FloatConvolutionTests.
final class FloatGEMMTests: XCTestCase {
    private typealias Values = SeededFloats

    func testMultiplyMatchesReference() {
        var values = Values(state: 1)
        let ranges: [ClosedRange<Float>] = [-Float.greatestFiniteMagnitude ... Float.greatestFiniteMagnitude, 0 ... 6, -0.5 ... 0.5]
        // Every tile height 1...7 (without AVX-512 a 7-row tile is a 4-row and a 3-row band).
        for m in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 15, 50] {
            for n in [1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 40, 48, 56, 64, 100] {
                for k in [1, 2, 3, 16, 27, 70] {
                    let range = ranges[(m + n + k) % ranges.count]
                    let lda = k + 3, ldc = n + 5
                    let a = values.array(m * lda), w = values.array(n * k), bias = values.array(n)
                    // Padding columns of C hold a sentinel that must survive.
                    var expected = [Float](repeating: 42, count: m * ldc), actual = expected
                    let packed = w.withUnsafeBufferPointer { w in
                        bias.withUnsafeBufferPointer { FloatGEMM.PackedWeights(weights: w, bias: $0, n: n, k: k) }
                    }
                    FloatGEMM.reference(m: m, n: n, k: k, a: a, lda: lda, weights: w, bias: bias, range: range, c: &expected, ldc: ldc)
                    FloatGEMM.multiply(m: m, a: a, lda: lda, weights: packed, range: range, c: &actual, ldc: ldc)
                    let scale = (0 ..< m * ldc).map { index -> Float in
                        let i = index / ldc, j = index % ldc
                        guard j < n else { return 0 }
                        return (0 ..< k).reduce(abs(bias[j])) { $0 + abs(a[i * lda + $1] * w[j * k + $1]) }
                    }
                    assertClose(actual, expected, scale: scale, "m \(m) n \(n) k \(k)")
                }
            }
        }
    }

    func testMultiplyWithoutBiasOverManyChunks() {
        var values = Values(state: 2)
        // 128 KiB chunks of 16-float rows: 2048 rows each, so 5000 rows make three chunks.
        let m = 5000, n = 20, k = 16
        let a = values.array(m * k), w = values.array(n * k)
        let packed = w.withUnsafeBufferPointer { FloatGEMM.PackedWeights(weights: $0, bias: nil, n: n, k: k) }
        var expected = [Float](repeating: 0, count: m * n), actual = expected
        FloatGEMM.reference(m: m, n: n, k: k, a: a, lda: k, weights: w, bias: nil, range: 0 ... 6, c: &expected, ldc: n)
        FloatGEMM.multiply(m: m, a: a, lda: k, weights: packed, range: 0 ... 6, c: &actual, ldc: n)
        assertClose(actual, expected, scale: expected.map { _ in Float(k) }, "m \(m) n \(n) k \(k)")
    }
}
