import XCTest
@testable import Engine

/// Shape logic that the golden models cannot reach: broadcast plans, strided-slice index
/// resolution against hand-worked numpy expressions, and the errors prepare throws.
/// Constant buffers made by `tensor(...)`, kept for the process (reachable, so LeakSanitizer is
/// quiet): a descriptor's constant must outlive every plan prepared from it.
nonisolated(unsafe) private var keptConstants: [UnsafeMutableRawBufferPointer] = []

final class ShapeKernelTests: XCTestCase {
    // MARK: Broadcast

    func testBroadcastOutputShapes() {
        XCTAssertEqual(Broadcast.outputShape([1, 4, 4, 3], [3]), [1, 4, 4, 3])
        XCTAssertEqual(Broadcast.outputShape([2, 1, 5], [1, 3, 1]), [2, 3, 5])
        XCTAssertEqual(Broadcast.outputShape([5], [2, 3, 5]), [2, 3, 5])
        XCTAssertEqual(Broadcast.outputShape([], [2, 3]), [2, 3])
        XCTAssertEqual(Broadcast.outputShape([], []), [])
        XCTAssertEqual(Broadcast.outputShape([0, 3], [1, 3]), [0, 3])
        XCTAssertNil(Broadcast.outputShape([2, 3], [4]))
        XCTAssertNil(Broadcast.outputShape([2, 3], [3, 3]))
    }

    func testBroadcastPlansCollapse() throws {
        // Same shape: one flat loop.
        let same = try XCTUnwrap(Broadcast([1, 4, 4, 3], [1, 4, 4, 3]))
        XCTAssertEqual([same.extents, same.lhsStrides, same.rhsStrides], [[48], [1], [1]])
        XCTAssertTrue(same.isElementwise)
        // Per-channel vector: rows of 3 with the vector restarting each row.
        let channel = try XCTUnwrap(Broadcast([1, 4, 4, 3], [1, 1, 1, 3]))
        XCTAssertEqual([channel.extents, channel.lhsStrides, channel.rhsStrides], [[16, 3], [3, 1], [0, 1]])
        XCTAssertEqual(channel.repeatedRow.map { [$0.lhsStride, $0.rhsStride, $0.width] }, [3, 0, 3])
        XCTAssertEqual(Broadcast([1, 1, 1, 3], [1, 4, 4, 3])?.repeatedRow.map { [$0.lhsStride, $0.rhsStride, $0.width] }, [0, 3, 3])
        // Scalar on the left.
        let scalar = try XCTUnwrap(Broadcast([], [2, 3]))
        XCTAssertEqual([scalar.extents, scalar.lhsStrides, scalar.rhsStrides], [[6], [0], [1]])
        XCTAssertNil(scalar.repeatedRow)
        XCTAssertNil(same.repeatedRow)
        // [2, 1, 5] ⊕ [1, 3, 1]: three levels, each operand repeating on alternate ones.
        let cross = try XCTUnwrap(Broadcast([2, 1, 5], [1, 3, 1]))
        XCTAssertEqual([cross.extents, cross.lhsStrides, cross.rhsStrides], [[2, 3, 5], [5, 0, 1], [0, 1, 0]])
        XCTAssertNil(cross.repeatedRow)
        // One element in all.
        let one = try XCTUnwrap(Broadcast([1, 1], [1]))
        XCTAssertEqual([one.outputShape, one.extents, one.lhsStrides, one.rhsStrides], [[1, 1], [1], [0], [0]])
        // Same shapes collapse at any rank; alternating repeats cannot collapse at all.
        XCTAssertEqual(Broadcast([Int](repeating: 2, count: 8), [Int](repeating: 2, count: 8))?.extents, [256])
        XCTAssertEqual(Broadcast([2, 1, 2, 1, 2, 1, 2], [1, 2, 1, 2, 1, 2, 1])?.extents.count, 7)
    }

