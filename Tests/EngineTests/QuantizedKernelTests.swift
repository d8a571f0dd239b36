import XCTest

@testable import Engine
#if SWIFTLITE_AVX2 && !SWIFTLITE_AVX512VNNI
import SIMDKernels
#endif

/// The integer CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED kernels against plain scalar
/// transcriptions of TFLite's reference loops, over edge shapes (channels below, at and above
/// the 16-lane width and past the 64-column tile; 1×1 direct and im2col paths; row counts that
/// leave a partial 4-row tile; output rows that leave a partial 4-pixel depthwise step), plus the prepare-time rules the golden fixtures cannot reach.
final class QuantizedKernelTests: XCTestCase {
    // MARK: CONV_2D

    func testConvolutionMatchesReferenceLoops() throws {
        var rng = KernelTestRandom(seed: 11)
        let windows: [(k: (Int, Int), stride: Int, dilation: Int, padding: Padding)] = [
            ((1, 1), 1, 1, .valid), ((1, 1), 2, 1, .same), ((3, 3), 1, 1, .same), ((3, 3), 2, 1, .valid),
            ((2, 3), 1, 2, .same),
        ]
        for type in [DataType.uint8, .int8] {
            for (cin, cout) in [(1, 15), (3, 16), (16, 17), (17, 33), (4, 1), (5, 70)] {
                for window in windows {
                    let batches = cout == 17 ? 2 : 1
                    let op = QuantizedOperatorHarness(type: type, rng: &rng)
                    let input = op.activation([batches, 5, 7, cin])
                    let filter = op.weights([cout, window.k.0, window.k.1, cin], perChannel: type == .int8 && cout > 1, dimension: 0)
                    let bias = op.bias(cout, input: input, filter: filter)
                    let output = op.output()
                    let options = Conv2DOptions(padding: window.padding, strideWidth: window.stride, strideHeight: window.stride,
                                                dilationWidth: window.dilation, dilationHeight: window.dilation, activation: .relu6)
                    let result = try op.run(.conv2D, .conv2D(options), inputs: [input, filter, bias], output: output)
                    let expected = referenceConvolution(op, input: input, filter: filter, bias: bias, output: output,
                                                        options: options, outputShape: result.shape)
                    XCTAssertEqual(result.bytes, expected, "\(type) \(cin)→\(cout) \(window)")
                }
            }
        }
    }

    /// Patches copied a filter row at a time for pixels whose windows lie inside the image: rows
    /// of 17–31 bytes (two overlapping 16-byte copies), exactly 32, and longer ones that end in
    /// an overlapping 32-byte copy; a 7 × 7 / 2 stem on three channels (21-byte rows), strided
    /// 1 × 1 layers, images wide enough for runs of several such pixels beside padded ones.
    func testConvolutionPatchRowsMatchReferenceLoops() throws {
        var rng = KernelTestRandom(seed: 14)
        let cases: [(cin: Int, cout: Int, k: (Int, Int), stride: Int, padding: Padding, size: (Int, Int))] = [
            (3, 8, (7, 7), 2, .same, (17, 19)), (3, 16, (7, 7), 2, .valid, (15, 16)), (7, 5, (3, 3), 1, .same, (6, 9)),
            (32, 20, (1, 1), 2, .valid, (7, 8)), (16, 33, (1, 2), 1, .same, (5, 6)), (23, 17, (3, 3), 2, .same, (9, 10)),
            (11, 3, (3, 3), 1, .valid, (5, 12)),
        ]
        for type in [DataType.uint8, .int8] {
            for c in cases {
                let op = QuantizedOperatorHarness(type: type, rng: &rng)
                let input = op.activation([1, c.size.0, c.size.1, c.cin])
                let filter = op.weights([c.cout, c.k.0, c.k.1, c.cin], perChannel: type == .int8, dimension: 0)
                let bias = op.bias(c.cout, input: input, filter: filter)
                let output = op.output()
                let options = Conv2DOptions(padding: c.padding, strideWidth: c.stride, strideHeight: c.stride,
                                            dilationWidth: 1, dilationHeight: 1, activation: .none)
                let result = try op.run(.conv2D, .conv2D(options), inputs: [input, filter, bias], output: output)
                let expected = referenceConvolution(op, input: input, filter: filter, bias: bias, output: output,
                                                    options: options, outputShape: result.shape)
                XCTAssertEqual(result.bytes, expected, "\(type) \(c)")
            }
        }
    }

