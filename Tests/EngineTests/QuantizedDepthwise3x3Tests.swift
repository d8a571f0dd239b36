import XCTest

@testable import Engine

/// The quantized 3×3 and 5×5 DEPTHWISE_CONV_2D micro-kernel (`DepthwiseConv2DTapRows`, AVX-512
/// VNNI and AVX2 builds; other builds run the generic kernel through the same tests) against a
/// scalar transcription of `reference_integer_ops::DepthwiseConvPerChannel` (int8) and
/// `reference_ops::DepthwiseConv` (uint8, filter zero point subtracted): channel counts below,
/// at and above the 16-lane width, widths of one pixel, padding on every border, strides and
/// dilations per axis, multipliers above one (left shifts), per-tensor and per-channel scales,
/// uint8 filter zero points from 0 to 255, and output rows split between workers in any order.
final class QuantizedDepthwise3x3Tests: XCTestCase {
    private struct Case {
        var batches = 1, height: Int, width: Int, channels: Int
        var filterSize = 3
        var stride: (h: Int, w: Int) = (1, 1), dilation: (h: Int, w: Int) = (1, 1)
        var padding = Padding.same
        var activation = FusedActivation.none
        var perChannel = true
        /// Output scale; small values make real multipliers above one.
        var outputScale: Float = 0.05
        var type = DataType.int8
        /// A uint8 filter's zero point (nil: the harness's).
        var filterZeroPoint: Int?
    }

    func testMatchesReferenceOverEdgeShapes() throws {
        var rng = KernelTestRandom(seed: 31)
        var cases = [Case]()
        for channels in [1, 5, 15, 16, 17, 31, 32, 33, 48] {
            cases.append(Case(height: 6, width: 7, channels: channels))
            cases.append(Case(height: 7, width: 9, channels: channels, stride: (2, 2), padding: .valid, activation: .relu6))
            cases.append(Case(height: 8, width: 8, channels: channels, stride: (2, 2), perChannel: false))
        }
        cases += [
            Case(height: 1, width: 1, channels: 16),
            Case(height: 5, width: 6, channels: 70),
            Case(height: 7, width: 7, channels: 150, stride: (2, 2), activation: .relu6),
            Case(height: 5, width: 1, channels: 20, stride: (1, 2)),
            Case(height: 1, width: 6, channels: 9, stride: (2, 1), activation: .relu),
            Case(height: 9, width: 10, channels: 24, dilation: (2, 2)),
            Case(height: 9, width: 11, channels: 17, stride: (2, 1), dilation: (1, 3), padding: .valid),
            Case(height: 10, width: 9, channels: 35, dilation: (3, 1), activation: .reluN1To1),
            Case(batches: 2, height: 5, width: 6, channels: 18, stride: (2, 2)),
            Case(height: 6, width: 6, channels: 19, outputScale: 0.0001),
            Case(height: 6, width: 5, channels: 32, stride: (2, 2), perChannel: false, outputScale: 0.00002),
        ]
        // 5×5 (EfficientNet-Lite): windows wider than the input, both strides, dilation, the
        // channel counts around 16.
        for channels in [1, 16, 17, 33, 70] {
            cases.append(Case(height: 7, width: 8, channels: channels, filterSize: 5))
            cases.append(Case(height: 9, width: 9, channels: channels, filterSize: 5, stride: (2, 2), activation: .relu6))
        }
        cases += [
            Case(height: 3, width: 2, channels: 20, filterSize: 5),
            Case(height: 1, width: 1, channels: 16, filterSize: 5),
            Case(height: 11, width: 10, channels: 24, filterSize: 5, dilation: (2, 2)),
            Case(height: 9, width: 12, channels: 18, filterSize: 5, stride: (1, 2), padding: .valid),
            Case(batches: 2, height: 6, width: 7, channels: 40, filterSize: 5, stride: (2, 2), perChannel: false),
            Case(height: 6, width: 6, channels: 19, filterSize: 5, outputScale: 0.0001),
        ]
        // uint8 (TF1 models: per-tensor, filter zero points anywhere in 0...255, every weight
        // minus it in −255...255), 3×3 and 5×5.
        for (k, zeroPoint) in [(3, 0), (3, 1), (3, 119), (3, 128), (3, 254), (3, 255), (5, 119), (5, 0)] {
            cases.append(Case(height: 7, width: 9, channels: 33, filterSize: k, perChannel: false, type: .uint8, filterZeroPoint: zeroPoint))
            cases.append(Case(height: 9, width: 8, channels: 24, filterSize: k, stride: (2, 2), activation: .relu6, perChannel: false,
                              type: .uint8, filterZeroPoint: zeroPoint))
        }
        cases += [
            Case(height: 1, width: 1, channels: 16, perChannel: false, type: .uint8),
            Case(height: 9, width: 11, channels: 17, stride: (2, 1), dilation: (1, 3), padding: .valid, perChannel: false, type: .uint8),
            Case(batches: 2, height: 6, width: 5, channels: 70, perChannel: false, outputScale: 0.0001, type: .uint8),
        ]
        for c in cases {
            let op = QuantizedOperatorHarness(type: c.type, rng: &rng)
            let input = op.activation([c.batches, c.height, c.width, c.channels])
            let filter = op.weights([1, c.filterSize, c.filterSize, c.channels], perChannel: c.perChannel, dimension: 3,
                                    zeroPoint: c.filterZeroPoint)
            let bias = op.bias(c.channels, input: input, filter: filter)
            var output = op.output()
            output.scales = [c.outputScale]
            let options = DepthwiseConv2DOptions(padding: c.padding, strideWidth: c.stride.w, strideHeight: c.stride.h,
                                                 dilationWidth: c.dilation.w, dilationHeight: c.dilation.h,
                                                 depthMultiplier: 1, activation: c.activation)
            let label = "\(c.type) \(c.filterSize)×\(c.filterSize) filter, filter zero point \(filter.zeroPoint), \(c.batches)×\(c.height)×\(c.width)×\(c.channels) stride \(c.stride) dilation \(c.dilation) \(c.padding) \(c.activation) perChannel \(c.perChannel) scale \(c.outputScale)"
            let result = try op.run(.depthwiseConv2D, .depthwiseConv2D(options), inputs: [input, filter, bias], output: output)
            let expected = reference(op, input: input, filter: filter, bias: bias, output: output, options: options, outputShape: result.shape)
            XCTAssertEqual(result.bytes, expected, label)
            let split = try runSplit(input: input, filter: filter, bias: bias, output: output, options: options, rng: &rng)
            XCTAssertEqual(split, expected, "rows split between workers: " + label)
        }
    }

