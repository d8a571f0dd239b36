import XCTest
@testable import Engine
import TestSupport

/// The fused pointwise (or in-place, such as a 3×3 stride-2 stem) + 3×3 depthwise kernel
/// (`PointwiseDepthwiseFloat32`) writes exactly the bytes of the two operators run apart — for any
/// band size, any split into row and channel tiles, and on the shared float models, whose fused
/// plans match their unfused (tensor-preserving) plans.
final class PointwiseDepthwiseTests: XCTestCase {
    private func bits(_ values: [Float]) -> [UInt32] { values.map(\.bitPattern) }

    /// Bytes that differ between two buffers of one tensor (all of them if the sizes differ).
    private func differences(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        guard a.count == b.count else { return max(a.count, b.count) }
        return zip(a, b).filter { $0 != $1 }.count
    }

    /// One pair on random values, run apart (`Conv2DFloat32.convolve`, then
    /// `DepthwiseConv2DFloat32.convolve`) and fused with rings of 3 rows up to the whole image,
    /// whole or in tiles of row and channel parts visited in reverse.
    private func check(input: (Int, Int), depth: Int, channels: Int, stride: (Int, Int), padding: Padding,
                       producer: (filter: Int, stride: Int, padding: Padding) = (1, 1, .valid), projectTo: Int? = nil,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        // The producing convolution's windows along one axis: output size and padding before.
        func window(_ size: Int) -> (output: Int, before: Int) {
            let (k, s) = (producer.filter, producer.stride)
            guard producer.padding == .same else { return ((size - k) / s + 1, 0) }
            let output = (size + s - 1) / s
            return (output, max((output - 1) * s + k - size, 0) / 2)
        }
        let (rows, columns) = (window(input.0), window(input.1))
        let pg = Conv2D.Geometry(
            batches: 1, inputHeight: input.0, inputWidth: input.1, inputChannels: depth,
            outputHeight: rows.output, outputWidth: columns.output, outputChannels: channels,
            filterHeight: producer.filter, filterWidth: producer.filter, strideHeight: producer.stride, strideWidth: producer.stride,
            dilationHeight: 1, dilationWidth: 1, padTop: rows.before, padLeft: columns.before)
        let expandedSize = (rows.output, columns.output)
        let dg = DepthwiseConv2D.Geometry.oneImage(input: expandedSize, channels: channels, filter: (3, 3), stride: stride,
                                                   dilation: (1, 1), padding: padding)
        var values = SeededFloats(state: UInt64(input.0 * 7919 + depth * 31 + channels))
        let source = values.array(input.0 * input.1 * depth)
        let pw = values.array(channels * pg.patchSize), pb = values.array(channels)
        let dw = values.array(9 * channels), db = values.array(channels)
        let pointwise = pw.withUnsafeBufferPointer { w in pb.withUnsafeBufferPointer { Conv2DFloat32(geometry: pg, filter: w, bias: $0, range: 0 ... 6) } }
        let depthwise = dw.withUnsafeBufferPointer { w in db.withUnsafeBufferPointer { DepthwiseConv2DFloat32(geometry: dg, filter: w, bias: $0, range: -1 ... 1) } }
        XCTAssertTrue(pointwise.computesRows, file: file, line: line)
        var expanded = [Float](repeating: 0, count: expandedSize.0 * expandedSize.1 * channels)
        var expected = [Float](repeating: 0, count: dg.outputHeight * dg.outputWidth * channels)
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: max(1, pointwise.scratchBytes / 4))
        defer { scratch.deallocate() }
        pointwise.convolve(source, &expanded, scratch: scratch)
        depthwise.convolve(expanded, &expected)
        // The projection, run apart on the depthwise output.
        var projection: Conv2DFloat32?
        if let n = projectTo {
            let qg = Conv2D.Geometry(
                batches: 1, inputHeight: dg.outputHeight, inputWidth: dg.outputWidth, inputChannels: channels,
                outputHeight: dg.outputHeight, outputWidth: dg.outputWidth, outputChannels: n, filterHeight: 1, filterWidth: 1,
                strideHeight: 1, strideWidth: 1, dilationHeight: 1, dilationWidth: 1, padTop: 0, padLeft: 0)
            let qw = values.array(n * channels), qb = values.array(n)
            let conv = qw.withUnsafeBufferPointer { w in qb.withUnsafeBufferPointer { Conv2DFloat32(geometry: qg, filter: w, bias: $0, range: -2 ... 2) } }
            var projected = [Float](repeating: 0, count: dg.outputHeight * dg.outputWidth * n)
            conv.convolve(expected, &projected, scratch: scratch)
            expected = projected
            projection = conv
        }
        // What the fused kernel reads: the image, or the frame its threads pad first.
        let image = UnsafeMutablePointer<Float>.allocate(capacity: source.count + max(1, pointwise.scratchBytes / 4))
        defer { image.deallocate() }
        image.initialize(from: source, count: source.count)
        let frame = image + source.count
        pointwise.padFrame(image, into: frame, rows: 0 ..< pointwise.frameHeight)
        let read = UnsafePointer(pointwise.frameHeight > 0 ? frame : image)
        let patches = UnsafeMutablePointer<Float>.allocate(capacity: max(1, pointwise.patchBytes / 4))
        defer { patches.deallocate() }
        let rowBytes = expandedSize.1 * channels * 4
        for ringRows in [3, 4, 7, expandedSize.0 + 2] {
            let what = "\(input)×\(depth) \(producer) → \(channels) stride \(stride) \(padding), ring of \(ringRows) rows"
            let fused = try XCTUnwrap(PointwiseDepthwiseFloat32(pointwise: pointwise, depthwise: depthwise, projection: projection,
                                                                minimumExpandedBytes: 0, ringBytes: ringRows * rowBytes), what)
            let ring = UnsafeMutableRawPointer.allocate(byteCount: fused.workerScratchBytes, alignment: 64)
            defer { ring.deallocate() }
            let floats = ring.bindMemory(to: Float.self, capacity: fused.workerScratchBytes / 4)
            let band = UnsafeMutablePointer<Float>.allocate(capacity: fused.bandRows * dg.outputWidth * channels)
            defer { band.deallocate() }
            // With a projection the tiles are whole rows (it reads every channel).
            for (rowParts, channelParts) in [(1, 1), (2, 1), (3, 2), (dg.outputHeight, 4)] where projection == nil || channelParts == 1 {
                let rows = WorkPartition(count: dg.outputHeight, granularity: 1, maxParts: rowParts)
                let columns = WorkPartition(count: channels, granularity: FloatGEMM.columnGranularity, maxParts: channelParts)
                var actual = [Float](repeating: .nan, count: expected.count)
                for r in (0 ..< rows.parts).reversed() {
                    for c in 0 ..< columns.parts {
                        // The ring keeps stale rows from the previous tile: nothing may read them.
                        // Patches left from the previous tile must not leak into this one either.
                        patches.initialize(repeating: .nan, count: max(1, pointwise.patchBytes / 4))
                        fused.run(read, &actual, rows: rows.range(r), channels: columns.range(c), ring: floats, band: band,
                                  patches: patches)
                    }
                }
                XCTAssertEqual(bits(actual), bits(expected), "\(what), \(rows.parts) × \(columns.parts) tiles", file: file, line: line)
            }
        }
    }

    func testFusedPairIsByteIdenticalToTheTwoOperators() throws {
        // MobileNet's shapes, scaled down: stride 2 then 1, SAME; odd sizes, VALID, channels that
        // end in a partial 16- or 32-lane block; depth 1 and deep rows.
        try check(input: (12, 10), depth: 16, channels: 96, stride: (2, 2), padding: .same)
        try check(input: (9, 9), depth: 24, channels: 144, stride: (1, 1), padding: .same)
        try check(input: (7, 13), depth: 3, channels: 40, stride: (1, 2), padding: .valid)
        try check(input: (5, 6), depth: 1, channels: 17, stride: (2, 1), padding: .same)
        try check(input: (11, 4), depth: 70, channels: 33, stride: (1, 1), padding: .valid)
        try check(input: (3, 3), depth: 8, channels: 16, stride: (2, 2), padding: .same)
        // A stem: 3 × 3 stride 2 from 3 channels, padded (SAME) or not, then the depthwise layer.
        try check(input: (17, 25), depth: 3, channels: 32, stride: (1, 1), padding: .same, producer: (3, 2, .same))
        try check(input: (16, 26), depth: 3, channels: 40, stride: (2, 2), padding: .same, producer: (3, 2, .same))
        try check(input: (13, 27), depth: 5, channels: 17, stride: (1, 1), padding: .valid, producer: (3, 2, .valid))
        try check(input: (9, 12), depth: 4, channels: 24, stride: (1, 2), padding: .same, producer: (3, 1, .same))
        // Inverted residual blocks: expansion, depthwise, projection (to 24 channels, partial
        // blocks, one channel), and a stem with its depthwise layer and projection.
        try check(input: (12, 10), depth: 16, channels: 96, stride: (2, 2), padding: .same, projectTo: 24)
        try check(input: (9, 9), depth: 24, channels: 144, stride: (1, 1), padding: .same, projectTo: 40)
        try check(input: (11, 4), depth: 7, channels: 33, stride: (1, 1), padding: .valid, projectTo: 1)
        try check(input: (17, 25), depth: 3, channels: 32, stride: (1, 1), padding: .same, producer: (3, 2, .same), projectTo: 16)
    }

    /// Only convolutions that compute rows (pointwise, in place on one image) into 3×3 depthwise
    /// ones fuse, and only with large enough outputs and no epilogue of their own.
    func testOnlyThePatternFuses() {
        let pg = Conv2D.Geometry(batches: 1, inputHeight: 8, inputWidth: 8, inputChannels: 4, outputHeight: 8, outputWidth: 8,
                                 outputChannels: 16, filterHeight: 1, filterWidth: 1, strideHeight: 1, strideWidth: 1,
                                 dilationHeight: 1, dilationWidth: 1, padTop: 0, padLeft: 0)
        let ones = [Float](repeating: 1, count: 64)
        let pointwise = ones.withUnsafeBufferPointer { Conv2DFloat32(geometry: pg, filter: $0, bias: nil, range: 0 ... 6) }
        func depthwise(_ filter: (Int, Int), dilation: (Int, Int) = (1, 1)) -> DepthwiseConv2DFloat32 {
            let g = DepthwiseConv2D.Geometry.oneImage(input: (8, 8), channels: 16, filter: filter, stride: (1, 1), dilation: dilation, padding: .same)
            let w = [Float](repeating: 1, count: filter.0 * filter.1 * 16)
            return w.withUnsafeBufferPointer { DepthwiseConv2DFloat32(geometry: g, filter: $0, bias: nil, range: -1 ... 1) }
        }
        XCTAssertNotNil(PointwiseDepthwiseFloat32(pointwise: pointwise, depthwise: depthwise((3, 3)), minimumExpandedBytes: 0))
        XCTAssertNil(PointwiseDepthwiseFloat32(pointwise: pointwise, depthwise: depthwise((5, 5)), minimumExpandedBytes: 0))
        XCTAssertNil(PointwiseDepthwiseFloat32(pointwise: pointwise, depthwise: depthwise((3, 3), dilation: (2, 2)), minimumExpandedBytes: 0))
        XCTAssertNil(PointwiseDepthwiseFloat32(pointwise: pointwise, depthwise: depthwise((3, 3))), "8 × 8 × 16 floats stay in cache")
        // A convolution that runs element-wise operators of its own (`FloatEpilogue`) is not taken.
        let clamped = pointwise.followed(by: FloatEpilogue(stages: [.clamp(lower: 0, upper: 1)]), output: pointwise.output)
        XCTAssertNil(PointwiseDepthwiseFloat32(pointwise: clamped, depthwise: depthwise((3, 3)), minimumExpandedBytes: 0))
        // Dilated across (im2col), and padded over two images: no rows of their own.
        for (dilation, batches, padTop) in [(2, 1, 0), (1, 2, 1)] {
            let g = Conv2D.Geometry(batches: batches, inputHeight: 8 + 2 * (dilation - 1), inputWidth: 8 + 2 * (dilation - 1),
                                    inputChannels: 4, outputHeight: 8, outputWidth: 8, outputChannels: 16, filterHeight: 3,
                                    filterWidth: 3, strideHeight: 1, strideWidth: 1, dilationHeight: dilation, dilationWidth: dilation,
                                    padTop: padTop, padLeft: padTop)
            let w = [Float](repeating: 1, count: 16 * 9 * 4)
            let conv = w.withUnsafeBufferPointer { Conv2DFloat32(geometry: g, filter: $0, bias: nil, range: 0 ... 6) }
            XCTAssertFalse(conv.computesRows)
            XCTAssertNil(PointwiseDepthwiseFloat32(pointwise: conv, depthwise: depthwise((3, 3)), minimumExpandedBytes: 0))
        }
    }

    /// The float models with the pattern: the fused plan's outputs are byte-identical to the
    /// unfused plan's (`preserveAllTensors` fuses nothing), at 1, 2 and 3 threads (whose runs of
    /// row parts go on from each other's rings, or not, when a thread takes another's); a run that stops
    /// between two fused operators leaves the first one's output as the unfused plan does.
    func testFusedModelsMatchUnfusedPlans() throws {
        let models = [try Fixtures.shared("models/perf/mobilenet_v2_1.0_224_f32.tflite"),
                      Fixtures.repositoryRoot.appendingPathComponent("Models/person_detector_f32.tflite"),
                      Fixtures.repositoryRoot.appendingPathComponent("Models/efficientnet_lite0_f32.tflite")]
        for url in models {
            let graph = try Graph(contentsOf: url.path)
            let plan = try Plan(graph: graph)
            XCTAssertFalse(plan.fusedOperators.isEmpty, "\(url.lastPathComponent) has expansions into 3×3 depthwise layers")
            try assertFusedPlanMatchesUnfused(graph, plan: plan, name: url.lastPathComponent)
        }
    }
}