    /// `apply` against a direct numpy-rule index computation, over random shapes up to rank 6.
    func testBroadcastApplyMatchesNaiveIndexing() throws {
        var rng = SystemRandomNumberGenerator()
        for _ in 0 ..< 300 {
            let rank = Int.random(in: 0 ... 6, using: &rng)
            let output = (0 ..< rank).map { _ in Int.random(in: 1 ... 4, using: &rng) }
            func operand() -> [Int] {
                let full = output.map { Bool.random(using: &rng) ? $0 : 1 }
                return Array(full.dropFirst(Int.random(in: 0 ... rank, using: &rng) / 2))
            }
            let lhs = operand(), rhs = operand()
            let plan = try XCTUnwrap(Broadcast(lhs, rhs))
            let a = (0 ..< lhs.reduce(1, *)).map { Float($0) }, b = (0 ..< rhs.reduce(1, *)).map { Float($0 * 1000) }
            var result = [Float](repeating: -1, count: plan.outputCount)
            result.withUnsafeMutableBufferPointer { out in plan.apply(a, b, out.baseAddress!) { $0 + $1 } }

            // Both operands may leave a dimension at 1, so the output can be smaller than `output`.
            let shape = plan.outputShape
            var expected = [Float]()
            for flat in 0 ..< plan.outputCount {
                var index = [Int](repeating: 0, count: shape.count), rest = flat
                for d in shape.indices.reversed() { index[d] = rest % shape[d]; rest /= shape[d] }
                func element(_ operand: [Int], _ values: [Float]) -> Float {
                    var offset = 0
                    for (d, size) in operand.enumerated() {
                        offset = offset * size + (size == 1 ? 0 : index[d + shape.count - operand.count])
                    }
                    return values[offset]
                }
                expected.append(element(lhs, a) + element(rhs, b))
            }
            XCTAssertEqual(result, expected, "\(lhs) ⊕ \(rhs)")
        }
    }

    /// `spans` over any cut of `units` into consecutive ranges visits the output `apply` writes,
    /// run by run, with the operand offsets `apply` reads.
    func testBroadcastSpansCoverWhatApplyWrites() throws {
        var rng = SystemRandomNumberGenerator()
        for _ in 0 ..< 300 {
            let rank = Int.random(in: 0 ... 6, using: &rng)
            let output = (0 ..< rank).map { _ in Int.random(in: 1 ... 4, using: &rng) }
            func operand() -> [Int] { output.map { Bool.random(using: &rng) ? $0 : 1 } }
            let lhs = operand(), rhs = operand()
            let plan = try XCTUnwrap(Broadcast(lhs, rhs))
            let a = (0 ..< lhs.reduce(1, *)).map { Float($0) }, b = (0 ..< rhs.reduce(1, *)).map { Float($0 * 1000) }
            var expected = [Float](repeating: -1, count: plan.outputCount)
            expected.withUnsafeMutableBufferPointer { out in plan.apply(a, b, out.baseAddress!) { $0 + $1 } }
            var result = [Float](repeating: -1, count: plan.outputCount)
            let (la, rb) = plan.innerStrides
            XCTAssert([0, 1].contains(la) && [0, 1].contains(rb), "inner strides \(la), \(rb)")
            var start = 0
            while start < plan.units {
                let end = min(plan.units, start + Int.random(in: 1 ... 5, using: &rng))
                plan.spans(start ..< end) { l, r, o, count in
                    for i in 0 ..< count { result[o + i] = a[l + i * la] + b[r + i * rb] }
                }
                start = end
            }
            XCTAssertEqual(result, expected, "\(lhs) ⊕ \(rhs)")
        }
    }

    // MARK: Strided slice

    private func slice(_ shape: [Int], _ begin: [Int], _ end: [Int], _ strides: [Int],
                       beginMask: Int = 0, endMask: Int = 0, ellipsisMask: Int = 0, newAxisMask: Int = 0,
                       shrinkAxisMask: Int = 0, offset: Bool = false) throws -> StridedSlice.Slicing {
        try StridedSlice.resolve(inputShape: shape, begin: begin, end: end, strides: strides,
                                 options: StridedSliceOptions(beginMask: beginMask, endMask: endMask, ellipsisMask: ellipsisMask,
                                                              newAxisMask: newAxisMask, shrinkAxisMask: shrinkAxisMask, offset: offset))
    }

    func testStridedSliceMasksAndShrink() throws {
        // x = np.arange(90).reshape(1, 5, 6, 3); x[:, 1:, ::2, 0].shape == (1, 4, 3)
        let s = try slice([1, 5, 6, 3], [0, 1, 0, 0], [0, 0, 0, 1], [1, 1, 2, 1], beginMask: 5, endMask: 7, shrinkAxisMask: 8)
        XCTAssertEqual(s.outputShape, [1, 4, 3])
        XCTAssertEqual(s.starts, [0, 1, 0, 0])
        XCTAssertEqual(s.counts, [1, 4, 3, 1])
        XCTAssertEqual(s.steps, [1, 1, 2, 1])
    }

