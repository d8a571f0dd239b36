import Foundation
@testable import Tasks
import TestSupport
import XCTest

/// `ModelCheck`: the findings and verdicts behind `swiftlite check`.
final class ModelCheckTests: XCTestCase {
    func levels(_ report: ModelCheck, _ topic: String) -> [ModelCheck.Finding.Level] {
        report.findings.filter { $0.topic == topic }.map(\.level)
    }

    func testModelsFitTheirTasks() {
        let f32 = ModelCheck.run(modelPath: TaskFixtures.efficientnetF32, task: .classify)
        XCTAssertTrue(f32.fits, "\(f32.findings)")
        XCTAssertEqual(levels(f32, "scores"), [.ok])
        let detector = ModelCheck.run(modelPath: TaskFixtures.models.appendingPathComponent("person_detector_int8.tflite").path, task: .detect)
        XCTAssertTrue(detector.fits, "\(detector.findings)")
        XCTAssertTrue(detector.findings.contains { $0.topic == "roles" && $0.message.contains("by model metadata tensor names") }, "\(detector.findings)")
    }

    func testMismatchesAreProblems() {
        let asDetector = ModelCheck.run(modelPath: TaskFixtures.efficientnetInt8, task: .detect)
        XCTAssertFalse(asDetector.fits)
        XCTAssertEqual(levels(asDetector, "outputs"), [.problem])
        let bare = ModelCheck.run(modelPath: TaskFixtures.smallUnlabelled, task: .classify)
        XCTAssertFalse(bare.fits)
        XCTAssertEqual(levels(bare, "normalization"), [.problem])
        XCTAssertEqual(levels(bare, "scores"), [.note, .ok])
        XCTAssertEqual(levels(bare, "labels"), [.warning, .warning])
        let missing = ModelCheck.run(modelPath: "/nonexistent/model.tflite", task: .classify)
        XCTAssertEqual(missing.findings.map(\.level), [.problem])
        XCTAssertFalse(ModelCheck.run(modelPath: TaskFixtures.efficientnetF32, task: .faces).fits)
    }

    func testGarbageIsAProblemNotACrash() throws {
        let dir = try TaskFixtures.temporaryDirectory(self)
        for (i, bytes) in [[UInt8](), [UInt8](repeating: 0xFF, count: 200), Array(try Data(contentsOf: URL(fileURLWithPath: TaskFixtures.efficientnetInt8)).prefix(5000))].enumerated() {
            let path = dir.appendingPathComponent("bad\(i).tflite")
            try Data(bytes).write(to: path)
            let report = ModelCheck.run(modelPath: path.path, task: .classify)
            XCTAssertFalse(report.fits)
            XCTAssertTrue(report.findings.contains { $0.level == .problem }, "\(report.findings)")
        }
    }

    func testDetectionCap() throws {
        let ssd = Fixtures.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/models/ssd_mobilenet_v1_coco_quant.tflite").path
        guard FileManager.default.fileExists(atPath: ssd) else { throw XCTSkip("../shared not found: \(ssd) is missing") }
        let cap = try XCTUnwrap(DetectionCap(modelPath: ssd))
        XCTAssertEqual(cap.maxDetections, 10)
        XCTAssertEqual(cap.slots, 10)
        XCTAssertNil(cap.warning(maxResults: -1))
        XCTAssertNil(cap.warning(maxResults: 10))
        XCTAssertNotNil(cap.warning(maxResults: 11))
        XCTAssertNil(DetectionCap(modelPath: TaskFixtures.efficientnetInt8))
    }
}
