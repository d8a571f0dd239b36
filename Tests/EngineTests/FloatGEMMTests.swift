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
        // Every tile height 1...7, and on AVX2 the row plans that end in 5- and 4-row bands (13, 25, 49).
        for m in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 15, 25, 49, 50] {
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

    /// The AVX2 row plan covers every row once, in bands of 1...6 rows, and wastes band rows only
    /// where no plan of 4-, 5- and 6-row bands fits exactly (1–3 rows, or 7): a band of `h` rows costs
    /// as long as `max(h, 4)` rows.
    func testAVX2RowPlanCoversEveryRowWithoutShortBands() {
        for total in 1 ... 300 {
            var remaining = total, cost = 0, plan: [Int] = []
            while remaining > 0 {
                let height = FloatGEMM.avx2BandHeight(remaining: remaining)
                XCTAssert((1 ... min(6, remaining)).contains(height), "\(total) rows: band of \(height) with \(remaining) left")
                plan.append(height)
                cost += max(height, 4)
                remaining -= height
            }
            let least = total <= 3 ? 4 : total == 7 ? 8 : total
            XCTAssertEqual(cost, least, "\(total) rows as \(plan)")
        }
    }

    /// Rows in chunks of at most `limit`: as few chunks as the limit allows, whole tiles but the
    /// last, and no chunk much smaller than the others (49 rows at 24 went as 24 + 24 + 1, the
    /// last reading all the weights for one row).
    func testChunksShareTheRowsEvenly() {
        let tile = FloatGEMM.tileRows
        for limit in [tile, 2 * tile, 4 * tile, 10 * tile, 84] {
            for total in 1 ... 400 {
                var remaining = total, chunks: [Int] = []
                while remaining > 0 {
                    let rows = FloatGEMM.nextChunk(remaining: remaining, limit: limit)
                    XCTAssert((1 ... limit).contains(rows), "\(total) rows at \(limit): chunk of \(rows)")
                    chunks.append(rows)
                    remaining -= rows
                }
                let what = "\(total) rows at \(limit): \(chunks)"
                XCTAssertEqual(chunks.count, (total + limit - 1) / limit, what)
                XCTAssert(chunks.dropLast().allSatisfy { $0 % tile == 0 }, what)
                XCTAssertGreaterThanOrEqual(chunks.min()!, min(total, limit / 2 - tile), what)
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

    /// Depths of more than two `depthSlice`s go in slices, the partial sums kept in C: every value
    /// must still be the bias then one fused multiply-add per `p` in order, bit for bit, for
    /// blocks of each width (AVX2's joined 24-column tiles among them), blocks that overhang `n`
    /// (not sliced), and column parts.
    func testSlicedDepthIsTheSameChainOfMultiplyAdds() {
        var values = Values(state: 3)
        let slice = FloatGEMM.depthSlice
        for (m, n, k) in [(1, 32, 2 * slice + 1), (7, 8, 2 * slice + 5), (13, 16, 3 * slice), (49, 64, 12 * slice),
                          (50, 100, 5 * slice + 7), (9, 40, 2 * slice), (20, 200, 3 * slice + 1),
                          (13, 24, 3 * slice), (10, 56, 2 * slice + 9), (4, 24, 2 * slice + 2), (5, 21, 2 * slice + 3)] {
            let lda = k + 1, ldc = n + 3
            let a = values.array(m * lda), w = values.array(n * k), bias = values.array(n)
            let packed = w.withUnsafeBufferPointer { w in
                bias.withUnsafeBufferPointer { FloatGEMM.PackedWeights(weights: w, bias: $0, n: n, k: k) }
            }
            var expected = [Float](repeating: 42, count: m * ldc)
            for i in 0 ..< m {
                for j in 0 ..< n {
                    var sum = bias[j]
                    for p in 0 ..< k { sum = sum.addingProduct(a[i * lda + p], w[j * k + p]) }
                    expected[i * ldc + j] = min(max(sum, -1.5), 1.5)
                }
            }
            var whole = [Float](repeating: 42, count: m * ldc)
            FloatGEMM.multiply(m: m, a: a, lda: lda, weights: packed, range: -1.5 ... 1.5, c: &whole, ldc: ldc)
            XCTAssertEqual(whole.map(\.bitPattern), expected.map(\.bitPattern), "m \(m) n \(n) k \(k)")
            // Two column parts at a block boundary, as two threads would compute them.
            let cut = FloatGEMM.columnGranularity
            guard n > cut else { continue }
            var parts = [Float](repeating: 42, count: m * ldc)
            FloatGEMM.multiply(m: m, a: a, lda: lda, weights: packed, columns: 0 ..< cut, range: -1.5 ... 1.5, c: &parts, ldc: ldc)
            FloatGEMM.multiply(m: m, a: a, lda: lda, weights: packed, columns: cut ..< n, range: -1.5 ... 1.5, c: &parts, ldc: ldc)
            XCTAssertEqual(parts.map(\.bitPattern), expected.map(\.bitPattern), "m \(m) n \(n) k \(k), columns cut at \(cut)")
        }
    }
    /// The kernels' clamp (`FloatGEMM.clamp`, the engine's copy of `SIMDKernels.FloatTiles.clamp`), lane for lane: `lower` where `x < lower`, `upper` where `x > upper`,
    /// `x` itself otherwise — a NaN stays NaN, and a zero keeps its sign against a zero bound.
    func testClampKeepsNaNAndSignedZeros() {
        let specials: [Float] = [.nan, -.nan, .infinity, -.infinity, 0, -0, 6, 6.0000005, 5.9999995, -1, 1e-45, -1e-45,
                                 .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 3, 0.5]
        for (lower, upper) in [(Float(0), Float(6)), (-0.0, 6), (-Float.infinity, Float.infinity), (-1, 1), (0, 0)] {
            let x = SIMD16<Float>(specials)
            let lanes = FloatGEMM.clamp(x, lower, upper)
            let low = FloatGEMM.clamp(x.lowHalf, lower, upper), high = FloatGEMM.clamp(x.highHalf, lower, upper)
            for i in 0 ..< 16 {
                let v = specials[i], expected = v < lower ? lower : v > upper ? upper : v
                XCTAssertEqual(lanes[i].bitPattern, expected.bitPattern, "\(v) in \(lower)...\(upper), 16 lanes")
                XCTAssertEqual((i < 8 ? low[i] : high[i - 8]).bitPattern, expected.bitPattern, "\(v) in \(lower)...\(upper), 8 lanes")
            }
        }
    }
}
