import XCTest
@testable import Engine
import TestSupport

/// The two-way splits the float convolutions give their threads (`TileGrid`): every tile grid
/// covers the output once, and a convolution computed tile by tile is byte-identical to the
/// whole; the general depthwise path (EfficientNet's 5×5) is byte-identical to the pixel-at-a-time
/// path it replaces and close to the scalar reference.
final class FloatTilingTests: XCTestCase {
    private typealias Values = SeededFloats

    private func bits(_ values: [Float]) -> [UInt32] { values.map(\.bitPattern) }

    /// Tiles are disjoint, cover every (row, column) once, respect the granularities and the task
    /// budget; weights heavier than the input rows split the columns, the reverse the rows.
    func testCheapestGridCoversEveryCellOnce() {
        for tasks in [1, 2, 4, 8, 16] {
            for (rows, columns) in [(1, 8), (49, 1152), (100, 1280), (12544, 16), (7, 24), (3136, 144), (10, 40)] {
                for (perRow, perColumn) in [(1, 1_000_000), (1_000_000, 1), (500, 500)] {
                    let grid = TileGrid.cheapest(tasks: tasks, threads: 2, rows: rows, rowGranularity: 7, columns: columns, columnGranularity: 32,
                                                 bytesPerRowPart: perRow, bytesPerColumnPart: perColumn)
                    let what = "tasks \(tasks) rows \(rows) columns \(columns) costs \(perRow)/\(perColumn)"
                    XCTAssertLessThanOrEqual(grid.count, tasks, what)
                    var covered = [Int](repeating: 0, count: rows * columns)
                    for t in 0 ..< grid.count {
                        let (r, c) = grid.tile(t)
                        XCTAssertEqual(r.lowerBound % 7, 0, what)
                        XCTAssertEqual(c.lowerBound % 32, 0, what)
                        for i in r { for j in c { covered[i * columns + j] += 1 } }
                    }
                    XCTAssertEqual(covered.filter { $0 != 1 }.count, 0, what)
                }
            }
        }
        let late = TileGrid.cheapest(tasks: 8, threads: 2, rows: 49, rowGranularity: 7, columns: 1152, columnGranularity: 32,
                                     bytesPerRowPart: 1152 * 192 * 4, bytesPerColumnPart: 49 * 192 * 4)
        XCTAssertEqual(late.rows.parts, 1, "7×7 pixels, 1152 channels: split the channels")
        let early = TileGrid.cheapest(tasks: 8, threads: 2, rows: 12544, rowGranularity: 7, columns: 16, columnGranularity: 32,
                                      bytesPerRowPart: 16 * 32 * 4, bytesPerColumnPart: 12544 * 32 * 4)
        XCTAssertEqual(early.columns.parts, 1, "112×112 pixels, 16 channels: split the pixels")
    }

    /// A GEMM computed in column parts writes exactly the bytes of the whole.
    func testMultiplyInColumnPartsIsIdentical() {
        var values = Values(state: 3)
        for n in [8, 24, 40, 56, 88, 100, 1152] {
            let m = 23, k = 37
            let a = values.array(m * k), w = values.array(n * k), bias = values.array(n)
            let packed = w.withUnsafeBufferPointer { w in
                bias.withUnsafeBufferPointer { FloatGEMM.PackedWeights(weights: w, bias: $0, n: n, k: k) }
            }
            var whole = [Float](repeating: 0, count: m * n)
            FloatGEMM.multiply(m: m, a: a, lda: k, weights: packed, range: -0.5 ... 0.5, c: &whole, ldc: n)
            for parts in [2, 3, 8] {
                let split = WorkPartition(count: n, granularity: FloatGEMM.columnGranularity, maxParts: parts)
                var tiled = [Float](repeating: .nan, count: m * n)
                for p in 0 ..< split.parts {
                    FloatGEMM.multiply(m: m, a: a, lda: k, weights: packed, columns: split.range(p), range: -0.5 ... 0.5, c: &tiled, ldc: n)
                }
                XCTAssertEqual(bits(tiled), bits(whole), "n \(n) in \(split.parts) parts")
            }
        }
    }

    private func depthwise(input: (Int, Int), channels: Int, filter: (Int, Int), stride: (Int, Int), dilation: (Int, Int) = (1, 1),
                           padding: Padding, seed: UInt64) -> (DepthwiseConv2DFloat32, [Float]) {
        let g = DepthwiseConv2D.Geometry.oneImage(input: input, channels: channels, filter: filter, stride: stride,
                                                  dilation: dilation, padding: padding)
        var values = Values(state: seed)
        let source = values.array(input.0 * input.1 * channels)
        let weights = values.array(filter.0 * filter.1 * channels), bias = values.array(channels)
        let kernel = weights.withUnsafeBufferPointer { w in
            bias.withUnsafeBufferPointer { DepthwiseConv2DFloat32(geometry: g, filter: w, bias: $0, range: -6 ... 6) }
        }
        return (kernel, source)
    }

