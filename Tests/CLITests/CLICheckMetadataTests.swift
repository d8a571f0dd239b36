import Foundation
import TestSupport
import XCTest

/// `check` (does a model fit a task, and why not) and `metadata write/show`.
extension CLITests {
    static let repoModels = Fixtures.repositoryRoot.appendingPathComponent("Models")
    static let sharedModels = Fixtures.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/models")

    func model(_ name: String) -> String { Self.repoModels.appendingPathComponent(name).path }

    func sharedModel(_ name: String) throws -> String {
        let path = Self.sharedModels.appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: path) else { throw XCTSkip("../shared not found: \(path) is missing") }
        return path
    }

    func assertCheck(_ arguments: [String], status: Int32, mentions texts: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let out = try swiftlite(["check"] + arguments)
        XCTAssertEqual(out.status, status, out.stdout + out.stderr, file: file, line: line)
        for text in texts {
            XCTAssertTrue(out.stdout.contains(text), "missing '\(text)' in:\n\(out.stdout)", file: file, line: line)
        }
    }

    func testCheckExplainsAClassifierUsedAsADetector() throws {
        try assertCheck([model("efficientnet_lite0_int8.tflite"), "--task", "detect"], status: 1,
                        mentions: ["problem outputs: one output [1, 1000]: this is a classifier (class scores), not a detector; use --task classify", "fits: no"])
        try assertCheck([model("person_detector_int8.tflite"), "--task", "classify"], status: 1,
                        mentions: ["it is an object detector (4 outputs: boxes, classes, scores, count)", "use --task detect"])
    }

    func testCheckExplainsAnSSDWithoutLabelsAndItsCap() throws {
        let ssd = try sharedModel("ssd_mobilenet_v1_coco_quant.tflite")
        try assertCheck([ssd, "--max-results", "20"], status: 0, mentions: [
            "as detect (guessed; set --task)",
            "ok      roles: boxes=output 0, classes=output 1, scores=output 2, count=output 3 (by TFLite_Detection_PostProcess output slots)",
            "warning labels: no labels (no label file in the metadata)",
            "warning cap: the model's TFLite_Detection_PostProcess returns at most 10 detections (max_detections 10), fewer than maxResults 20",
            "fits: yes"])
    }

    func testCheckExplainsAFloatModelWithoutNormalizationAndLogits() throws {
        let small = Fixtures.directory("EngineTests").appendingPathComponent("float/net_mobilenet_v1_025_128/model.tflite").path
        try assertCheck([small, "--task", "classify"], status: 1, mentions: [
            "problem normalization: float input without NormalizationOptions metadata: MediaPipe and ML Kit refuse the model",
            "--normalization MEAN,STD",
            "output 0 'StatefulPartitionedCall:1' [1, 10] float32 is not produced by SOFTMAX or LOGISTIC: it holds logits",
            "scoreActivation softmax",
            "output 1 'StatefulPartitionedCall:0' [1, 10] float32: softmax probabilities (scoreActivation none)"])
    }

    func testCheckExplainsAnUnsupportedOperator() throws {
        let custom = Self.unsupported.appendingPathComponent("unknown_custom_op.tflite").path
        try assertCheck([custom, "--task", "classify"], status: 1, mentions: ["problem operators: SwiftLite does not implement MyUnknownOp ×1"])
    }

    func testCheckAcceptsTheModelsForTheirTasks() throws {
        try assertCheck([model("efficientnet_lite0_f32.tflite")], status: 0, mentions: ["labels: output 0: model metadata ('labels.txt') (1000 labels)", "fits: yes"])
        try assertCheck([model("efficientnet_lite0_int8.tflite"), "--task", "label"], status: 0, mentions: ["fits the image labeler (label)"])
        try assertCheck([model("person_detector_f32.tflite"), "--task", "detect"], status: 0, mentions: ["note    weights:", "float16-stored", "fits: yes"])
        for name in ["mobilenet_v1_0.25_128_quant.tflite", "mobilenet_v2_1.0_224_quant.tflite", "mobilenet_v2_1.0_224_inat_bird_quant.tflite", "tf2_mobilenet_v2_1.0_224_ptq.tflite"] {
            guard FileManager.default.fileExists(atPath: Self.sharedModels.appendingPathComponent(name).path) else { continue }
            try assertCheck([try sharedModel(name), "--task", "classify"], status: 0, mentions: ["fits: yes"])
        }
    }

    func testCheckJSONAndUsage() throws {
        let out = try swiftlite("check", "--json", "--task", "detect", model("efficientnet_lite0_int8.tflite"))
        XCTAssertEqual(out.status, 1)
        let json = try XCTUnwrap(try self.json(out.stdout) as? [String: Any])
        XCTAssertEqual(json["fits"] as? Bool, false)
        XCTAssertEqual(json["task"] as? String, "detect")
        let findings = try XCTUnwrap(json["findings"] as? [[String: Any]])
        XCTAssertTrue(findings.contains { $0["level"] as? String == "problem" && $0["topic"] as? String == "outputs" })
        assertFails(try swiftlite("check", "--task", "bogus", model("efficientnet_lite0_int8.tflite")), mentioning: "--task must be classify, detect, label or faces")
        XCTAssertEqual(try swiftlite("check").status, 2)
        let faces = try swiftlite("check", "--task", "faces", model("person_detector_f32.tflite"))
        XCTAssertEqual(faces.status, 1)
        XCTAssertTrue(faces.stdout.contains("the face detector knows the anchors of MediaPipe's face models only"), faces.stdout)
    }

    func testMetadataWriteNeverTouchesItsInputAndWritesWhatTasksRead() throws {
        let dir = try temporaryDirectory()
        let input = dir.appendingPathComponent("in.tflite")
        try FileManager.default.copyItem(atPath: model("efficientnet_lite0_f32.tflite"), toPath: input.path)
        let before = try Data(contentsOf: input)
        let out = dir.appendingPathComponent("out.tflite").path
        let write = try swiftlite("metadata", "write", input.path, "--out", out, "--labels", model("imagenet_labels_1000.txt"),
                                  "--normalization", "127.5,127.5", "--name", "mine", "--score-threshold", "0.05")
        XCTAssertEqual(write.status, 0, write.stderr)
        XCTAssertTrue(write.stdout.hasPrefix("wrote \(out) ("), write.stdout)
        XCTAssertTrue(try Data(contentsOf: input) == before, "metadata write changed its input")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), ["in.tflite", "out.tflite"])
        let show = try swiftlite("metadata", "show", out)
        XCTAssertEqual(show.status, 0, show.stderr)
        for text in ["TFLite Metadata 'mine', min parser version 1.0.0", "input 0 'image', normalization mean [127.5] std [127.5]",
                     "output 0 'probability', score threshold 0.05, file imagenet_labels_1000.txt (tensorAxisLabels)",
                     "packed 'imagenet_labels_1000.txt': 1000 lines"] {
            XCTAssertTrue(show.stdout.contains(text), "missing '\(text)' in:\n\(show.stdout)")
        }
        let json = try XCTUnwrap(try self.json(try swiftlite("metadata", "show", "--json", out).stdout) as? [String: Any])
        XCTAssertEqual(json["name"] as? String, "mine")
        let classify = try swiftlite("classify", "--model", out, Self.repoModels.appendingPathComponent("demo/cat.png").path)
        XCTAssertEqual(classify.status, 0, classify.stderr)
        XCTAssertTrue(classify.stdout.contains("Egyptian cat"), classify.stdout)
        XCTAssertFalse(classify.stdout.contains("plastic bag"), "the written threshold 0.05 should drop it: \(classify.stdout)")
    }

    func testMetadataWriteRefusesAndLeavesNoOutput() throws {
        let dir = try temporaryDirectory()
        let out = dir.appendingPathComponent("out.tflite").path
        let labels = dir.appendingPathComponent("labels.txt")
        try (0 ..< 999).map { "c\($0)" }.joined(separator: "\n").write(to: labels, atomically: true, encoding: .utf8)
        let f32 = model("efficientnet_lite0_f32.tflite")
        assertFails(try swiftlite("metadata", "write", f32, "--out", out, "--labels", labels.path),
                    mentioning: "refusing to write metadata: the label file has 999 lines; output 'StatefulPartitionedCall:0' scores 1000 classes")
        assertFails(try swiftlite("metadata", "write", model("efficientnet_lite0_int8.tflite"), "--out", out, "--normalization", "0,1"),
                    mentioning: "an integer input takes the pixels as they are")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["labels.txt"])
        let same = try swiftlite("metadata", "write", f32, "--out", f32)
        XCTAssertEqual(same.status, 2)
        XCTAssertTrue(same.stderr.contains("never overwrites its input"), same.stderr)
        XCTAssertEqual(try swiftlite("metadata", "write", f32).status, 2)
        XCTAssertEqual(try swiftlite("metadata", "write", f32, "--out", out, "--normalization", "a,b").status, 2)
        XCTAssertEqual(try swiftlite("metadata", "write", f32, "--out", out, "--output-roles", "boxes,oops").status, 2)
        XCTAssertEqual(try swiftlite("metadata", "frob", f32).status, 2)
        XCTAssertEqual(try swiftlite("metadata", "show", f32, "--out", out).status, 2)
        let garbage = dir.appendingPathComponent("garbage.tflite")
        try Data(repeating: 0x41, count: 100).write(to: garbage)
        assertFails(try swiftlite("metadata", "write", garbage.path, "--out", out, "--normalization", "0,1"), mentioning: "cannot rewrite the model")
    }
}

/// `detect`'s detection-cap warnings: once per run, not per image.
extension CLITests {
    func testDetectWarnsOnceWhenTheModelsCapBinds() throws {
        let ssd = try sharedModel("ssd_mobilenet_v1_coco_quant.tflite")
        let cat = Self.repoModels.appendingPathComponent("demo/cat.png").path
        let capped = try swiftlite("detect", "--model", ssd, "--max-results", "20", cat, cat)
        XCTAssertEqual(capped.status, 0, capped.stderr)
        XCTAssertEqual(capped.stderrLines, ["warning: the model's TFLite_Detection_PostProcess returns at most 10 detections (max_detections 10), fewer than maxResults 20: images with more objects lose the lower-scoring ones"])
        let quiet = try swiftlite("detect", "--model", ssd, "--max-results", "10", cat)
        XCTAssertEqual(quiet.stderr, "")
        let verbose = try swiftlite("detect", "--verbose", "--model", ssd, cat, cat, cat)
        XCTAssertEqual(verbose.stderrLines.filter { $0.contains("filled all 10 detection slots") }.count, 1, verbose.stderr)
    }
}