    // MARK: DEPTHWISE_CONV_2D

    func testDepthwiseConvolutionMatchesReferenceLoops() throws {
        var rng = KernelTestRandom(seed: 12)
        let windows: [(k: Int, stride: Int, dilation: Int, padding: Padding)] = [
            (3, 1, 1, .same), (3, 2, 1, .valid), (5, 2, 1, .same), (3, 1, 2, .same), (1, 1, 1, .valid),
        ]
        for type in [DataType.uint8, .int8] {
            for (channels, multiplier) in [(1, 1), (3, 2), (15, 1), (16, 1), (17, 1), (8, 2), (33, 1), (11, 3)] {
                for window in windows {
                    let op = QuantizedOperatorHarness(type: type, rng: &rng)
                    let input = op.activation([channels == 17 ? 2 : 1, 6, channels == 33 ? 11 : 5, channels])
                    let filter = op.weights([1, window.k, window.k, channels * multiplier],
                                            perChannel: type == .int8 && channels != 16, dimension: 3)
                    let bias = op.bias(channels * multiplier, input: input, filter: filter)
                    let output = op.output()
                    let options = DepthwiseConv2DOptions(padding: window.padding, strideWidth: window.stride, strideHeight: window.stride,
                                                         dilationWidth: window.dilation, dilationHeight: window.dilation,
                                                         depthMultiplier: multiplier, activation: .relu)
                    let result = try op.run(.depthwiseConv2D, .depthwiseConv2D(options), inputs: [input, filter, bias], output: output)
                    let expected = referenceDepthwise(op, input: input, filter: filter, bias: bias, output: output,
                                                      options: options, outputShape: result.shape)
                    XCTAssertEqual(result.bytes, expected, "\(type) \(channels)×\(multiplier) \(window)")
                }
            }
        }
    }

    // MARK: FULLY_CONNECTED

    func testFullyConnectedMatchesReferenceLoops() throws {
        var rng = KernelTestRandom(seed: 13)
        for (type, perChannel) in [(DataType.uint8, false), (.int8, false), (.int8, true)] {
            for (batches, depth, units) in [(1, 1, 1), (1, 16, 35), (3, 17, 16), (5, 40, 33), (2, 3, 64)] {
                let op = QuantizedOperatorHarness(type: type, rng: &rng)
                let input = op.activation([batches, depth])
                let weights = op.weights([units, depth], perChannel: perChannel, dimension: 0,
                                         zeroPoint: perChannel ? 0 : nil)
                let bias = op.bias(units, input: input, filter: weights)
                let output = op.output()
                let options = FullyConnectedOptions(activation: .reluN1To1, weightsFormat: 0, keepNumDims: false)
                let result = try op.run(.fullyConnected, .fullyConnected(options), inputs: [input, weights, bias], output: output)
                let expected = referenceFullyConnected(op, input: input, weights: weights, bias: bias, output: output,
                                                       activation: options.activation, batches: batches)
                XCTAssertEqual(result.bytes, expected, "\(type) per-channel \(perChannel) \(batches)×\(depth)→\(units)")
            }
        }
    }

    // MARK: ADD and SUB

