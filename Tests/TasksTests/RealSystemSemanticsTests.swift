import Foundation
import XCTest
import Tasks
import TestSupport

/// One test per rule where SwiftLite's tasks must behave as MediaPipe, ML Kit or Vision do. Each
/// names the rule and the source it comes from. (EXIF: `EXIFOrientationTests`; pixel buffers:
/// `PixelBufferTests`.)
final class RealSystemSemanticsTests: XCTestCase {
    /// The small unlabelled MobileNet with labels `names` (10 classes) written to a temporary file.
    func small(_ names: [String] = (0 ..< 10).map { "class\($0)" }, _ configure: (inout ImageClassifierOptions) -> Void = { _ in }) throws -> ImageClassifier {
        let url = try TaskFixtures.temporaryDirectory(self).appendingPathComponent("labels.txt")
        try (names.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
        var options = ImageClassifierOptions(modelPath: TaskFixtures.smallUnlabelled)
        options.labelsPath = url.path
        configure(&options)
        return try ImageClassifier(options: options)
    }

    func categories(_ c: ImageClassifier, _ image: MPImage? = nil) throws -> [Category] {
        try c.classify(image: image ?? TaskFixtures.demoCatImage()).classifications[0].categories
    }

    // MARK: - MediaPipe result options

    /// Rule: unknown allow/deny names are skipped; when no name is known the list does not filter
    /// at all. Source: MediaPipe `tasks/cc/components/processors/classification_postprocessing_graph.cc`,
    /// `GetAllowOrDenyCategoryIndicesIfAny` ("Ignores duplicate or unknown categories") and
    /// `ConfigureTensorsToClassificationCalculator` (an empty index set sets no allow/ignore classes).
    func testAllowlistWithOnlyUnknownNamesDoesNotFilter() throws {
        let all = try categories(small())
        XCTAssertEqual(all.count, 10)
        XCTAssertEqual(try categories(small { $0.categoryAllowlist = ["no such thing"] }), all)
        XCTAssertEqual(try categories(small { $0.categoryDenylist = ["no such thing"] }), all)
        XCTAssertEqual(try categories(small { $0.categoryAllowlist = ["no such thing", "class4"] }).map(\.index), [4])
    }

    /// Rule: a name maps to the first index whose label is that name, so a later duplicate label is
    /// never matched. Source: the same `GetAllowOrDenyCategoryIndicesIfAny` (the loop breaks at the
    /// first match). ImageNet's "crane" (the bird, index 134; the machine, 517) keeps 134 only.
    func testDuplicateLabelNamesMatchTheirFirstIndexOnly() throws {
        var names = (0 ..< 10).map { "class\($0)" }
        names[7] = "class3"
        XCTAssertEqual(try categories(small(names) { $0.categoryAllowlist = ["class3"] }).map(\.index), [3])
        let denied = try categories(small(names) { $0.categoryDenylist = ["class3"] }).map(\.index)
        XCTAssertEqual(Set(denied), Set(0 ..< 10).subtracting([3]), "index 7 is not denied")

        let options = ImageClassifierOptions(modelPath: TaskFixtures.efficientnetF32)
        options.categoryAllowlist = ["crane"]
        let crane = try ImageClassifier(options: options).classify(image: TaskFixtures.demoCatImage()).classifications[0].categories
        XCTAssertEqual(crane.map(\.index), [134])
    }

    /// Rule: any negative maxResults returns every result; 0 is an error. Source:
    /// `classification_postprocessing_graph.cc` `SanityCheckClassifierOptions` ("value must be != 0")
    /// and `ConfigureTensorsToClassificationCalculator` ("Setting to a negative value lets the
    /// calculator return all results").
    func testNegativeMaxResultsMeansAllAndZeroIsAnError() throws {
        for n in [-1, -2, -100] { XCTAssertEqual(try categories(small { $0.maxResults = n }).count, 10, "maxResults \(n)") }
        assertTaskError(try small { $0.maxResults = 0 }, "invalidOptions", isInvalidOptions)
        let detector = ObjectDetectorOptions(modelPath: TaskFixtures.models.appendingPathComponent("person_detector_f32.tflite").path)
        detector.maxResults = -7
        XCTAssertNoThrow(try ObjectDetector(options: detector))
    }

    /// Rule (a choice where the systems disagree): an unset scoreThreshold uses the metadata's
    /// threshold when the model has one (MediaPipe C++/Python: `GetScoreThreshold` in
    /// `classification_postprocessing_graph.cc`), and no threshold otherwise — not MediaPipe iOS's
    /// fixed 0, which would drop this model's negative logits.
    func testUnsetScoreThresholdIsNotZero() throws {
        let logits = try small().classify(image: TaskFixtures.demoCatImage()).classifications[0].categories
        XCTAssertTrue(logits.contains { $0.score < 0 }, "head 0 gives logits, some negative: \(logits.map(\.score))")
        XCTAssertEqual(logits.count, 10)
    }

    // MARK: - Orientation and region of interest

    /// Rule: the region of interest is in the stored image's coordinates; the orientation is
    /// applied to the cropped region. Source: MediaPipe iOS `MPPVisionTaskRunner.mm`
    /// `normalizedRectWithRegionOfInterest` (the ROI's centre and size are taken in the stored
    /// image, then a rotation is set) and `ImageProcessingOptions` ("the rotation to apply to the
    /// image (or cropped region-of-interest)"). Checked with MediaPipe 1.2.3 (Python, EfficientNet-Lite0
    /// f32, grace_hopper stored turned 90° counterclockwise, `rotation_degrees=90`): the stored
    /// image's left-half ROI gives the upright top half's top-3 classes (652, 643, 457); the stored
    /// top-half ROI does not (834 second).
    func testRegionOfInterestIsInStoredCoordinates() throws {
        let c = try small()
        let cat = try TaskFixtures.demoCatImage()
        // Stored pixels that show the cat once turned 90° clockwise (orientation .right).
        let stored = MPImage(cat, turned: .left)
        let rightSideUp = try MPImage(pixels: stored.pixels, width: stored.width, height: stored.height, orientation: .right)
        XCTAssertEqual(rightSideUp.applyingOrientation(), cat)
        // The stored image's left half becomes the upright picture's top half.
        let ours = try c.classify(image: rightSideUp, regionOfInterest: RegionOfInterest(x: 0, y: 0, width: 0.5, height: 1))
        let expected = try c.classify(image: cat, regionOfInterest: RegionOfInterest(x: 0, y: 0, width: 1, height: 0.5))
        XCTAssertEqual(ours, expected)
        XCTAssertNotEqual(ours, try c.classify(image: cat, regionOfInterest: RegionOfInterest(x: 0, y: 0, width: 0.5, height: 1)))
    }

    /// Rule: detections on a rotated input are in pixels of the unrotated (stored) frame. Source:
    /// MediaPipe `tasks/cc/vision/object_detector/object_detector_graph.cc` (the detections are
    /// projected back through `DetectionProjectionCalculator` with the image-to-tensor matrix, which
    /// includes the rotation) and `MPPVisionTaskRunner.mm` (orientation → rotation). Checked with
    /// MediaPipe 1.2.3 (Python, person_detector_f32, the same stored image, `rotation_degrees=90`):
    /// upright box (1, 15, 507, 584) comes back as (14, 2, 584, 505) — this mapping's (15, 4, 584, 507)
    /// within MediaPipe's own rotated resampling.
    func testDetectionsOnRotatedInputAreInStoredPixels() throws {
        let photo = try MPImage(contentsOf: Fixtures.shared("images/grace_hopper.png"))
        let detector = try ObjectDetector(modelPath: TaskFixtures.models.appendingPathComponent("person_detector_f32.tflite").path)
        let upright = try detector.detect(image: photo).detections
        XCTAssertFalse(upright.isEmpty)
        let stored = MPImage(photo, turned: .left)   // shown upright by turning it 90° clockwise
        let rotated = try detector.detect(image: MPImage(pixels: stored.pixels, width: stored.width, height: stored.height, orientation: .right))
        XCTAssertEqual(rotated.detections.count, upright.count)
        for (d, u) in zip(rotated.detections, upright) {
            XCTAssertEqual(d.categories, u.categories, "the model saw the same upright picture")
            // Upright (u, v) is stored (v, H − u): an upright box (x, y, w, h) is stored (y, H − x − w, h, w).
            let b = u.boundingBox, s = d.boundingBox
            let expected = [b.originY, stored.height - b.originX - b.width, b.height, b.width]
            for (got, want) in zip([s.originX, s.originY, s.width, s.height], expected) {
                XCTAssertLessThanOrEqual(abs(got - want), 1, "stored box \(s), upright box \(b) (1 px: float truncation)")
            }
        }
    }

    /// Rule: a mirrored orientation in live-stream mode is an error thrown by the call itself, and
    /// nothing is delivered for that frame. Source: MediaPipe iOS `MPPVisionTaskRunner.mm`
    /// (`normalizedRectWithImageOrientation` fails for the mirrored `UIImageOrientation`s before
    /// any packet is sent, so `classifyAsync` returns the error).
    func testMirroredFrameInLiveStreamThrowsFromTheCall() throws {
        let deliveries = Deliveries()
        let delivered = expectation(description: "the next frame's result")
        let c = try small {
            $0.runningMode = .liveStream
            $0.resultListener = { result, _, timestamp in
                deliveries.record(timestamp, error: (try? result.get()) == nil ? "failed" : nil)
                delivered.fulfill()
            }
        }
        let cat = try TaskFixtures.demoCatImage()
        let mirrored = try MPImage(pixels: cat.pixels, width: cat.width, height: cat.height, orientation: .upMirrored)
        assertTaskError(try c.classifyAsync(image: mirrored, timestampInMilliseconds: 10), "invalidArgument", isInvalidArgument)
        // The refused frame used no timestamp; the next one is delivered, and it alone.
        try c.classifyAsync(image: cat, timestampInMilliseconds: 10)
        wait(for: [delivered], timeout: 60)
        XCTAssertEqual(deliveries.snapshot.timestamps, [10])
        XCTAssertEqual(deliveries.snapshot.errors, [])

        let options = ObjectDetectorOptions(modelPath: TaskFixtures.models.appendingPathComponent("person_detector_f32.tflite").path)
        options.runningMode = .liveStream
        options.resultListener = { _, _, _ in }
        let detector = try ObjectDetector(options: options)
        assertTaskError(try detector.detectAsync(image: mirrored, timestampInMilliseconds: 1), "invalidArgument", isInvalidArgument)
    }

    // MARK: - ML Kit

    /// A temporary AutoML folder: `model` copied as model.tflite, `labels` as dict.txt.
    func autoML(model: String, labels: [String]) throws -> String {
        let dir = try TaskFixtures.temporaryDirectory(self)
        try FileManager.default.copyItem(atPath: model, toPath: dir.appendingPathComponent("model.tflite").path)
        try (labels.joined(separator: "\n") + "\n").write(to: dir.appendingPathComponent("dict.txt"), atomically: true, encoding: .utf8)
        try #"{"modelFile": "model.tflite", "labelsFile": "dict.txt", "modelType": "IMAGE_LABELING"}"#
            .write(to: dir.appendingPathComponent("manifest.json"), atomically: true, encoding: .utf8)
        return dir.appendingPathComponent("manifest.json").path
    }

    /// Rule: `confidenceThreshold` unset uses the model metadata's threshold, else 0.0, and
    /// `maxResultCount` defaults to 10 (also for a value that is not positive). Source: ML Kit
    /// `MLKCustomImageLabelerOptions` (developers.google.com/ml-kit/reference/ios/mlkitimagelabelingcustom/api/reference/Classes/MLKCustomImageLabelerOptions:
    /// `initWithLocalModel:` leaves `confidenceThreshold` nil, and then the threshold in the model
    /// metadata, if any, is used, else 0.0; `maxResultCount`: "if unset or set to an invalid value,
    /// the default 10 is used").
    func testLabelerThresholdDefaultsToMetadataElseZeroAndTenResults() throws {
        let options = CustomImageLabelerOptions(localModel: LocalModel(path: TaskFixtures.efficientnetF32))
        XCTAssertNil(options.confidenceThreshold)
        XCTAssertEqual(options.maxResultCount, 10)
        // EfficientNet's metadata has no threshold: 0.0, so the 10 best of 1000 softmax scores.
        let labels = try ImageLabeler(options: options).results(in: TaskFixtures.demoCatImage())
        XCTAssertEqual(labels.count, 10)
        let invalid = options
        invalid.maxResultCount = -3
        XCTAssertEqual(try ImageLabeler(options: invalid).results(in: TaskFixtures.demoCatImage()), labels)
        // The small model (no metadata) in an AutoML folder: threshold 0.0 drops its negative logits.
        let model = try AutoMLImageLabelerLocalModel(manifestPath: autoML(model: TaskFixtures.smallUnlabelled, labels: (0 ..< 10).map { "c\($0)" }))
        let all = ImageClassifierOptions(modelPath: TaskFixtures.smallUnlabelled)
        all.maxResults = -1
        let scores = try ImageClassifier(options: all).classify(image: TaskFixtures.demoCatImage()).classifications[0].categories
        let small = try ImageLabeler(options: CustomImageLabelerOptions(localModel: model)).results(in: TaskFixtures.demoCatImage())
        XCTAssertEqual(small.map(\.index), scores.filter { $0.score >= 0 }.map(\.index))
        XCTAssertLessThan(small.count, 10, "some logits are negative")
    }

    /// Rule: `AutoMLImageLabelerLocalModel(manifestPath:)` takes the manifest.json path, and its
    /// `dict.txt` names the labels even when the model's metadata has labels of its own. Source: ML
    /// Kit `AutoMLImageLabelerLocalModel` (developers.google.com/ml-kit/vision/image-labeling/automl:
    /// the manifest's `labelsFile` gives the label names).
    func testAutoMLDictNamesTheLabelsOverMetadata() throws {
        let dog = TaskFixtures.models.appendingPathComponent("dog_breeds_automl/model.tflite").path
        guard FileManager.default.fileExists(atPath: dog) else { throw XCTSkip("no Models/dog_breeds_automl") }
        XCTAssertTrue(try ModelHasLabels.check(dog), "the dog model carries labels in its metadata")
        let names = (0 ..< 19).map { "breed number \($0)" }
        let model = try AutoMLImageLabelerLocalModel(manifestPath: autoML(model: dog, labels: names))
        let options = CustomImageLabelerOptions(localModel: model)
        options.confidenceThreshold = 0
        options.maxResultCount = 19
        let labels = try ImageLabeler(options: options).results(in: TaskFixtures.demoCatImage())
        XCTAssertEqual(labels.count, 19)
        XCTAssertTrue(labels.allSatisfy { $0.text == names[$0.index] }, "\(labels.prefix(3))")
    }

    /// Rule: ML Kit's calls are `process(image) { labels, error in }` and `results(in:)`. Source: ML
    /// Kit `ImageLabeler` (developers.google.com/ml-kit/reference/swift/mlkitimagelabelingcommon/api/reference/Classes/ImageLabeler:
    /// `process(_:completion:)` with `([ImageLabel]?, Error?)`, `results(in:)`).
    func testMLKitCallShapes() throws {
        let labeler = ImageLabeler.imageLabeler(options: CustomImageLabelerOptions(localModel: LocalModel(path: TaskFixtures.efficientnetF32)))
        let image = try TaskFixtures.demoCatImage()
        let sync = try labeler.results(in: image)
        let done = expectation(description: "labels"), mirroredDone = expectation(description: "mirrored labels")
        nonisolated(unsafe) var received: [ImageLabel]?, receivedMirrored: [ImageLabel]?
        labeler.process(image) { labels, e in
            received = labels
            XCTAssertNil(e)
            done.fulfill()
        }
        // ML Kit applies mirrored orientations (`VisionImage.orientation = .downMirrored`): the
        // labels are those of the picture flipped top to bottom.
        let mirrored = try MPImage(pixels: image.pixels, width: image.width, height: image.height, orientation: .downMirrored)
        labeler.process(mirrored) { labels, e in
            receivedMirrored = labels
            XCTAssertNil(e)
            mirroredDone.fulfill()
        }
        wait(for: [done, mirroredDone], timeout: 60)
        XCTAssertEqual(received, sync)
        let rowBytes = image.width * 3
        let flipped = (0 ..< image.height).reversed().flatMap { image.pixels[$0 * rowBytes ..< ($0 + 1) * rowBytes] }
        XCTAssertEqual(receivedMirrored, try labeler.results(in: MPImage(pixels: flipped, width: image.width, height: image.height)))
    }

    // MARK: - Vision

    /// Rule: `VNCoreMLRequest`'s `imageCropAndScaleOption` defaults to `.centerCrop`. Source: Apple
    /// Vision docs, `VNCoreMLRequest.imageCropAndScaleOption` ("The default value is centerCrop")
    /// and `VNImageCropAndScaleOption.centerCrop`.
    func testVisionRequestDefaultsToCenterCrop() throws {
        let model = try VisionModel(modelPath: TaskFixtures.efficientnetF32)
        let request = VisionClassificationRequest(model: model)
        XCTAssertEqual(request.imageCropAndScaleOption, .centerCrop)
        let cat = try TaskFixtures.demoCatImage()
        try ImageRequestHandler(image: cat).perform([request])
        let options = ImageClassifierOptions(modelPath: TaskFixtures.efficientnetF32)
        options.cropAndScale = .centerCrop
        let expected = try ImageClassifier(options: options).classify(image: cat).classifications[0].categories
        XCTAssertEqual(request.results, expected.map { ClassificationObservation(identifier: $0.categoryName!, confidence: $0.score) })
        XCTAssertEqual(request.results?.count, 1000, "Vision returns every class")
    }

    /// Rule: Vision applies all eight `CGImagePropertyOrientation`s, mirrored ones included, while
    /// MediaPipe's tasks refuse the mirrored four. Source: Apple `CGImagePropertyOrientation` docs
    /// (upMirrored … leftMirrored are display transforms) and `VNImageRequestHandler(cgImage:orientation:)`;
    /// MediaPipe `MPPVisionTaskRunner.mm` for the refusal.
    func testVisionAppliesAllEightOrientations() throws {
        let small = try VisionModel(modelPath: TaskFixtures.smallUnlabelled)
        let cat = try TaskFixtures.demoCatImage()
        let reference = VisionClassificationRequest(model: small)
        try ImageRequestHandler(image: cat).perform([reference])
        let classifier = try self.small()
        for o in MPImage.Orientation.allCases {
            // Pixels stored so that orientation `o` shows the cat.
            let stored = MPImage(cat, showingUprightWith: o)
            XCTAssertEqual(try MPImage(pixels: stored.pixels, width: stored.width, height: stored.height, orientation: o).applyingOrientation(), cat, "\(o)")
            let request = VisionClassificationRequest(model: small)
            try ImageRequestHandler(image: stored, orientation: o).perform([request])
            XCTAssertEqual(request.results, reference.results, "\(o)")
            let tagged = try MPImage(pixels: stored.pixels, width: stored.width, height: stored.height, orientation: o)
            if o.isMirrored {
                assertTaskError(try classifier.classify(image: tagged), "invalidArgument", isInvalidArgument)
            } else {
                XCTAssertNoThrow(try classifier.classify(image: tagged))
            }
        }
    }

    /// Rule: `scaleFitRotate90CCW` / `scaleFillRotate90CCW` rotate the image 90° counterclockwise,
    /// then fit / fill. Source: Apple Vision docs, `VNImageCropAndScaleOption.scaleFitRotate90CCW`
    /// ("rotates the image 90 degrees counterclockwise and then scales it, while preserving its
    /// aspect ratio, to fit on the long side") and `.scaleFillRotate90CCW`.
    func testVisionRotatingCropOptions() throws {
        let small = try VisionModel(modelPath: TaskFixtures.smallUnlabelled)
        let cat = try TaskFixtures.demoCatImage()
        // The cat turned 90° counterclockwise, by hand: output (u, v) = input (W − 1 − v, u).
        var turned = [UInt8]()
        for v in 0 ..< cat.width {
            for u in 0 ..< cat.height {
                let (r, g, b) = cat.rgb(x: cat.width - 1 - v, y: u)
                turned += [r, g, b]
            }
        }
        let ccw = try MPImage(pixels: turned, width: cat.height, height: cat.width)
        for (rotating, plain) in [(ImageCropAndScale.scaleFitRotate90CCW, ImageCropAndScale.scaleFit), (.scaleFillRotate90CCW, .scaleFill)] {
            let a = VisionClassificationRequest(model: small), b = VisionClassificationRequest(model: small)
            a.imageCropAndScaleOption = rotating
            b.imageCropAndScaleOption = plain
            try ImageRequestHandler(image: cat).perform([a])
            try ImageRequestHandler(image: ccw).perform([b])
            XCTAssertEqual(a.results, b.results, "\(rotating)")
            let unrotated = VisionClassificationRequest(model: small)
            unrotated.imageCropAndScaleOption = plain
            try ImageRequestHandler(image: cat).perform([unrotated])
            XCTAssertNotEqual(a.results, unrotated.results, "\(rotating) must rotate")
        }
    }
}

extension MPImage {
    /// `image`'s pixels turned as orientation `turn` shows stored pixels (e.g. `.left`: 90° counterclockwise).
    init(_ image: MPImage, turned turn: MPImage.Orientation) {
        self = (try! MPImage(pixels: image.pixels, width: image.width, height: image.height, orientation: turn)).applyingOrientation()
    }

    /// Stored pixels that orientation `o` shows as `image`.
    init(_ image: MPImage, showingUprightWith o: MPImage.Orientation) {
        // Undo `o`: the quarter turns swap, every other orientation undoes itself.
        let undo: MPImage.Orientation = o == .right ? .left : o == .left ? .right : o
        self.init(image, turned: undo)
    }
}
