import XCTest
import Foundation

@testable import Engine
import Microkernels

/// The packed, vectorised integer product (every layout this build compiles) and the
/// sixteen-lane requantization against their plain scalar references, over edge sizes: columns below, at and above the 16-lane panel
/// width (and panel counts that leave 2- and 1-panel tiles after the 4-panel ones), depths that
/// are not a multiple of anything, row counts that are not a multiple of the 4-row tile,
/// unsigned and signed activations, and extreme weights, activations and multipliers.
final class IntegerGEMMTests: XCTestCase {
    private let columnCounts = [1, 3, 15, 16, 17, 24, 31, 32, 33, 48, 50, 64, 65]
    private let depths = [1, 2, 3, 7, 16, 27, 33, 100]
    private let rowCounts = [1, 2, 3, 4, 5, 7, 8, 9]

    func testAccumulatorsMatchReference() {
        var rng = KernelTestRandom(seed: 1)
        for columns in columnCounts {
            for depth in depths {
                let rows = rowCounts[(columns + depth) % rowCounts.count]
                let rowStride = depth + (columns % 3)  // rows need not be packed
                let a = (0 ..< rows * rowStride).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
                // Extremes of the weight range show up often: nine bits (which `.avx512vnni` does
                // not take: it packs as the next layout), or eight (which every layout packs).
                let nineBits = depth % 2 == 1
                let (low, high): (Int32, Int32) = nineBits ? (-255, 255) : (-128, 127)
                let weights = (0 ..< columns * depth).map { i -> Int32 in
                    i % 7 == 0 ? (i % 2 == 0 ? high : low) : Int32.random(in: low ... high, using: &rng)
                }
                let bias = (0 ..< columns).map { _ in Int32.random(in: -100_000 ... 100_000, using: &rng) }
                let signed = (columns + depth) % 2 == 1
                let zeroPoint = Int32.random(in: 0 ... 255, using: &rng) - (signed ? 128 : 0)
                assertEveryLayoutMatchesReference(a, rows: rows, rowStride: rowStride, columns: columns, depth: depth,
                                                  weights: weights, bias: bias, zeroPoint: zeroPoint, signed: signed,
                                                  packedAsAsked: !nineBits)
            }
        }
    }

    /// The weight-bytes form (what CONV_2D and FULLY_CONNECTED pack at prepare) against the
    /// reference with each weight read as `encoding.value(byte)`: uint8 with zero points at both
    /// ends and the middle, int8 with zero points 0 and −7, rows of odd and even length, and rows
    /// shorter than the depth (im2col padding, read as 0).
    func testWeightBytesMatchReference() {
        var rng = KernelTestRandom(seed: 7)
        let encodings = [WeightEncoding(.uint8, zeroPoint: 0), WeightEncoding(.uint8, zeroPoint: 128),
                         WeightEncoding(.uint8, zeroPoint: 255), WeightEncoding(.int8, zeroPoint: 0),
                         WeightEncoding(.int8, zeroPoint: -7)]
        for (e, encoding) in encodings.enumerated() {
            for columns in [1, 16, 17, 50] {
                for (depth, rowLength) in [(1, 1), (4, 3), (27, 27), (28, 27), (64, 64), (100, 97)] {
                    let rows = rowCounts[(columns + depth + e) % rowCounts.count]
                    let a = (0 ..< rows * depth).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
                    let bytes = (0 ..< columns * rowLength).map { i -> UInt8 in
                        i % 5 == 0 ? (i % 2 == 0 ? 0 : 255) : UInt8.random(in: 0 ... 255, using: &rng)
                    }
                    let bias = (0 ..< columns).map { _ in Int32.random(in: -100_000 ... 100_000, using: &rng) }
                    let zeroPoint = Int32.random(in: 0 ... 255, using: &rng)
                    let weight = { (n: Int, k: Int) -> Int32 in k < rowLength ? encoding.value(bytes[n * rowLength + k]) : 0 }
                    let expected = IntegerGEMM.reference(a, rows: rows, rowStride: depth, columns: columns, depth: depth,
                                                         activationZeroPoint: zeroPoint, weight: weight, bias: { bias[$0] })
                    for layout in IntegerGEMM.Layout.allCases {
                        let gemm = bytes.withUnsafeBytes {
                            IntegerGEMM(columns: columns, depth: depth, activationZeroPoint: zeroPoint, layout: layout,
                                        weightBytes: $0, rowLength: rowLength, encoding: encoding, bias: { bias[$0] })
                        }
                        let actual = accumulators(gemm, a, rows: rows, rowStride: depth)
                        XCTAssertEqual(actual, expected, "\(gemm.layout) \(encoding): rows \(rows), columns \(columns), depth \(depth), row \(rowLength)")
                        // Packed from the bytes directly or through values: the same panels.
                        let general = IntegerGEMM(columns: columns, depth: depth, activationZeroPoint: zeroPoint, layout: layout,
                                                  weight: weight, bias: { bias[$0] })
                        XCTAssertEqual(packedBytes(gemm), packedBytes(general), "\(layout) \(encoding): columns \(columns), depth \(depth), row \(rowLength)")
                    }
                }
            }
        }
    }

