import Foundation
import XCTest
@testable import Engine
import TestSupport

/// The accessors tasks and `inspect` use instead of Engine internals (`ModelInspection.swift`,
/// `ModelSurvey.swift`).
final class ModelInspectionTests: XCTestCase {
    /// `dequantizedValues` applies `(q − zeroPoint) · scale` to uint8 and int8, passes float32
    /// through, and refuses other types.
    func testDequantizeRule() {
        let q = QuantizationParameters(scale: 0.5, zeroPoint: 3)
        [UInt8(0), 3, 255].withUnsafeBytes { raw in
            XCTAssertEqual(Dequantization.floats(raw, dataType: .uint8, quantization: q), [-1.5, 0, 126])
        }
        [Int8(-128), 3, 127].withUnsafeBytes { raw in
            XCTAssertEqual(Dequantization.floats(raw, dataType: .int8, quantization: q), [-65.5, 0, 62])
        }
        [Float(1.25), -2].withUnsafeBytes { raw in
            XCTAssertEqual(Dequantization.floats(raw, dataType: .float32, quantization: nil), [1.25, -2])
        }
        [Int32(7)].withUnsafeBytes { raw in XCTAssertNil(Dequantization.floats(raw, dataType: .int32, quantization: nil)) }
    }

    /// On a real quantized model the session's dequantized output is the raw bytes dequantized.
    func testSessionDequantizedValues() throws {
        let plan = try Plan(graph: Graph(contentsOf: Fixtures.shared("models/mobilenet_v1_0.25_128_quant.tflite").path))
        let session = Session(plan: plan)
        session.invoke()
        let output = plan.outputTensor(0)
        let values = try XCTUnwrap(session.dequantizedValues(ofTensor: output.index))
        let raw = Array(session.bytes(ofTensor: output.index))
        XCTAssertEqual(values.count, raw.count)
        let q = try XCTUnwrap(output.quantization)
        XCTAssertEqual(values[7], Float(Int(raw[7]) - q.zeroPoint) * q.scale)
        XCTAssertNil(session.dequantizedValues(ofTensor: -1))
    }

    /// The survey reads what `Graph` refuses: a complex64 tensor and an unknown custom operator.
    func testSurveyMarksWhatTheEngineCannotRun() throws {
        let folder = Fixtures.directory("EngineTests").appendingPathComponent("unsupported")
        let complex = try Data(contentsOf: folder.appendingPathComponent("complex64_tensor.tflite"))
        let survey = try complex.withUnsafeBytes { raw throws(ModelError) in try ModelSurvey(bytes: raw) }
        XCTAssertTrue(survey.unsupportedTensors.contains { $0.typeName == "COMPLEX64" }, "\(survey.tensors)")
        XCTAssertThrowsError(try Graph(data: complex))

        let custom = try Data(contentsOf: folder.appendingPathComponent("unknown_custom_op.tflite"))
        let s2 = try custom.withUnsafeBytes { raw throws(ModelError) in try ModelSurvey(bytes: raw) }
        XCTAssertEqual(s2.unimplementedOperators.map(\.name), ["MyUnknownOp"])
        XCTAssertTrue(s2.operators.contains { $0.isImplemented })

        let sparse = try Data(contentsOf: Fixtures.directory("EngineTests").appendingPathComponent("keras_zoo/mobilenet_v2_035_96_sparse/model.tflite"))
        let s3 = try sparse.withUnsafeBytes { raw throws(ModelError) in try ModelSurvey(bytes: raw) }
        XCTAssertFalse(s3.sparseTensors.isEmpty)
        XCTAssertTrue(s3.unimplementedOperators.isEmpty && s3.unsupportedTensors.isEmpty)
    }
}
