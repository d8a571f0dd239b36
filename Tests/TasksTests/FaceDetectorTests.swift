import Foundation
import XCTest
@testable import Tasks
import TestSupport

/// `FaceDetector` and the raw-output SSD pieces under it (anchors, box decoding, weighted NMS),
/// against MediaPipe 0.10.14's own FaceDetector (`Tests/Goldens/make_mediapipe_face_goldens.py`).
final class FaceDetectorTests: XCTestCase {
    /// `$SWIFTLITE_MODEL_ZOO`, else `~/.cache/swiftlite/model_zoo` (as `fetch_model_zoo.py`).
    static var zooDirectory: URL {
        if let path = ProcessInfo.processInfo.environment["SWIFTLITE_MODEL_ZOO"], !path.isEmpty { return URL(fileURLWithPath: path) }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/swiftlite/model_zoo")
    }

    static let goldens = Fixtures.directory("TasksTests").appendingPathComponent("mediapipe_face")

    /// A model-zoo model, or an `XCTSkip` naming the script that fetches it.
    func zooModel(_ name: String) throws -> String {
        let url = Self.zooDirectory.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("\(url.path) is missing: run `python3 Tests/Goldens/fetch_model_zoo.py` to fetch the model zoo (CI does)")
        }
        return url.path
    }

    func json(_ name: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.goldens.appendingPathComponent(name))) as? [String: Any])
    }

    // MARK: - Anchors

    /// Counts and sampled anchors against MediaPipe's `ssd_anchors_calculator` semantics, computed
    /// independently in numpy by the golden script (both face models, and an SSD MobileNet
    /// configuration that exercises anchor sizes, several aspect ratios and the reduced lowest layer).
    func testAnchorsMatchMediaPipeSemantics() throws {
        let configs = try XCTUnwrap(try json("anchors.json")["configs"] as? [String: [String: Any]])
        let ours: [String: SsdAnchorOptions] = {
            var mobilenet = SsdAnchorOptions(numLayers: 6, minScale: 0.2, maxScale: 0.95, inputSizeHeight: 300, inputSizeWidth: 300,
                                             strides: [16, 32, 64, 128, 256, 512], aspectRatios: [1, 2, 0.5, 3, 0.3333])
            mobilenet.reduceBoxesInLowestLayer = true
            return ["short_range_128": .faceShortRange, "full_range_192": .faceFullRange, "ssd_mobilenet_300": mobilenet]
        }()
        XCTAssertEqual(Set(configs.keys), Set(ours.keys))
        for (name, options) in ours {
            let golden = try XCTUnwrap(configs[name])
            let anchors = try options.anchors()
            XCTAssertEqual(anchors.count, golden["count"] as? Int, name)
            XCTAssertEqual(try options.anchorCount(), anchors.count, name)
            for sample in try XCTUnwrap(golden["samples"] as? [[String: Any]]) {
                let i = try XCTUnwrap(sample["index"] as? Int)
                let a = anchors[i]
                let expected = ["x_center", "y_center", "w", "h"].map { (sample[$0] as? NSNumber)?.floatValue ?? .nan }
                XCTAssertEqual([a.xCenter, a.yCenter, a.width, a.height], expected, "\(name) anchor \(i)")
            }
        }
        XCTAssertEqual(try SsdAnchorOptions.faceShortRange.anchors().count, 896)
        XCTAssertEqual(try SsdAnchorOptions.faceFullRange.anchors().count, 2304)
    }

    func testInconsistentAnchorOptionsAreTypedErrors() {
        var options = SsdAnchorOptions.faceShortRange
        options.strides = [8, 16]
        assertTaskError(try options.anchors(), "invalidOptions", isInvalidOptions)
        options = .faceShortRange
        options.featureMapHeights = [16]
        assertTaskError(try options.anchors(), "invalidOptions", isInvalidOptions)
        options = .faceShortRange
        options.inputSizeWidth = Int.max
        assertTaskError(try options.anchors(), "invalidOptions", isInvalidOptions)
        options = .faceShortRange
        options.strides = [0, 16, 16, 16]
        assertTaskError(try options.anchors(), "invalidOptions", isInvalidOptions)
    }

    // MARK: - Box decoding

    /// One anchor at the centre, size 1; face-style rows (x, y, w, h, then one keypoint), scale 128.
    func testBoxDecodingFollowsTensorsToDetections() throws {
        var options = BoxDecodingOptions(numClasses: 1, numBoxes: 3, numCoords: 6, xScale: 128, yScale: 128, wScale: 128, hScale: 128)
        options.keypointCoordOffset = 4; options.numKeypoints = 1
        options.reverseOutputOrder = true; options.sigmoidScore = true; options.scoreClippingThresh = 100
        options.minScoreThresh = 0.5
        try options.validate()
        let anchor = Anchor(xCenter: 0.5, yCenter: 0.5, width: 1, height: 1)
        let boxes: [Float] = [12.8, -12.8, 64, 32, 25.6, 0,     // box 0: centre (0.6, 0.4), size 0.5 × 0.25
                              0, 0, 16, 16, 0, 0,               // box 1: score below the threshold
                              0, 0, -16, 16, 0, 0]              // box 2: negative width, dropped
        let scores: [Float] = [200, -1, 5]
        let decoded = options.decode(boxes: boxes, scores: scores, anchors: [anchor, anchor, anchor])
        XCTAssertEqual(decoded.count, 1)
        let d = try XCTUnwrap(decoded.first)
        XCTAssertEqual(d.xmin, 0.35, accuracy: 1e-6); XCTAssertEqual(d.ymin, 0.275, accuracy: 1e-6)
        XCTAssertEqual(d.width, 0.5, accuracy: 1e-6); XCTAssertEqual(d.height, 0.25, accuracy: 1e-6)
        XCTAssertEqual(d.keypoints[0].x, 0.7, accuracy: 1e-6); XCTAssertEqual(d.keypoints[0].y, 0.5, accuracy: 1e-6)
        // 200 is clipped to 100 before the sigmoid: 1 / (1 + e^-100) rounds to 1 in float32.
        XCTAssertEqual(d.score, 1)
        // y-first order (reverseOutputOrder false) reads the same row transposed.
        options.numBoxes = 1
        options.reverseOutputOrder = false
        let transposed = options.decode(boxes: [-12.8, 12.8, 32, 64, 0, 25.6], scores: [200], anchors: [anchor])
        XCTAssertEqual(transposed.first?.xmin ?? .nan, 0.35, accuracy: 1e-6)
        XCTAssertEqual(transposed.first?.keypoints[0].x ?? .nan, 0.7, accuracy: 1e-6)
        // Exponential sizes: w = exp(w / wScale) · anchor.width.
        options.applyExponentialOnBoxSize = true
        let exponential = options.decode(boxes: [0, 0, 0, 128, 0, 0], scores: [200], anchors: [anchor])
        XCTAssertEqual(exponential.first?.width ?? .nan, Float(M_E), accuracy: 1e-5)
        XCTAssertEqual(exponential.first?.height ?? .nan, 1, accuracy: 1e-6)
        // Short tensors give nothing rather than a trap.
        XCTAssertEqual(options.decode(boxes: [1, 2], scores: [], anchors: [anchor]), [])
    }

    func testInconsistentBoxDecodingIsTypedError() {
        var options = BoxDecodingOptions.face(inputSize: 128, numBoxes: 896, minScoreThresh: 0.5)
        options.numCoords = 15
        assertTaskError(try options.validate(), "invalidOptions", isInvalidOptions)
        options = .face(inputSize: 128, numBoxes: 896, minScoreThresh: 0.5)
        options.numValuesPerKeypoint = 3
        assertTaskError(try options.validate(), "invalidOptions", isInvalidOptions)
        options = .face(inputSize: 128, numBoxes: 896, minScoreThresh: 0.5)
        options.xScale = 0
        assertTaskError(try options.validate(), "invalidOptions", isInvalidOptions)
    }

    // MARK: - Non-max suppression

    func detection(_ x: Float, _ y: Float, _ w: Float, _ h: Float, score: Float, point: (Float, Float) = (0, 0)) -> NormalizedDetection {
        NormalizedDetection(xmin: x, ymin: y, width: w, height: h, score: score, classIndex: 0,
                            keypoints: [NormalizedKeypoint(x: point.0, y: point.1)])
    }

    /// A (0.9) and B (0.6) overlap by IoU 0.036 / 0.044 ≈ 0.82; C (0.8) stands apart. Weighted NMS
    /// outputs A with its corners and keypoint replaced by the 0.9/0.6-weighted means of A and B
    /// (xmin (0.1·0.9 + 0.12·0.6) / 1.5 = 0.108, xmax (0.3·0.9 + 0.32·0.6) / 1.5 = 0.308), then C.
    func testWeightedNonMaxSuppressionAveragesOverlaps() {
        let a = detection(0.1, 0.1, 0.2, 0.2, score: 0.9, point: (0.2, 0.2))
        let b = detection(0.12, 0.1, 0.2, 0.2, score: 0.6, point: (0.25, 0.3))
        let c = detection(0.6, 0.6, 0.1, 0.1, score: 0.8, point: (0.65, 0.65))
        let nms = NonMaxSuppressionOptions(algorithm: .weighted, minSuppressionThreshold: 0.3)
        let out = nms.apply([b, c, a])
        XCTAssertEqual(out.count, 2)
        XCTAssertEqual(out[0].score, 0.9)
        XCTAssertEqual(out[0].xmin, 0.108, accuracy: 1e-6); XCTAssertEqual(out[0].ymin, 0.1, accuracy: 1e-6)
        XCTAssertEqual(out[0].width, 0.2, accuracy: 1e-6); XCTAssertEqual(out[0].height, 0.2, accuracy: 1e-6)
        XCTAssertEqual(out[0].keypoints[0].x, 0.22, accuracy: 1e-6)   // (0.2·0.9 + 0.25·0.6) / 1.5
        XCTAssertEqual(out[0].keypoints[0].y, 0.24, accuracy: 1e-6)   // (0.2·0.9 + 0.3·0.6) / 1.5
        assertClose(out[1], c)
        // A threshold above their overlap keeps all three by score. Each is still "averaged" with
        // itself, as in MediaPipe, so its size may move by a float32 rounding.
        let separate = NonMaxSuppressionOptions(algorithm: .weighted, minSuppressionThreshold: 0.9).apply([b, c, a])
        XCTAssertEqual(separate.map(\.score), [0.9, 0.8, 0.6])
        for (o, e) in zip(separate, [a, c, b]) { assertClose(o, e) }
        // The default algorithm drops B and keeps A as it is; maxResults caps it.
        var plain = NonMaxSuppressionOptions(algorithm: .default, minSuppressionThreshold: 0.3)
        XCTAssertEqual(plain.apply([b, c, a]), [a, c])
        plain.maxResults = 1
        XCTAssertEqual(plain.apply([b, c, a]), [a])
        // A best box without area overlaps nothing, itself included: MediaPipe outputs it and stops.
        let flat = detection(0.5, 0.5, 0, 0.1, score: 0.95)
        XCTAssertEqual(nms.apply([a, flat, c]), [flat])
    }

    func assertClose(_ a: NormalizedDetection, _ b: NormalizedDetection, file: StaticString = #filePath, line: UInt = #line) {
        let x = [a.xmin, a.ymin, a.width, a.height] + a.keypoints.flatMap { [$0.x, $0.y] }
        let y = [b.xmin, b.ymin, b.width, b.height] + b.keypoints.flatMap { [$0.x, $0.y] }
        XCTAssertEqual(x.count, y.count, file: file, line: line)
        XCTAssertLessThan(zip(x, y).map { abs($0 - $1) }.max() ?? .infinity, 1e-6, "\(a) vs \(b)", file: file, line: line)
        XCTAssertEqual(a.score, b.score, file: file, line: line)
    }

    func testOverlapTypes() {
        let a = detection(0, 0, 0.4, 0.4, score: 1), b = detection(0.2, 0.2, 0.4, 0.4, score: 1)
        // Intersection 0.04; areas 0.16; union 0.28; enclosing box 0.36.
        XCTAssertEqual(NonMaxSuppressionOptions.overlap(.intersectionOverUnion, a, b), 0.04 / 0.28, accuracy: 1e-6)
        XCTAssertEqual(NonMaxSuppressionOptions.overlap(.jaccard, a, b), 0.04 / 0.36, accuracy: 1e-6)
        XCTAssertEqual(NonMaxSuppressionOptions.overlap(.modifiedJaccard, a, b), 0.04 / 0.16, accuracy: 1e-6)
        XCTAssertEqual(NonMaxSuppressionOptions.overlap(.intersectionOverUnion, a, detection(0.5, 0.5, 0.1, 0.1, score: 1)), 0)
    }

    // MARK: - Letterbox

    /// A 512×600 image in a 128×128 input is widened to 600×600 about its centre: 44 px of black
    /// each side, so input x 0…1 covers image x −44/512 … 556/512.
    func testLetterboxProjection() {
        let box = Letterbox(imageWidth: 512, imageHeight: 600, inputWidth: 128, inputHeight: 128)
        XCTAssertEqual(box.x, -44); XCTAssertEqual(box.y, 0); XCTAssertEqual(box.width, 600); XCTAssertEqual(box.height, 600)
        let (x0, y0) = box.project(0, 0), (x1, y1) = box.project(1, 1)
        XCTAssertEqual(x0, -44 / 512, accuracy: 1e-6); XCTAssertEqual(x1, 556 / 512, accuracy: 1e-6)
        XCTAssertEqual(y0, 0, accuracy: 1e-6); XCTAssertEqual(y1, 1, accuracy: 1e-6)
    }

    // MARK: - MediaPipe agreement

    /// Every photo of the golden (../shared/images and the committed astronaut), at both recorded
    /// confidences: the same faces in the same order, boxes within 2 px, scores within 2e-3,
    /// keypoints within 0.005 (the issue's bounds). Short range: MediaPipe 0.10.14.
    func testMediaPipeAgreementShortRange() throws { try checkAgreement("face_detection_short_range") }

    /// The full-range model (192×192, 2304 anchors): MediaPipe 0.10.14 refuses it (its face graph
    /// hard-codes the 896 short-range anchors), so this golden is MediaPipe 1.2.3's, whose graph
    /// picks the anchors by input size as `SsdDecoding.face` does. Measured: boxes 0 px apart,
    /// keypoints 1.8e-4, scores 1e-7 except one, 8.4e-4 — parrot.png's 0.32 false positive at
    /// confidence 0.3. Its letterbox step, 929/192 px, is no binary fraction, so some source
    /// positions are exact 1/64-pixel ties that OpenCV's floating-point warp matrix rounds by
    /// noise (forcing every tie up or down moves that score by +0.002 / −0.008); on square photos
    /// of 256…512 px and on grace_hopper padded to 600×600 the scores agree to 1e-7.
    func testMediaPipeAgreementFullRange() throws { try checkAgreement("face_detection_full_range_sparse") }

    func checkAgreement(_ name: String) throws {
        let golden = try json("\(name).json")
        let model = try zooModel(try XCTUnwrap((golden["model"] as? [String: Any])?["file"] as? String))
        var worstBox = 0, worstScore: Float = 0, worstPoint: Float = 0, faces = 0, failures = [String]()
        for run in try XCTUnwrap(golden["runs"] as? [[String: Any]]) {
            let options = FaceDetectorOptions(modelPath: model)
            options.minDetectionConfidence = try XCTUnwrap((run["min_detection_confidence"] as? NSNumber)?.floatValue)
            options.minSuppressionThreshold = try XCTUnwrap((run["min_suppression_threshold"] as? NSNumber)?.floatValue)
            let detector = try FaceDetector(options: options)
            for entry in try XCTUnwrap(run["images"] as? [[String: Any]]) {
                let file = try XCTUnwrap(entry["file"] as? String)
                let url = entry["relative_to"] as? String == "../shared" ? try Fixtures.shared(file) : Fixtures.repositoryRoot.appendingPathComponent(file)
                let label = "\(file) @ \(options.minDetectionConfidence)"
                let ours = try detector.detect(image: MPImage(contentsOf: url)).detections
                let theirs = try XCTUnwrap(entry["detections"] as? [[String: Any]])
                guard ours.count == theirs.count else {
                    failures.append("\(label): \(ours.count) faces, MediaPipe \(theirs.count): ours \(ours.map(\.boundingBox))")
                    continue
                }
                for (o, t) in zip(ours, theirs) {
                    faces += 1
                    let b = t["bounding_box"] as? [String: Any] ?? [:]
                    let box = ["origin_x", "origin_y", "width", "height"].map { (b[$0] as? NSNumber)?.intValue ?? .min / 2 }
                    let ob = o.boundingBox
                    let dBox = zip([ob.originX, ob.originY, ob.width, ob.height], box).map { abs($0 - $1) }.max() ?? .max
                    let dScore = abs(o.categories[0].score - ((t["score"] as? NSNumber)?.floatValue ?? .nan))
                    let points = (t["keypoints"] as? [[String: Any]] ?? []).map { p in
                        ((p["x"] as? NSNumber)?.floatValue ?? .nan, (p["y"] as? NSNumber)?.floatValue ?? .nan)
                    }
                    let ourPoints = o.keypoints ?? []
                    var dPoint: Float = ourPoints.count == points.count && points.count == 6 ? 0 : .infinity
                    for (k, p) in zip(ourPoints, points) { dPoint = max(dPoint, abs(k.x - p.0), abs(k.y - p.1)) }
                    worstBox = max(worstBox, dBox); worstScore = max(worstScore, dScore); worstPoint = max(worstPoint, dPoint)
                    XCTAssertEqual(o.categories[0].index, 0)
                    if dBox > 2 || !(dScore <= 2e-3) || !(dPoint <= 0.005) {
                        failures.append("\(label): box \(ob) score \(o.categories[0].score), MediaPipe \(box) \(t["score"] ?? "?"); keypoints off by \(dPoint)")
                    }
                }
            }
        }
        let version = (golden["versions"] as? [String: Any])?["mediapipe"] as? String ?? "?"
        print("MediaPipe \(version) face agreement (\(name)): \(faces) faces, max box difference \(worstBox) px, "
              + "max score difference \(worstScore), max keypoint difference \(worstPoint)")
        XCTAssertGreaterThan(faces, 5)
        XCTAssertEqual(failures, [], "\(failures.count) disagreements with MediaPipe")
    }

    // MARK: - ObjectDetector with anchor options

    /// The generic detector takes the face model when given its anchors. It stretches the image
    /// (MediaPipe's object detector) where the face detector letterboxes, so on a square photo —
    /// where the two sample the same pixels — both find the same face with the same numbers.
    func testObjectDetectorDecodesRawOutputsWithAnchorOptions() throws {
        let model = try zooModel("face_detection_short_range.tflite")
        let options = ObjectDetectorOptions(modelPath: model)
        options.rawOutputDecoding = SsdDecoding.face(inputSize: 128, minScore: 0.5, minSuppressionThreshold: 0.3)
        let detector = try ObjectDetector(options: options)
        XCTAssertEqual(detector.roles.rule, .anchorDecoding)
        XCTAssertEqual([detector.roles.boxes, detector.roles.scores], [0, 1])
        let astronaut = try MPImage(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("Tests/TasksTests/Fixtures/faces/astronaut.jpg"))
        let generic = try detector.detect(image: astronaut).detections
        let faces = try FaceDetector(modelPath: model).detect(image: astronaut).detections
        XCTAssertEqual(generic.count, 1)
        XCTAssertEqual(generic.map(\.boundingBox), faces.map(\.boundingBox))
        XCTAssertEqual(generic.map(\.keypoints), faces.map(\.keypoints))
        XCTAssertEqual(generic.first?.categories.first?.score, faces.first?.categories.first?.score)
        // maxResults and scoreThreshold apply after the decoding.
        options.scoreThreshold = 0.99
        XCTAssertEqual(try ObjectDetector(options: options).detect(image: astronaut).detections, [])

        // Anchor options that do not fit the model are typed errors naming the problem.
        options.scoreThreshold = nil
        options.rawOutputDecoding = SsdDecoding.face(inputSize: 192, minScore: 0.5, minSuppressionThreshold: 0.3)
        do {
            _ = try ObjectDetector(options: options)
            XCTFail("2304-anchor decoding accepted for an 896-box model")
        } catch {
            guard case .unsupportedModel(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("[1, 2304, 16]") && message.contains("[1, 896, 16]"), message)
        }
        var mismatched = SsdDecoding.face(inputSize: 128, minScore: 0.5, minSuppressionThreshold: 0.3)!
        mismatched.boxes.numBoxes = 900
        options.rawOutputDecoding = mismatched
        assertTaskError(try ObjectDetector(options: options), "invalidOptions", isInvalidOptions)
        // A post-process SSD with raw decoding options: four outputs, not two.
        let ssd = ObjectDetectorOptions(modelPath: TaskFixtures.models.appendingPathComponent("person_detector_f32.tflite").path)
        ssd.rawOutputDecoding = SsdDecoding.face(inputSize: 128, minScore: 0.5, minSuppressionThreshold: 0.3)
        do {
            _ = try ObjectDetector(options: ssd)
            XCTFail("a four-output model accepted with raw decoding")
        } catch {
            guard case .unsupportedModel(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("needs 2 outputs"), message)
        }
    }

    // MARK: - Modes, orientation, hostile inputs

    func testRotatedImageGivesBoxesInTheStoredFrame() throws {
        let detector = try FaceDetector(modelPath: try zooModel("face_detection_short_range.tflite"))
        let upright = try MPImage(contentsOf: Fixtures.shared("images/grace_hopper.png"))
        // Stored turned a quarter counterclockwise, tagged .right so that the upright picture is the original.
        let stored = MPImage(unchecked: upright.pixels, width: upright.width, height: upright.height, orientation: .left).applyingOrientation()
        let tagged = try MPImage(pixels: stored.pixels, width: stored.width, height: stored.height, orientation: .right)
        XCTAssertEqual(tagged.applyingOrientation().pixels, upright.pixels)
        let a = try XCTUnwrap(detector.detect(image: upright).detections.first)
        let r = try XCTUnwrap(detector.detect(image: tagged).detections.first)
        // Stored x runs along upright y: the box's sizes swap, and keypoint 0 lands at the same place.
        XCTAssertLessThanOrEqual(abs(r.boundingBox.width - a.boundingBox.height), 1)
        XCTAssertLessThanOrEqual(abs(r.boundingBox.height - a.boundingBox.width), 1)
        XCTAssertEqual(r.categories[0].score, a.categories[0].score, accuracy: 1e-6)
        let back = RegionOfInterest(x: Double(r.keypoints![0].x), y: Double(r.keypoints![0].y), width: 0, height: 0).inUprightFrame(of: .right)
        XCTAssertEqual(Float(back.x), a.keypoints![0].x, accuracy: 1e-5)
        XCTAssertEqual(Float(back.y), a.keypoints![0].y, accuracy: 1e-5)
    }

    func testAsyncVariantsMatchTheSynchronousOnes() async throws {
        let model = try zooModel("face_detection_short_range.tflite")
        let image = try MPImage(contentsOf: Fixtures.shared("images/face.jpg"))
        let detector = try FaceDetector(modelPath: model)
        let awaited = try await detector.detect(image: image)
        // A non-async closure picks the synchronous overload.
        let synchronous = try { () throws -> FaceDetectorResult in try detector.detect(image: image) }()
        XCTAssertEqual(awaited, synchronous)
        XCTAssertEqual(awaited.detections.count, 2)
        let options = FaceDetectorOptions(modelPath: model)
        options.runningMode = .video
        let video = try FaceDetector(options: options)
        let frame = try await video.detect(videoFrame: image, timestampInMilliseconds: 40)
        XCTAssertEqual(frame.detections, awaited.detections)
        XCTAssertEqual(frame.timestampInMilliseconds, 40)
    }

    func testVideoAndLiveStreamModes() throws {
        let model = try zooModel("face_detection_short_range.tflite")
        let image = try MPImage(contentsOf: Fixtures.shared("images/grace_hopper.png"))
        let options = FaceDetectorOptions(modelPath: model)
        options.runningMode = .video
        let video = try FaceDetector(options: options)
        XCTAssertEqual(try video.detect(videoFrame: image, timestampInMilliseconds: 3).detections.count, 1)
        assertTaskError(try video.detect(videoFrame: image, timestampInMilliseconds: 3), "invalidArgument", isInvalidArgument)
        assertTaskError(try video.detect(image: image), "invalidArgument", isInvalidArgument)

        let live = FaceDetectorOptions(modelPath: model)
        live.runningMode = .liveStream
        let delivered = expectation(description: "live-stream result")
        live.resultListener = { result, _, timestamp in
            if case .success(let r) = result, r.detections.count == 1, timestamp == 7 { delivered.fulfill() }
        }
        let stream = try FaceDetector(options: live)
        try stream.detectAsync(image: image, timestampInMilliseconds: 7)
        wait(for: [delivered], timeout: 30)
    }

    /// 128×128 models whose outputs are not the face decoding's (`make_face_hostile_models.py`):
    /// typed errors naming the shapes found and wanted; degenerate images give results, not traps.
    func testHostileModelsAndImages() throws {
        let hostile = Fixtures.directory("TasksTests").appendingPathComponent("hostile")
        for (file, expected) in [("face_128_wrong_box_count.tflite", "[1, 3072, 16]"), ("face_128_one_output.tflite", "needs 2 outputs")] {
            do {
                _ = try FaceDetector(modelPath: hostile.appendingPathComponent(file).path)
                XCTFail("\(file) accepted")
            } catch {
                guard case .unsupportedModel(let message) = error else { XCTFail("\(file): \(error)"); continue }
                XCTAssertTrue(message.contains(expected) && message.contains("[1, 896, 16]"), "\(file): \(message)")
            }
        }
        let detector = try FaceDetector(modelPath: try zooModel("face_detection_short_range.tflite"))
        for (w, h) in [(1, 1), (1, 3000), (3000, 1), (2, 700)] {
            let image = try MPImage(pixels: [UInt8](repeating: 200, count: w * h * 3), width: w, height: h)
            let faces = try detector.detect(image: image).detections
            XCTAssertEqual(faces, [], "\(w)x\(h)")
        }
    }

    func testInvalidOptionsAndModels() throws {
        let model = try zooModel("face_detection_short_range.tflite")
        for (confidence, suppression) in [(Float(1.5), Float(0.3)), (.nan, 0.3), (0.5, -0.1)] {
            let options = FaceDetectorOptions(modelPath: model)
            options.minDetectionConfidence = confidence; options.minSuppressionThreshold = suppression
            assertTaskError(try FaceDetector(options: options), "invalidOptions", isInvalidOptions)
        }
        // A classifier (224×224 input, one output) is not a face model: a typed error naming the input size.
        do {
            _ = try FaceDetector(modelPath: TaskFixtures.efficientnetF32)
            XCTFail("a classifier was accepted as a face detector")
        } catch {
            guard case .unsupportedModel(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("224x224"), message)
        }
        let listener = FaceDetectorOptions(modelPath: model)
        listener.resultListener = { _, _, _ in }
        assertTaskError(try FaceDetector(options: listener), "invalidOptions", isInvalidOptions)
        let mirrored = try MPImage(pixels: [UInt8](repeating: 0, count: 12), width: 2, height: 2, orientation: .upMirrored)
        assertTaskError(try FaceDetector(modelPath: model).detect(image: mirrored), "invalidArgument", isInvalidArgument)
    }
}