    func testStridedSliceNegativeStridesAndIndices() throws {
        // np.arange(5)[::-1] == [4, 3, 2, 1, 0]
        let reversed = try slice([5], [0], [0], [-1], beginMask: 1, endMask: 1)
        XCTAssertEqual([reversed.starts, reversed.counts, reversed.outputShape], [[4], [5], [5]])
        // np.arange(4)[-3:-1] == [1, 2]
        let negative = try slice([4], [-3], [-1], [1])
        XCTAssertEqual([negative.starts, negative.counts], [[1], [2]])
        // x = np.arange(70).reshape(2, 7, 5); x[1, 0:7:3, 4:0:-2].shape == (3, 2): rows 0, 3, 6; columns 4, 2
        let mixed = try slice([2, 7, 5], [1, 0, 4], [2, 7, 0], [1, 3, -2], shrinkAxisMask: 1)
        XCTAssertEqual([mixed.outputShape, mixed.starts, mixed.counts], [[3, 2], [1, 0, 4], [1, 3, 2]])
        // np.arange(4)[5:1:-1] == [3, 2]: the start clamps to the last element
        let clamped = try slice([4], [5], [1], [-1])
        XCTAssertEqual([clamped.starts, clamped.counts], [[3], [2]])
        // np.arange(4)[-10:10] == [0, 1, 2, 3]; np.arange(4)[10:-10:-1] == [3, 2, 1, 0]
        XCTAssertEqual(try slice([4], [-10], [10], [1]).counts, [4])
        let backwards = try slice([4], [10], [-10], [-1])
        XCTAssertEqual([backwards.starts, backwards.counts], [[3], [4]])
        // np.arange(6)[4:1] is empty; np.arange(6)[1:4:-1] is empty
        XCTAssertEqual(try slice([6], [4], [1], [1]).outputShape, [0])
        XCTAssertEqual(try slice([6], [1], [4], [-1]).outputShape, [0])
    }

    func testStridedSliceEllipsisAndNewAxis() throws {
        // x = np.zeros((2, 3, 4)); x[..., 1].shape == (2, 3)
        let ellipsis = try slice([2, 3, 4], [0, 1], [0, 2], [1, 1], ellipsisMask: 1, shrinkAxisMask: 2)
        XCTAssertEqual([ellipsis.outputShape, ellipsis.starts, ellipsis.counts], [[2, 3], [0, 0, 1], [2, 3, 1]])
        // x[1:, ...].shape == (1, 3, 4)
        XCTAssertEqual(try slice([2, 3, 4], [1, 0], [0, 0], [1, 1], endMask: 1, ellipsisMask: 2).outputShape, [1, 3, 4])
        // x = np.zeros((2, 3)); x[:, None, 1:].shape == (2, 1, 2)
        let newAxis = try slice([2, 3], [0, 0, 1], [0, 0, 0], [1, 1, 1], beginMask: 1, endMask: 5, newAxisMask: 2)
        XCTAssertEqual([newAxis.inputShape, newAxis.outputShape, newAxis.starts], [[2, 1, 3], [2, 1, 2], [0, 0, 1]])
        // x[None, ..., None].shape == (1, 2, 3, 1)
        let around = try slice([2, 3], [0, 0, 0], [0, 0, 0], [1, 1, 1], ellipsisMask: 2, newAxisMask: 5)
        XCTAssertEqual(around.outputShape, [1, 2, 3, 1])
        // Fewer specs than dimensions: x[1:] == x[1:, :]
        XCTAssertEqual(try slice([2, 3], [1], [2], [1]).outputShape, [1, 3])
    }

    func testStridedSliceOffset() throws {
        // offset: end holds lengths, so begin [1], end [2] on 5 elements reads elements 1 and 2.
        let s = try slice([5], [1], [2], [1], offset: true)
        XCTAssertEqual([s.starts, s.counts, s.outputShape], [[1], [2], [2]])
        XCTAssertThrowsError(try slice([5], [4], [3], [1], offset: true))  // runs past the end
    }

    func testStridedSliceRejections() {
        XCTAssertThrowsError(try slice([4], [0], [4], [0]))  // stride 0
        // np.arange(3)[7] raises IndexError; TFLite would write nothing.
        XCTAssertThrowsError(try slice([3], [7], [8], [1], shrinkAxisMask: 1))
        // A shrunk axis with a negative stride selects nothing in TFLite (TF rejects it).
        XCTAssertThrowsError(try slice([3], [1], [2], [-1], shrinkAxisMask: 1))
    }

    // MARK: Prepare errors

