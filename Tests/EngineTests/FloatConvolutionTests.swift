import XCTest
@testable import Engine
import TestSupport

/// The float convolution fast paths against their plain scalar references: every CONV_2D layout
/// (pointwise, in place, im2col; batches, padding, strides, dilation) and depthwise windows that
/// cross every edge of the input, with channels below, at and above the vector width.
final class FloatConvolutionTests: XCTestCase {
    /// One convolution through `Conv2DFloat32.convolve` and its scalar reference.
    private func checkConv(batches: Int = 1, input: (Int, Int), channels: Int, filter: (Int, Int), outputChannels: Int,
                           stride: (Int, Int), dilation: (Int, Int) = (1, 1), padding: Padding, bias: Bool = true,
                           im2col: Bool? = nil, file: StaticString = #filePath, line: UInt = #line) {
        let rows = WindowGeometry(padding: padding, input: input.0, filter: filter.0, stride: stride.0, dilation: dilation.0)
        let cols = WindowGeometry(padding: padding, input: input.1, filter: filter.1, stride: stride.1, dilation: dilation.1)
        let g = Conv2D.Geometry(
            batches: batches, inputHeight: input.0, inputWidth: input.1, inputChannels: channels,
            outputHeight: rows.outputSize, outputWidth: cols.outputSize, outputChannels: outputChannels,
            filterHeight: filter.0, filterWidth: filter.1, strideHeight: stride.0, strideWidth: stride.1,
            dilationHeight: dilation.0, dilationWidth: dilation.1, padTop: rows.paddingBefore, padLeft: cols.paddingBefore)
        if let im2col {
            XCTAssertEqual(Conv2DFloat32.copiesPatches(g), im2col, "rows of \(g.outputWidth) pixels", file: file, line: line)
        }
        var values = SeededFloats(state: UInt64(input.0 * 1000 + channels * 10 + outputChannels))
        let source = values.array(batches * input.0 * input.1 * channels)
        let weights = values.array(outputChannels * g.patchSize), biases = values.array(outputChannels)
        let kernel = weights.withUnsafeBufferPointer { w in
            biases.withUnsafeBufferPointer { Conv2DFloat32(geometry: g, filter: w, bias: bias ? $0 : nil, range: 0 ... 6) }
        }
        let count = batches * g.outputHeight * g.outputWidth * outputChannels
        var expected = [Float](repeating: 0, count: count), actual = expected
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: max(kernel.scratchBytes, 4), alignment: 64)
        defer { scratch.deallocate() }
        biases.withUnsafeBufferPointer { kernel.reference(source, &expected, filter: weights, bias: bias ? $0.baseAddress : nil) }
        kernel.convolve(source, &actual, scratch: scratch.bindMemory(to: Float.self, capacity: max(kernel.scratchBytes, 4) / 4))
        assertClose(actual, expected, scale: expected.map { _ in Float(g.patchSize) },
                    "conv \(input)×\(channels) filter \(filter) stride \(stride) dilation \(dilation) \(padding) → \(outputChannels) (\(kernel.layout))",
                    file: file, line: line)
    }

    func testConvolutionLayoutsMatchReference() {
        // Pointwise, including two batches in one product.
        checkConv(batches: 2, input: (5, 6), channels: 3, filter: (1, 1), outputChannels: 17, stride: (1, 1), padding: .valid)
        // In place, unpadded (VALID) and padded (SAME, before and after), strided, dilated in height.
        checkConv(input: (9, 14), channels: 5, filter: (3, 3), outputChannels: 24, stride: (1, 1), padding: .valid, im2col: false)
        checkConv(batches: 2, input: (9, 25), channels: 3, filter: (3, 3), outputChannels: 32, stride: (2, 2), padding: .same, im2col: false)
        checkConv(input: (8, 8), channels: 4, filter: (3, 3), outputChannels: 40, stride: (1, 1), padding: .same, bias: false)
        checkConv(input: (10, 27), channels: 2, filter: (2, 3), outputChannels: 9, stride: (3, 2), padding: .same, im2col: false)
        checkConv(input: (12, 9), channels: 3, filter: (3, 2), outputChannels: 16, stride: (1, 1), dilation: (2, 1), padding: .same)
        // A strided 1×1 is not pointwise: it copies its pixels out, one product over all of them.
        checkConv(input: (7, 15), channels: 8, filter: (1, 1), outputChannels: 8, stride: (2, 2), padding: .valid, im2col: true)
        checkConv(input: (28, 27), channels: 64, filter: (1, 1), outputChannels: 40, stride: (2, 2), padding: .same, im2col: true)
        // Rows too short for in-place tiles (5 output pixels across): im2col, whose tiles run
        // on across rows.
        checkConv(input: (10, 10), channels: 6, filter: (3, 3), outputChannels: 40, stride: (2, 2), padding: .same, im2col: true)
        checkConv(input: (5, 5), channels: 6, filter: (3, 3), outputChannels: 17, stride: (2, 2), padding: .same, im2col: true)
        // Rows of 7 pixels: on AVX2 bands of 4 and 3 rows in place, so im2col; in place on the
        // 7-row tiles of AVX-512. Rows of 8 (4 + 4) and 16 (6 + 6 + 4) are in place on AVX2 and
        // im2col on AVX-512 (7 + 1, 7 + 7 + 2: a fifth or more of the tiles' rows unused); rows
        // of 13 (5 + 4 + 4; 7 + 6) stay in place everywhere.
        checkConv(input: (7, 7), channels: 24, filter: (3, 3), outputChannels: 40, stride: (1, 1), padding: .same,
                  im2col: FloatGEMM.tileRows == 6)
        checkConv(input: (8, 8), channels: 5, filter: (3, 3), outputChannels: 16, stride: (1, 1), padding: .same,
                  im2col: FloatGEMM.tileRows == 7)
        checkConv(input: (6, 32), channels: 8, filter: (2, 2), outputChannels: 20, stride: (2, 2), padding: .valid,
                  im2col: FloatGEMM.tileRows == 7)
        checkConv(input: (4, 13), channels: 5, filter: (3, 3), outputChannels: 16, stride: (1, 1), padding: .same, im2col: false)
        // im2col (dilated across), with chunks of several tiles.
        checkConv(input: (30, 40), channels: 3, filter: (3, 3), outputChannels: 33, stride: (1, 1), dilation: (1, 2), padding: .same)
        checkConv(input: (6, 9), channels: 70, filter: (3, 3), outputChannels: 7, stride: (2, 1), dilation: (2, 2), padding: .valid)
        // One output pixel whose window is the whole input (face_landmark's last layer): one row
        // of adjacent runs, the matrix–vector product; then one whose runs are not adjacent.
        checkConv(input: (3, 3), channels: 32, filter: (3, 3), outputChannels: 141, stride: (3, 3), padding: .valid)
        checkConv(input: (4, 4), channels: 9, filter: (3, 3), outputChannels: 45, stride: (2, 2), padding: .valid)
    }

    /// In place with padding, read from a frame of zeros around the image or with the windows
    /// that reach into the padding from their patches (`Conv2DFloat32.Padding`): both the same
    /// bytes as one product over every pixel's patch (im2col's). Padding before and after, or
    /// after only (a stride-2 stem); strides 1 to 3; dilation down; windows wider than the image
    /// (no inside column); rows taller than wide (an edge column in several products); two
    /// images; values of both signs, ±0 and ±∞ among them.
    func testPaddedInPlaceIsByteIdenticalToPatches() {
        let shapes: [(batches: Int, input: (Int, Int), channels: Int, filter: (Int, Int), stride: (Int, Int), dilation: Int, n: Int)] = [
            (1, (16, 16), 3, (3, 3), (2, 2), 1, 32), (1, (15, 17), 3, (3, 3), (2, 2), 1, 24), (2, (9, 11), 5, (3, 3), (1, 1), 1, 40),
            (1, (30, 8), 4, (3, 3), (1, 1), 1, 16), (1, (12, 14), 2, (5, 5), (1, 1), 1, 17), (1, (11, 19), 3, (7, 7), (2, 2), 1, 8),
            (1, (10, 25), 6, (3, 3), (3, 3), 1, 33), (1, (12, 10), 3, (3, 2), (1, 1), 2, 16), (1, (6, 8), 3, (3, 9), (1, 1), 1, 16),
            (1, (9, 12), 64, (3, 3), (1, 1), 1, 48),
        ]
        for shape in shapes {
            let rows = WindowGeometry(padding: .same, input: shape.input.0, filter: shape.filter.0, stride: shape.stride.0, dilation: shape.dilation)
            let cols = WindowGeometry(padding: .same, input: shape.input.1, filter: shape.filter.1, stride: shape.stride.1, dilation: 1)
            let g = Conv2D.Geometry(
                batches: shape.batches, inputHeight: shape.input.0, inputWidth: shape.input.1, inputChannels: shape.channels,
                outputHeight: rows.outputSize, outputWidth: cols.outputSize, outputChannels: shape.n,
                filterHeight: shape.filter.0, filterWidth: shape.filter.1, strideHeight: shape.stride.0, strideWidth: shape.stride.1,
                dilationHeight: shape.dilation, dilationWidth: 1, padTop: rows.paddingBefore, padLeft: cols.paddingBefore)
            let what = "\(shape)"
            var values = SeededFloats(state: UInt64(shape.input.0 * 131 + shape.channels * 7 + shape.n))
            var source = values.array(g.batches * g.inputHeight * g.inputWidth * g.inputChannels)
            for (i, special) in [Float(0), -0.0, .infinity, -.infinity].enumerated() { source[(i * 37) % source.count] = special }
            let weights = values.array(g.outputChannels * g.patchSize), bias = values.array(g.outputChannels)
            func kernel(frame: Bool) -> Conv2DFloat32 {
                weights.withUnsafeBufferPointer { w in
                    bias.withUnsafeBufferPointer {
                        Conv2DFloat32(geometry: g, filter: w, bias: $0, range: -.infinity ... .infinity, framesPadding: frame)
                    }
                }
            }
            let pixels = g.outputHeight * g.outputWidth, count = g.batches * pixels * g.outputChannels
            var expected = [Float](repeating: .nan, count: count)
            let product = kernel(frame: true)
            // Every pixel's patch by the definition (zeros in the padding), then one product.
            var patches = [Float](repeating: 0, count: pixels * g.patchSize)
            for b in 0 ..< g.batches {
                for p in 0 ..< pixels {
                    let (oy, ox) = (p / g.outputWidth, p % g.outputWidth)
                    for ky in 0 ..< g.filterHeight {
                        for kx in 0 ..< g.filterWidth {
                            let iy = oy * g.strideHeight - g.padTop + ky * g.dilationHeight, ix = ox * g.strideWidth - g.padLeft + kx
                            for i in 0 ..< g.inputChannels {
                                let inside = (0 ..< g.inputHeight).contains(iy) && (0 ..< g.inputWidth).contains(ix)
                                patches[p * g.patchSize + (ky * g.filterWidth + kx) * g.inputChannels + i] =
                                    inside ? source[((b * g.inputHeight + iy) * g.inputWidth + ix) * g.inputChannels + i] : 0
                            }
                        }
                    }
                }
                expected.withUnsafeMutableBufferPointer { out in
                    FloatGEMM.multiply(m: pixels, a: patches, lda: g.patchSize, weights: product.weights, range: product.range,
                                       c: out.baseAddress! + b * pixels * g.outputChannels, ldc: g.outputChannels)
                }
            }
            for frame in [true, false] {
                let kernel = kernel(frame: frame)
                switch (kernel.layout, frame) {
                case (.inPlace(padding: .frame), true), (.inPlace(padding: .patches), false): break
                default:
                    XCTFail("\(what): \(kernel.layout), not in place with the \(frame ? "frame" : "patches")")
                    continue
                }
                var actual = [Float](repeating: .nan, count: count)
                let scratch = UnsafeMutablePointer<Float>.allocate(capacity: kernel.scratchBytes / 4)
                defer { scratch.deallocate() }
                scratch.initialize(repeating: .nan, count: kernel.scratchBytes / 4)
                kernel.convolve(source, &actual, scratch: scratch)
                XCTAssertEqual(actual.map(\.bitPattern), expected.map(\.bitPattern), "\(what) with the \(frame ? "frame" : "patches")")
            }
        }
    }

    /// In place with padding, the cheaper of the two copies: the frame where it is no larger than
    /// the edge pixels' patches.
    func testPaddingTakesTheSmallerCopy() {
        func layout(input: (Int, Int), channels: Int, stride: Int, padding: Padding) -> Conv2DFloat32.Layout {
            let rows = WindowGeometry(padding: padding, input: input.0, filter: 3, stride: stride, dilation: 1)
            let cols = WindowGeometry(padding: padding, input: input.1, filter: 3, stride: stride, dilation: 1)
            let g = Conv2D.Geometry(batches: 1, inputHeight: input.0, inputWidth: input.1, inputChannels: channels,
                                    outputHeight: rows.outputSize, outputWidth: cols.outputSize, outputChannels: 16,
                                    filterHeight: 3, filterWidth: 3, strideHeight: stride, strideWidth: stride,
                                    dilationHeight: 1, dilationWidth: 1, padTop: rows.paddingBefore, padLeft: cols.paddingBefore)
            let weights = [Float](repeating: 1, count: 16 * g.patchSize)
            return weights.withUnsafeBufferPointer { Conv2DFloat32(geometry: g, filter: $0, bias: nil, range: 0 ... 6).layout }
        }
        // A stem: 223 edge pixels of 27 values against a frame of 225 × 225 × 3.
        guard case .inPlace(padding: .patches(let inside)) = layout(input: (224, 224), channels: 3, stride: 2, padding: .same) else {
            return XCTFail("the stem reads a frame")
        }
        XCTAssertEqual(inside.rows, 0 ..< 111)
        XCTAssertEqual(inside.columns, 0 ..< 111)
        // ResNet's 3 × 3 layers: 56 × 56 × 64 patches (220 × 576 against 58 × 58 × 64), 14 × 14 × 256 the frame.
        guard case .inPlace(padding: .patches) = layout(input: (56, 56), channels: 64, stride: 1, padding: .same) else {
            return XCTFail("56 × 56 × 64 reads a frame")
        }
        guard case .inPlace(padding: .frame(16, 16)) = layout(input: (14, 14), channels: 256, stride: 1, padding: .same) else {
            return XCTFail("14 × 14 × 256 reads patches")
        }
        guard case .inPlace(padding: nil) = layout(input: (14, 14), channels: 256, stride: 1, padding: .valid) else {
            return XCTFail("a valid window pads")
        }
    }

    /// One depthwise convolution through `DepthwiseConv2DFloat32.convolve` and its scalar reference.
    private func checkDepthwise(input: (Int, Int), channels: Int, filter: (Int, Int) = (3, 3), stride: (Int, Int),
                                dilation: (Int, Int) = (1, 1), padding: Padding, range: ClosedRange<Float> = -1 ... 1,
                                file: StaticString = #filePath, line: UInt = #line) {
        let g = DepthwiseConv2D.Geometry.oneImage(input: input, channels: channels, filter: filter, stride: stride,
                                                  dilation: dilation, padding: padding)
        var values = SeededFloats(state: UInt64(input.0 * 100 + input.1 * 10 + channels))
        let source = values.array(input.0 * input.1 * channels)
        let weights = values.array(filter.0 * filter.1 * channels), bias = values.array(channels)
        let kernel = weights.withUnsafeBufferPointer { w in
            bias.withUnsafeBufferPointer { DepthwiseConv2DFloat32(geometry: g, filter: w, bias: $0, range: range) }
        }
        var expected = [Float](repeating: 0, count: g.outputHeight * g.outputWidth * channels), actual = expected
        kernel.reference(source, &expected)
        kernel.convolve(source, &actual)
        if filter == (5, 5), dilation == (1, 1), stride.1 <= 2, channels >= 16, g.outputWidth * stride.1 <= 40 {
            XCTAssertNotNil(kernel.planes, "5×5 windows in short rows take the planes path", file: file, line: line)
        }
        assertClose(actual, expected, scale: expected.map { _ in Float(filter.0 * filter.1) },
                    "depthwise \(input)×\(channels) filter \(filter) stride \(stride) dilation \(dilation) \(padding)",
                    file: file, line: line)
    }

    func testDepthwiseMatchesReference() {
        // 12, 20, 28, 36 and 42: 2 to 4 channels past the last 8, after a group of 16 or not and
        // after the 8 of `hasTail8` or not, which go as the last 8 (`overlapsLast8`).
        for channels in [1, 8, 12, 15, 16, 17, 20, 24, 28, 31, 32, 36, 40, 42] {
            for stride in [(1, 1), (2, 2), (2, 1), (3, 3)] {
                for padding in [Padding.same, .valid] {
                    // 3×3 windows: widths with no inside pixels, fewer than four, a step of four or
                    // eight and one moved back to end at the row's end, several steps of eight.
                    for size in [(3, 3), (4, 5), (7, 7), (9, 14), (5, 23)] {
                        checkDepthwise(input: size, channels: channels, stride: stride, padding: padding)
                    }
                }
            }
        }
        // 1, 2, 4 and 8 channels at stride 1 across (`insideNarrow`): rows of 4 to 64 pixels, so
        // that steps of 32 and 8 floats and a last few pixels all occur, clamped and not.
        for channels in [1, 2, 4, 8] {
            for stride in [(1, 1), (2, 1)] {
                for size in [(4, 6), (5, 23), (6, 41), (3, 66)] {
                    checkDepthwise(input: size, channels: channels, stride: stride, padding: .same)
                    checkDepthwise(input: size, channels: channels, stride: stride, padding: .valid, range: -100 ... 100)
                }
            }
            let g = DepthwiseConv2D.Geometry.oneImage(input: (5, 23), channels: channels, filter: (3, 3), stride: (1, 1),
                                                      dilation: (1, 1), padding: .same)
            let kernel = [Float](repeating: 1, count: 9 * channels).withUnsafeBufferPointer {
                DepthwiseConv2DFloat32(geometry: g, filter: $0, bias: nil, range: -1 ... 1)
            }
            XCTAssertNotNil(kernel.narrowTaps, "\(channels) channels at stride 1 take insideNarrow")
        }
        // Shapes the 3×3 fast path leaves to the general one.
        checkDepthwise(input: (8, 9), channels: 24, filter: (3, 3), stride: (1, 1), dilation: (2, 2), padding: .same)
        checkDepthwise(input: (6, 10), channels: 17, filter: (1, 3), stride: (1, 2), padding: .valid)
        checkDepthwise(input: (1, 1), channels: 16, stride: (1, 1), padding: .same)
    }

    /// 5×5 windows (`convolvePlanes`): rows of 1 to 8 pixels a step and of several steps, the last
    /// moved back; windows past every edge (rows narrower and shorter than the window); groups
    /// in one ring pass and in several (70 channels in 14-pixel rows: two groups a pass, and the
    /// 6 channels past the last group); strides across and down; a wide range so that sums are
    /// not clamped.
    func testDepthwise5x5MatchesReference() {
        for channels in [16, 24, 25, 32, 70] {
            for stride in [(1, 1), (2, 2), (2, 1), (1, 2)] {
                for padding in [Padding.same, .valid] {
                    for size in [(1, 1), (3, 4), (5, 5), (7, 7), (9, 14), (14, 14), (6, 31)]
                    where padding == .same || min(size.0, size.1) >= 5 {
                        checkDepthwise(input: size, channels: channels, filter: (5, 5), stride: stride, padding: padding,
                                       range: -1000 ... 1000)
                    }
                }
            }
        }
        // Clamped outputs (a fused activation) and a 3×3 window at stride 3, which stays general.
        checkDepthwise(input: (14, 14), channels: 40, filter: (5, 5), stride: (1, 1), padding: .same, range: 0 ... 0.5)
        checkDepthwise(input: (9, 9), channels: 16, filter: (5, 5), stride: (3, 3), padding: .same)
        // Rows that fill the 32 KiB ring (one group of 16 channels: 100 columns of 5 rows), at
        // both strides.
        checkDepthwise(input: (7, 96), channels: 32, filter: (5, 5), stride: (1, 1), padding: .same, range: -1000 ... 1000)
        checkDepthwise(input: (7, 56), channels: 48, filter: (5, 5), stride: (2, 2), padding: .same, range: -1000 ... 1000)
        for (input, stride) in [((7, 96), (1, 1)), ((7, 56), (2, 2))] {
            let planes = DepthwiseConv2DFloat32.Planes(.oneImage(input: input, channels: 16, filter: (5, 5), stride: stride,
                                                                 dilation: (1, 1), padding: .same))
            XCTAssertEqual(planes?.groups, 1, "\(input) at stride \(stride): one group of 16 channels in the ring")
        }
        // Rows too wide for the ring stay on the general path.
        checkDepthwise(input: (6, 120), channels: 16, filter: (5, 5), stride: (2, 2), padding: .same)
        XCTAssertNil(DepthwiseConv2DFloat32.Planes(.oneImage(input: (6, 120), channels: 16, filter: (5, 5), stride: (2, 2),
                                                             dilation: (1, 1), padding: .same)))
    }

    /// The planes path in tiles (row ranges and groups of channels, as on worker threads, each
    /// with its own ring) gives the same bytes as in one piece.
    func testDepthwise5x5TilesMatchWhole() {
        // Rows whose ring (two zero columns each side, five rows of 64-byte pixels) takes half
        // the budget: two groups of the 70 channels' four per pass.
        let width = DepthwiseConv2DFloat32.Planes.budget / (2 * 5 * 64) - 4
        let g = DepthwiseConv2D.Geometry.oneImage(input: (14, width), channels: 70, filter: (5, 5), stride: (1, 1),
                                                  dilation: (1, 1), padding: .same)
        var values = SeededFloats(state: 55)
        let source = values.array(14 * width * 70), weights = values.array(25 * 70), bias = values.array(70)
        let kernel = weights.withUnsafeBufferPointer { w in
            bias.withUnsafeBufferPointer { DepthwiseConv2DFloat32(geometry: g, filter: w, bias: $0, range: -1000 ... 1000) }
        }
        XCTAssertEqual(kernel.planes?.groups, 2, "the budget holds two groups of \(width + 4)-pixel rows")
        var whole = [Float](repeating: 0, count: 14 * width * 70), tiled = whole
        kernel.convolve(source, &whole)
        let ring = UnsafeMutablePointer<Float>.allocate(capacity: kernel.planes!.bytes / 4)
        defer { ring.deallocate() }
        for rows in [0 ..< 3, 3 ..< 4, 4 ..< 11, 11 ..< 14] {
            for channels in [0 ..< 16, 16 ..< 64, 64 ..< 70] {
                // Whatever the ring held before (another tile's rows) must not leak into this one.
                ring.initialize(repeating: .nan, count: kernel.planes!.bytes / 4)
                tiled.withUnsafeMutableBufferPointer { out in
                    source.withUnsafeBufferPointer { kernel.convolve($0.baseAddress!, out.baseAddress!, rows: rows, channels: channels, ring: ring) }
                }
            }
        }
        XCTAssertEqual(whole, tiled)
    }

    /// The 3 × 3 path in tiles of channels gives the same bytes as in one piece: a tile that holds
    /// the last 8 channels computes the residue past the last 8 as the last 8 again (`overlapsLast8`),
    /// a tile of the residue alone one channel at a time (`scalarTail`), to the same bits. Values
    /// from a wide range, with ReLU6's range, so that sums round and clamp both ways.
    func testDepthwise3x3ChannelTilesMatchWhole() {
        for (channels, tiles) in [(36, [0 ..< 16, 16 ..< 32, 32 ..< 36]), (42, [0 ..< 32, 32 ..< 42]), (28, [0 ..< 16, 16 ..< 28]),
                                  (20, [0 ..< 16, 16 ..< 20])] {
            for stride in [(1, 1), (2, 2)] {
                let g = DepthwiseConv2D.Geometry.oneImage(input: (9, 13), channels: channels, filter: (3, 3), stride: stride,
                                                          dilation: (1, 1), padding: .same)
                var values = SeededFloats(state: UInt64(channels * 10 + stride.0))
                let source = values.array(9 * 13 * channels).map { $0 * 8 }, weights = values.array(9 * channels), bias = values.array(channels)
                let kernel = weights.withUnsafeBufferPointer { w in
                    bias.withUnsafeBufferPointer { DepthwiseConv2DFloat32(geometry: g, filter: w, bias: $0, range: 0 ... 6) }
                }
                XCTAssertTrue(kernel.hasFast3x3)
                let count = g.outputHeight * g.outputWidth * channels
                var whole = [Float](repeating: 0, count: count), tiled = [Float](repeating: .nan, count: count)
                kernel.convolve(source, &whole)
                var ring: Float = 0
                for rows in [0 ..< 2, 2 ..< g.outputHeight] {
                    for part in tiles {
                        tiled.withUnsafeMutableBufferPointer { out in
                            source.withUnsafeBufferPointer { kernel.convolve($0.baseAddress!, out.baseAddress!, rows: rows, channels: part, ring: &ring) }
                        }
                    }
                }
                let first = whole.indices.first { whole[$0].bitPattern != tiled[$0].bitPattern }
                XCTAssertNil(first, "\(channels) channels, stride \(stride): output \(first ?? 0) (channel \((first ?? 0) % channels))")
            }
        }
    }

    /// A depthwise layer that reads an image padded with zeros by a PAD (VALID, on the padded
    /// copy) gives the same bytes as the layer reading the image with that padding as its own
    /// (`reading(_:paddedBy:)`, what `Plan` folds the PAD into): the 3 × 3 rows at strides 1 and
    /// 2 (a channel residue), the 5 × 5 planes, the window path (stride 3), with even, one-sided
    /// and uneven paddings.
    func testDepthwiseReadingAPaddedImageMatchesThePad() {
        let cases: [(input: (Int, Int), channels: Int, filter: (Int, Int), stride: (Int, Int))] = [
            ((9, 13), 40, (3, 3), (1, 1)), ((10, 12), 28, (3, 3), (2, 2)), ((14, 14), 32, (5, 5), (1, 1)),
            ((13, 11), 24, (5, 5), (2, 2)), ((11, 10), 12, (3, 3), (3, 3)),
        ]
        let paddings = [PadKernel.ImagePadding(top: 1, bottom: 1, left: 1, right: 1), .init(top: 0, bottom: 1, left: 0, right: 1),
                        .init(top: 2, bottom: 2, left: 2, right: 2), .init(top: 1, bottom: 2, left: 0, right: 3)]
        for c in cases {
            for p in paddings {
                let (h, w) = c.input, (ph, pw) = (h + p.top + p.bottom, w + p.left + p.right)
                let g = DepthwiseConv2D.Geometry.oneImage(input: (ph, pw), channels: c.channels, filter: c.filter, stride: c.stride,
                                                          dilation: (1, 1), padding: .valid)
                var values = SeededFloats(state: UInt64(h * 100 + c.channels + p.top * 7 + p.right))
                let image = values.array(h * w * c.channels), weights = values.array(c.filter.0 * c.filter.1 * c.channels)
                let bias = values.array(c.channels)
                var padded = [Float](repeating: 0, count: ph * pw * c.channels)
                for y in 0 ..< h {
                    for x in 0 ..< w {
                        for ch in 0 ..< c.channels {
                            padded[((y + p.top) * pw + x + p.left) * c.channels + ch] = image[(y * w + x) * c.channels + ch]
                        }
                    }
                }
                let onPadded = weights.withUnsafeBufferPointer { wb in
                    bias.withUnsafeBufferPointer { DepthwiseConv2DFloat32(geometry: g, filter: wb, bias: $0, range: -3 ... 3) }
                }
                guard let folded = onPadded.reading(-1, paddedBy: p) else {
                    XCTFail("\(c) \(p): not folded")
                    continue
                }
                XCTAssertEqual(folded.geometry.inputHeight, h)
                XCTAssertEqual(folded.geometry.padLeft, p.left)
                let count = g.outputHeight * g.outputWidth * c.channels
                var expected = [Float](repeating: 0, count: count), actual = [Float](repeating: .nan, count: count)
                onPadded.convolve(padded, &expected)
                folded.convolve(image, &actual)
                let first = expected.indices.first { expected[$0].bitPattern != actual[$0].bitPattern }
                XCTAssertNil(first, "\(c) padded \(p): output \(first ?? 0) \(first.map { actual[$0] } ?? 0) against \(first.map { expected[$0] } ?? 0)")
            }
        }
    }

    /// Steps of at most `widest` pixels, as few as possible and as equal as they go.
    func testPixelsPerStep() {
        let widest = DepthwiseConv2DFloat32.widest
        for width in 1 ... 200 {
            let pixels = DepthwiseConv2DFloat32.pixelsPerStep(width: width)
            let steps = (width + pixels - 1) / pixels
            XCTAssertLessThanOrEqual(pixels, widest)
            XCTAssertEqual(steps, (width + widest - 1) / widest, "fewest steps for \(width)")
            XCTAssertLessThan(steps * pixels - width, steps, "at most one pixel per step recomputed for \(width)")
        }
        XCTAssertEqual(DepthwiseConv2DFloat32.pixelsPerStep(width: 14), min(7, widest))
    }
}

extension DepthwiseConv2D.Geometry {
    /// One image of `input` (height, width) pixels, multiplier 1, the output size and padding as
    /// TFLite computes them for `padding`.
    static func oneImage(input: (Int, Int), channels: Int, filter: (Int, Int), stride: (Int, Int), dilation: (Int, Int),
                         padding: Padding) -> DepthwiseConv2D.Geometry {
        let rows = WindowGeometry(padding: padding, input: input.0, filter: filter.0, stride: stride.0, dilation: dilation.0)
        let cols = WindowGeometry(padding: padding, input: input.1, filter: filter.1, stride: stride.1, dilation: dilation.1)
        return DepthwiseConv2D.Geometry(
            batches: 1, inputHeight: input.0, inputWidth: input.1, inputChannels: channels,
            outputHeight: rows.outputSize, outputWidth: cols.outputSize, outputChannels: channels, depthMultiplier: 1,
            filterHeight: filter.0, filterWidth: filter.1, strideHeight: stride.0, strideWidth: stride.1,
            dilationHeight: dilation.0, dilationWidth: dilation.1, padTop: rows.paddingBefore, padLeft: cols.paddingBefore)
    }
}