    /// The same-shape vector path of 8-bit ADD and SUB against the per-element table path, over
    /// random zero points, scales (equal ones included: a multiplier of exactly 0.5) and clamp
    /// ranges, at lengths below, at and above the 16-lane width and the 64-element step.
    func testAdditiveElementwiseMatchesTablePath() {
        var rng = KernelTestRandom(seed: 23)
        let lengths = [1, 7, 15, 16, 17, 31, 32, 47, 63, 64, 65, 129, 300, 1001]
        for trial in 0 ..< 60 {
            let count = lengths[trial % lengths.count], subtract = trial % 3 == 1
            checkAdditiveElementwise(Int8.self, count: count, subtract: subtract, equalScales: trial % 7 == 0, rng: &rng)
            checkAdditiveElementwise(UInt8.self, count: count, subtract: subtract, equalScales: trial % 7 == 0, rng: &rng)
        }
    }

    /// The vector path against the table path for every pair of operand bytes (65 536 elements),
    /// over random scales, zero points and clamp ranges, equal scales among them.
    func testAdditiveElementwiseMatchesTablePathForEveryPair() {
        var rng = KernelTestRandom(seed: 29)
        for trial in 0 ..< 6 {
            let subtract = trial % 3 == 2, equal = trial % 3 == 1
            checkAdditiveElementwise(Int8.self, count: 1 << 16, subtract: subtract, equalScales: equal, everyPair: true, rng: &rng)
            checkAdditiveElementwise(UInt8.self, count: 1 << 16, subtract: subtract, equalScales: equal, everyPair: true, rng: &rng)
        }
    }

    /// The vector path against the table path for every pair of operand bytes, with the one
    /// operand's multiplier ½ (as `AdditiveQuantized.prepare` makes one of them) and the other's at
    /// the ends of what TFLite's `QuantizeMultiplierSmallerThanOneExp` gives (0, 2^30, 2^31 − 1,
    /// low bits set; shifting right by 0...31), on either side, with and without a clamp at the
    /// output's zero point (a fused ReLU, where the loops may skip telling negative sums apart).
    func testAdditiveElementwiseMatchesTablePathAtMultiplierEdges() {
        let half = QuantizedMultiplier(multiplier: 1 << 30, shift: 0)
        let others = [half, QuantizedMultiplier(multiplier: 0, shift: 0),
                      QuantizedMultiplier(multiplier: .max, shift: 0), QuantizedMultiplier(multiplier: .max, shift: -31),
                      QuantizedMultiplier(multiplier: 1 << 30, shift: -31), QuantizedMultiplier(multiplier: (1 << 30) | 0x7FF, shift: -1),
                      QuantizedMultiplier(multiplier: 1_717_986_918, shift: -3), QuantizedMultiplier(multiplier: 1_300_000_001, shift: -12)]
        // 2 · 0.1 / (2^20 · 0.02): a one-shift output stage, which the vector loops need.
        let output = QuantizedMultiplier.smallerThanOneExp(2 * 0.1 / (Double(1 << 20) * 0.02))!
        for (index, other) in others.enumerated() {
            let (lhs, rhs) = index % 2 == 0 ? (half, other) : (other, half)
            for subtract in [false, true] {
                for relu in [false, true] {
                    checkEveryPair(Int8.self, lhs: lhs, rhs: rhs, output: output, zeroPoints: (-128, 127, 3), subtract: subtract,
                                   minimum: relu ? 3 : nil)
                    checkEveryPair(UInt8.self, lhs: rhs, rhs: lhs, output: output, zeroPoints: (255, 0, 128), subtract: subtract,
                                   minimum: relu ? 128 : nil)
                }
            }
        }
    }

    /// Sums whose rescaling to the output lands exactly on −½ (before the zero point), which
    /// TFLite rounds away from zero to −1: the other operand rescales to `2 (v − zp)` and the
    /// output halves, so a sum of −2 is one. With the clamp one below the zero point that −1
    /// is stored; a loop that skipped the correction for negative products there would store 0.
    func testAdditiveElementwiseRoundsNegativeHalvesAwayFromZero() {
        let half = QuantizedMultiplier(multiplier: 1 << 30, shift: 0)
        let other = QuantizedMultiplier(multiplier: 1 << 30, shift: -18)
        let output = QuantizedMultiplier(multiplier: 1 << 30, shift: -1)
        for subtract in [false, true] {
            for below in [1, 0] as [Int32] {
                checkEveryPair(Int8.self, lhs: half, rhs: other, output: output, zeroPoints: (5, -7, 10), subtract: subtract,
                               minimum: 10 - below)
                checkEveryPair(UInt8.self, lhs: other, rhs: half, output: output, zeroPoints: (200, 3, 100), subtract: subtract,
                               minimum: 100 - below)
            }
        }
    }

