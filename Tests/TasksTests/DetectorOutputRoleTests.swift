import Engine
import Foundation
import XCTest
import Tasks
import TestSupport

/// TF2 Object Detection API-style SSDs (outputs reordered to scores, boxes, count, classes) through
/// `ObjectDetector`, against LiteRT BUILTIN_REF outputs recorded by
/// `Tests/Goldens/make_tf2_detector_goldens.py` (`Fixtures/tf2_detector/manifest.json`).
final class DetectorOutputRoleTests: XCTestCase {
    static let folder = Fixtures.directory("TasksTests").appendingPathComponent("tf2_detector")

    struct Case {
        let name: String, model: String, rule: String, count: Int, tolerance: Float
        let boxes: [[Float]], classes: [Float], scores: [Float]
    }

    func manifest() throws -> (cases: [Case], labels: [String]) {
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: Self.folder.appendingPathComponent("manifest.json"))) as? [String: Any])
        let cases = (json["cases"] as? [[String: Any]] ?? []).map { c in
            Case(name: c["name"] as? String ?? "", model: c["model"] as? String ?? "", rule: c["rule"] as? String ?? "",
                 count: c["count"] as? Int ?? -1, tolerance: (c["tolerance"] as? NSNumber)?.floatValue ?? 0,
                 boxes: (c["boxes"] as? [[NSNumber]] ?? []).map { $0.map(\.floatValue) },
                 classes: (c["classes"] as? [NSNumber] ?? []).map(\.floatValue),
                 scores: (c["scores"] as? [NSNumber] ?? []).map(\.floatValue))
        }
        return (cases, json["labels"] as? [String] ?? [])
    }

    func path(_ file: String) -> String { Self.folder.appendingPathComponent(file).path }

    func image() throws -> MPImage { try MPImage(contentsOf: Self.folder.appendingPathComponent("image.png")) }

    func detector(_ model: String, _ configure: (inout ObjectDetectorOptions) -> Void = { _ in }) throws -> ObjectDetector {
        var options = ObjectDetectorOptions(modelPath: path(model))
        configure(&options)
        return try ObjectDetector(options: options)
    }

    /// Each case's roles are decided by the rule the generator meant, and the detections are
    /// LiteRT's: same classes and order, scores within the case's tolerance (0 for the int8
    /// backbone; 2e-6 for float, see make_detection_goldens.py's BACKBONE_TOLERANCE), boxes as
    /// MediaPipe turns LiteRT's normalised boxes into pixels (exactly for int8; within a pixel for
    /// float, where a box edge within float noise of a pixel boundary may truncate either way).
    func testTF2ExportsGiveLiteRTsDetections() throws {
        let (cases, labels) = try manifest()
        XCTAssertEqual(cases.count, 4)
        let rules: [String: DetectionOutputRoles.Rule] = [
            "metadata": .metadata, "tensor names": .tensorNames, "post-process op outputs": .postProcessOutputs,
        ]
        let picture = try image()
        let size = Float(picture.width)
        for c in cases {
            let d = try detector(c.model)
            XCTAssertEqual(d.roles.rule, rules[c.rule], c.name)
            // TF2 order: scores, boxes, count, classes.
            XCTAssertEqual(d.roles.positions, [1, 3, 0, 2], c.name)
            let found = try d.detect(image: picture).detections
            XCTAssertEqual(found.count, c.count, c.name)
            for (i, det) in found.enumerated() where i < c.count {
                let category = det.categories[0]
                XCTAssertEqual(category.index, Int(c.classes[i]), "\(c.name) #\(i)")
                XCTAssertEqual(category.score, c.scores[i], accuracy: c.tolerance, "\(c.name) #\(i)")
                if c.rule == "metadata" { XCTAssertEqual(category.categoryName, labels[category.index], "\(c.name) #\(i)") }
                let b = c.boxes[i]
                let ymin = b[0], xmin = b[1], ymax = b[2], xmax = b[3]
                let expected = [max(0, Int(xmin * size)), max(0, Int(ymin * size)),
                                min(picture.width, Int((xmax - xmin) * size)), min(picture.height, Int((ymax - ymin) * size))]
                let box = det.boundingBox
                for (got, want) in zip([box.originX, box.originY, box.width, box.height], expected) {
                    XCTAssertLessThanOrEqual(abs(got - want), c.tolerance == 0 ? 0 : 1, "\(c.name) #\(i): box \(box) vs LiteRT's \(expected)")
                }
            }
        }
    }

    func testMetadataLabelsAreUsedUnlessTheUserNamesAFile() throws {
        let metadataDetector = try detector("tf2_ssd_metadata.tflite")
        XCTAssertEqual(metadataDetector.labelChoice.source, .metadata("labels.txt"))
        XCTAssertEqual(metadataDetector.labelChoice.labels?.names, ["circle", "square", "triangle"])

        let dir = try TaskFixtures.temporaryDirectory(self)
        let file = dir.appendingPathComponent("mine.txt")
        try "???\nred\ngreen\nblue\n".write(to: file, atomically: true, encoding: .utf8)
        let overridden = try detector("tf2_ssd_metadata.tflite") { $0.labelsPath = file.path }
        XCTAssertEqual(overridden.labelChoice.source, .file(file.path))
        XCTAssertEqual(overridden.labelChoice.droppedBackground, "???")
        XCTAssertEqual(overridden.labelChoice.labels?.names, ["red", "green", "blue"])
        XCTAssertTrue(overridden.labelChoice.description.contains("leading background line '???' skipped"), overridden.labelChoice.description)
        for d in try overridden.detect(image: image()).detections {
            XCTAssertEqual(d.categories[0].categoryName, ["red", "green", "blue"][d.categories[0].index])
        }
        XCTAssertEqual(try detector("tf2_ssd_role_names.tflite").labelChoice.source, .none)
    }

    func testTooFewLabelsExplainTheBackgroundRule() throws {
        let dir = try TaskFixtures.temporaryDirectory(self)
        let two = try TaskFixtures.labelFile(count: 2, in: dir)
        do {
            _ = try detector("tf2_ssd_exporter_names.tflite") { $0.labelsPath = two }
            XCTFail("2 labels for 3 classes were accepted")
        } catch {
            guard case TaskError.invalidLabels(let why)? = error as? TaskError else { return XCTFail("\(error)") }
            XCTAssertTrue(why.contains("2 labels") && why.contains("3 classes") && why.contains("background"), why)
        }
    }

    /// No metadata, role-less names, no post-process op: boxes [1, 6, 4] and count [1] by shape,
    /// the two [1, 6] outputs classes then scores in model order (MediaPipe's default order).
    func testShapeRuleDecidesWhenNothingElseDoes() throws {
        let plan = try Plan(graph: Graph(contentsOf: path("shapes_only.tflite")))
        let shapes = (0 ..< 4).map { plan.outputTensor($0).shape }
        let roles = try DetectionOutputRoles(plan: plan, metadata: nil)
        XCTAssertEqual(roles.rule, .shapeAndType)
        XCTAssertEqual(shapes[roles.boxes], [1, 6, 4])
        XCTAssertEqual(shapes[roles.count], [1])
        XCTAssertEqual([shapes[roles.classes], shapes[roles.scores]], [[1, 6], [1, 6]])
        XCTAssertLessThan(roles.classes, roles.scores)
        XCTAssertEqual(try detector("shapes_only.tflite").roles, roles)
    }

    func testUndecidableRolesAreATypedErrorNamingTheOutputs() throws {
        do {
            _ = try detector("undecidable_four_outputs.tflite")
            XCTFail("roles were decided")
        } catch {
            guard case TaskError.unsupportedModel(let why)? = error as? TaskError else { return XCTFail("\(error)") }
            XCTAssertTrue(why.contains("cannot tell which output is boxes, classes, scores and count"), why)
            XCTAssertTrue(why.contains("0 '") && why.contains("[1, 10] float32"), why)
        }
    }

    /// The real TF1 COCO SSD (outputs in op order, tensor names "TFLite_Detection_PostProcess:<n>")
    /// is decided by the op's slots; MediaPipe's person detector by its metadata.
    func testRealModelsRoles() throws {
        let coco = ObjectDetectorOptions(modelPath: try Fixtures.shared("models/ssd_mobilenet_v1_coco_quant.tflite").path)
        coco.labelsPath = try Fixtures.shared("models/labels/coco_labelmap.txt").path
        let d = try ObjectDetector(options: coco)
        XCTAssertEqual(d.roles.rule, .postProcessOutputs)
        XCTAssertEqual(d.roles.positions, [0, 1, 2, 3])
        XCTAssertEqual(d.labelChoice.droppedBackground, "???")
        let person = try ObjectDetector(modelPath: TaskFixtures.models.appendingPathComponent("person_detector_f32.tflite").path)
        XCTAssertEqual(person.roles.rule, .metadata)
        XCTAssertEqual(person.roles.positions, [0, 1, 2, 3])
    }

    func testEngineDescribesThePostProcessOp() throws {
        let plan = try Plan(graph: Graph(contentsOf: path("tf2_ssd_exporter_names.tflite")))
        let op = try XCTUnwrap(plan.detectionPostProcess)
        XCTAssertEqual(op.numClasses, 3)
        XCTAssertEqual(op.scoreColumns, 4, "3 classes and the background column")
        // TF2 order: the op's boxes are the model's output 1, classes 3, scores 0, count 2.
        XCTAssertEqual([op.boxes, op.classes, op.scores, op.count], [1, 3, 0, 2].map { plan.graph.outputs[$0] })
        XCTAssertEqual(plan.outputTensor(1).shape.last, 4)
        XCTAssertNil(try Graph(contentsOf: path("undecidable_four_outputs.tflite")).detectionPostProcess)
    }
}