    /// Extreme inputs and weights (int8: all −128 or 127; uint8: 0 or 255 against filter zero
    /// points that make each weight −255...255), so every tap sum is at its bounds, at every input
    /// zero point extreme.
    func testExtremeValues() throws {
        var rng = KernelTestRandom(seed: 32)
        /// A 1×4×5×17 input of `inputByte` everywhere, a k×k filter of `filterByte`, against the reference.
        func check(_ type: DataType, k: Int, inputByte: UInt8, zeroPoint: Int, filterByte: UInt8, filterZeroPoint: Int?) throws {
            let op = QuantizedOperatorHarness(type: type, rng: &rng)
            var input = op.activation([1, 4, 5, 17])
            input.bytes = Array(repeating: inputByte, count: input.bytes.count)
            input.zeroPoints = [zeroPoint]
            var filter = op.weights([1, k, k, 17], perChannel: type == .int8, dimension: 3, zeroPoint: filterZeroPoint)
            filter.bytes = Array(repeating: filterByte, count: filter.bytes.count)
            let bias = op.bias(17, input: input, filter: filter)
            let output = op.output()
            let options = DepthwiseConv2DOptions(padding: .same, strideWidth: 1, strideHeight: 1, dilationWidth: 1,
                                                 dilationHeight: 1, depthMultiplier: 1, activation: .none)
            let result = try op.run(.depthwiseConv2D, .depthwiseConv2D(options), inputs: [input, filter, bias], output: output)
            let expected = reference(op, input: input, filter: filter, bias: bias, output: output, options: options, outputShape: result.shape)
            XCTAssertEqual(result.bytes, expected, "\(type) \(k)×\(k), input \(inputByte) (zero point \(zeroPoint)), filter \(filterByte) − \(filter.zeroPoint)")
        }
        for (inputByte, filterByte) in [(UInt8(0x80), UInt8(0x80)), (0x7F, 0x80), (0x80, 0x7F), (0x7F, 0x7F)] {
            for zeroPoint in [-128, 127] {
                for k in [3, 5] {
                    try check(.int8, k: k, inputByte: inputByte, zeroPoint: zeroPoint, filterByte: filterByte, filterZeroPoint: nil)
                }
            }
        }
        // uint8: weights minus their zero point at −255, −254, 254 and 255 (the last only as
        // int16 pairs or in the generic kernel), input zero points 0 and 255.
        for (inputByte, filterByte, filterZeroPoint) in [(UInt8(255), UInt8(0), 255), (0, 0, 255), (255, 0, 254), (255, 255, 1),
                                                         (0, 255, 1), (255, 255, 0), (0, 255, 0)] {
            for zeroPoint in [0, 255] {
                for k in [3, 5] {
                    try check(.uint8, k: k, inputByte: inputByte, zeroPoint: zeroPoint, filterByte: filterByte,
                              filterZeroPoint: filterZeroPoint)
                }
            }
        }
    }