    private func tensor(_ index: Int, _ shape: [Int], _ type: DataType = .float32, constant: [Int32]? = nil) -> TensorDescriptor {
        let data = constant.map { values -> ConstantData in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: values.count * 4, alignment: 16)
            values.withUnsafeBytes { buffer.copyMemory(from: $0) }
            keptConstants.append(buffer)
            return ConstantData(bytes: UnsafeRawBufferPointer(buffer))
        }
        return TensorDescriptor(index: index, name: "t\(index)", dataType: type, shape: shape, shapeSignature: nil,
                                quantization: nil, isVariable: false, constantData: data)
    }

    /// Prepares one operator over `tensors`; inputs are tensors 0..<inputs, the output is the last.
    private func prepare(_ op: BuiltinOperator, _ options: OperatorOptions, _ tensors: [TensorDescriptor],
                         _ prepare: (inout PrepareContext) throws(ModelError) -> any Kernel) throws -> [Int] {
        let node = Node(index: 0, op: op, customName: nil, version: 1, inputs: Array(0 ..< tensors.count - 1),
                        outputs: [tensors.count - 1], options: options, customOptions: nil)
        var context = PrepareContext(node: node, tensors: tensors)
        _ = try prepare(&context)
        return context.tensors[tensors.count - 1].shape
    }

    private func assertInvalid(_ expression: @autoclosure () throws -> [Int], mentions text: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try expression(), file: file, line: line) { error in
            XCTAssertTrue("\(error)".contains(text), "\(error) does not mention \(text)", file: file, line: line)
        }
    }

    func testPrepareInfersShapes() throws {
        let add = try prepare(.add, .elementwise(activation: .relu), [tensor(0, [2, 1, 5]), tensor(1, [3, 1]), tensor(2, [1])], Add.prepare)
        XCTAssertEqual(add, [2, 3, 5])
        let reshape = try prepare(.reshape, .reshape(newShape: nil), [tensor(0, [2, 12]), tensor(1, [4], .int32, constant: [-1, 3, 2, 2]), tensor(2, [1])], Reshape.prepare)
        XCTAssertEqual(reshape, [2, 3, 2, 2])
        let squeeze = try prepare(.squeeze, .squeeze(dims: []), [tensor(0, [1, 3, 1, 2]), tensor(1, [1])], Squeeze.prepare)
        XCTAssertEqual(squeeze, [3, 2])
        let concat = try prepare(.concatenation, .concatenation(axis: -2, activation: .none),
                                 [tensor(0, [2, 1, 5]), tensor(1, [2, 3, 5]), tensor(2, [1])], Concatenation.prepare)
        XCTAssertEqual(concat, [2, 4, 5])
        let pack = try prepare(.pack, .pack(valuesCount: 2, axis: -1), [tensor(0, [2, 3]), tensor(1, [2, 3]), tensor(2, [1])], Pack.prepare)
        XCTAssertEqual(pack, [2, 3, 2])
        let pad = try prepare(.pad, .none, [tensor(0, [1, 3]), tensor(1, [2, 2], .int32, constant: [0, 1, 2, 3]), tensor(2, [1])], Pad.prepare)
        XCTAssertEqual(pad, [2, 8])
        let resize = try prepare(.resizeBilinear, .resizeBilinear(ResizeBilinearOptions(alignCorners: false, halfPixelCenters: true)),
                                 [tensor(0, [1, 4, 5, 3]), tensor(1, [2], .int32, constant: [7, 9]), tensor(2, [1])], ResizeBilinear.prepare)
        XCTAssertEqual(resize, [1, 7, 9, 3])
    }

    func testPrepareRejectsBadOperands() {
        assertInvalid(try prepare(.add, .elementwise(activation: .none), [tensor(0, [2, 3]), tensor(1, [4]), tensor(2, [1])], Add.prepare),
                      mentions: "[2, 3] ('t0') and [4] ('t1') do not broadcast")
        assertInvalid(try prepare(.add, .elementwise(activation: .none), [tensor(0, [2, 1, 2, 1, 2, 1, 2]), tensor(1, [2, 1, 2, 1, 2, 1]), tensor(2, [1])], Add.prepare),
                      mentions: "needs 7 loop levels, at most 6")
        assertInvalid(try prepare(.mul, .elementwise(activation: .none), [tensor(0, [2]), tensor(1, [2], .int32), tensor(2, [1])], Mul.prepare),
                      mentions: "must all be equal")
        assertInvalid(try prepare(.sub, .elementwise(activation: .tanh), [tensor(0, [2]), tensor(1, [2]), tensor(2, [1])], Sub.prepare),
                      mentions: "TANH")
        assertInvalid(try prepare(.reshape, .reshape(newShape: [5, -1]), [tensor(0, [2, 3]), tensor(1, [1])], Reshape.prepare),
                      mentions: "cannot hold 6 elements")
        assertInvalid(try prepare(.reshape, .reshape(newShape: [-1, -1]), [tensor(0, [2, 3]), tensor(1, [1])], Reshape.prepare),
                      mentions: "one -1")
        assertInvalid(try prepare(.reshape, .reshape(newShape: [4]), [tensor(0, [2, 3]), tensor(1, [1])], Reshape.prepare),
                      mentions: "does not hold the 6 elements")
        assertInvalid(try prepare(.squeeze, .squeeze(dims: [1]), [tensor(0, [1, 3]), tensor(1, [1])], Squeeze.prepare),
                      mentions: "squeeze dimension 1 of input shape [1, 3]")
        assertInvalid(try prepare(.squeeze, .squeeze(dims: [-3]), [tensor(0, [1, 3]), tensor(1, [1])], Squeeze.prepare),
                      mentions: "squeeze dimension -3")
        assertInvalid(try prepare(.concatenation, .concatenation(axis: 1, activation: .none),
                                  [tensor(0, [2, 1, 5]), tensor(1, [2, 3, 4]), tensor(2, [1])], Concatenation.prepare),
                      mentions: "all dimensions but axis 1 must match")
        assertInvalid(try prepare(.concatenation, .concatenation(axis: 3, activation: .none),
                                  [tensor(0, [2, 1, 5]), tensor(1, [1])], Concatenation.prepare),
                      mentions: "axis 3 is out of range")
        assertInvalid(try prepare(.pack, .pack(valuesCount: 2, axis: 0), [tensor(0, [2, 3]), tensor(1, [3, 2]), tensor(2, [1])], Pack.prepare),
                      mentions: "input 1")
        assertInvalid(try prepare(.pack, .pack(valuesCount: 3, axis: 0), [tensor(0, [2]), tensor(1, [2]), tensor(2, [1])], Pack.prepare),
                      mentions: "values_count 3")
        assertInvalid(try prepare(.pad, .none, [tensor(0, [1, 3]), tensor(1, [2, 2], .int32, constant: [0, -1, 2, 3]), tensor(2, [1])], Pad.prepare),
                      mentions: "non-negative")
        assertInvalid(try prepare(.pad, .none, [tensor(0, [1, 3]), tensor(1, [1, 2], .int32, constant: [0, 1]), tensor(2, [1])], Pad.prepare),
                      mentions: "expected [2, 2]")
        assertInvalid(try prepare(.pad, .none, [tensor(0, [1, 3]), tensor(1, [2, 2], .int32), tensor(2, [1])], Pad.prepare),
                      mentions: "must be a constant")
        assertInvalid(try prepare(.resizeBilinear, .resizeBilinear(ResizeBilinearOptions(alignCorners: true, halfPixelCenters: true)),
                                  [tensor(0, [1, 4, 5, 3]), tensor(1, [2], .int32, constant: [7, 9]), tensor(2, [1])], ResizeBilinear.prepare),
                      mentions: "cannot both be true")
        assertInvalid(try prepare(.resizeBilinear, .resizeBilinear(ResizeBilinearOptions(alignCorners: false, halfPixelCenters: false)),
                                  [tensor(0, [1, 4, 5, 3]), tensor(1, [2], .int32, constant: [0, 9]), tensor(2, [1])], ResizeBilinear.prepare),
                      mentions: "must be positive")
        let sliceOptions = OperatorOptions.stridedSlice(StridedSliceOptions(beginMask: 0, endMask: 0, ellipsisMask: 0, newAxisMask: 0,
                                                                            shrinkAxisMask: 0, offset: false))
        assertInvalid(try prepare(.stridedSlice, sliceOptions, [tensor(0, [4]), tensor(1, [1], .int32, constant: [0]), tensor(2, [1], .int32, constant: [4]),
                                                                 tensor(3, [1], .int32, constant: [0]), tensor(4, [1])], StridedSlice.prepare),
                      mentions: "stride of dimension 0 is 0")
        assertInvalid(try prepare(.dequantize, .none, [tensor(0, [4], .int8), tensor(1, [4])], Dequantize.prepare),
                      mentions: "no quantization parameters")
    }
}
