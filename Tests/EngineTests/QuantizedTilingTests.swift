import XCTest
@testable import Engine
import Microkernels

/// The two-way splits the integer CONV_2D and FULLY_CONNECTED give their threads (`TileGrid`):
/// an `IntegerGEMM` computed in column ranges, and a convolution or fully connected layer
/// computed tile by tile (output channels split at whole panels), write exactly the bytes of the
/// whole; the late layers of MobileNet split their channels, the early ones their pixels.
final class QuantizedTilingTests: XCTestCase {
    /// Every layout, signed and unsigned rows, column counts below, at and past the panel and
    /// 64-column tile widths: column parts equal the whole product.
    func testMultiplyInColumnPartsIsIdentical() {
        var rng = KernelTestRandom(seed: 41)
        for layout in IntegerGEMM.Layout.allCases {
            for signed in [false, true] {
                for n in [15, 16, 17, 48, 100, 200, 1001] {
                    let m = 21, k = 37
                    let a = (0 ..< m * k).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                    let w = (0 ..< n * k).map { _ in Int32(truncatingIfNeeded: rng.next() % 255) - 127 }
                    let bias = (0 ..< n).map { _ in Int32(truncatingIfNeeded: rng.next() % 4001) - 2000 }
                    let gemm = IntegerGEMM(columns: n, depth: k, activationZeroPoint: signed ? -9 : 131, signedActivations: signed,
                                           layout: layout, weight: { w[$0 * k + $1] }, bias: { bias[$0] })
                    var whole = [Int32](repeating: 0, count: m * n)
                    a.withUnsafeBufferPointer { a in
                        whole.withUnsafeMutableBufferPointer {
                            gemm.multiply(a.baseAddress!, rows: m, rowStride: k,
                                          into: AccumulatorGEMMOutput(base: $0.baseAddress!, rowStride: n, columns: n))
                        }
                    }
                    for (granularity, parts) in [(16, 2), (16, 3), (16, 64), (64, 2)] {
                        let split = WorkPartition(count: n, granularity: granularity, maxParts: parts)
                        var tiled = [Int32](repeating: .min, count: m * n)
                        a.withUnsafeBufferPointer { a in
                            tiled.withUnsafeMutableBufferPointer { out in
                                for p in (0 ..< split.parts).reversed() {
                                    gemm.multiply(a.baseAddress!, rows: m, rowStride: k, columns: split.range(p), scratch: nil,
                                                  into: AccumulatorGEMMOutput(base: out.baseAddress!, rowStride: n, columns: n))
                                }
                            }
                        }
                        XCTAssertEqual(tiled, whole, "\(layout) signed \(signed) n \(n) in \(split.parts) parts of \(granularity)")
                    }
                }
            }
        }
    }

    /// CONV_2D (1×1 read in place, and im2col) computed in tiles of pixels × channel panels, in
    /// shuffled order by three workers with their own scratch, equals the unsplit convolution.
    func testChannelSplitConvolutionIsIdentical() throws {
        var rng = KernelTestRandom(seed: 42)
        for type in [DataType.uint8, .int8] {
            for (k, stride, cin, cout) in [(1, 1, 24, 100), (1, 2, 16, 64), (3, 1, 5, 70), (3, 2, 8, 600), (1, 1, 33, 17)] {
                let op = QuantizedOperatorHarness(type: type, rng: &rng)
                let input = op.activation([cout == 17 ? 2 : 1, 7, 9, cin])
                let filter = op.weights([cout, k, k, cin], perChannel: type == .int8, dimension: 0)
                let bias = op.bias(cout, input: input, filter: filter)
                let options = Conv2DOptions(padding: .same, strideWidth: stride, strideHeight: stride,
                                            dilationWidth: 1, dilationHeight: 1, activation: .relu6)
                let prepared = try PreparedQuantizedOperator(.conv2D, .conv2D(options), inputs: [input, filter, bias], output: op.output())
                defer { prepared.deallocate() }
                let kernel = try XCTUnwrap(prepared.kernel as? Conv2DQuantized, "\(Swift.type(of: prepared.kernel))")
                let whole = prepared.run { kernel.eval($0) }
                let pixels = whole.count / cout
                for (rowParts, columnParts) in [(1, 2), (3, 4), (2, 64)] {
                    let grid = TileGrid(rows: WorkPartition(count: pixels, granularity: 4, maxParts: rowParts),
                                        columns: WorkPartition(count: cout, granularity: 16, maxParts: columnParts))
                    let tiles = (0 ..< grid.count).shuffled(using: &rng)
                    let tiled = prepared.run { memory in
                        for (i, t) in tiles.enumerated() {
                            let (rows, columns) = grid.tile(t)
                            kernel.convolve(rows: rows, columns: columns, worker: i % PreparedQuantizedOperator.workers, memory: memory)
                        }
                    }
                    XCTAssertEqual(tiled, whole, "\(type) \(k)×\(k)/\(stride) \(cin)→\(cout) grid \(grid.rows.parts)×\(grid.columns.parts)")
                }
            }
        }
    }

