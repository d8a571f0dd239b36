import Foundation
import TestSupport
import XCTest

@testable import Engine
@testable import Tasks

/// YOLO-layout detectors through `ObjectDetector`, against Ultralytics' own pre- and
/// post-processing of LiteRT's outputs (`Tests/Goldens/make_yolo_goldens.py`): letterbox, scaled
/// boxes, confidence filter, class-aware NMS (v8: `ultralytics.utils.nms`; v5: the YOLOv5 repository's
/// steps), `scale_boxes` back onto the photo.
final class YOLODetectionTests: XCTestCase {
    static let directory = Fixtures.directory("TasksTests").appendingPathComponent("yolo")

    struct Golden: Decodable {
        let x1, y1, x2, y2: Float
        let score: Float
        let `class`: Int
    }

    struct Model: Decodable {
        let layout: String
        let iou: Float
        let images: [String: [Golden]]
    }

    struct Goldens: Decodable {
        let confidence: Float
        let models: [String: Model]
    }

    static func goldens() throws -> Goldens {
        try JSONDecoder().decode(Goldens.self, from: Data(contentsOf: directory.appendingPathComponent("goldens.json")))
    }

    /// Same detections in the same order: classes equal, scores and box corners within the given
    /// tolerances (SwiftLite's boxes are whole pixels: Ultralytics' float corners rounded).
    func compare(_ ours: [Detection], _ theirs: [Golden], scoreTolerance: Float, pixels: Float, _ what: String) {
        XCTAssertEqual(ours.count, theirs.count, "\(what): \(ours.map { ($0.categories[0].index, $0.categories[0].score) }) vs \(theirs.map { ($0.class, $0.score) })")
        for (i, (d, g)) in zip(ours, theirs).enumerated() {
            let c = d.categories[0]
            XCTAssertEqual(c.index, g.class, "\(what) #\(i)")
            XCTAssertEqual(c.score, g.score, accuracy: scoreTolerance, "\(what) #\(i)")
            let b = d.boundingBox
            for (a, e) in [(b.originX, g.x1), (b.originY, g.y1), (b.originX + b.width, g.x2), (b.originY + b.height, g.y2)] {
                XCTAssertLessThanOrEqual(abs(Float(a) - e), pixels, "\(what) #\(i): box \(b) vs (\(g.x1), \(g.y1), \(g.x2), \(g.y2))")
            }
        }
    }

    func detector(_ model: String) throws -> ObjectDetector {
        let options = ObjectDetectorOptions(modelPath: Self.directory.appendingPathComponent(model).path)
        return try ObjectDetector(options: options)
    }

    /// A 64×64 image in a 64×64 input: no resampling, so the input tensor is Ultralytics' own and
    /// only float rounding separates the results (corners within rounding to whole pixels).
    func testSquareImageMatchesUltralytics() throws {
        let goldens = try Self.goldens()
        let image = try MPImage(contentsOf: Self.directory.appendingPathComponent("square.png"))
        XCTAssertEqual(goldens.models.count, 4)
        for (name, model) in goldens.models.sorted(by: { $0.key < $1.key }) {
            let detector = try detector(name)
            XCTAssertEqual(detector.roles.rule, .yoloLayout)
            XCTAssertEqual(detector.roles.description, "boxes and class scores=output 0, no count output (by YOLO output layout)")
            let expected = try XCTUnwrap(model.images["square.png"])
            XCTAssertGreaterThan(expected.count, 10, "the golden should keep many boxes")
            compare(try detector.detect(image: image).detections, expected, scoreTolerance: 1e-5, pixels: 0.5 + 1e-3, "\(name) square.png")
        }
    }

    /// Photos letterboxed into the input: the resize differs from OpenCV's fixed-point bilinear by
    /// at most one 8-bit step per pixel (measured: scores within 5e-5, corners within rounding).
    func testLetterboxedPhotosMatchUltralytics() throws {
        let goldens = try Self.goldens()
        for (name, model) in goldens.models.sorted(by: { $0.key < $1.key }) {
            let detector = try detector(name)
            for (photo, expected) in model.images.sorted(by: { $0.key < $1.key }) where photo != "square.png" {
                let url = try Fixtures.shared("images/\(photo)")
                compare(try detector.detect(image: MPImage(contentsOf: url)).detections, expected,
                        scoreTolerance: 2e-4, pixels: 1.0, "\(name) \(photo)")
            }
        }
    }