    /// Narrow products run in taller tiles (16 rows of one panel, 8 rows of two): row counts
    /// below, at and above those heights, so the 4-row and 1-row tiles finish each run of them,
    /// and column counts that end in each tile width.
    func testTallTilesMatchReference() {
        var rng = KernelTestRandom(seed: 3)
        for columns in [1, 16, 17, 24, 32, 33, 48, 80] {
            for rows in [7, 8, 9, 15, 16, 17, 21, 31, 32, 37] {
                let depth = [1, 5, 16, 27][(columns + rows) % 4]
                let rowStride = depth + rows % 2
                let a = (0 ..< rows * rowStride).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
                // Extremes of an 8-bit span, which every layout packs (`.avx512vnni`'s tiles
                // included; nine-bit spans fall back to the next layout, see above).
                let weights = (0 ..< columns * depth).map { i -> Int32 in
                    i % 5 == 0 ? (i % 2 == 0 ? 127 : -128) : Int32.random(in: -128 ... 127, using: &rng)
                }
                let bias = (0 ..< columns).map { _ in Int32.random(in: -100_000 ... 100_000, using: &rng) }
                let signed = rows % 2 == 0
                let zeroPoint = Int32.random(in: 0 ... 255, using: &rng) - (signed ? 128 : 0)
                assertEveryLayoutMatchesReference(a, rows: rows, rowStride: rowStride, columns: columns, depth: depth,
                                                  weights: weights, bias: bias, zeroPoint: zeroPoint, signed: signed,
                                                  packedAsAsked: true)
            }
        }
    }

    /// Signed activations in adjacent rows (a 1 × 1 convolution's pixels, flipped to unsigned a
    /// block of rows at a time as one run of bytes) over several blocks of rows, against rows
    /// with gaps between them (flipped row by row): both give the reference's accumulators.
    func testSignedRowsAcrossBlocksMatchReference() {
        var rng = KernelTestRandom(seed: 11)
        for (columns, depth) in [(16, 16), (96, 16), (24, 27), (33, 200)] {
            for gap in [0, 3] {
                // More than two blocks of rows (at most 256 rows each), the last one partial.
                let rows = 2 * 256 + 37, rowStride = depth + gap
                let a = (0 ..< rows * rowStride).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
                // int8 weights: every layout packs them (`.avx512vnni` takes spans of 256 values).
                let weights = (0 ..< columns * depth).map { _ in Int32.random(in: -128 ... 127, using: &rng) }
                let bias = (0 ..< columns).map { _ in Int32.random(in: -100_000 ... 100_000, using: &rng) }
                let zeroPoint = Int32.random(in: -128 ... 127, using: &rng)
                assertEveryLayoutMatchesReference(a, rows: rows, rowStride: rowStride, columns: columns, depth: depth,
                                                  weights: weights, bias: bias, zeroPoint: zeroPoint, signed: true,
                                                  packedAsAsked: true)
            }
        }
    }

    func testRequantizedOutputMatchesScalarStage() {
        var rng = KernelTestRandom(seed: 2)
        for columns in columnCounts {
            for depth in [1, 17, 64] {
                let rows = 5
                let a = (0 ..< rows * depth).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
                let weights = (0 ..< columns * depth).map { _ in Int32.random(in: -255 ... 255, using: &rng) }
                let bias = (0 ..< columns).map { _ in Int32.random(in: -5000 ... 5000, using: &rng) }
                // Real multipliers all below ½ (every channel shifts right: the `.avx512vnni`
                // kernels' wide form), all below 1 (no left shifts: the output skips that step),
                // or not.
                let largest = [1: 1.5, 17: 0.99, 64: 0.49][depth]!
                let multipliers = (0 ..< columns).map { _ in
                    QuantizedMultiplier(Double.random(in: 1e-5 ... largest, using: &rng))
                }
                // A clamp from below the zero point, or from it (ReLU: the VNNI kernels then skip
                // the wide form's correction for negative products).
                let stage = ChannelRequantization(multipliers, zeroPoint: -7, range: columns % 2 == 0 ? (-128, 100) : (-7, 100))
                assertEveryLayoutRequantizesAsTheScalarStage(a, rows: rows, columns: columns, depth: depth, weights: weights, bias: bias,
                                                             activationZeroPoint: 131, stage: stage, packedAsAsked: false,
                                                             "columns \(columns), depth \(depth)")
            }
        }
    }