    #if SWIFTLITE_AVX2 && !SWIFTLITE_AVX512VNNI
    /// The AVX2 loop's rescaling of an operand in 32-bit lanes against the engine's scalar
    /// `MultiplyByQuantizedMultiplierSmallerThanOneExp((x − zp) · 2^20, …)` for every `x − zp`
    /// the helper takes (|v| < 2^11), every exponent 0...31 and multipliers at the ends of the
    /// range and at random. (Through a whole ADD an error of one in an operand rarely reaches the
    /// output byte, which the output's rescaling divides by about 2^19.)
    func testOperandRescalingIn32BitLanesMatchesReference() {
        var rng = KernelTestRandom(seed: 31)
        let multipliers: [Int32] = [0, 1 << 30, (1 << 30) | 0x7FF, (1 << 30) | 0x400, .max, .max - 0x7FF]
            + (0 ..< 24).map { _ in Int32.random(in: 1 << 30 ... .max, using: &rng) }
        let values = (-2047 ... 2047).map(Int32.init)
        for multiplier in multipliers {
            for exponent in 0 ... 31 {
                let reference = QuantizedMultiplier(multiplier: multiplier, shift: -exponent)
                var mismatches = 0
                for start in stride(from: 0, to: values.count, by: 16) {
                    let lanes = SIMD16<Int32>((0 ..< 16).map { values[min(start + $0, values.count - 1)] })
                    let result = SIMDKernels.QuantizedAddition.rescaled(lanes, (multiplier, Int32(exponent)))
                    for lane in 0 ..< 16 where result[lane] != multiplyByQuantizedMultiplierSmallerThanOneExp(lanes[lane] << 20, reference) {
                        mismatches += 1
                    }
                }
                XCTAssertEqual(mismatches, 0, "multiplier \(multiplier), exponent \(exponent)")
            }
        }
    }
    #endif

    private func checkEveryPair<T: FixedWidthInteger & Sendable>(_: T.Type, lhs: QuantizedMultiplier, rhs: QuantizedMultiplier,
                                                                 output: QuantizedMultiplier, zeroPoints: (Int32, Int32, Int32),
                                                                 subtract: Bool, minimum: Int32? = nil) {
        let count = 1 << 16
        let kernel = AdditiveQuantizedKernel<T>(lhs: 0, rhs: 1, output: 2, broadcast: Broadcast([count], [count])!,
                                                lhsZeroPoint: zeroPoints.0, lhsMultiplier: lhs, rhsZeroPoint: zeroPoints.1,
                                                rhsMultiplier: rhs, subtract: subtract, outputMultiplier: output,
                                                outputZeroPoint: zeroPoints.2, range: (minimum ?? Int32(T.min)) ... Int32(T.max))
        #if SWIFTLITE_AVX2
        XCTAssertNotNil(kernel.outputWide, "the vector loops run only with a one-shift output stage")
        #endif
        let x = (0 ..< count).map { T(truncatingIfNeeded: $0 & 255) }, y = (0 ..< count).map { T(truncatingIfNeeded: $0 >> 8) }
        for z in additiveResults(kernel, x, y) {
            let mismatch = (0 ..< count).first { z[$0] != kernel.combined(x[$0], y[$0]) }
            XCTAssertNil(mismatch, "\(T.self) \(subtract ? "SUB" : "ADD") multipliers \(lhs), \(rhs): first differing pair \(mismatch.map { (x[$0], y[$0]) } as Any)")
        }
    }