    func testLayoutIsDecidedByShapeOrOption() throws {
        func output(_ shape: [Int], _ type: DataType = .float32) -> TensorDescriptor {
            TensorDescriptor(index: 0, name: "output0", dataType: type, shape: shape, shapeSignature: nil, quantization: nil,
                             isVariable: false, constantData: nil)
        }
        let v8 = try YOLODecoder(YOLOOptions(), outputs: [output([1, 84, 8400])])
        XCTAssertEqual(v8.layout, .v8); XCTAssertEqual(v8.classes, 80); XCTAssertEqual(v8.candidates, 8400)
        XCTAssertEqual(v8.iouThreshold, 0.7)
        let v5 = try YOLODecoder(YOLOOptions(), outputs: [output([1, 25200, 85], .int8)])
        XCTAssertEqual(v5.layout, .v5); XCTAssertEqual(v5.classes, 80); XCTAssertEqual(v5.candidates, 25200)
        XCTAssertEqual(v5.iouThreshold, 0.45)
        assertTaskError(try YOLODecoder(YOLOOptions(), outputs: [output([1, 9, 9])]), "unsupportedModel") { if case .unsupportedModel = $0 { true } else { false } }
        XCTAssertEqual(try YOLODecoder(YOLOOptions(layout: .v5), outputs: [output([1, 9, 9])]).classes, 4)
        // [1, N, 6]: an end-to-end export's final boxes to Ultralytics, unless the layout says v5.
        assertTaskError(try YOLODecoder(YOLOOptions(), outputs: [output([1, 300, 6])]), "unsupportedModel") { if case .unsupportedModel = $0 { true } else { false } }
        XCTAssertEqual(try YOLODecoder(YOLOOptions(layout: .v5), outputs: [output([1, 300, 6])]).classes, 1)
        assertTaskError(try YOLODecoder(YOLOOptions(layout: .v8), outputs: [output([1, 4, 100])]), "unsupportedModel") { if case .unsupportedModel = $0 { true } else { false } }
        assertTaskError(try YOLODecoder(YOLOOptions(), outputs: [output([1, 84, 8400]), output([1, 84, 8400])]), "unsupportedModel") { if case .unsupportedModel = $0 { true } else { false } }
        assertTaskError(try YOLODecoder(YOLOOptions(), outputs: [output([1, 84, 8400], .int32)]), "unsupportedModel") { if case .unsupportedModel = $0 { true } else { false } }
        assertTaskError(try YOLODecoder(YOLOOptions(iouThreshold: 1.5), outputs: [output([1, 84, 8400])]), "invalidOptions", isInvalidOptions)
        assertTaskError(try YOLODecoder(YOLOOptions(maxDetections: 0), outputs: [output([1, 84, 8400])]), "invalidOptions", isInvalidOptions)
    }