    /// Int8 weights (which the `.avx512vnni` layout packs as they are) through the requantizing
    /// tiles: 4-row and single-row tiles of 1, 2 and 4 panels with a partial last panel, each
    /// clamp a byte can hold (int8, int8 from the zero point, uint8), multipliers below ½ (the
    /// wide form), against the scalar stage, in every layout.
    func testInt8WeightTilesRequantizeAsTheScalarStage() {
        var rng = KernelTestRandom(seed: 21)
        for (columns, rows) in [(16, 9), (40, 4), (64, 5), (72, 8), (100, 7), (130, 13)] {
            for depth in [4, 16, 27] {
                let a = (0 ..< rows * depth).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
                let weights = (0 ..< columns * depth).map { _ in Int32.random(in: -128 ... 127, using: &rng) }
                let bias = (0 ..< columns).map { _ in Int32.random(in: -20_000 ... 20_000, using: &rng) }
                let multipliers = (0 ..< columns).map { _ in QuantizedMultiplier(Double.random(in: 5e-4 ... 6e-3, using: &rng)) }
                for (zeroPoint, range) in [(-3, (-128, 127)), (-3, (-3, 90)), (7, (0, 255))] as [(Int32, (Int32, Int32))] {
                    let stage = ChannelRequantization(multipliers, zeroPoint: zeroPoint, range: range)
                    assertEveryLayoutRequantizesAsTheScalarStage(a, rows: rows, columns: columns, depth: depth, weights: weights,
                                                                 bias: bias, activationZeroPoint: 128, stage: stage, packedAsAsked: true,
                                                                 "rows \(rows), columns \(columns), depth \(depth), range \(range)")
                }
            }
        }
    }

    /// A stage with `Int32.min` multipliers (whose square saturates) takes the two rounding
    /// steps with the saturating product in every layout, on accumulators at their extremes
    /// (biases of ±2^31), and gives the scalar stage's bytes; so does the same stage with
    /// those channels' multipliers made ordinary, which the `.avx512vnni` kernels take in the
    /// wide form.
    func testRequantizedOutputWithExtremeAccumulators() {
        var rng = KernelTestRandom(seed: 13)
        let rows = 9, columns = 40, depth = 8
        let a = (0 ..< rows * depth).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
        let weights = (0 ..< columns * depth).map { _ in Int32.random(in: -255 ... 255, using: &rng) }
        let bias = (0 ..< columns).map { c in c % 3 == 0 ? Int32.min : c % 3 == 1 ? Int32.max - 600_000 : Int32.random(in: -9 ... 9, using: &rng) }
        let ordinary = (0 ..< columns).map { _ in QuantizedMultiplier(Double.random(in: 1e-9 ... 0.49, using: &rng)) }
        var saturating = ordinary
        saturating[0] = QuantizedMultiplier(multiplier: Int32.min, shift: 0)
        saturating[17] = QuantizedMultiplier(multiplier: Int32.min, shift: -3)
        for (multipliers, minimum) in [(saturating, -128), (ordinary, -128), (ordinary, 5)] as [([QuantizedMultiplier], Int32)] {
            let stage = ChannelRequantization(multipliers, zeroPoint: 5, range: (minimum, 127))
            let accumulators = IntegerGEMM.reference(a, rows: rows, rowStride: depth, columns: columns, depth: depth,
                                                     activationZeroPoint: 131,
                                                     weight: { weights[$0 * depth + $1] }, bias: { bias[$0] })
            let expected = accumulators.enumerated().map { i, acc in UInt8(truncatingIfNeeded: stage.apply(acc, channel: i % columns)) }
            for layout in IntegerGEMM.Layout.allCases {
                let gemm = IntegerGEMM(columns: columns, depth: depth, activationZeroPoint: 131, layout: layout,
                                       weight: { weights[$0 * depth + $1] }, bias: { bias[$0] })
                var actual = [UInt8](repeating: 0xEE, count: rows * columns)
                actual.withUnsafeMutableBufferPointer { out in
                    gemm.multiply(a, rows: rows, rowStride: depth,
                                  into: RequantizedGEMMOutput(base: out.baseAddress!, rowStride: columns, columns: columns, stage: stage))
                }
                XCTAssertEqual(actual, expected, "\(gemm.layout), saturating \(stage.saturates)")
            }
        }
    }