    /// The kernel's same-shape results for `x ⊕ y`, through the table loop (where the machine has
    /// VBMI) and through the loops that compute both rescalings.
    private func additiveResults<T: FixedWidthInteger & Sendable>(_ kernel: AdditiveQuantizedKernel<T>, _ x: [T], _ y: [T]) -> [[T]] {
        [true, false].map { readsTable in
            var z = [T](repeating: 0, count: x.count)
            x.withUnsafeBufferPointer { xs in
                y.withUnsafeBufferPointer { ys in
                    z.withUnsafeMutableBufferPointer { zs in
                        kernel.elementwise(xs.baseAddress!, ys.baseAddress!, zs.baseAddress!, count: x.count, readsTable: readsTable)
                    }
                }
            }
            return z
        }
    }

    /// `everyPair`: element `i` adds byte `i & 255` to byte `i >> 8` (with `count` 65 536: every
    /// pair once); otherwise random bytes.
    private func checkAdditiveElementwise<T: FixedWidthInteger & Sendable>(_: T.Type, count: Int, subtract: Bool, equalScales: Bool,
                                                                           everyPair: Bool = false, rng: inout KernelTestRandom) {
        // AdditiveQuantized.prepare's derivation of the three multipliers.
        let lhsScale = Float(Double.random(in: 0.001 ... 0.2, using: &rng))
        let rhsScale = equalScales ? lhsScale : Float(Double.random(in: 0.001 ... 0.2, using: &rng))
        let outputScale = Float(Double.random(in: 0.001 ... 0.4, using: &rng))
        let twiceMax = Double(2 * max(lhsScale, rhsScale))
        let lhsMultiplier = QuantizedMultiplier.smallerThanOneExp(Double(lhsScale) / twiceMax)!
        let rhsMultiplier = QuantizedMultiplier.smallerThanOneExp(Double(rhsScale) / twiceMax)!
        let outputMultiplier = QuantizedMultiplier.smallerThanOneExp(twiceMax / Double(Float(1 << AdditiveQuantized.leftShift) * outputScale))!
        func randomValue() -> Int32 { Int32.random(in: Int32(T.min) ... Int32(T.max), using: &rng) }
        let bounds = [randomValue(), randomValue()].sorted()
        let range = count % 2 == 0 ? Int32(T.min) ... Int32(T.max) : bounds[0] ... bounds[1]
        let kernel = AdditiveQuantizedKernel<T>(lhs: 0, rhs: 1, output: 2, broadcast: Broadcast([count], [count])!,
                                                lhsZeroPoint: randomValue(), lhsMultiplier: lhsMultiplier,
                                                rhsZeroPoint: randomValue(), rhsMultiplier: rhsMultiplier, subtract: subtract,
                                                outputMultiplier: outputMultiplier, outputZeroPoint: randomValue(), range: range)
        let x = (0 ..< count).map { everyPair ? T(truncatingIfNeeded: $0 & 255) : T(truncatingIfNeeded: rng.next()) }
        let y = (0 ..< count).map { everyPair ? T(truncatingIfNeeded: $0 >> 8) : T(truncatingIfNeeded: rng.next()) }
        let expected = (0 ..< count).map { kernel.combined(x[$0], y[$0]) }
        for z in additiveResults(kernel, x, y) {
            XCTAssertEqual(z, expected, "\(T.self) \(subtract ? "SUB" : "ADD") ×\(count) scales \(lhsScale), \(rhsScale) → \(outputScale), range \(range)")
        }
    }

    // MARK: Prepare-time rules

