import XCTest
@testable import Engine
import TestSupport

/// A float convolution fused with the ADD, PRELU, RELU-family and HARD_SWISH operators after it
/// (`FloatEpilogue`) writes exactly the bytes of the operators run one after the other: in every
/// layout of `Conv2DFloat32` (pointwise, in place with and without padding, im2col, one pixel,
/// two batches; channel counts that end in a partial block) and the paths of
/// `DepthwiseConv2DFloat32`, on 1 and 3 threads, with NaN, ±0, ±∞
/// and denormals in the other operand; and on the MediaPipe models that have the pattern.
final class ConvolutionEpilogueTests: XCTestCase {
    private struct Layer {
        var batches = 1, height: Int, width: Int, depth: Int, channels: Int
        var filter = 1, stride = 1, dilation = 1, pad = 0

        var geometry: Conv2D.Geometry {
            func output(_ size: Int) -> Int { (size + 2 * pad - dilation * (filter - 1) - 1) / stride + 1 }
            return Conv2D.Geometry(batches: batches, inputHeight: height, inputWidth: width, inputChannels: depth,
                                   outputHeight: output(height), outputWidth: output(width), outputChannels: channels,
                                   filterHeight: filter, filterWidth: filter, strideHeight: stride, strideWidth: stride,
                                   dilationHeight: dilation, dilationWidth: dilation, padTop: pad, padLeft: pad)
        }
    }

    private enum Operator {
        case add(otherFirst: Bool, ClosedRange<Float>)
        /// A PAD of the other operand's channels (`missing` fewer than the output's) with +0,
        /// then the ADD of it.
        case paddedAdd(otherFirst: Bool, ClosedRange<Float>, missing: Int)
        case prelu
        case relu(ClosedRange<Float>)
        case hardSwish
    }