    /// Every layout over edge sizes (rows 1…40, columns 1…80, depths 1…70 with every
    /// remainder modulo 4 and 16), for the three kinds of weights the kernels meet: int8 per
    /// channel (−128...127, no offset), uint8 minus a zero point at either extreme or between
    /// (`.avx512vnni` stores them offset and adds back row sums), and values spanning more than
    /// 256 (`.avx512vnni` falls back to `.int16`). Activation zero points and bytes hit their
    /// extremes; rows are read past no `depth`: each sits at the end of its own array.
    func testLayoutsMatchReferenceOverEdgeSizes() {
        var rng = KernelTestRandom(seed: 4)
        let rowCounts = [1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 23, 31, 32, 33, 40]
        let columnCounts = [1, 2, 5, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 79, 80]
        let depths = [1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 27, 31, 32, 33, 63, 64, 65, 66, 67, 70]
        enum Weights: CaseIterable { case int8, uint8, wide }
        var cases = 0
        for (i, depth) in depths.enumerated() {
            for (j, columns) in columnCounts.enumerated() where (i + j) % 3 == 0 {
                let rows = rowCounts[(i * 7 + j * 3) % rowCounts.count]
                let kind = Weights.allCases[(i + j) % 3 == 0 ? (i / 3 + j) % 3 : 0]
                let signed = (i + j / 3) % 2 == 0
                let zeroPoints: [Int32] = signed ? [-128, 127, -3] : [0, 255, 131]
                let zeroPoint = zeroPoints[(i + 2 * j) % 3]
                let weightZeroPoint: Int32 = [0, 255, 1, 128, 254, 77][(i + j) % 6]
                let weights = (0 ..< columns * depth).map { index -> Int32 in
                    switch kind {
                    case .int8:
                        return index % 5 == 0 ? [127, -128, -127][index % 3] : Int32.random(in: -128 ... 127, using: &rng)
                    case .uint8:
                        let w = index % 5 == 0 ? [0, 255][index % 2] : Int32.random(in: 0 ... 255, using: &rng)
                        return w - weightZeroPoint
                    case .wide:
                        return index % 5 == 0 ? [255, -255][index % 2] : Int32.random(in: -255 ... 255, using: &rng)
                    }
                }
                let bias = (0 ..< columns).map { _ in Int32.random(in: -100_000 ... 100_000, using: &rng) }
                // The last row ends the array, so an over-read would leave it.
                let rowStride = depth + (i % 2) * 5
                let a = (0 ..< (rows - 1) * rowStride + depth).map { index -> UInt8 in
                    index % 11 == 0 ? [0, 255, 128, 127][index % 4] : UInt8.random(in: 0 ... 255, using: &rng)
                }
                let expected = a.withUnsafeBufferPointer { a in
                    IntegerGEMM.reference(a.baseAddress!, rows: rows, rowStride: rowStride, columns: columns, depth: depth,
                                          activationZeroPoint: zeroPoint, signedActivations: signed,
                                          weight: { weights[$0 * depth + $1] }, bias: { bias[$0] })
                }
                for layout in IntegerGEMM.Layout.allCases {
                    let gemm = IntegerGEMM(columns: columns, depth: depth, activationZeroPoint: zeroPoint, signedActivations: signed,
                                           layout: layout, weight: { weights[$0 * depth + $1] }, bias: { bias[$0] })
                    // `.avx512vnni` takes spans of 256 values, `.avx2Bytes` weights that fit `Int8`
                    // (uint8 ones with a zero point near the middle too); others pack as `.avx2`.
                    let fitInt8 = weights.allSatisfy { (-128 ... 127).contains($0) }
                    switch (layout, kind) {
                    case (.avx512vnni, .wide): break
                    case (.avx2Bytes, _): XCTAssertEqual(gemm.layout, fitInt8 ? .avx2Bytes : .avx2, "\(kind) weights")
                    default: XCTAssertEqual(gemm.layout, layout, "\(kind) weights")
                    }
                    let actual = a.withUnsafeBufferPointer { accumulators(gemm, $0.baseAddress!, rows: rows, rowStride: rowStride) }
                    XCTAssertEqual(actual, expected, """
                        \(gemm.layout), \(kind) weights (offset \(gemm.weightOffset)): rows \(rows), columns \(columns), \
                        depth \(depth), signed \(signed), zero point \(zeroPoint)
                        """)
                    cases += 1
                }
            }
        }
        XCTAssertGreaterThan(cases, 100)
    }

    /// Products taller than one block of row sums (`IntegerGEMM.rowBlock`) or of sign-flipped
    /// `Int8` rows (fewer rows for deep ones), with offset weights, so every block's sums and
    /// flipped bytes must land on its own rows.
    func testRowBlocksWithOffsetWeights() {
        var rng = KernelTestRandom(seed: 5)
        for (rows, depth, signed) in [(IntegerGEMM.rowBlock + 1, 70, false), (2 * IntegerGEMM.rowBlock + 37, 70, true),
                                      (40, 1100, true), (37, 2049, true)] {
            let product = RandomProduct(rows: rows, columns: 40, depth: depth, zeroPoint: signed ? 5 : 250, signed: signed,
                                        weights: -200 ... 55, biases: -1000 ... 1000, using: &rng)
            for layout in IntegerGEMM.Layout.allCases {
                let gemm = product.packed(for: layout)
                XCTAssertEqual(accumulators(gemm, product.a, rows: rows, rowStride: depth), product.expected, "\(gemm.layout), rows \(rows)")
            }
        }
    }

    /// A stage the `.avx512vnni` kernels have no `store` of their own for gets their results
    /// through blocks of 4 rows × 64 columns of accumulators: products wider and taller than
    /// one block, and column ranges of them (as threads split a product), give every layout's
    /// results in the stage's own `store`.
    func testStageWithoutVNNIStoreMatchesReference() {
        var rng = KernelTestRandom(seed: 11)
        for (rows, columns, depth, signed) in [(37, 300, 70, true), (1, 1001, 33, false), (17, 257, 5, false), (40, 64, 130, true)] {
            let product = RandomProduct(rows: rows, columns: columns, depth: depth, zeroPoint: signed ? -7 : 131, signed: signed,
                                        weights: -255 ... 255, biases: -5000 ... 5000, using: &rng)
            let (a, expected) = (product.a, product.expected)
            for layout in IntegerGEMM.Layout.allCases {
                let gemm = product.packed(for: layout)
                let split = min(columns, 16 * (columns / 32))
                for range in [0 ..< columns, 0 ..< split, split ..< columns] {
                    var actual = [Int32](repeating: -1, count: rows * columns)
                    actual.withUnsafeMutableBufferPointer { out in
                        gemm.multiply(a, rows: rows, rowStride: depth, columns: range, scratch: nil,
                                      into: RecordingGEMMOutput(base: out.baseAddress!, columns: columns))
                    }
                    for m in 0 ..< rows {
                        for n in 0 ..< columns where actual[m * columns + n] != (range.contains(n) ? expected[m * columns + n] : -1) {
                            return XCTFail("\(gemm.layout) \(rows)×\(columns)×\(depth), columns \(range): [\(m), \(n)] is \(actual[m * columns + n])")
                        }
                    }
                }
            }
        }
    }