    func testRejectsQuantizationTFLiteRejects() {
        var rng = KernelTestRandom(seed: 14)
        let options = Conv2DOptions(padding: .same, strideWidth: 1, strideHeight: 1, dilationWidth: 1, dilationHeight: 1, activation: .none)
        func conv(_ op: QuantizedOperatorHarness, filter: QuantizedOperand, bias: QuantizedOperand? = nil) -> Error? {
            let input = op.activation([1, 3, 3, 4])
            let b = bias ?? op.bias(filter.shape[0], input: input, filter: filter)
            do { _ = try op.run(.conv2D, .conv2D(options), inputs: [input, filter, b], output: op.output()) } catch { return error }
            return nil
        }
        let u8 = QuantizedOperatorHarness(type: .uint8, rng: &rng)
        XCTAssertTrue("\(conv(u8, filter: u8.weights([5, 1, 1, 4], perChannel: true, dimension: 0)) as Any)".contains("per-channel quantization needs int8"))
        let badBias = QuantizedOperand(type: .int32, shape: [5], scales: [1], zeroPoints: [0], bytes: [UInt8](repeating: 0, count: 20))
        XCTAssertTrue("\(conv(u8, filter: u8.weights([5, 1, 1, 4], perChannel: false, dimension: 0), bias: badBias) as Any)".contains("bias"))
        let s8 = QuantizedOperatorHarness(type: .int8, rng: &rng)
        XCTAssertTrue("\(conv(s8, filter: s8.weights([5, 1, 1, 4], perChannel: true, dimension: 0, zeroPoint: 3)) as Any)".contains("non-zero zero points"))
        XCTAssertTrue("\(conv(s8, filter: s8.weights([5, 1, 1, 4], perChannel: true, dimension: 3)) as Any)".contains("expected 1 or 5 along dimension 0"))
    }

    // MARK: Scalar references (TFLite's reference loops, written out plainly)

    private func referenceConvolution(_ op: QuantizedOperatorHarness, input: QuantizedOperand, filter: QuantizedOperand, bias: QuantizedOperand,
                                      output: QuantizedOperand, options: Conv2DOptions, outputShape: [Int]) -> [UInt8] {
        let (n, h, w, cin) = (input.shape[0], input.shape[1], input.shape[2], input.shape[3])
        let (cout, kh, kw) = (filter.shape[0], filter.shape[1], filter.shape[2])
        let (oh, ow) = (outputShape[1], outputShape[2])
        let padTop = WindowGeometry(padding: options.padding, input: h, filter: kh, stride: options.strideHeight,
                                    dilation: options.dilationHeight).paddingBefore
        let padLeft = WindowGeometry(padding: options.padding, input: w, filter: kw, stride: options.strideWidth,
                                     dilation: options.dilationWidth).paddingBefore
        let multipliers = op.multipliers(input: input, filter: filter, output: output, channels: cout)
        let range = op.clampRange(options.activation, output: output)
        var result = [UInt8]()
        for b in 0 ..< n {
            for oy in 0 ..< oh {
                for ox in 0 ..< ow {
                    for o in 0 ..< cout {
                        var acc: Int32 = 0
                        for ky in 0 ..< kh {
                            for kx in 0 ..< kw {
                                let iy = oy * options.strideHeight - padTop + ky * options.dilationHeight
                                let ix = ox * options.strideWidth - padLeft + kx * options.dilationWidth
                                guard iy >= 0, iy < h, ix >= 0, ix < w else { continue }
                                for c in 0 ..< cin {
                                    let x = input.value(((b * h + iy) * w + ix) * cin + c) - input.zeroPoint
                                    let f = filter.value(((o * kh + ky) * kw + kx) * cin + c) - (op.type == .uint8 ? filter.zeroPoint : 0)
                                    acc &+= f &* x
                                }
                            }
                        }
                        result.append(op.requantize(acc &+ bias.int32(o), multipliers[o], output: output, range: range))
                    }
                }
            }
        }
        return result
    }