    /// Hard NMS as torchvision's: suppression only above the threshold (an IoU equal to it keeps
    /// the box), per class unless agnostic, score order with ties in candidate order, NaN never
    /// suppressing, `maxDetections` the best kept.
    func testSuppression() throws {
        let output = TensorDescriptor(index: 0, name: "o", dataType: .float32, shape: [1, 6, 10], shapeSignature: nil,
                                      quantization: nil, isVariable: false, constantData: nil)
        typealias Box = YOLODecoder.Box
        // Boxes [0, 10] × [0, 10] and [5, 15] × [0, 10]: intersection 50, union 150, IoU 1/3.
        let a = Box(x1: 0, y1: 0, x2: 10, y2: 10, score: 0.9, classIndex: 0)
        let b = Box(x1: 5, y1: 0, x2: 15, y2: 10, score: 0.8, classIndex: 0)
        let third = Float(50) / Float(150)
        XCTAssertEqual(try YOLODecoder(YOLOOptions(iouThreshold: third), outputs: [output]).suppress([b, a]), [a, b])
        XCTAssertEqual(try YOLODecoder(YOLOOptions(iouThreshold: third.nextDown), outputs: [output]).suppress([b, a]), [a])
        // Another class is not suppressed, unless agnostic.
        var other = b; other.classIndex = 1
        XCTAssertEqual(try YOLODecoder(YOLOOptions(iouThreshold: 0.1), outputs: [output]).suppress([a, other]), [a, other])
        XCTAssertEqual(try YOLODecoder(YOLOOptions(iouThreshold: 0.1, classAgnostic: true), outputs: [output]).suppress([a, other]), [a])
        // Equal scores: the earlier candidate first, and it wins.
        var tie = b; tie.score = a.score
        XCTAssertEqual(try YOLODecoder(YOLOOptions(iouThreshold: 0.1), outputs: [output]).suppress([tie, a]), [tie])
        // Zero-area boxes (IoU 0/0 is NaN) never suppress nor get suppressed.
        let point = Box(x1: 3, y1: 3, x2: 3, y2: 3, score: 0.95, classIndex: 0)
        XCTAssertEqual(try YOLODecoder(YOLOOptions(iouThreshold: 0.1), outputs: [output]).suppress([a, point]), [point, a])
        // maxDetections keeps the best.
        let far = Box(x1: 100, y1: 100, x2: 110, y2: 110, score: 0.5, classIndex: 0)
        XCTAssertEqual(try YOLODecoder(YOLOOptions(iouThreshold: 0.1, maxDetections: 1), outputs: [output]).suppress([far, a]), [a])
    }

    /// Decoding a hand-written v8 and v5 output: confidence strictly above the threshold, the best
    /// class (first of equal maxima), objectness × class for v5, NaN scores never chosen, boxes
    /// scaled by the input size.
    func testDecoding() throws {
        func decoder(_ shape: [Int], _ options: YOLOOptions = YOLOOptions()) throws -> YOLODecoder {
            try YOLODecoder(options, outputs: [TensorDescriptor(index: 0, name: "o", dataType: .float32, shape: shape, shapeSignature: nil,
                                                                quantization: nil, isVariable: false, constantData: nil)])
        }
        // v8, 2 classes, 5 candidates; rows cx, cy, w, h, class 0, class 1.
        let v8 = try decoder([1, 6, 5], YOLOOptions(layout: .v8))
        let rows: [[Float]] = [[0.5, 0.1, 0.9, 0.5, 0.5], [0.5, 0.1, 0.9, 0.5, 0.5], [0.2, 0.1, 0.1, 0.2, 0.2], [0.2, 0.1, 0.1, 0.2, 0.2],
                               [0.9, 0.25, 0.3, .nan, 0.6], [0.1, 0.2, 0.3, 0.7, 0.6]]
        let found = v8.boxes(rows.flatMap { $0 }, inputWidth: 100, inputHeight: 50, confidence: 0.25)
        // Candidate 1 scores exactly 0.25 (not above); 2 ties 0.3/0.3 → class 0; 3's NaN class 0
        // loses to 0.7; 4 (0.6) is 0's box and class, IoU 1 → suppressed; 3 is another class.
        XCTAssertEqual(found.map(\.score), [0.9, 0.7, 0.3])
        XCTAssertEqual(found.map(\.classIndex), [0, 1, 0])
        let first = try XCTUnwrap(found.first)
        XCTAssertEqual(first.x1, 50 - 10, accuracy: 1e-4); XCTAssertEqual(first.x2, 50 + 10, accuracy: 1e-4)
        XCTAssertEqual(first.y1, 25 - 5, accuracy: 1e-4); XCTAssertEqual(first.y2, 25 + 5, accuracy: 1e-4)
        // v5, 1 class: objectness 0.2 is not a candidate even with class score 1; 0.8 × 0.5 = 0.4 is.
        let v5 = try decoder([1, 2, 6], YOLOOptions(layout: .v5, normalizedBoxes: false))
        let v5Found = v5.boxes([10, 10, 4, 4, 0.2, 1, 20, 20, 4, 4, 0.8, 0.5], inputWidth: 64, inputHeight: 64, confidence: 0.25)
        XCTAssertEqual(v5Found.count, 1)
        XCTAssertEqual(v5Found.first?.score ?? 0, 0.4, accuracy: 1e-6)
        XCTAssertEqual(v5Found.first?.x1, 18)
        // A wrong element count decodes nothing rather than reading out of range.
        XCTAssertEqual(v5.boxes([1, 2, 3], inputWidth: 64, inputHeight: 64, confidence: 0.25), [])
    }