    /// The integer product packs for `vpdpbusd` exactly when the machine has AVX-512 VNNI (as
    /// the kernel reports it in /proc/cpuinfo), whatever the build targets: the portable build
    /// selects those kernels at run time.
    func testVNNILayoutFollowsTheMachine() throws {
        #if os(Linux) && arch(x86_64)
        guard ProcessInfo.processInfo.environment["SWIFTLITE_KERNELS"]?.lowercased() != "avx2" else {
            throw XCTSkip("SWIFTLITE_KERNELS=avx2 keeps this process on the AVX2 kernels")
        }
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = Set(cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ").map(String.init) ?? [])
        let hasVNNI = ["avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd", "avx512_vnni"].allSatisfy(flags.contains)
        XCTAssertEqual(IntegerGEMM.Layout.allCases.contains(.avx512vnni), hasVNNI)
        XCTAssertEqual(KernelSelection.integer.hasPrefix("avx512vnni"), hasVNNI, KernelSelection.integer)
        #else
        throw XCTSkip("x86-64 Linux only")
        #endif
    }

    /// The build's preferred layout is its last (fastest), except that `.avx2Bytes` is only
    /// for products of few rows; `.avx512vnni` needs no offset for int8 weights, and one for
    /// uint8 weights, which `.avx2Bytes` cannot hold.
    func testLayoutChoice() {
        typealias Layout = IntegerGEMM.Layout
        XCTAssertEqual(Layout.preferred, Layout.allCases.last)
        XCTAssertEqual(Layout.preferred(rows: Layout.bytesMaximumRows), .preferred)
        XCTAssertEqual(Layout.preferred(rows: Layout.bytesMaximumRows + 1), Layout.preferred == .avx2Bytes ? .avx2 : .preferred)
        let int8 = IntegerGEMM(columns: 3, depth: 2, activationZeroPoint: 0, weight: { n, k in n == k ? -128 : 127 }, bias: { _ in 0 })
        XCTAssertEqual(int8.layout, .preferred)
        XCTAssertEqual(int8.weightOffset, 0)
        let uint8 = IntegerGEMM(columns: 3, depth: 2, activationZeroPoint: 0, weight: { n, k in n == k ? 200 : -50 }, bias: { _ in 0 })
        // Outside `Int8`: `.avx2Bytes` leaves them to `.avx2`.
        XCTAssertEqual(uint8.layout, Layout.preferred == .avx2Bytes ? .avx2 : .preferred)
        XCTAssertEqual(uint8.weightOffset, uint8.layout == .avx512vnni ? 78 : 0)
    }

    /// Runs `gemm` on `rows` rows of `a` into raw accumulators, row-major.
    /// The largest products and sums the packed kernels can meet: every activation at an
    /// extreme of its type (0 or 255; −128 or 127 for int8) with the zero point at the other,
    /// against weights all at −255 or 255 (or int8's −128 and 127), deep enough (3 × 3 × 256)
    /// that the pair products of `.avx2` (`vpmaddwd`) and the 32-bit sums run at their
    /// largest. Every layout, unsigned and signed rows.
    func testExtremeActivationsAndWeightsMatchReference() {
        let rows = 6, columns = 17
        for signed in [false, true] {
            let bytes: [UInt8] = signed ? [0x80, 0x7F] : [0, 255]
            for depth in [2, 255, 2304] {
                for (byte, zeroPoint) in [(bytes[1], signed ? Int32(-128) : 0), (bytes[0], signed ? 127 : 255)] {
                    for extreme: Int32 in [255, -255, 127, -128] {
                        let a = [UInt8](repeating: byte, count: rows * depth)
                        let weight = { (n: Int, k: Int) -> Int32 in n % 2 == 0 ? extreme : (k % 3 == 0 ? -extreme : extreme) }
                        let expected = IntegerGEMM.reference(a, rows: rows, rowStride: depth, columns: columns, depth: depth,
                                                             activationZeroPoint: zeroPoint, signedActivations: signed,
                                                             weight: weight, bias: { _ in 7 })
                        for layout in IntegerGEMM.Layout.allCases {
                            let gemm = IntegerGEMM(columns: columns, depth: depth, activationZeroPoint: zeroPoint, signedActivations: signed,
                                                   layout: layout, weight: weight, bias: { _ in 7 })
                            XCTAssertEqual(accumulators(gemm, a, rows: rows, rowStride: depth), expected,
                                           "\(gemm.layout): byte \(byte), zero point \(zeroPoint), weight \(extreme), depth \(depth)")
                        }
                    }
                }
            }
        }
    }

    /// A product of random weights, biases and activations (rows packed, `depth` apart) and its
    /// reference result.
    private struct RandomProduct {
        let rows, columns, depth: Int
        let zeroPoint: Int32
        let signed: Bool
        let weights, bias: [Int32]
        let a: [UInt8]
        let expected: [Int32]

        init(rows: Int, columns: Int, depth: Int, zeroPoint: Int32, signed: Bool,
             weights weightRange: ClosedRange<Int32>, biases: ClosedRange<Int32>, using rng: inout KernelTestRandom) {
            (self.rows, self.columns, self.depth, self.zeroPoint, self.signed) = (rows, columns, depth, zeroPoint, signed)
            let weights = (0 ..< columns * depth).map { _ in Int32.random(in: weightRange, using: &rng) }
            let bias = (0 ..< columns).map { _ in Int32.random(in: biases, using: &rng) }
            a = (0 ..< rows * depth).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
            expected = IntegerGEMM.reference(a, rows: rows, rowStride: depth, columns: columns, depth: depth,
                                             activationZeroPoint: zeroPoint, signedActivations: signed,
                                             weight: { weights[$0 * depth + $1] }, bias: { bias[$0] })
            (self.weights, self.bias) = (weights, bias)
        }

        func packed(for layout: IntegerGEMM.Layout) -> IntegerGEMM {
            IntegerGEMM(columns: columns, depth: depth, activationZeroPoint: zeroPoint, signedActivations: signed,
                        layout: layout, weight: { weights[$0 * depth + $1] }, bias: { bias[$0] })
        }
    }

    /// A stage with only a `store`: every result as it comes, into a row-major array.
    private struct RecordingGEMMOutput: IntegerGEMMOutput {
        let base: UnsafeMutablePointer<Int32>
        let columns: Int

        func store(_ values: SIMD16<Int32>, row: Int, column: Int) {
            for lane in 0 ..< min(16, columns - column) { base[row * columns + column + lane] = values[lane] }
        }
    }

    /// Every layout's accumulators for `a` (`rows` rows, `rowStride` apart) equal the reference's;
    /// with `packedAsAsked`, every layout also packed the weights itself (none fell back).
    /// The product of packed rows `a` (`depth` apart) through `stage`, in every layout, against
    /// the scalar stage applied to the reference accumulators; nothing written past the last
    /// column. `packedAsAsked`: each layout packs these weights itself (no fallback).
    private func assertEveryLayoutRequantizesAsTheScalarStage(_ a: [UInt8], rows: Int, columns: Int, depth: Int, weights: [Int32],
                                                              bias: [Int32], activationZeroPoint: Int32,
                                                              stage: ChannelRequantization, packedAsAsked: Bool, _ context: String,
                                                              file: StaticString = #filePath, line: UInt = #line) {
        let accumulators = IntegerGEMM.reference(a, rows: rows, rowStride: depth, columns: columns, depth: depth,
                                                 activationZeroPoint: activationZeroPoint,
                                                 weight: { weights[$0 * depth + $1] }, bias: { bias[$0] })
        let expected = accumulators.enumerated().map { i, acc in UInt8(truncatingIfNeeded: stage.apply(acc, channel: i % columns)) }
        for layout in IntegerGEMM.Layout.allCases {
            let gemm = IntegerGEMM(columns: columns, depth: depth, activationZeroPoint: activationZeroPoint, layout: layout,
                                   weight: { weights[$0 * depth + $1] }, bias: { bias[$0] })
            if packedAsAsked { XCTAssertEqual(gemm.layout, layout, file: file, line: line) }
            var actual = [UInt8](repeating: 0xEE, count: rows * columns + 1)  // one guard byte
            actual.withUnsafeMutableBufferPointer { out in
                gemm.multiply(a, rows: rows, rowStride: depth,
                              into: RequantizedGEMMOutput(base: out.baseAddress!, rowStride: columns, columns: columns, stage: stage))
            }
            XCTAssertEqual(Array(actual.prefix(rows * columns)), expected, "\(gemm.layout): \(context)", file: file, line: line)
            XCTAssertEqual(actual.last, 0xEE, "\(gemm.layout) wrote past the last column (\(context))", file: file, line: line)
        }
    }

    private func assertEveryLayoutMatchesReference(_ a: [UInt8], rows: Int, rowStride: Int, columns: Int, depth: Int,
                                                   weights: [Int32], bias: [Int32], zeroPoint: Int32, signed: Bool,
                                                   packedAsAsked: Bool, file: StaticString = #filePath, line: UInt = #line) {
        let expected = IntegerGEMM.reference(a, rows: rows, rowStride: rowStride, columns: columns, depth: depth,
                                             activationZeroPoint: zeroPoint, signedActivations: signed,
                                             weight: { weights[$0 * depth + $1] }, bias: { bias[$0] })
        for layout in IntegerGEMM.Layout.allCases {
            let gemm = IntegerGEMM(columns: columns, depth: depth, activationZeroPoint: zeroPoint, signedActivations: signed,
                                   layout: layout, weight: { weights[$0 * depth + $1] }, bias: { bias[$0] })
            if packedAsAsked { XCTAssertEqual(gemm.layout, layout, file: file, line: line) }
            let actual = accumulators(gemm, a, rows: rows, rowStride: rowStride)
            XCTAssertEqual(actual, expected, "\(gemm.layout): rows \(rows) (stride \(rowStride)), columns \(columns), depth \(depth), signed \(signed)",
                           file: file, line: line)
        }
    }

    private func accumulators(_ gemm: IntegerGEMM, _ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int) -> [Int32] {
        var actual = [Int32](repeating: -1, count: rows * gemm.columns)
        actual.withUnsafeMutableBufferPointer { out in
            gemm.multiply(a, rows: rows, rowStride: rowStride,
                          into: AccumulatorGEMMOutput(base: out.baseAddress!, rowStride: gemm.columns, columns: gemm.columns))
        }
        return actual
    }

    /// The AVX-512 kernels' one-shift form of the output stage (`WideRequantization`) gives the
    /// scalar helpers' result for every right shift 1...31, multipliers at their extremes (zero,
    /// one, negative, `Int32.max`) and accumulators at theirs, and at the ties of either rounding.
    func testWideRequantizationMatchesScalarHelpers() throws {
        // Checked before the first call: `apply` itself is AVX-512 code.
        guard RunTimeCPU.runsVNNIKernels else { throw XCTSkip("the AVX-512 VNNI kernels do not run on this machine") }
        try checkWideRequantization { WideRequantization.apply($0, multipliers: $1, constants: $2) }
    }

    /// The form without its correction for negative products, which the VNNI kernels apply to
    /// stages that clamp at the zero point or above: the same value wherever the exact one is
    /// positive, and a value ≤ 0 wherever it is not, so that a clamp at 0 leaves them equal.
    func testNonNegativeWideRequantizationMatchesAboveZero() throws {
        guard RunTimeCPU.runsVNNIKernels else { throw XCTSkip("the AVX-512 VNNI kernels do not run on this machine") }
        try checkWideRequantization(clampedAtZero: true) { WideRequantization.applyNonNegative($0, multipliers: $1, constants: $2) }
    }

    /// The same form in the engine's own registers (`ChannelRequantization.applyWide`: AVX2 in a
    /// portable build, AVX-512 in a native one), which the AVX2 GEMM and depthwise kernels apply.
    func testEngineWideRequantizationMatchesScalarHelpers() throws {
        try checkWideRequantization { ChannelRequantization.applyWide($0, multipliers: $1, constants: $2) }
        try checkWideRequantization(clampedAtZero: true) {
            ChannelRequantization.applyWide($0, multipliers: $1, constants: $2, nonnegative: true)
        }
    }

    private func checkWideRequantization(clampedAtZero: Bool = false,
                                         _ apply: (SIMD16<Int32>, UnsafeRawPointer, UnsafeRawPointer) -> SIMD16<Int32>?) throws {
        var rng = KernelTestRandom(seed: 12)
        var quantized = [QuantizedMultiplier]()
        for shift in 1 ... 31 {
            quantized.append(QuantizedMultiplier(multiplier: Int32.random(in: 1 << 30 ... Int32.max, using: &rng), shift: -shift))
        }
        quantized += [QuantizedMultiplier(multiplier: 0, shift: -1), QuantizedMultiplier(multiplier: 1, shift: -1),
                      QuantizedMultiplier(multiplier: -(1 << 30), shift: -2), QuantizedMultiplier(multiplier: Int32.min + 1, shift: -1),
                      QuantizedMultiplier(multiplier: Int32.max, shift: -1), QuantizedMultiplier(multiplier: 1 << 30, shift: -31),
                      QuantizedMultiplier(multiplier: 1 << 30, shift: -1), QuantizedMultiplier(multiplier: 1 << 30, shift: -3)]
        let padded = (quantized.count + 15) / 16 * 16
        var multipliers = [Int32](repeating: 0, count: padded), shifts = [Int32](repeating: 1, count: padded)
        for (c, q) in quantized.enumerated() { (multipliers[c], shifts[c]) = (q.multiplier, Int32(-q.shift)) }
        var constants = [Int64](repeating: 0, count: padded / 16 * WideRequantization.valuesPerBlock)
        WideRequantization.write(multipliers: multipliers, rightShifts: shifts, channels: padded, to: &constants)
        // With M = 2^30 the product is x · 2^30: x = ±1, ±3, ±5 put it at the ties of both roundings.
        let edges: [Int32] = [.min, .min + 1, -(1 << 30), -65_536, -255, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 255, 65_536,
                              1 << 30, .max - 1, .max]
        for trial in 0 ..< 600 {
            for block in stride(from: 0, to: padded, by: 16) {
                var x = SIMD16<Int32>()
                for lane in 0 ..< 16 {
                    x[lane] = trial < 2 * edges.count ? edges[(trial + lane) % edges.count] : Int32.random(in: .min ... .max, using: &rng)
                    if trial % 3 == 2 { x[lane] >>= Int32(trial % 29) }  // small accumulators too
                }
                let wide = multipliers.withUnsafeBytes { m in
                    constants.withUnsafeBytes { k in
                        apply(x, m.baseAddress! + 4 * block, k.baseAddress! + 8 * block / 16 * WideRequantization.valuesPerBlock)
                    }
                }
                guard let wide else { throw XCTSkip("this build has no code for the one-shift form") }
                for lane in 0 ..< 16 where block + lane < quantized.count {
                    let q = quantized[block + lane]
                    let expected = multiplyByQuantizedMultiplier(x[lane], q)
                    if clampedAtZero {
                        XCTAssertEqual(max(wide[lane], 0), max(expected, 0), "x \(x[lane]), multiplier \(q.multiplier), shift \(q.shift)")
                        if expected <= 0 { XCTAssertLessThanOrEqual(wide[lane], 0, "x \(x[lane]), multiplier \(q.multiplier)") }
                    } else {
                        XCTAssertEqual(wide[lane], expected, "x \(x[lane]), multiplier \(q.multiplier), shift \(q.shift)")
                    }
                }
            }
        }
    }

    func testVectorRequantizationMatchesScalarHelpers() {
        var rng = KernelTestRandom(seed: 3)
        let edges: [Int32] = [.min, .min + 1, -(1 << 30), -65_536, -255, -3, -2, -1, 0, 1, 2, 3, 255, 65_536, 1 << 30, .max - 1, .max]
        var quantized = [QuantizedMultiplier]()
        for shift in -31 ... 3 {
            quantized.append(QuantizedMultiplier(multiplier: Int32.random(in: 1 << 30 ... Int32.max, using: &rng), shift: shift))
        }
        // Degenerate multipliers: zero, negative (negative scales), and Int32.min, the one
        // SaturatingRoundingDoublingHighMul saturates.
        quantized += [QuantizedMultiplier(multiplier: 0, shift: 0), QuantizedMultiplier(-0.75),
                      QuantizedMultiplier(multiplier: Int32.min, shift: 0), QuantizedMultiplier(multiplier: Int32.min, shift: -3),
                      QuantizedMultiplier(multiplier: Int32.max, shift: 0), QuantizedMultiplier(multiplier: 1 << 30, shift: -31)]
        // With an Int32.min multiplier the stage takes the saturating product; without, the
        // plain one.
        for multipliers in [quantized, quantized.filter { $0.multiplier != Int32.min }] {
            let stage = ChannelRequantization(multipliers, zeroPoint: 3, range: (Int32.min, Int32.max))
            let padded = (multipliers.count + 15) / 16 * 16
            for trial in 0 ..< 400 {
                var values = [Int32](repeating: 0, count: padded)
                for i in values.indices {
                    values[i] = trial < edges.count ? edges[(trial + i) % edges.count] : Int32.random(in: .min ... .max, using: &rng)
                }
                for block in stride(from: 0, to: multipliers.count, by: 16) {
                    var lanes = SIMD16<Int32>()
                    for lane in 0 ..< 16 { lanes[lane] = values[block + lane] }
                    let vector = stage.apply(lanes, channel: block)
                    for lane in 0 ..< min(16, multipliers.count - block) {
                        let channel = block + lane
                        let q = multipliers[channel]
                        let expected = multiplyByQuantizedMultiplier(values[channel], q) &+ 3
                        XCTAssertEqual(vector[lane], expected, "x \(values[channel]), multiplier \(q.multiplier), shift \(q.shift)")
                        XCTAssertEqual(vector[lane], stage.apply(values[channel], channel: channel))
                    }
                }
            }
        }
        // Int32.min × Int32.min saturates lane by lane as in the scalar helper.
        let both = SIMD16<Int32>(repeating: .min)
        XCTAssertEqual(saturatingRoundingDoublingHighMul(both, both), SIMD16(repeating: .max))
        XCTAssertEqual(roundingDivideByPOT(SIMD16(repeating: -5), SIMD16(repeating: 1)), SIMD16(repeating: -3))
        XCTAssertEqual(roundingDoublingHighMul(SIMD16(repeating: -5), SIMD16(repeating: 1 << 30)), SIMD16(repeating: -2))
    }

    /// Everything a product's kernels read: its layout, weight offset, panels and folded biases.
    private func packedBytes(_ gemm: IntegerGEMM) -> Packing {
        Packing(layout: "\(gemm.layout)", weightOffset: gemm.weightOffset,
                panels: Array(UnsafeBufferPointer(start: gemm.panels.pointer, count: gemm.panelCount * gemm.panelBytes)),
                biases: Array(UnsafeBufferPointer(start: gemm.bias.pointer, count: gemm.panelCount * IntegerGEMM.panelWidth)))
    }

    private struct Packing: Equatable {
        let layout: String
        let weightOffset: Int32
        let panels: [UInt8]
        let biases: [Int32]
    }
}