    private func referenceDepthwise(_ op: QuantizedOperatorHarness, input: QuantizedOperand, filter: QuantizedOperand, bias: QuantizedOperand,
                                    output: QuantizedOperand, options: DepthwiseConv2DOptions, outputShape: [Int]) -> [UInt8] {
        let (n, h, w, cin) = (input.shape[0], input.shape[1], input.shape[2], input.shape[3])
        let (kh, kw, cout) = (filter.shape[1], filter.shape[2], filter.shape[3])
        let multiplier = cout / cin
        let (oh, ow) = (outputShape[1], outputShape[2])
        let padTop = WindowGeometry(padding: options.padding, input: h, filter: kh, stride: options.strideHeight,
                                    dilation: options.dilationHeight).paddingBefore
        let padLeft = WindowGeometry(padding: options.padding, input: w, filter: kw, stride: options.strideWidth,
                                     dilation: options.dilationWidth).paddingBefore
        let multipliers = op.multipliers(input: input, filter: filter, output: output, channels: cout)
        let range = op.clampRange(options.activation, output: output)
        var result = [UInt8]()
        for b in 0 ..< n {
            for oy in 0 ..< oh {
                for ox in 0 ..< ow {
                    for c in 0 ..< cin {
                        for m in 0 ..< multiplier {
                            let o = c * multiplier + m
                            var acc: Int32 = 0
                            for ky in 0 ..< kh {
                                for kx in 0 ..< kw {
                                    let iy = oy * options.strideHeight - padTop + ky * options.dilationHeight
                                    let ix = ox * options.strideWidth - padLeft + kx * options.dilationWidth
                                    guard iy >= 0, iy < h, ix >= 0, ix < w else { continue }
                                    let x = input.value(((b * h + iy) * w + ix) * cin + c) - input.zeroPoint
                                    let f = filter.value((ky * kw + kx) * cout + o) - (op.type == .uint8 ? filter.zeroPoint : 0)
                                    acc &+= f &* x
                                }
                            }
                            result.append(op.requantize(acc &+ bias.int32(o), multipliers[o], output: output, range: range))
                        }
                    }
                }
            }
        }
        return result
    }

    private func referenceFullyConnected(_ op: QuantizedOperatorHarness, input: QuantizedOperand, weights: QuantizedOperand, bias: QuantizedOperand,
                                         output: QuantizedOperand, activation: FusedActivation, batches: Int) -> [UInt8] {
        let (units, depth) = (weights.shape[0], weights.shape[1])
        let range = op.clampRange(activation, output: output)
        var result = [UInt8]()
        for b in 0 ..< batches {
            for u in 0 ..< units {
                var acc: Int32 = 0
                for d in 0 ..< depth {
                    let wz = weights.scales.count > 1 ? 0 : weights.zeroPoint
                    acc &+= (weights.value(u * depth + d) - wz) &* (input.value(b * depth + d) - input.zeroPoint)
                }
                acc &+= bias.int32(u)
                let filterScale = weights.scales.count > 1 ? weights.scales[u] : weights.scales[0]
                let scale = Double(input.scales[0]) * Double(filterScale) / Double(output.scales[0])
                let scaled = (Double(acc) * scale).rounded(.toNearestOrAwayFromZero)
                let q = Int32(scaled) &+ output.zeroPoint
                result.append(UInt8(truncatingIfNeeded: min(max(q, range.min), range.max)))
            }
        }
        return result
    }
}

/// One quantized tensor for the harness: its type, shape, quantization and (for inputs and
/// constants) bytes.
struct QuantizedOperand {
    var type: DataType
    var shape: [Int]
    var scales: [Float]
    var zeroPoints: [Int]
    var dimension = 0
    var bytes: [UInt8]

    var zeroPoint: Int32 { Int32(zeroPoints[0]) }

    /// Element `i` as an integer of the tensor's own type (uint8 or int8).
    func value(_ i: Int) -> Int32 { type == .int8 ? Int32(Int8(bitPattern: bytes[i])) : Int32(bytes[i]) }

    func int32(_ i: Int) -> Int32 {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: i * 4, as: Int32.self) }
    }
}

/// Makes random operands of one quantized operator, prepares the operator with the engine's
/// own `prepare`, runs it on fresh memory and returns the output bytes and shape.
final class QuantizedOperatorHarness {
    let type: DataType
    private var rng: KernelTestRandom