    /// Ultralytics' letterbox geometry: margins round(margin / 2 − 0.1), the scaled size rounded
    /// half to even, and the way back.
    func testLetterboxGeometry() {
        let wide = YOLOLetterbox(imageWidth: 640, imageHeight: 480, inputWidth: 64, inputHeight: 64)
        XCTAssertEqual([wide.scaledWidth, wide.scaledHeight, wide.left, wide.top], [64, 48, 0, 8])
        XCTAssertEqual(wide.imageX(32), 320); XCTAssertEqual(wide.imageY(8), 0); XCTAssertEqual(wide.imageY(56), 480)
        XCTAssertEqual(wide.imageY(60), 480, "clipped to the image")
        // 50 × 25 into 64: scaled 64 × 32, margins 16 top.
        let odd = YOLOLetterbox(imageWidth: 101, imageHeight: 50, inputWidth: 64, inputHeight: 64)
        // r = 64/101; 50 · r = 31.68 → 32; margin 32 → top round(16 − 0.1) = 16.
        XCTAssertEqual([odd.scaledWidth, odd.scaledHeight, odd.left, odd.top], [64, 32, 0, 16])
        // Margin 3 (odd): top round(1.4) = 1, bottom 2.
        let three = YOLOLetterbox(imageWidth: 64, imageHeight: 61, inputWidth: 64, inputHeight: 64)
        XCTAssertEqual([three.scaledHeight, three.top], [61, 1])
    }

    func testHostileShapesAreTypedErrors() throws {
        // A two-output model is not taken for YOLO; forcing it is a typed error naming the outputs.
        let face = Fixtures.directory("TasksTests").appendingPathComponent("hostile/face_128_wrong_box_count.tflite").path
        let options = ObjectDetectorOptions(modelPath: face)
        options.yolo = YOLOOptions(layout: .v8)
        assertTaskError(try ObjectDetector(options: options), "unsupportedModel") { if case .unsupportedModel = $0 { true } else { false } }
        let both = ObjectDetectorOptions(modelPath: Self.directory.appendingPathComponent("yolov8_float.tflite").path)
        both.yolo = YOLOOptions()
        both.rawOutputDecoding = SsdDecoding.face(inputSize: 128, minScore: 0.5, minSuppressionThreshold: 0.3)
        assertTaskError(try ObjectDetector(options: both), "invalidOptions", isInvalidOptions)
    }

    /// Labels, allow lists, maxResults and an explicit threshold apply as for any detector.
    func testLabelsThresholdAndCap() throws {
        let dir = try TaskFixtures.temporaryDirectory(self)
        let labels = dir.appendingPathComponent("labels.txt")
        try "zero\none\ntwo\n".write(to: labels, atomically: true, encoding: .utf8)
        let options = ObjectDetectorOptions(modelPath: Self.directory.appendingPathComponent("yolov8_float.tflite").path)
        options.labelsPath = labels.path
        options.scoreThreshold = 0.5
        options.maxResults = 3
        options.categoryAllowlist = ["one", "two"]
        let image = try MPImage(contentsOf: Self.directory.appendingPathComponent("square.png"))
        let result = try ObjectDetector(options: options).detect(image: image).detections
        XCTAssertLessThanOrEqual(result.count, 3)
        XCTAssertFalse(result.isEmpty)
        for d in result {
            XCTAssertTrue(["one", "two"].contains(d.categories[0].categoryName ?? ""))
            XCTAssertGreaterThan(d.categories[0].score, 0.5)
        }
        let tooFew = dir.appendingPathComponent("two.txt")
        try "zero\none\n".write(to: tooFew, atomically: true, encoding: .utf8)
        options.labelsPath = tooFew.path
        options.categoryAllowlist = []
        assertTaskError(try ObjectDetector(options: options), "invalidLabels", isInvalidLabels)
    }
}