    /// A uint8 filter whose blocks of 16 channels alternate between weights that fit a signed
    /// byte (one `vpdpbusd` per tap row) and weights that do not (two): each block in its own
    /// form, the output the reference's, whole and in tiles that cut across the blocks.
    func testUInt8BlocksSplitOrNot() throws {
        var rng = KernelTestRandom(seed: 35)
        let channels = 75, zeroPoint = 119
        for (k, stride) in [(3, 1), (3, 2), (5, 1), (5, 2)] {
            let op = QuantizedOperatorHarness(type: .uint8, rng: &rng)
            let input = op.activation([1, 7, 9, channels])
            var filter = op.weights([1, k, k, channels], perChannel: false, dimension: 3, zeroPoint: zeroPoint)
            // Blocks 0, 2, 4: bytes in 64...191 (weights −55...72); blocks 1 and 3: the whole byte range.
            for i in filter.bytes.indices where (i % channels / 16) % 2 == 0 {
                filter.bytes[i] = 64 + filter.bytes[i] % 128
            }
            let bias = op.bias(channels, input: input, filter: filter)
            let output = op.output()
            let options = DepthwiseConv2DOptions(padding: .same, strideWidth: stride, strideHeight: stride, dilationWidth: 1,
                                                 dilationHeight: 1, depthMultiplier: 1, activation: .relu6)
            #if SWIFTLITE_AVX512VNNI || SWIFTLITE_AVX2
            if KernelSelection.runsVNNI {
                let prepared = try PreparedQuantizedOperator(.depthwiseConv2D, .depthwiseConv2D(options), inputs: [input, filter, bias],
                                                             output: output)
                defer { prepared.deallocate() }
                let kernel = try XCTUnwrap(prepared.kernel as? DepthwiseConv2DTapRows)
                XCTAssertEqual(kernel.products, .vnniHalves)
                XCTAssertEqual(kernel.splitBlocks, [false, true, false, true, false])
            }
            #endif
            let result = try op.run(.depthwiseConv2D, .depthwiseConv2D(options), inputs: [input, filter, bias], output: output)
            let expected = reference(op, input: input, filter: filter, bias: bias, output: output, options: options, outputShape: result.shape)
            XCTAssertEqual(result.bytes, expected, "\(k)×\(k), stride \(stride)")
            let split = try runSplit(input: input, filter: filter, bias: bias, output: output, options: options, rng: &rng)
            XCTAssertEqual(split, expected, "rows and channels split between workers, \(k)×\(k), stride \(stride)")
        }
    }