    init(type: DataType, rng: inout KernelTestRandom) {
        self.type = type
        self.rng = KernelTestRandom(seed: rng.next())
    }

    private var range: ClosedRange<Int> { type == .int8 ? -128 ... 127 : 0 ... 255 }

    private func randomBytes(_ count: Int) -> [UInt8] {
        (0 ..< count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    func activation(_ shape: [Int]) -> QuantizedOperand {
        let zeroPoint = type == .int8 ? -17 : 140
        return QuantizedOperand(type: type, shape: shape, scales: [0.02], zeroPoints: [zeroPoint],
                       bytes: randomBytes(shape.reduce(1, *)))
    }

    /// Weights with per-tensor or per-channel scales along `dimension`; uint8 weights get a
    /// non-zero zero point unless one is given.
    func weights(_ shape: [Int], perChannel: Bool, dimension: Int, zeroPoint: Int? = nil) -> QuantizedOperand {
        let count = perChannel ? shape[dimension] : 1
        let scales = (0 ..< count).map { i in Float(0.004 + 0.003 * Double(i % 5)) }
        let zp = zeroPoint ?? (type == .uint8 ? 119 : 0)
        return QuantizedOperand(type: type, shape: shape, scales: scales, zeroPoints: Array(repeating: zp, count: count),
                       dimension: perChannel ? dimension : 0, bytes: randomBytes(shape.reduce(1, *)))
    }

    func bias(_ count: Int, input: QuantizedOperand, filter: QuantizedOperand) -> QuantizedOperand {
        let values = (0 ..< count).map { _ in Int32(truncatingIfNeeded: rng.next() % 4001) - 2000 }
        let scale = Float(input.scales[0] * filter.scales[0])
        return QuantizedOperand(type: .int32, shape: [count], scales: [scale], zeroPoints: [0],
                       bytes: values.withUnsafeBytes { Array($0) })
    }

    func output() -> QuantizedOperand {
        QuantizedOperand(type: type, shape: [1], scales: [0.05], zeroPoints: [type == .int8 ? 5 : 120], bytes: [])
    }

    func multipliers(input: QuantizedOperand, filter: QuantizedOperand, output: QuantizedOperand, channels: Int) -> [QuantizedMultiplier] {
        if type == .uint8 {
            let m = QuantizedMultiplier.perTensorConvolution(inputScale: input.scales[0], filterScale: filter.scales[0],
                                                            outputScale: output.scales[0])!
            return Array(repeating: m, count: channels)
        }
        return QuantizedMultiplier.perChannel(inputScale: input.scales[0], filterScales: filter.scales,
                                              outputScale: output.scales[0], channelCount: channels)
    }

    func clampRange(_ activation: FusedActivation, output: QuantizedOperand) -> (min: Int32, max: Int32) {
        type == .int8
            ? quantizedActivationRange(activation, scale: output.scales[0], zeroPoint: output.zeroPoint, outputType: Int8.self)!
            : quantizedActivationRange(activation, scale: output.scales[0], zeroPoint: output.zeroPoint, outputType: UInt8.self)!
    }

    func requantize(_ acc: Int32, _ m: QuantizedMultiplier, output: QuantizedOperand, range: (min: Int32, max: Int32)) -> UInt8 {
        let q = multiplyByQuantizedMultiplier(acc, m) &+ output.zeroPoint
        return UInt8(truncatingIfNeeded: min(max(q, range.min), range.max))
    }

    func run(_ op: BuiltinOperator, _ options: OperatorOptions, inputs: [QuantizedOperand], output: QuantizedOperand) throws -> (bytes: [UInt8], shape: [Int]) {
        let prepared = try PreparedQuantizedOperator(op, options, inputs: inputs, output: output)
        defer { prepared.deallocate() }
        return (prepared.run { prepared.kernel.eval($0) }, prepared.outputShape)
    }
}
