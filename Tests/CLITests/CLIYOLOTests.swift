import Foundation
import TestSupport
import XCTest

/// `detect` on YOLO-layout models: JSON like any detector, `--iou` and `--agnostic` reaching the
/// suppression, and `check` explaining the layout.
extension CLITests {
    static let yolo = root.appendingPathComponent("Tests/TasksTests/Fixtures/yolo")

    func yoloDetections(_ arguments: String...) throws -> [[String: Any]] {
        let output = try swiftlite(["detect", "--json", "--model", Self.yolo.appendingPathComponent("yolov8_float.tflite").path]
                                   + arguments + [Self.yolo.appendingPathComponent("square.png").path])
        XCTAssertEqual(output.status, 0, output.stderr)
        let records = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [[String: Any]])
        return try XCTUnwrap(records.first?["detections"] as? [[String: Any]])
    }

    /// The golden's counts for the square image (Ultralytics: 33 boxes at IoU 0.7, class-aware;
    /// `make_yolo_goldens.py`), fewer with a lower IoU or across classes.
    func testDetectJSONOnYOLO() throws {
        let goldens = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.yolo.appendingPathComponent("goldens.json"))) as? [String: Any])
        let models = try XCTUnwrap(goldens["models"] as? [String: [String: Any]])
        let images = try XCTUnwrap(models["yolov8_float.tflite"]?["images"] as? [String: [[String: Any]]])
        let expected = try XCTUnwrap(images["square.png"])
        let detections = try yoloDetections()
        XCTAssertEqual(detections.count, expected.count)
        for (d, e) in zip(detections, expected) {
            let category = try XCTUnwrap((d["categories"] as? [[String: Any]])?.first)
            XCTAssertEqual(category["index"] as? Int, e["class"] as? Int)
            let box = try XCTUnwrap(d["boundingBox"] as? [String: Int])
            XCTAssertEqual(Set(box.keys), ["originX", "originY", "width", "height"])
        }
        XCTAssertLessThan(try yoloDetections("--iou", "0.3").count, expected.count)
        XCTAssertLessThan(try yoloDetections("--agnostic").count, expected.count)
        XCTAssertEqual(try swiftlite("detect", "--iou", "2", "x.png").status, 2)
    }

    func testCheckExplainsYOLOLayout() throws {
        let output = try swiftlite("check", "--task", "detect", Self.yolo.appendingPathComponent("yolov5_float.tflite").path)
        XCTAssertEqual(output.status, 0, output.stdout + output.stderr)
        XCTAssertTrue(output.stdout.contains("YOLOv5 layout"), output.stdout)
        XCTAssertTrue(output.stdout.contains("fits: yes"), output.stdout)
    }
}