    private func bits(_ bytes: [UInt8]) -> [UInt32] { bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt32.self)) } }
    private func bytes(_ values: [Float]) -> [UInt8] { values.withUnsafeBytes { Array($0) } }

    /// One convolution layer through `checkEpilogue`.
    private func check(_ layer: Layer, _ operators: [Operator], range: ClosedRange<Float> = -.infinity ... .infinity,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let g = layer.geometry
        var values = SeededFloats(state: UInt64(g.patchSize * 131 + g.outputChannels))
        let filter = values.array(g.outputChannels * g.patchSize), bias = values.array(g.outputChannels)
        let conv = filter.withUnsafeBufferPointer { w in
            bias.withUnsafeBufferPointer { Conv2DFloat32(geometry: g, filter: w, bias: $0, range: range, input: 0, output: 1) }
        }
        try checkEpilogue(conv, fused: { conv.followed(by: $0, output: $1) }, operators, values: &values,
                          input: g.batches * g.inputHeight * g.inputWidth * g.inputChannels,
                          shape: [g.batches, g.outputHeight, g.outputWidth, g.outputChannels],
                          scratchBytes: conv.scratchBytes, workerScratchBytes: conv.scratchBytes, what: "\(layer)", file: file, line: line)
    }

    /// One depthwise layer (one image, depth multiplier 1) through `checkEpilogue`.
    private func checkDepthwise(input: (Int, Int), channels: Int, filter: (Int, Int), stride: (Int, Int), padding: Padding,
                                _ operators: [Operator], file: StaticString = #filePath, line: UInt = #line) throws {
        let g = DepthwiseConv2D.Geometry.oneImage(input: input, channels: channels, filter: filter, stride: stride,
                                                  dilation: (1, 1), padding: padding)
        var values = SeededFloats(state: UInt64(input.0 * 100 + input.1 * 10 + channels))
        let weights = values.array(filter.0 * filter.1 * channels), bias = values.array(channels)
        let depthwise = weights.withUnsafeBufferPointer { w in
            bias.withUnsafeBufferPointer { DepthwiseConv2DFloat32(geometry: g, filter: w, bias: $0, range: -1 ... 1, input: 0, output: 1) }
        }
        try checkEpilogue(depthwise, fused: { depthwise.followed(by: $0, output: $1) }, operators, values: &values,
                          input: g.inputHeight * g.inputWidth * channels, shape: [1, g.outputHeight, g.outputWidth, channels],
                          scratchBytes: 64, workerScratchBytes: depthwise.planes?.bytes ?? 0,
                          what: "depthwise \(input)×\(channels) filter \(filter) stride \(stride)", file: file, line: line)
    }

    /// `base` (reading tensor 0, writing tensor 1 of `shape`) then `operators`, run apart and
    /// fused (`fused(epilogue, output)`), on 1 and 3 threads: the same bits. Tensors: 0 input, 1
    /// the base kernel's output, 2 the ADD's other operand, 3 the alphas, 4 … the operators'
    /// outputs run apart, then the fused output (with 64 guard bytes), last a PAD's output.
    private func checkEpilogue(_ base: any Kernel, fused: (FloatEpilogue, Int) -> any Kernel, _ operators: [Operator],
                               values: inout SeededFloats, input inputCount: Int, shape: [Int], scratchBytes: Int,
                               workerScratchBytes: Int, what layer: String, file: StaticString, line: UInt) throws {
        let count = shape.reduce(1, *), channels = shape[3]
        // The other operand and the alphas: random, with special values sprinkled in.
        let specials: [Float] = [.nan, -0.0, 0, .infinity, -.infinity, .leastNonzeroMagnitude, -.leastNormalMagnitude, 1e30]
        var other = values.array(count)
        for i in stride(from: 3, to: count, by: 29) { other[i] = specials[i % specials.count] }
        var alphas = values.array(channels)
        for i in stride(from: 1, to: alphas.count, by: 5) { alphas[i] = specials[i % specials.count] }

        var kernels: [any Kernel] = [base], stages = [FloatEpilogue.Stage]()
        var produced = 1
        for (k, op) in operators.enumerated() {
            let output = 4 + k
            switch op {
            case let .add(otherFirst, range):
                let broadcast = try XCTUnwrap(Broadcast(shape, shape))
                kernels.append(ArithmeticFloat32<Addition>(lhs: otherFirst ? 2 : produced, rhs: otherFirst ? produced : 2, output: output,
                                                           broadcast: broadcast, lower: range.lowerBound, upper: range.upperBound))
                stages.append(.add(other: 2, otherFirst: otherFirst, lower: range.lowerBound, upper: range.upperBound))
            case let .paddedAdd(otherFirst, range, missing):
                // Tensor 2's first pixels × `narrow` values, padded to `channels` into the last tensor.
                let narrow = max(1, channels - missing), padded = 5 + operators.count
                let size = MemoryLayout<Float>.stride
                kernels.append(PadKernel(input: 2, output: padded, elementSize: size, inputShape: [count / channels, narrow],
                                         before: [0, 0], after: [0, channels - narrow], outputStrides: [channels * size, size],
                                         inputBlockBytes: narrow * size, fill: .bits(0), imagePadding: nil,
                                         channelPadding: .init(inputChannels: narrow, outputChannels: channels)))
                let broadcast = try XCTUnwrap(Broadcast(shape, shape))
                kernels.append(ArithmeticFloat32<Addition>(lhs: otherFirst ? padded : produced, rhs: otherFirst ? produced : padded,
                                                           output: output, broadcast: broadcast, lower: range.lowerBound,
                                                           upper: range.upperBound))
                stages.append(.paddedAdd(other: 2, padding: .init(otherChannels: narrow, channels: channels), otherFirst: otherFirst,
                                         lower: range.lowerBound, upper: range.upperBound))
            case .prelu:
                let broadcast = try XCTUnwrap(Broadcast(shape, [1, 1, channels]))
                kernels.append(PreluFloat32(input: produced, alpha: 3, output: output, broadcast: broadcast))
                stages.append(.prelu(alpha: PackedBuffer(alphas)))
            case let .relu(range):
                kernels.append(ReluFloat32(count: count, lower: range.lowerBound, upper: range.upperBound, input: produced, output: output))
                stages.append(.clamp(lower: range.lowerBound, upper: range.upperBound))
            case .hardSwish:
                kernels.append(HardSwishFloat32(count: count, input: produced, output: output))
                stages.append(.hardSwish)
            }
            produced = output
        }
        let fusedOutput = 4 + operators.count
        let fusedKernel = fused(FloatEpilogue(stages: stages), fusedOutput)
        var input = values.array(inputCount)
        input[0] = -0.0
        let guardBytes = [UInt8](repeating: 0xA5, count: 64)
        let empty = [UInt8](repeating: 0, count: 4 * count)
        for threads in [1, 3] {
            var tensors = [bytes(input), empty, bytes(other), bytes(alphas)] + operators.map { _ in empty } + [empty + guardBytes, empty]
            evaluate(kernels, on: &tensors, threads: threads, scratchBytes: scratchBytes, workerScratchBytes: workerScratchBytes)
            evaluate([fusedKernel], on: &tensors, threads: threads, scratchBytes: scratchBytes, workerScratchBytes: workerScratchBytes)
            let what = "\(layer) \(operators), \(threads) threads"
            let (got, expected) = (bits(Array(tensors[fusedOutput].prefix(4 * count))), bits(tensors[produced]))
            let wrong = got.indices.filter { got[$0] != expected[$0] }
            XCTAssert(wrong.isEmpty, "\(what): \(wrong.count) values differ, first at \(wrong.first ?? 0)", file: file, line: line)
            XCTAssertEqual(Array(tensors[fusedOutput].suffix(64)), guardBytes, "\(what): written past the output", file: file, line: line)
        }
    }

    private let chains: [[Operator]] = [
        [.add(otherFirst: false, -.infinity ... .infinity)],
        [.add(otherFirst: true, 0 ... .infinity)],
        [.prelu],
        [.relu(0 ... 6)],
        [.add(otherFirst: true, -.infinity ... .infinity), .prelu],
        [.add(otherFirst: false, 0 ... .infinity), .relu(-1 ... 1)],
        [.prelu, .add(otherFirst: false, -2 ... 2), .relu(0 ... .infinity)],
        [.hardSwish],
        [.add(otherFirst: true, -.infinity ... .infinity), .hardSwish],
        [.hardSwish, .add(otherFirst: false, -.infinity ... .infinity)],
        // A widened shortcut: most of a vector missing, then a few channels.
        [.paddedAdd(otherFirst: false, -.infinity ... .infinity, missing: 11), .relu(0 ... .infinity)],
        [.prelu, .paddedAdd(otherFirst: true, -1 ... 1, missing: 3)],
    ]

    func testEveryLayoutWritesTheOperatorsBytes() throws {
        XCTAssertGreaterThan(40 * 41 * 24 * MemoryLayout<Float>.stride, FloatGEMM.epilogueChunkBytes, "the last layer takes several chunks")
        let layers = [
            Layer(height: 9, width: 11, depth: 20, channels: 24),                          // pointwise, 16 + 8 columns
            Layer(height: 7, width: 13, depth: 5, channels: 13, filter: 3, pad: 1),        // in place, padded, partial block
            Layer(height: 15, width: 15, depth: 3, channels: 64, filter: 3, stride: 2),    // in place, stride 2
            Layer(height: 9, width: 9, depth: 4, channels: 40, filter: 3, dilation: 2),    // im2col
            // Rows of 7: im2col on AVX2, its weights deep enough that the tiles split the channels.
            Layer(height: 7, width: 7, depth: 64, channels: 200, filter: 3, pad: 1),
            Layer(height: 1, width: 1, depth: 50, channels: 19),                           // one pixel (matrix–vector)
            Layer(batches: 2, height: 5, width: 6, depth: 8, channels: 33, filter: 3, pad: 1), // two batches, padded
            Layer(height: 12, width: 14, depth: 96, channels: 200),                        // weights past the small-chunk limit
            // Small weights, C past `epilogueChunkBytes`: chunks of rows that end inside an image row.
            Layer(height: 40, width: 41, depth: 16, channels: 24),
        ]
        for layer in layers {
            for chain in chains { try check(layer, chain) }
        }
        // Depthwise layers: the 3 × 3 rows (stride 1 and 2, a partial group of channels), the 5 × 5
        // planes, the window path (3 × 3 on 12 channels, stride 3).
        for chain in chains {
            try checkDepthwise(input: (9, 11), channels: 40, filter: (3, 3), stride: (1, 1), padding: .same, chain)
            try checkDepthwise(input: (14, 14), channels: 24, filter: (3, 3), stride: (2, 2), padding: .same, chain)
            try checkDepthwise(input: (10, 12), channels: 32, filter: (5, 5), stride: (1, 1), padding: .same, chain)
            try checkDepthwise(input: (11, 10), channels: 12, filter: (3, 3), stride: (3, 3), padding: .valid, chain)
        }
        // The convolution's own clamp first (PRELU then meets +0, whose product with a negative
        // alpha would be −0).
        try check(layers[0], [.add(otherFirst: false, -.infinity ... .infinity), .prelu], range: 0 ... 6)
        try check(layers[1], [.prelu, .relu(-1 ... 1)], range: 0 ... 6)
    }

    /// The model zoo's models `names`, each with its graph and fused plan; skips the test where
    /// the zoo is absent.
    private static func zooPlans(_ names: [String]) throws -> [(URL, Graph, Plan)] {
        let urls = names.map { ModelZooGoldenTests.zooDirectory.appendingPathComponent("\($0).tflite") }
        guard urls.allSatisfy({ FileManager.default.fileExists(atPath: $0.path) }) else {
            throw XCTSkip("model zoo absent from \(ModelZooGoldenTests.zooDirectory.path); run `python3 Tests/Goldens/fetch_model_zoo.py`")
        }
        return try urls.map { url in
            let graph = try Graph(contentsOf: url.path)
            return (url, graph, try Plan(graph: graph))
        }
    }

    /// The MediaPipe models with PAD operators before depthwise layers (the sparse full-range
    /// face detector's 3 × 3, the pose detector's): the plan folds them into the layers, and
    /// computes the unfused plan's bytes, stopped runs included.
    func testPaddedDepthwiseModelsMatchUnfusedPlans() throws {
        let names = ["face_detection_full_range_sparse", "pose_detection"]
        for (url, graph, plan) in try Self.zooPlans(names) {
            let folded = plan.steps.filter { $0.node.opName == "PAD" && $0.kernel is DepthwiseConv2DFloat32 }
            XCTAssertFalse(folded.isEmpty, "\(url.lastPathComponent): no PAD folded")
            try assertFusedPlanMatchesUnfused(graph, plan: plan, name: url.lastPathComponent, stops: 8, checksReuse: false)
        }
    }

    /// The MediaPipe models whose convolutions are followed by ADD, PRELU or RELU (with folded
    /// DEQUANTIZE operators between them in face_landmark, and the PAD of a widened shortcut
    /// before the ADD in both face models): the fused plan computes the unfused plan's bytes, on
    /// 1, 2 and 3 threads, and a run stopped inside a fused step leaves each operator's output as
    /// the unfused plan does.
    func testMediaPipeModelsMatchUnfusedPlans() throws {
        let names = ["iris_landmark", "face_landmark", "face_detection_short_range"]
        for (url, graph, plan) in try Self.zooPlans(names) {
            let fusedOps = Set(plan.fusedOperators.map { graph.nodes[$0].opName })
            XCTAssertFalse(fusedOps.isDisjoint(with: ["ADD", "PRELU", "RELU"]), "\(url.lastPathComponent): fused \(fusedOps)")
            if url.lastPathComponent.hasPrefix("face") {
                XCTAssertTrue(fusedOps.contains("PAD"), "\(url.lastPathComponent): no shortcut PAD fused")
            }
            try assertFusedPlanMatchesUnfused(graph, plan: plan, name: url.lastPathComponent, stops: Int.max, checksReuse: false)
        }
    }
}