    /// Builds with AVX-512 VNNI or AVX2 prepare the micro-kernel for int8 3×3 filters with
    /// multiplier 1 (and 5×5 ones where the VNNI row runs), the generic kernel otherwise.
    func testKernelSelection() throws {
        var rng = KernelTestRandom(seed: 33)
        func kernelName(type: DataType, multiplier: Int, k: Int) throws -> String {
            let op = QuantizedOperatorHarness(type: type, rng: &rng)
            let input = op.activation([1, 5, 5, 4])
            let filter = op.weights([1, k, k, 4 * multiplier], perChannel: type == .int8, dimension: 3)
            let bias = op.bias(4 * multiplier, input: input, filter: filter)
            let options = DepthwiseConv2DOptions(padding: .same, strideWidth: 1, strideHeight: 1, dilationWidth: 1,
                                                 dilationHeight: 1, depthMultiplier: multiplier, activation: .none)
            let prepared = try PreparedQuantizedOperator(.depthwiseConv2D, .depthwiseConv2D(options), inputs: [input, filter, bias],
                                                         output: op.output())
            defer { prepared.deallocate() }
            return String(describing: Swift.type(of: prepared.kernel))
        }
        let fast = try kernelName(type: .int8, multiplier: 1, k: 3)
        XCTAssertEqual(fast, DepthwiseConv2D.buildsTapRows ? "DepthwiseConv2DTapRows" : "DepthwiseConv2DQuantized")
        XCTAssertEqual(try kernelName(type: .int8, multiplier: 2, k: 3), "DepthwiseConv2DQuantized")
        XCTAssertEqual(try kernelName(type: .int8, multiplier: 1, k: 5),
                       DepthwiseConv2D.buildsTapRows ? "DepthwiseConv2DTapRows" : "DepthwiseConv2DQuantized")
        XCTAssertEqual(try kernelName(type: .int8, multiplier: 1, k: 7), "DepthwiseConv2DQuantized")
        XCTAssertEqual(try kernelName(type: .uint8, multiplier: 1, k: 3),
                       DepthwiseConv2D.buildsTapRows ? "DepthwiseConv2DTapRows" : "DepthwiseConv2DQuantized")
        XCTAssertEqual(try kernelName(type: .uint8, multiplier: 2, k: 3), "DepthwiseConv2DQuantized")
    }

    /// How the micro-kernel takes uint8 products: signed bytes, split in two halves where they
    /// need nine bits, on VNNI, unless a weight is 255 (filter byte 255, zero point 0), which only
    /// int16 pairs hold.
    func testUInt8ProductForms() throws {
        #if SWIFTLITE_AVX512VNNI || SWIFTLITE_AVX2
        var rng = KernelTestRandom(seed: 34)
        func products(k: Int, zeroPoint: Int, lastByte: UInt8) throws -> DepthwiseConv2DTapRows.Products? {
            let op = QuantizedOperatorHarness(type: .uint8, rng: &rng)
            let input = op.activation([1, 5, 5, 4])
            var filter = op.weights([1, k, k, 4], perChannel: false, dimension: 3, zeroPoint: zeroPoint)
            filter.bytes = filter.bytes.map { min($0, 254) }
            filter.bytes[filter.bytes.count - 1] = lastByte
            let bias = op.bias(4, input: input, filter: filter)
            let options = DepthwiseConv2DOptions(padding: .same, strideWidth: 1, strideHeight: 1, dilationWidth: 1,
                                                 dilationHeight: 1, depthMultiplier: 1, activation: .none)
            let prepared = try PreparedQuantizedOperator(.depthwiseConv2D, .depthwiseConv2D(options), inputs: [input, filter, bias],
                                                         output: op.output())
            defer { prepared.deallocate() }
            return (prepared.kernel as? DepthwiseConv2DTapRows)?.products
        }
        #if SWIFTLITE_AVX512VNNI
        let pairs: DepthwiseConv2DTapRows.Products? = nil
        #else
        let pairs: DepthwiseConv2DTapRows.Products? = .pairs
        #endif
        let halves = KernelSelection.runsVNNI ? DepthwiseConv2DTapRows.Products.vnniHalves : pairs
        XCTAssertEqual(try products(k: 3, zeroPoint: 0, lastByte: 254), halves)
        XCTAssertEqual(try products(k: 3, zeroPoint: 255, lastByte: 0), halves)
        XCTAssertEqual(try products(k: 3, zeroPoint: 1, lastByte: 255), halves)
        XCTAssertEqual(try products(k: 3, zeroPoint: 0, lastByte: 255), pairs)
        XCTAssertEqual(try products(k: 5, zeroPoint: 119, lastByte: 200), halves)
        XCTAssertEqual(try products(k: 5, zeroPoint: 0, lastByte: 255), pairs)
        #endif
    }

