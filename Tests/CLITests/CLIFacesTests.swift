import Foundation
import TestSupport
import XCTest

/// `faces` (MediaPipe's face detector) and `check --task faces`, with the model-zoo face models.
extension CLITests {
    /// A model-zoo model (`$SWIFTLITE_MODEL_ZOO` or `~/.cache/swiftlite/model_zoo`), or a skip
    /// naming the script that fetches it.
    func zooModel(_ name: String) throws -> String {
        let environment = ProcessInfo.processInfo.environment["SWIFTLITE_MODEL_ZOO"] ?? ""
        let zoo = environment.isEmpty
            ? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/swiftlite/model_zoo")
            : URL(fileURLWithPath: environment)
        let path = zoo.appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: path) else {
            throw XCTSkip("\(path) is missing: run `python3 Tests/Goldens/fetch_model_zoo.py` (CI does)")
        }
        return path
    }

    /// `faces --json` on two photos: one record per image, in input order, each face with its
    /// pixel box, one category (index 0) and six keypoints inside the unit square — the numbers
    /// MediaPipe 0.10.14 gives for Grace Hopper (`FaceDetectorTests` compares every photo).
    func testFacesJSON() throws {
        let model = try zooModel("face_detection_short_range.tflite")
        let hopper = try Fixtures.shared("images/grace_hopper.png").path
        let astronaut = Self.root.appendingPathComponent("Tests/TasksTests/Fixtures/faces/astronaut.jpg").path
        let output = try swiftlite("faces", "--model", model, "--json", hopper, astronaut)
        XCTAssertEqual(output.status, 0, output.stderr)
        let records = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(records.map { $0["image"] as? String }, [hopper, astronaut])
        for record in records {
            let faces = try XCTUnwrap(record["detections"] as? [[String: Any]])
            XCTAssertEqual(faces.count, 1, "\(record)")
            let face = try XCTUnwrap(faces.first)
            XCTAssertEqual((face["categories"] as? [[String: Any]])?.first?["index"] as? Int, 0)
            let points = try XCTUnwrap(face["keypoints"] as? [[String: Any]])
            XCTAssertEqual(points.count, 6)
            for p in points {
                let x = try XCTUnwrap(p["x"] as? Double), y = try XCTUnwrap(p["y"] as? Double)
                XCTAssertTrue((0 ... 1).contains(x) && (0 ... 1).contains(y), "\(p)")
            }
        }
        let box = try XCTUnwrap(((records[0]["detections"] as? [[String: Any]])?.first?["boundingBox"]) as? [String: Int])
        XCTAssertEqual(box, ["originX": 171, "originY": 147, "width": 194, "height": 194])
        let score = try XCTUnwrap(((records[0]["detections"] as? [[String: Any]])?.first?["categories"] as? [[String: Any]])?.first?["score"] as? Double)
        XCTAssertEqual(score, 0.935857355594635, accuracy: 2e-3)
    }

    func testFacesTextAnnotateAndErrors() throws {
        let model = try zooModel("face_detection_short_range.tflite")
        let face = try Fixtures.shared("images/face.jpg").path
        let out = try temporaryDirectory().appendingPathComponent("faces.png").path
        let text = try swiftlite("faces", "--model", model, "--min-confidence", "0.5", "--annotate", out, face)
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.hasPrefix("\(face): 2 faces\n  face 0.97 at (256, 70) 103x103; keypoints (0.550, 0.284)"), text.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: out))
        assertFails(try swiftlite("faces", "--model", model, "--min-confidence", "2", face), mentioning: "--min-confidence")
        // A classifier is no face model: the error names the model and the input size it has.
        let classifier = try swiftlite("faces", "--model", Self.efficientnetF32, face)
        XCTAssertEqual(classifier.status, 1)
        XCTAssertTrue(classifier.stderr.contains("224x224"), classifier.stderr)
        // A missing default model says how to get it.
        let missing = try runProcess(try XCTUnwrap(Self.executable), ["faces", face], stdin: nil, in: try temporaryDirectory(),
                                     environment: ["SWIFTLITE_MODEL_ZOO": "/nonexistent-zoo"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("fetch_model_zoo.py") && missing.stderr.contains("--model"), missing.stderr)
    }

    func testCheckFaces() throws {
        try assertCheck([try zooModel("face_detection_short_range.tflite"), "--task", "faces"], status: 0,
                        mentions: ["MediaPipe's short-range face anchors (896 boxes", "fits the face detector (faces)", "fits: yes"])
        try assertCheck([try zooModel("face_detection_full_range_sparse.tflite"), "--task", "faces"], status: 0,
                        mentions: ["full-range face anchors (2304 boxes", "fits: yes"])
        try assertCheck([model("efficientnet_lite0_int8.tflite"), "--task", "faces"], status: 1,
                        mentions: ["input [1, 224, 224, 3]: the face detector knows the anchors of MediaPipe's face models only", "fits: no"])
    }
}
