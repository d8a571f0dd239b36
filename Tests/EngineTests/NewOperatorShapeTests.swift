import XCTest
@testable import Engine

/// Constant buffers made by `tensor(...)`, kept for the process (reachable, so LeakSanitizer is
/// quiet): a descriptor's constant must outlive every plan prepared from it.
nonisolated(unsafe) private var keptConstants: [UnsafeMutableRawBufferPointer] = []

/// Shapes and prepare-time errors of the operators added for real-world models, where the golden
/// models cannot reach: every bad operand is a `ModelError` naming the rule, never a crash.
final class NewOperatorShapeTests: XCTestCase {
    private func tensor(_ index: Int, _ shape: [Int], _ type: DataType = .float32, constant: [Int32]? = nil) -> TensorDescriptor {
        let data = constant.map { values -> ConstantData in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(values.count * 4, 1), alignment: 16)
            values.withUnsafeBytes { buffer.copyMemory(from: $0) }
            keptConstants.append(buffer)
            return ConstantData(bytes: UnsafeRawBufferPointer(start: buffer.baseAddress, count: values.count * 4))
        }
        return TensorDescriptor(index: index, name: "t\(index)", dataType: type, shape: shape, shapeSignature: nil,
                                quantization: nil, isVariable: false, constantData: data)
    }

    /// Prepares one operator: the first `tensors.count - outputs` tensors are its inputs, the rest
    /// its outputs; returns the outputs' shapes.
    private func prepare(_ op: BuiltinOperator, _ options: OperatorOptions, _ tensors: [TensorDescriptor], outputs: Int = 1,
                         _ prepare: (inout PrepareContext) throws(ModelError) -> any Kernel) throws -> [[Int]] {
        let inputs = tensors.count - outputs
        let node = Node(index: 7, op: op, customName: nil, version: 1, inputs: Array(0 ..< inputs),
                        outputs: Array(inputs ..< tensors.count), options: options, customOptions: nil)
        var context = PrepareContext(node: node, tensors: tensors)
        _ = try prepare(&context)
        return (inputs ..< tensors.count).map { context.tensors[$0].shape }
    }

    private func assertInvalid(_ expression: @autoclosure () throws -> [[Int]], mentions text: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try expression(), file: file, line: line) { error in
            XCTAssertTrue("\(error)".contains(text), "\(error) does not mention \(text)", file: file, line: line)
            XCTAssertTrue("\(error)".contains("operator 7"), "\(error) does not name the operator", file: file, line: line)
        }
    }

    func testShapes() throws {
        XCTAssertEqual(try prepare(.split, .split(numSplits: 2), [tensor(0, [], .int32, constant: [-1]), tensor(1, [2, 6]), tensor(2, [1]), tensor(3, [1])],
                                   outputs: 2, Split.prepare), [[2, 3], [2, 3]])
        XCTAssertEqual(try prepare(.splitV, .split(numSplits: 2), [tensor(0, [5, 2]), tensor(1, [2], .int32, constant: [-1, 2]),
                                                                   tensor(2, [], .int32, constant: [0]), tensor(3, [1]), tensor(4, [1])],
                                   outputs: 2, SplitV.prepare), [[3, 2], [2, 2]])
        XCTAssertEqual(try prepare(.transpose, .none, [tensor(0, [1, 2, 3, 4]), tensor(1, [4], .int32, constant: [0, 3, 1, 2]), tensor(2, [1])],
                                   Transpose.prepare), [[1, 4, 2, 3]])
        XCTAssertEqual(try prepare(.gather, .gather(axis: 1, batchDims: 0), [tensor(0, [2, 5, 3]), tensor(1, [2, 2], .int32, constant: [4, 0, 1, 1]),
                                                                             tensor(2, [1])], Gather.prepare), [[2, 2, 2, 3]])
        XCTAssertEqual(try prepare(.argMax, .argMinMax(outputType: .int32), [tensor(0, [2, 3, 5]), tensor(1, [1], .int32, constant: [-2]),
                                                                           tensor(2, [1], .int32)], ArgMax.prepare), [[2, 5]])
        XCTAssertEqual(try prepare(.depthToSpace, .blockSize(2), [tensor(0, [1, 2, 3, 8]), tensor(1, [1])], DepthToSpace.prepare), [[1, 4, 6, 2]])
        XCTAssertEqual(try prepare(.mirrorPad, .mirrorPad(.symmetric), [tensor(0, [2, 3]), tensor(1, [2, 2], .int32, constant: [2, 0, 3, 1]),
                                                                       tensor(2, [1])], MirrorPad.prepare), [[4, 7]])
        XCTAssertEqual(try prepare(.transposeConv, .transposeConv(TransposeConvOptions(padding: .same, strideWidth: 2, strideHeight: 2, activation: .none)),
                                   [tensor(0, [4], .int32, constant: [1, 6, 6, 4]), tensor(1, [4, 3, 3, 2], constant: Array(repeating: 0, count: 72)),
                                    tensor(2, [1, 3, 3, 2]), tensor(3, [1])], TransposeConv.prepare), [[1, 6, 6, 4]])
    }

    func testRejections() {
        assertInvalid(try prepare(.split, .split(numSplits: 4), [tensor(0, [], .int32, constant: [1]), tensor(1, [2, 6]), tensor(2, [1]), tensor(3, [1]),
                                                                 tensor(4, [1]), tensor(5, [1])], outputs: 4, Split.prepare),
                      mentions: "not divisible into 4 splits")
        assertInvalid(try prepare(.split, .split(numSplits: 2), [tensor(0, [], .int32, constant: [2]), tensor(1, [2, 6]), tensor(2, [1]), tensor(3, [1])],
                                  outputs: 2, Split.prepare), mentions: "axis 2 is out of range")
        assertInvalid(try prepare(.splitV, .split(numSplits: 2), [tensor(0, [5, 2]), tensor(1, [2], .int32, constant: [4, 2]),
                                                                  tensor(2, [], .int32, constant: [0]), tensor(3, [1]), tensor(4, [1])],
                                  outputs: 2, SplitV.prepare), mentions: "do not add up")
        assertInvalid(try prepare(.splitV, .split(numSplits: 2), [tensor(0, [5, 2]), tensor(1, [2], .int32, constant: [-1, -1]),
                                                                  tensor(2, [], .int32, constant: [0]), tensor(3, [1]), tensor(4, [1])],
                                  outputs: 2, SplitV.prepare), mentions: "one -1")
        assertInvalid(try prepare(.transpose, .none, [tensor(0, [2, 3]), tensor(1, [2], .int32, constant: [0, 0]), tensor(2, [1])], Transpose.prepare),
                      mentions: "is not a permutation")
        assertInvalid(try prepare(.gather, .gather(axis: 0, batchDims: 0), [tensor(0, [3, 2]), tensor(1, [2], .int32, constant: [1, 3]), tensor(2, [1])],
                                  Gather.prepare), mentions: "index 3 is out of range")
        assertInvalid(try prepare(.gather, .gather(axis: 0, batchDims: 1), [tensor(0, [3, 2]), tensor(1, [3], .int32), tensor(2, [1])], Gather.prepare),
                      mentions: "batch_dims 1")
        assertInvalid(try prepare(.argMax, .argMinMax(outputType: .float32), [tensor(0, [2, 3]), tensor(1, [1], .int32, constant: [0]),
                                                                            tensor(2, [1], .float32)], ArgMax.prepare), mentions: "output_type")
        assertInvalid(try prepare(.argMin, .argMinMax(outputType: .int64), [tensor(0, [2, 3]), tensor(1, [1], .int32, constant: [0]),
                                                                          tensor(2, [1], .int32)], ArgMin.prepare), mentions: "output_type says")
        assertInvalid(try prepare(.depthToSpace, .blockSize(3), [tensor(0, [1, 2, 3, 8]), tensor(1, [1])], DepthToSpace.prepare),
                      mentions: "block_size 3")
        assertInvalid(try prepare(.spaceToDepth, .blockSize(2), [tensor(0, [1, 3, 4, 1]), tensor(1, [1])], SpaceToDepth.prepare),
                      mentions: "divide the input height 3")
        assertInvalid(try prepare(.mirrorPad, .mirrorPad(.reflect), [tensor(0, [2, 3]), tensor(1, [2, 2], .int32, constant: [2, 0, 0, 0]),
                                                                     tensor(2, [1])], MirrorPad.prepare), mentions: "must lie in 0...1")
        assertInvalid(try prepare(.maximum, .none, [tensor(0, [2, 3]), tensor(1, [2]), tensor(2, [1])], Maximum.prepare), mentions: "do not broadcast")
        assertInvalid(try prepare(.prelu, .none, [tensor(0, [1, 3]), tensor(1, [2, 3]), tensor(2, [1])], Prelu.prepare),
                      mentions: "must keep the input's shape")
        assertInvalid(try prepare(.cast, .none, [tensor(0, [2], .string), tensor(1, [2])], Cast.prepare), mentions: "cast from string")
        assertInvalid(try prepare(.exp, .none, [tensor(0, [2], .int8), tensor(1, [2], .int8)], Exp.prepare), mentions: "no quantization parameters")
        assertInvalid(try prepare(.transposeConv, .transposeConv(TransposeConvOptions(padding: .same, strideWidth: 2, strideHeight: 2, activation: .none)),
                                  [tensor(0, [4], .int32, constant: [1, 6, 6, 5]), tensor(1, [4, 3, 3, 2], constant: Array(repeating: 0, count: 72)),
                                   tensor(2, [1, 3, 3, 2]), tensor(3, [1])], TransposeConv.prepare), mentions: "disagree")
        assertInvalid(try prepare(.densify, .none, [tensor(0, [2, 3]), tensor(1, [2, 3])], Densify.prepare), mentions: "must be a (sparse) constant")
    }

    func testTranspositionMergesNeighbours() {
        let t = Transposition(inputShape: [1, 2, 3, 4], permutation: [0, 3, 1, 2], elementSize: 4)
        XCTAssertEqual(t.extents, [4, 6])
        XCTAssertEqual(t.inputStrides, [1, 4])
        let identity = Transposition(inputShape: [2, 3, 4], permutation: [0, 1, 2], elementSize: 1)
        XCTAssertEqual(identity.extents, [24])
        let input: [UInt8] = Array(0 ..< 24)
        var output = [UInt8](repeating: 0, count: 24)
        let plan = Transposition(inputShape: [2, 3, 4], permutation: [2, 0, 1], elementSize: 1)
        input.withUnsafeBytes { i in output.withUnsafeMutableBytes { o in plan.apply(i.baseAddress!, o.baseAddress!) } }
        // output[k, a, b] = input[a, b, k]
        XCTAssertEqual(Array(output.prefix(6)), [0, 4, 8, 12, 16, 20])
    }

    /// TFLite's hybrid row quantization on hand-worked rows.
    func testHybridInputQuantization() {
        var q = [Int8](repeating: 0, count: 2)
        let scale = [Float(0.5), -1].withUnsafeBufferPointer { HybridInputQuantization.symmetric($0.baseAddress!, count: 2, into: &q) }
        XCTAssertEqual(scale, 1 / 127)
        XCTAssertEqual(q, [64, -127])
        let (s, zp) = [Float(0), 2.55].withUnsafeBufferPointer { HybridInputQuantization.asymmetric($0.baseAddress!, count: 2, into: &q) }
        XCTAssertEqual(s, Float(0.01), accuracy: 1e-9)
        XCTAssertEqual(zp, -128)
        XCTAssertEqual(q, [-128, 127])
        let zero = [Float(0), 0].withUnsafeBufferPointer { HybridInputQuantization.asymmetric($0.baseAddress!, count: 2, into: &q) }
        XCTAssertEqual(zero.scale, 1)
        XCTAssertEqual(q, [0, 0])
    }

    // MARK: Running kernels on hand-made operands

    /// One operand: its type, shape, bytes, and whether it is a constant.
    private struct Operand {
        var type: DataType, shape: [Int], bytes: [UInt8], constant = false
        static func floats(_ shape: [Int], _ v: [Float], constant: Bool = false) -> Operand {
            Operand(type: .float32, shape: shape, bytes: v.withUnsafeBytes { Array($0) }, constant: constant)
        }
        static func int32s(_ shape: [Int], _ v: [Int32], constant: Bool = false) -> Operand {
            Operand(type: .int32, shape: shape, bytes: v.withUnsafeBytes { Array($0) }, constant: constant)
        }
    }

    /// Prepares and runs one operator on `inputs`; returns the output's bytes.
    private func run(_ op: BuiltinOperator, _ options: OperatorOptions, _ inputs: [Operand], output: DataType,
                     _ prepare: (inout PrepareContext) throws(ModelError) -> any Kernel) throws -> [UInt8] {
        var storage = [UnsafeMutableRawPointer]()
        defer { storage.forEach { $0.deallocate() } }
        func memory(_ bytes: [UInt8], count: Int) -> UnsafeMutableRawPointer {
            let p = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 64)
            p.initializeMemory(as: UInt8.self, repeating: 0xEE, count: max(count, 1))
            bytes.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            storage.append(p)
            return p
        }
        var tensors = [TensorDescriptor](), addresses = [UnsafeMutableRawPointer]()
        for (i, operand) in inputs.enumerated() {
            let p = memory(operand.bytes, count: operand.bytes.count)
            addresses.append(p)
            tensors.append(TensorDescriptor(index: i, name: "t\(i)", dataType: operand.type, shape: operand.shape, shapeSignature: nil,
                                            quantization: nil, isVariable: false,
                                            constantData: operand.constant ? ConstantData(bytes: UnsafeRawBufferPointer(start: p, count: operand.bytes.count)) : nil))
        }
        tensors.append(TensorDescriptor(index: inputs.count, name: "out", dataType: output, shape: [1], shapeSignature: nil,
                                        quantization: nil, isVariable: false, constantData: nil))
        let node = Node(index: 7, op: op, customName: nil, version: 1, inputs: Array(0 ..< inputs.count),
                        outputs: [inputs.count], options: options, customOptions: nil)
        var context = PrepareContext(node: node, tensors: tensors)
        let kernel = try prepare(&context)
        let outputBytes = context.tensors[inputs.count].byteCount
        addresses.append(memory([], count: outputBytes))
        let scratch = memory([], count: context.scratchBytes)
        let workerScratch = memory([], count: context.workerScratchBytes)
        let pool = WorkerPool(threadCount: 1)
        addresses.withUnsafeBufferPointer {
            kernel.eval(TensorMemory(addresses: $0.baseAddress!, scratch: scratch, workerScratch: workerScratch,
                                     workerScratchStride: context.workerScratchBytes, pool: pool))
        }
        withExtendedLifetime(pool) {}
        return Array(UnsafeRawBufferPointer(start: addresses[inputs.count], count: outputBytes))
    }

    private func values<T>(_ bytes: [UInt8], as _: T.Type) -> [T] {
        bytes.withUnsafeBytes { Array($0.bindMemory(to: T.self)) }
    }

    /// CAST follows C++'s static_cast on x86-64: truncation, "integer indefinite" for NaN and
    /// out-of-range values, low bits kept for narrow types.
    func testCastEdgeValues() throws {
        let x = Operand.floats([7], [2.9, -2.9, .nan, 3e9, -3e9, 300.7, -0.5])
        XCTAssertEqual(values(try run(.cast, .none, [x], output: .int32, Cast.prepare), as: Int32.self),
                       [2, -2, .min, .min, .min, 300, 0])
        XCTAssertEqual(values(try run(.cast, .none, [x], output: .uint8, Cast.prepare), as: UInt8.self), [2, 254, 0, 0, 0, 44, 0])
        XCTAssertEqual(values(try run(.cast, .none, [x], output: .int64, Cast.prepare), as: Int64.self),
                       [2, -2, .min, 3_000_000_000, -3_000_000_000, 300, 0])
        XCTAssertEqual(try run(.cast, .none, [x], output: .bool, Cast.prepare), [1, 1, 1, 1, 1, 1, 1])
        let n = Operand.int32s([3], [16_777_217, -1, 0])
        XCTAssertEqual(values(try run(.cast, .none, [n], output: .float32, Cast.prepare), as: Float.self), [16_777_216, -1, 0])
        XCTAssertEqual(try run(.cast, .none, [n], output: .uint8, Cast.prepare), [1, 255, 0])
    }

    /// MIRROR_PAD's two modes on the example of its documentation.
    func testMirrorPadModes() throws {
        let x = Operand.floats([3], [1, 2, 3]), pads = Operand.int32s([1, 2], [2, 1], constant: true)
        XCTAssertEqual(values(try run(.mirrorPad, .mirrorPad(.reflect), [x, pads], output: .float32, MirrorPad.prepare), as: Float.self),
                       [3, 2, 1, 2, 3, 2])
        XCTAssertEqual(values(try run(.mirrorPad, .mirrorPad(.symmetric), [x, pads], output: .float32, MirrorPad.prepare), as: Float.self),
                       [2, 1, 1, 2, 3, 3])
    }

    /// PAD against numpy's rule (each output element the input element it lands on, else 0) over
    /// random shapes of rank 1 to 5 with empty dimensions, unpadded runs of dimensions (which the
    /// kernel copies as one) and padded ones, one or both sides.
    func testPadMatchesTheIndexRule() throws {
        var rng = KernelTestRandom(seed: 41)
        for _ in 0 ..< 200 {
            let rank = Int.random(in: 1 ... 5, using: &rng)
            let shape = (0 ..< rank).map { _ in Int.random(in: 0 ... 4, using: &rng) }
            let pairs = (0 ..< 2 * rank).map { _ in Bool.random(using: &rng) ? 0 : Int.random(in: 0 ... 3, using: &rng) }
            let count = shape.reduce(1, *)
            let x = (0 ..< count).map { Int32($0 + 1) }
            let output = try run(.pad, .none, [.int32s(shape, x), .int32s([rank, 2], pairs.map(Int32.init), constant: true)],
                                 output: .int32, Pad.prepare)
            var outShape = shape
            for d in 0 ..< rank { outShape[d] += pairs[2 * d] + pairs[2 * d + 1] }
            var expected = [Int32]()
            for flat in 0 ..< outShape.reduce(1, *) {
                var rest = flat, offset = 0, inside = true, place = 1
                var index = [Int](repeating: 0, count: rank)
                for d in (0 ..< rank).reversed() { index[d] = rest % outShape[d]; rest /= outShape[d] }
                for d in (0 ..< rank).reversed() {
                    let i = index[d] - pairs[2 * d]
                    if i < 0 || i >= shape[d] { inside = false }
                    offset += i * place
                    place *= shape[d]
                }
                expected.append(inside ? x[offset] : 0)
            }
            XCTAssertEqual(values(output, as: Int32.self), expected, "PAD \(shape) by \(pairs)")
        }
    }

    /// Float PRELU in vector lanes and one by one: per-channel alphas (rows of 19 channels: a
    /// vector and a tail per row), one shared alpha, and same-shape alphas, with NaN, ±0 and ±∞.
    func testPreluLanesMatchTheDefinition() throws {
        var rng = KernelTestRandom(seed: 42)
        var x = (0 ..< 5 * 7 * 19).map { _ in Float(Double.random(in: -4 ... 4, using: &rng)) }
        x[0 ..< 6] = [.nan, -0, 0, .infinity, -.infinity, -1e-40]
        for alphaShape in [[1, 1, 19], [1], [1, 5, 7, 19]] {
            let alpha = (0 ..< alphaShape.reduce(1, *)).map { _ in Float(Double.random(in: -2 ... 2, using: &rng)) }
            let output = values(try run(.prelu, .none, [.floats([1, 5, 7, 19], x), .floats(alphaShape, alpha, constant: true)],
                                        output: .float32, Prelu.prepare), as: Float.self)
            for i in x.indices {
                let a = alpha[alphaShape.count == 4 ? i : alpha.count == 1 ? 0 : i % 19]
                let expected = x[i] >= 0 ? x[i] : x[i] * a
                XCTAssert(output[i].bitPattern == expected.bitPattern || (output[i].isNaN && expected.isNaN),
                          "alpha \(alphaShape): element \(i) (\(x[i])) gives \(output[i]), expected \(expected)")
            }
        }
    }

    /// A runtime GATHER index outside the axis gives a slice of zeros (TFLite fails the run).
    func testGatherRuntimeIndexOutOfRangeGivesZeros() throws {
        let params = Operand.floats([3, 2], [1, 2, 3, 4, 5, 6]), indices = Operand.int32s([3], [2, 7, -1])
        XCTAssertEqual(values(try run(.gather, .gather(axis: 0, batchDims: 0), [params, indices], output: .float32, Gather.prepare), as: Float.self),
                       [5, 6, 0, 0, 0, 0])
    }

    /// ARG_MAX keeps the first of equal values and never picks a later NaN; int32 DIV by zero is 0.
    func testArgMaxTiesAndIntegerDivision() throws {
        let x = Operand.floats([2, 3], [1, 3, 3, .nan, 2, .nan]), axis = Operand.int32s([1], [1], constant: true)
        XCTAssertEqual(values(try run(.argMax, .argMinMax(outputType: .int32), [x, axis], output: .int32, ArgMax.prepare), as: Int32.self), [1, 0])
        let a = Operand.int32s([3], [7, -7, .min]), b = Operand.int32s([3], [0, 2, -1])
        XCTAssertEqual(values(try run(.div, .elementwise(activation: .none), [a, b], output: .int32, Div.prepare), as: Int32.self), [0, -3, .min])
    }
}