    // MARK: Helpers

    /// The micro-kernel's output with each batch cut into random tiles (rows in parts of 1–3,
    /// channels in parts of 16–48), run in random order by three workers with separate scratch;
    /// other kernels run whole.
    private func runSplit(input: QuantizedOperand, filter: QuantizedOperand, bias: QuantizedOperand, output: QuantizedOperand,
                          options: DepthwiseConv2DOptions, rng: inout KernelTestRandom) throws -> [UInt8] {
        let prepared = try PreparedQuantizedOperator(.depthwiseConv2D, .depthwiseConv2D(options), inputs: [input, filter, bias],
                                                     output: output)
        defer { prepared.deallocate() }
        let kernel = prepared.kernel, shape = prepared.outputShape, workers = PreparedQuantizedOperator.workers
        return prepared.run { memory in
            #if SWIFTLITE_AVX512VNNI || SWIFTLITE_AVX2
            guard let tiled = kernel as? DepthwiseConv2DTapRows else {
                kernel.eval(memory)
                return
            }
            func cuts(_ count: Int, _ sizes: ClosedRange<Int>, by unit: Int) -> [Range<Int>] {
                var parts = [Range<Int>](), start = 0
                while start < count {
                    let end = min(count, start + unit * Int.random(in: sizes, using: &rng))
                    parts.append(start ..< end)
                    start = end
                }
                return parts
            }
            var tiles = [(rows: Range<Int>, channels: Range<Int>, batch: Int)]()
            for batch in 0 ..< shape[0] {
                for rows in cuts(shape[1], 1 ... 3, by: 1) {
                    for channels in cuts(shape[3], 1 ... 3, by: 16) { tiles.append((rows, channels, batch)) }
                }
            }
            tiles.shuffle(using: &rng)
            for (i, tile) in tiles.enumerated() {
                tiled.evalTile(rows: tile.rows, columns: tile.channels, step: tile.batch, worker: i % workers, memory: memory)
            }
            #else
            kernel.eval(memory)
            #endif
        }
    }

    /// `DepthwiseConvPerChannel` (uint8: `DepthwiseConv`) with multiplier 1, one output at a time.
    private func reference(_ op: QuantizedOperatorHarness, input: QuantizedOperand, filter: QuantizedOperand, bias: QuantizedOperand,
                           output: QuantizedOperand, options: DepthwiseConv2DOptions, outputShape: [Int]) -> [UInt8] {
        let (n, h, w, channels) = (input.shape[0], input.shape[1], input.shape[2], input.shape[3])
        let (oh, ow) = (outputShape[1], outputShape[2])
        let k = filter.shape[1]
        let padTop = WindowGeometry(padding: options.padding, input: h, filter: k, stride: options.strideHeight,
                                    dilation: options.dilationHeight).paddingBefore
        let padLeft = WindowGeometry(padding: options.padding, input: w, filter: k, stride: options.strideWidth,
                                     dilation: options.dilationWidth).paddingBefore
        let multipliers = op.multipliers(input: input, filter: filter, output: output, channels: channels)
        let range = op.clampRange(options.activation, output: output)
        var result = [UInt8]()
        for b in 0 ..< n {
            for oy in 0 ..< oh {
                for ox in 0 ..< ow {
                    for c in 0 ..< channels {
                        var acc: Int32 = 0
                        for ky in 0 ..< k {
                            for kx in 0 ..< k {
                                let iy = oy * options.strideHeight - padTop + ky * options.dilationHeight
                                let ix = ox * options.strideWidth - padLeft + kx * options.dilationWidth
                                guard iy >= 0, iy < h, ix >= 0, ix < w else { continue }
                                let x = input.value(((b * h + iy) * w + ix) * channels + c) - input.zeroPoint
                                let weight = filter.value((ky * k + kx) * channels + c) - (op.type == .uint8 ? filter.zeroPoint : 0)
                                acc &+= weight &* x
                            }
                        }
                        result.append(op.requantize(acc &+ bias.int32(c), multipliers[c], output: output, range: range))
                    }
                }
            }
        }
        return result
    }
}