    /// FULLY_CONNECTED split by units (and batches) equals the whole layer.
    func testUnitSplitFullyConnectedIsIdentical() throws {
        var rng = KernelTestRandom(seed: 43)
        for type in [DataType.uint8, .int8] {
            for (batches, depth, units) in [(1, 40, 1001), (3, 17, 100), (2, 64, 16)] {
                let op = QuantizedOperatorHarness(type: type, rng: &rng)
                let input = op.activation([batches, depth])
                let weights = op.weights([units, depth], perChannel: type == .int8, dimension: 0)
                let bias = op.bias(units, input: input, filter: weights)
                let options = FullyConnectedOptions(activation: .relu, weightsFormat: 0, keepNumDims: false)
                let prepared = try PreparedQuantizedOperator(.fullyConnected, .fullyConnected(options), inputs: [input, weights, bias], output: op.output())
                defer { prepared.deallocate() }
                let kernel = try XCTUnwrap(prepared.kernel as? FullyConnectedQuantized, "\(Swift.type(of: prepared.kernel))")
                let whole = prepared.run { kernel.eval($0) }
                for (rowParts, columnParts) in [(1, 2), (2, 8), (3, 3)] {
                    let grid = TileGrid(rows: WorkPartition(count: batches, granularity: 1, maxParts: rowParts),
                                        columns: WorkPartition(count: units, granularity: 16, maxParts: columnParts))
                    let tiles = (0 ..< grid.count).shuffled(using: &rng)
                    let tiled = prepared.run { memory in
                        for (i, t) in tiles.enumerated() {
                            let (rows, columns) = grid.tile(t)
                            kernel.multiply(batches: rows, units: columns, worker: i % PreparedQuantizedOperator.workers, memory: memory)
                        }
                    }
                    XCTAssertEqual(tiled, whole, "\(type) \(batches)×\(depth)→\(units) grid \(grid.rows.parts)×\(grid.columns.parts)")
                }
            }
        }
    }

    /// A late 1×1 convolution with weights past `cachedWeightBytes` (7×7 pixels, 1024 → 1280)
    /// and MobileNet v2's classifier (1280 → 1001, one batch) split the channels on two threads;
    /// MobileNet v2's last convolution (320 → 1280, weights that stay in cache), a 14×14 one and
    /// its first (112×112 pixels, 3 → 32) split the pixels, in no more parts than give each
    /// `minimumPartRows` pixels.
    func testLateLayersSplitChannels() throws {
        var rng = KernelTestRandom(seed: 44)
        let op = QuantizedOperatorHarness(type: .int8, rng: &rng)
        func conv(_ input: [Int], k: Int, stride: Int, cout: Int) throws -> TileGrid {
            let x = op.activation(input)
            let filter = op.weights([cout, k, k, input[3]], perChannel: true, dimension: 0)
            let options = Conv2DOptions(padding: .same, strideWidth: stride, strideHeight: stride,
                                        dilationWidth: 1, dilationHeight: 1, activation: .relu6)
            let prepared = try PreparedQuantizedOperator(.conv2D, .conv2D(options), inputs: [x, filter, op.bias(cout, input: x, filter: filter)],
                                        output: op.output())
            defer { prepared.deallocate() }
            return try XCTUnwrap(prepared.kernel as? Conv2DQuantized).grid(tasks: 8, threadCount: 2)
        }
        let late = try conv([1, 7, 7, 1024], k: 1, stride: 1, cout: 1280)
        XCTAssertEqual(late.rows.parts, 1)
        XCTAssertGreaterThan(late.columns.parts, 1)
        let cached = try conv([1, 7, 7, 320], k: 1, stride: 1, cout: 1280)
        XCTAssertEqual(cached.columns.parts, 1)
        XCTAssertEqual(cached.rows.parts, 2, "49 pixels: one part per thread (each part reads all the weights)")
        let middle = try conv([1, 14, 14, 384], k: 1, stride: 1, cout: 64)
        XCTAssertEqual(middle.columns.parts, 1)
        XCTAssertEqual(middle.rows.parts, 196 / Conv2DQuantized.minimumPartRows)
        // 100 pixels would be 3 parts of 32 or more: 2, one per thread, so that neither waits
        // for the other's second part. (512 × 512 weights stay under `cachedWeightBytes` in
        // every tier; the AVX2 and portable tiers pack them as 16-bit values.)
        let head = try conv([1, 10, 10, 512], k: 1, stride: 1, cout: 512)
        XCTAssertEqual(head.columns.parts, 1)
        XCTAssertEqual(head.rows.parts, 2)
        let early = try conv([1, 224, 224, 3], k: 3, stride: 2, cout: 32)
        XCTAssertEqual(early.columns.parts, 1)
        XCTAssertEqual(early.rows.parts, 8)

        let x = op.activation([1, 1280])
        let weights = op.weights([1001, 1280], perChannel: false, dimension: 0)
        let options = FullyConnectedOptions(activation: .none, weightsFormat: 0, keepNumDims: false)
        let prepared = try PreparedQuantizedOperator(.fullyConnected, .fullyConnected(options), inputs: [x, weights, op.bias(1001, input: x, filter: weights)],
                                    output: op.output())
        defer { prepared.deallocate() }
        let classifier = try XCTUnwrap(prepared.kernel as? FullyConnectedQuantized).grid(tasks: 8, threadCount: 2)
        XCTAssertGreaterThan(classifier.columns.parts, 1)
    }
}