    /// Depthwise tiles (rows × groups of 16 channels) write exactly the bytes of the whole image,
    /// on the 3×3 path and the 5×5 one (one ring for all the tiles, as on a worker).
    func testDepthwiseInTilesIsIdentical() {
        for filter in [(3, 3), (5, 5)] {
            for stride in [(1, 1), (2, 2)] {
                for channels in [16, 24, 40, 64] {
                    let (kernel, source) = depthwise(input: (11, 13), channels: channels, filter: filter, stride: stride, padding: .same,
                                                     seed: UInt64(channels * 10 + filter.0))
                    let g = kernel.geometry
                    var whole = [Float](repeating: 0, count: g.outputHeight * g.outputWidth * channels)
                    kernel.convolve(source, &whole)
                    for (rowParts, channelParts) in [(1, 2), (3, 1), (4, 4)] {
                        let grid = TileGrid(rows: WorkPartition(count: g.outputHeight, granularity: 1, maxParts: rowParts),
                                            columns: WorkPartition(count: channels, granularity: 16, maxParts: channelParts))
                        var tiled = [Float](repeating: .nan, count: whole.count)
                        var ring = [Float](repeating: .nan, count: (kernel.planes?.bytes ?? 0) / 4)
                        tiled.withUnsafeMutableBufferPointer { out in
                            ring.withUnsafeMutableBufferPointer { ring in
                                for t in 0 ..< grid.count {
                                    let (rows, part) = grid.tile(t)
                                    kernel.convolve(source, out.baseAddress!, rows: rows, channels: part, ring: ring.baseAddress!)
                                }
                            }
                        }
                        XCTAssertEqual(bits(tiled), bits(whole), "filter \(filter) stride \(stride) channels \(channels) grid \(rowParts)×\(channelParts)")
                    }
                }
            }
        }
    }

    /// The general path (eight or four pixels at once) and the 5×5 planes path add the same
    /// products in the same order as `convolvePixel` (the planes path adds products with zero
    /// too, for the columns outside the input, which leaves a nonzero sum's bits as they are):
    /// byte-identical, and close to the scalar reference.
    func testGeneralDepthwiseMatchesPixelPath() {
        let shapes: [(input: (Int, Int), channels: Int, filter: (Int, Int), stride: (Int, Int), dilation: (Int, Int), padding: Padding)] = [
            ((14, 14), 32, (5, 5), (1, 1), (1, 1), .same), ((28, 29), 40, (5, 5), (2, 2), (1, 1), .same),
            ((9, 20), 17, (5, 5), (1, 1), (1, 1), .valid), ((12, 12), 48, (3, 3), (1, 1), (2, 2), .same),
            ((6, 6), 16, (5, 5), (1, 1), (1, 1), .same), ((7, 30), 24, (1, 7), (1, 3), (1, 1), .same),
            // EfficientNet's late layers (three inside pixels a row: the whole row four at a time), a
            // row narrower than four, a window wider than the input, stride 2 across the edges.
            ((7, 7), 40, (5, 5), (1, 1), (1, 1), .same), ((3, 3), 16, (5, 5), (1, 1), (1, 1), .same),
            ((4, 3), 32, (5, 5), (1, 1), (1, 1), .same), ((14, 14), 33, (5, 5), (2, 2), (1, 1), .same),
            ((9, 17), 16, (5, 5), (1, 1), (2, 2), .same),
        ]
        for (index, s) in shapes.enumerated() {
            let (kernel, source) = depthwise(input: s.input, channels: s.channels, filter: s.filter, stride: s.stride,
                                             dilation: s.dilation, padding: s.padding, seed: UInt64(100 + index))
            let g = kernel.geometry
            var fast = [Float](repeating: .nan, count: g.outputHeight * g.outputWidth * s.channels), pixelwise = fast, expected = fast
            kernel.convolve(source, &fast)
            pixelwise.withUnsafeMutableBufferPointer { out in
                for oy in 0 ..< g.outputHeight {
                    for ox in 0 ..< g.outputWidth {
                        kernel.convolvePixel(source, out.baseAddress! + (oy * g.outputWidth + ox) * s.channels, oy: oy, ox: ox, channels: 0 ..< s.channels)
                    }
                }
            }
            kernel.reference(source, &expected)
            let what = "\(s.input)×\(s.channels) filter \(s.filter) stride \(s.stride) dilation \(s.dilation)"
            XCTAssertEqual(bits(fast), bits(pixelwise), what)
            let taps = Float(s.filter.0 * s.filter.1)
            for i in expected.indices where abs(fast[i] - expected[i]) > 1e-5 * taps {
                return XCTFail("\(what): element \(i) is \(fast[i]), expected \(expected[i])")
            }
        }
    }
}
