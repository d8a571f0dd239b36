import XCTest
import Engine
import TestSupport

/// Prepare-time errors of the float kernels that golden fixtures cannot reach: each model in
/// `Fixtures/errors` (made by `Tests/Goldens/make_error_models.py`) must fail to load with a
/// `ModelError` whose message names the operator and the broken rule, never crash.
final class FloatKernelEdgeTests: XCTestCase {
    private func assertRejected(_ name: String, _ expected: String, unsupported: Bool = false,
                                file: StaticString = #filePath, line: UInt = #line) {
        let path = Fixtures.directory("EngineTests").appendingPathComponent("errors/\(name).tflite").path
        XCTAssertThrowsError(try Interpreter(modelPath: path), file: file, line: line) { error in
            guard let error = error as? ModelError else { return XCTFail("\(error) is not a ModelError", file: file, line: line) }
            switch error {
            case .invalidOperator where !unsupported, .unsupportedOperator where unsupported: break
            default: XCTFail("\(name): unexpected kind of error: \(error)", file: file, line: line)
            }
            XCTAssert(error.description.contains(expected), "\(name): '\(error)' does not mention '\(expected)'", file: file, line: line)
        }
    }

    func testFullyConnectedInputNotDivisibleByDepth() {
        assertRejected("fully_connected_depth_not_dividing",
                       "operator 0 (FULLY_CONNECTED): input 'input' [2, 5] has 10 elements, not a multiple of the weights' input depth 4")
    }

    func testFullyConnectedKeepNumDimsNeedsMatchingLastDimension() {
        assertRejected("fully_connected_keep_num_dims_mismatch", "keep_num_dims: input 'input' [2, 3, 8] must end in the weights' input depth 4")
    }

    func testFullyConnectedShuffledWeightsAreUnsupported() {
        assertRejected("fully_connected_shuffled_weights", "weights format 1", unsupported: true)
    }

    func testMeanAxisOutOfRange() {
        assertRejected("mean_axis_out_of_range", "operator 0 (MEAN): axis 4 is out of range for input 'input' of rank 4")
    }

    func testMeanAxesMustBeConstant() {
        assertRejected("mean_axes_not_constant", "input 1 ('axes') must be a constant tensor", unsupported: true)
    }

    func testMaxPoolFilterLargerThanInputWithValidPadding() {
        assertRejected("max_pool_filter_larger_than_input_valid",
                       "operator 0 (MAX_POOL_2D): height: a filter of 5 (dilation 1) does not fit an input of 3 with VALID padding")
    }

    func testSoftmaxOfAScalar() {
        assertRejected("softmax_scalar_input", "operator 0 (SOFTMAX): input 'input' is a scalar")
    }
}
