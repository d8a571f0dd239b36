import XCTest
@testable import Engine

/// Shapes and prepare-time errors of the operators added for real-world models, where the golden
/// models cannot reach: every bad operand is a `ModelError` naming the rule, never a crash.
final class NewOperatorShapeTests: XCTestCase {
    private func tensor(_ index: Int, _ shape: [Int], _ type: DataType = .float32, constant: [Int32]? = nil) -> TensorDescriptor {
        let data = constant.map { values -> ConstantData in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(values.count * 4, 1), alignment: 16)
            values.withUnsafeBytes { buffer.copyMemory(from: $0) }
            return ConstantData(bytes: UnsafeRawBufferPointer(start: buffer.baseAddress, count: values.count * 4))  // leaked: test only
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
}
