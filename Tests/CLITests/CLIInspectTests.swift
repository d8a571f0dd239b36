import Foundation
import TestSupport
import XCTest

/// `inspect` on what SwiftLite cannot run (exit 0, marked), detector output roles, label sources;
/// `--verbose` on detect, classify and label.
extension CLITests {
    static let unsupported = Fixtures.directory("EngineTests").appendingPathComponent("unsupported")
    static let tf2Detector = Fixtures.directory("TasksTests").appendingPathComponent("tf2_detector")

    func testInspectMarksComplexTensorsAndTheirOperators() throws {
        let model = Self.unsupported.appendingPathComponent("complex64_tensor.tflite").path
        let text = try swiftlite("inspect", model)
        XCTAssertEqual(text.status, 0, text.stderr)
        for expected in ["cannot run: 2 operators without a kernel (COMPLEX_ABS, RFFT2D); 2 tensors of unsupported type (COMPLEX64)",
                         "1 RFFT2D in=[4, 2] out=[5] [cannot run: no kernel in SwiftLite]", "[type COMPLEX64 unsupported]",
                         "note: not loadable by this engine"] {
            XCTAssertTrue(text.stdout.contains(expected), "missing '\(expected)' in:\n\(text.stdout)")
        }
        let json = try XCTUnwrap(try self.json(try swiftlite("inspect", "--json", model).stdout) as? [String: Any])
        let cannotRun = try XCTUnwrap(json["cannot_run"] as? [String: Any])
        XCTAssertEqual((cannotRun["operators"] as? [[String: Any]])?.compactMap { $0["name"] as? String }, ["RFFT2D", "COMPLEX_ABS"])
        XCTAssertEqual((cannotRun["tensors"] as? [[String: Any]])?.compactMap { $0["index"] as? Int }, [5, 6])
    }

    func testInspectMarksUnknownCustomOperatorsAndSparseTensors() throws {
        let custom = try swiftlite("inspect", Self.unsupported.appendingPathComponent("unknown_custom_op.tflite").path)
        XCTAssertEqual(custom.status, 0, custom.stderr)
        XCTAssertTrue(custom.stdout.contains("1 MyUnknownOp in=[3, 1] out=[4] [cannot run: no kernel in SwiftLite]"), custom.stdout)
        XCTAssertTrue(custom.stdout.contains("cannot run: 1 operator without a kernel (MyUnknownOp)"), custom.stdout)
        let sparse = Fixtures.directory("EngineTests").appendingPathComponent("keras_zoo/mobilenet_v2_035_96_sparse/model.tflite").path
        let s = try swiftlite("inspect", sparse)
        XCTAssertEqual(s.status, 0, s.stderr)
        XCTAssertTrue(s.stdout.contains("[sparse, densified at load]"), s.stdout)
        XCTAssertTrue(s.stdout.contains("SwiftLite has a kernel for every operator"), s.stdout)
    }

    func testInspectShowsDetectionRolesAndMetadataLabels() throws {
        let out = try swiftlite("inspect", Self.tf2Detector.appendingPathComponent("tf2_ssd_metadata.tflite").path)
        XCTAssertEqual(out.status, 0, out.stderr)
        XCTAssertTrue(out.stdout.contains("detection outputs: boxes=output 1, classes=output 3, scores=output 0, count=output 2 (by model metadata tensor names)"), out.stdout)
        XCTAssertTrue(out.stdout.contains("labels: output 3 from model metadata ('labels.txt')"), out.stdout)
        let exporter = try swiftlite("inspect", "--json", Self.tf2Detector.appendingPathComponent("tf2_ssd_exporter_names.tflite").path)
        let roles = try XCTUnwrap((try json(exporter.stdout) as? [String: Any])?["detection_outputs"] as? [String: Any])
        XCTAssertEqual(roles["rule"] as? String, "TFLite_Detection_PostProcess output slots")
        XCTAssertEqual([roles["boxes"], roles["classes"], roles["scores"], roles["count"]].compactMap { $0 as? Int }, [1, 3, 0, 2])
    }

    func testVerboseSaysWhereLabelsComeFrom() throws {
        let image = Self.tf2Detector.appendingPathComponent("image.png").path
        let labels = try temporaryDirectory().appendingPathComponent("labels.txt")
        try "???\nred\ngreen\nblue\n".write(to: labels, atomically: true, encoding: .utf8)
        let detect = try swiftlite("detect", "--verbose", "--model", Self.tf2Detector.appendingPathComponent("tf2_ssd_metadata.tflite").path,
                                   "--labels", labels.path, image)
        XCTAssertEqual(detect.status, 0, detect.stderr)
        XCTAssertTrue(detect.stderr.contains("labels: label file '\(labels.path)' (3 labels; leading background line '???' skipped)"), detect.stderr)
        XCTAssertTrue(detect.stderr.contains("detection outputs: boxes=output 1"), detect.stderr)
        let quiet = try swiftlite("detect", "--model", Self.tf2Detector.appendingPathComponent("tf2_ssd_metadata.tflite").path, image)
        XCTAssertEqual(quiet.stderr, "")
        XCTAssertTrue(quiet.stdout.contains("circle") || quiet.stdout.contains("square") || quiet.stdout.contains("triangle"), quiet.stdout)
        let classify = try swiftlite("classify", "--verbose", "--model", Self.efficientnetF32, Self.demoCat)
        XCTAssertTrue(classify.stderr.contains("labels: model metadata ("), classify.stderr)
        let label = try swiftlite("label", "--verbose", "--automl", Self.root.appendingPathComponent("Models/dog_breeds_automl").path, Self.demoCat)
        XCTAssertTrue(label.stderr.contains("labels: label file '") && label.stderr.contains("dict.txt"), label.stderr)
    }
}
