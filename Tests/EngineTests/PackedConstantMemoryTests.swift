import Foundation
import XCTest
import Engine
import TestSupport

/// Constants that only packed copies use stop being resident after prepare: mapped file pages are
/// dropped (the bytes stay readable), folded constants are freed (and say so when asked for).
final class PackedConstantMemoryTests: XCTestCase {
    private let detector = Fixtures.repositoryRoot.appendingPathComponent("Models/person_detector_f32.tflite").path

    func testFoldedWeightsAreFreedOncePacked() throws {
        let interpreter = try Interpreter(modelPath: detector)
        let discarded = interpreter.plan.discardedConstants
        XCTAssertFalse(discarded.isEmpty, "the float16 weights' DEQUANTIZE outputs should be freed once packed")
        for t in discarded {
            let producer = try XCTUnwrap(interpreter.graph.nodes.first { $0.outputs.contains(t) })
            XCTAssertEqual(producer.opName, "DEQUANTIZE")
        }
        let t = try XCTUnwrap(discarded.min())
        XCTAssertThrowsError(try interpreter.tensor(t)) { error in
            guard case .invalidArgument(let message) = error as? ModelError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("tensor \(t)") && message.contains("preserveAllTensors"), message)
        }
        // The outputs are unaffected.
        try interpreter.invoke()
        XCTAssertNoThrow(try interpreter.output(at: 0))
    }

    func testNothingIsFreedWhenEveryTensorIsPreserved() throws {
        var options = Interpreter.Options()
        options.preserveAllTensors = true
        let interpreter = try Interpreter(modelPath: detector, options: options)
        XCTAssertTrue(interpreter.plan.discardedConstants.isEmpty)
    }

    /// Dropped file pages read back as the file's bytes.
    func testReleasedFilePagesStillReadTheWeights() throws {
        let path = try Fixtures.shared("models/mobilenet_v2_1.0_224_quant.tflite").path
        let interpreter = try Interpreter(modelPath: path)
        let released = interpreter.plan.releasedConstants
        XCTAssertFalse(released.isEmpty)
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        for t in released.sorted().prefix(20) {
            let bytes = try XCTUnwrap(interpreter.graph.tensors[t].constantData?.bytes)
            let data = Data(bytes)
            XCTAssertNotNil(file.range(of: data), "constant \(t) no longer reads its bytes from the file")
        }
    }
}
