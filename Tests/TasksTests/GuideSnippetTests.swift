import Foundation
import XCTest
import Tasks
import TestSupport

/// The Swift snippets of the guides users arrive with (`../shared/guides`: MediaPipe's Image
/// Classifier and Object Detector for iOS, ML Kit's image labeling and AutoML Vision Edge
/// labeling for iOS), as written, run against real models.
///
/// What differs from the guides, and only that:
/// - `import MediaPipeTasksVision` / `import MLKit` are `import Tasks`.
/// - Image sources: `MPImage(uiImage:)`, `UIImage`, `CMSampleBuffer` become an `MPImage` read from
///   a file or a `PixelBuffer`; `UIDevice`, `UIDeviceOrientation`, `AVCaptureDevice.Position` and
///   `UIImage.Orientation` are the small stand-ins at the end of this file.
/// - `Bundle.main` is a local stand-in (`GuideBundle`) whose `path(forResource:ofType:)` finds the
///   test's model, as the app bundle finds the model added to the Xcode project.
/// - Top-level guide code sits in test methods, and lines that observe the results for the
///   assertions are added after the guide's lines.
final class GuideSnippetTests: XCTestCase {
    static let classifierModel = TaskFixtures.efficientnetF32
    static let detectorModel = TaskFixtures.models.appendingPathComponent("person_detector_f32.tflite").path
    static let autoMLFolder = TaskFixtures.models.appendingPathComponent("dog_breeds_automl").path

    // MARK: - MediaPipe Image Classifier (mediapipe-image-classifier-ios)

    func testImageClassifierImageMode() throws {
        let Bundle = GuideBundle(resources: ["model.tflite": Self.classifierModel])
        let image = try MPImage(contentsOf: TaskFixtures.demoCat)

        let modelPath = Bundle.main.path(forResource: "model",
                                              ofType: "tflite")

        let options = ImageClassifierOptions()
        options.baseOptions.modelAssetPath = modelPath
        options.runningMode = .image
        options.maxResults = 5

        let imageClassifier = try ImageClassifier(options: options)

        let result = try imageClassifier.classify(image: image)

        let categories = try XCTUnwrap(result.classificationResult.classifications.first?.categories)
        XCTAssertEqual(categories.count, 5)
        XCTAssertTrue(TaskFixtures.catNames.contains(categories[0].categoryName ?? ""), "\(categories)")
        XCTAssertEqual(categories.map(\.score), categories.map(\.score).sorted(by: >))
    }

    func testImageClassifierVideoMode() throws {
        let Bundle = GuideBundle(resources: ["model.tflite": Self.classifierModel])
        let image = try MPImage(contentsOf: TaskFixtures.demoCat)

        let modelPath = Bundle.main.path(forResource: "model",
                                              ofType: "tflite")

        let options = ImageClassifierOptions()
        options.baseOptions.modelAssetPath = modelPath
        options.runningMode = .video
        options.maxResults = 5

        let imageClassifier = try ImageClassifier(options: options)

        var frames: [ImageClassifierResult] = []
        for timestamp in [0, 33, 66] {
            let result = try imageClassifier.classify(
              videoFrame: image,
              timestampInMilliseconds: timestamp)
            frames.append(result)
        }
        // The same frame gives the same categories at every timestamp; timestamps must increase.
        XCTAssertEqual(frames.map(\.timestampInMilliseconds), [0, 33, 66])
        XCTAssertTrue(frames.allSatisfy { $0.classificationResult.classifications == frames[0].classificationResult.classifications })
        assertTaskError(try imageClassifier.classify(videoFrame: image, timestampInMilliseconds: 66), "invalidArgument", isInvalidArgument)
    }

    func testImageClassifierLiveStreamMode() throws {
        let Bundle = GuideBundle(resources: ["model.tflite": Self.classifierModel])
        let image = try MPImage(contentsOf: TaskFixtures.demoCat)
        let timestamp = 1_000

        let modelPath = Bundle.main.path(
          forResource: "model",
          ofType: "tflite")

        let options = ImageClassifierOptions()
        options.baseOptions.modelAssetPath = modelPath
        options.runningMode = .liveStream
        options.maxResults = 5

        // Assign an object of the class to the `imageClassifierLiveStreamDelegate`
        // property.
        let processor = RecordingClassifierProcessor(expectation(description: "live-stream result"))
        options.imageClassifierLiveStreamDelegate = processor

        let imageClassifier = try ImageClassifier(options: options)

        try imageClassifier.classifyAsync(
          image: image,
          timestampInMilliseconds: timestamp)

        wait(for: [processor.done], timeout: 120)
        let still = ImageClassifierOptions(modelPath: Self.classifierModel)
        still.maxResults = 5
        XCTAssertEqual(processor.received.value.map(\.0), [timestamp])
        XCTAssertEqual(processor.received.value.first?.1,
                       try ImageClassifier(options: still).classify(image: image).classificationResult.classifications)
    }

    // MARK: - MediaPipe Object Detector (mediapipe-object-detector-ios)

    func testObjectDetectorAllModes() throws {
        let Bundle = GuideBundle(resources: ["model.tflite": Self.detectorModel])
        let image = try MPImage(contentsOf: Fixtures.shared("images/grace_hopper.png"))

        // 映像 (image)
        let modelPath = Bundle.main.path(forResource: "model", ofType: "tflite")
        let options = ObjectDetectorOptions()
        options.baseOptions.modelAssetPath = modelPath
        options.runningMode = .image
        options.maxResults = 5
        let objectDetector = try ObjectDetector(options: options)

        // The guide's `let objectDetector.detect(image:image)` is not Swift; this is the call it means.
        let result = try objectDetector.detect(image: image)
        XCTAssertFalse(result.detections.isEmpty)
        XCTAssertLessThanOrEqual(result.detections.count, 5)
        for i in result.detections.indices {
            let box = result.detections[i].boundingBox
            XCTAssertEqual(result.detections[i].categories.first?.categoryName, "person")
            XCTAssertTrue(box.minX >= 0 && box.minY >= 0 && box.maxX <= CGFloat(image.width) && box.maxY <= CGFloat(image.height), "\(box)")
        }

        // 视频 (video)
        let videoOptions = ObjectDetectorOptions()
        videoOptions.baseOptions.modelAssetPath = modelPath
        videoOptions.runningMode = .video
        videoOptions.maxResults = 5
        let videoDetector = try ObjectDetector(options: videoOptions)
        XCTAssertEqual(try videoDetector.detect(videoFrame: image, timestampInMilliseconds: 0).detections, result.detections)

        // 直播 (live stream)
        let liveOptions = ObjectDetectorOptions()
        liveOptions.baseOptions.modelAssetPath = modelPath
        liveOptions.runningMode = .liveStream
        liveOptions.maxResults = 5
        // Assign an object of the class to the `objectDetectorLiveStreamDelegate`
        // property.
        let processor = RecordingDetectorProcessor(expectation(description: "live-stream detections"))
        liveOptions.objectDetectorLiveStreamDelegate = processor
        let liveDetector = try ObjectDetector(options: liveOptions)
        try liveDetector.detectAsync(image: image, timestampInMilliseconds: 5)
        wait(for: [processor.done], timeout: 120)
        XCTAssertEqual(processor.received.value.map(\.0), [5])
        XCTAssertEqual(processor.received.value.first?.1, result.detections)
    }

    // MARK: - MediaPipe behaviour the guides rely on

    /// MediaPipe copies the options when the task is created: changing them afterwards changes
    /// neither the running task nor what it reports as its options.
    func testOptionsAreCopiedAtCreation() throws {
        let image = try TaskFixtures.demoCatImage()
        let options = ImageClassifierOptions()
        options.baseOptions.modelAssetPath = Self.classifierModel
        options.maxResults = 5
        let classifier = try ImageClassifier(options: options)
        options.maxResults = 1
        options.runningMode = .video
        options.baseOptions.modelAssetPath = "/nonexistent/model.tflite"
        XCTAssertEqual(try classifier.classify(image: image).classifications[0].categories.count, 5)
        XCTAssertEqual(classifier.options.maxResults, 5)
        XCTAssertEqual(classifier.options.runningMode, .image)
        XCTAssertEqual(classifier.options.baseOptions.modelAssetPath, Self.classifierModel)
        // The reported options are a copy too.
        classifier.options.maxResults = 2
        XCTAssertEqual(classifier.options.maxResults, 5)

        let detectorOptions = ObjectDetectorOptions()
        detectorOptions.baseOptions.modelAssetPath = Self.detectorModel
        detectorOptions.maxResults = 1
        let detector = try ObjectDetector(options: detectorOptions)
        detectorOptions.maxResults = 3
        XCTAssertEqual(detector.options.maxResults, 1)
        XCTAssertLessThanOrEqual(try detector.detect(image: image).detections.count, 1)
    }

    /// `Bundle.main.path(forResource:ofType:)` is nil when the model is not in the bundle; the
    /// task then fails at creation with a typed error that says so.
    func testNilModelPathIsATypedErrorAtCreation() {
        let Bundle = GuideBundle(resources: [:])
        let options = ImageClassifierOptions()
        options.baseOptions.modelAssetPath = Bundle.main.path(forResource: "model", ofType: "tflite")
        assertTaskError(try ImageClassifier(options: options), "invalidOptions") {
            guard case .invalidOptions(let message) = $0 else { return false }
            return message.contains("modelAssetPath is nil")
        }
        let detectorOptions = ObjectDetectorOptions()
        detectorOptions.baseOptions.modelAssetPath = nil
        assertTaskError(try ObjectDetector(options: detectorOptions), "invalidOptions", isInvalidOptions)
    }

    // MARK: - ML Kit image labeling (mlkit-image-labeling-ios)

    func testMLKitBaseLabeler() throws {
        let uiImage = try MPImage(contentsOf: TaskFixtures.demoCat)
        let image = VisionImage(image: uiImage)
        image.orientation = uiImage.imageOrientation

        let labeler = ImageLabeler.imageLabeler()

        let done = expectation(description: "labels")
        let delivered = Box<[ImageLabel]?>(nil)
        labeler.process(image) { labels, error in
            guard error == nil, let labels = labels else { return }

            // Task succeeded.
            delivered.value = labels
            done.fulfill()
        }
        wait(for: [done], timeout: 120)
        let labels = try XCTUnwrap(delivered.value)

        var seen: [(String, Float, Int)] = []
        for label in labels {
            let labelText = label.text
            let confidence = label.confidence
            let index = label.index
            seen.append((labelText, confidence, index))
        }
        // The base model: ImageNet EfficientNet-Lite0; an unset threshold is ML Kit's 0.5.
        XCTAssertFalse(seen.isEmpty)
        XCTAssertTrue(TaskFixtures.catNames.contains(seen[0].0), "\(seen)")
        XCTAssertTrue(seen.allSatisfy { $0.1 >= 0.5 }, "\(seen)")
        // The same labels as the model file in Models/ with the same threshold, and from results(in:).
        let reference = try ImageLabeler(options: ImageLabelerOptions(localModel: LocalModel(path: TaskFixtures.efficientnetInt8), confidenceThreshold: 0.5))
        let referenceLabels = try reference.results(in: uiImage)
        XCTAssertEqual(labels, Array(referenceLabels.prefix(labels.count)))
        XCTAssertEqual(try labeler.results(in: image), labels)
    }

    func testMLKitBaseLabelerWithOptions() throws {
        let image = VisionImage(image: try TaskFixtures.demoCatImage())

        // Or, to set the minimum confidence required:
        let options = ImageLabelerOptions()
        options.confidenceThreshold = 0.7
        let labeler = ImageLabeler.imageLabeler(options: options)

        let labels = try labeler.results(in: image)
        XCTAssertTrue(labels.allSatisfy { $0.confidence >= 0.7 }, "\(labels)")
        let all = ImageLabelerOptions()
        all.confidenceThreshold = NSNumber(value: 0.0)
        let everything = try ImageLabeler.imageLabeler(options: all).results(in: image)
        XCTAssertEqual(everything.count, 1000)
        XCTAssertEqual(labels, everything.filter { $0.confidence >= 0.7 })
    }

    /// The guide's camera snippet: a buffer with the orientation a front camera in portrait gives
    /// (`.leftMirrored`). ML Kit applies mirrored orientations; the labels are those of the
    /// upright picture the orientation describes, built here by transposing the pixels by hand
    /// (EXIF orientation 5: stored row r is upright column r).
    func testMLKitSampleBufferWithMirroredOrientation() throws {
        let cat = try TaskFixtures.demoCatImage()
        let sampleBuffer = try PixelBuffer<RGB8>(bytes: Data(cat.pixels), width: cat.width, height: cat.height)
        let cameraPosition = AVCaptureDevice.Position.front
        let labeler = ImageLabeler.imageLabeler(options: { let o = ImageLabelerOptions(); o.confidenceThreshold = 0; return o }())

        let image = VisionImage(buffer: sampleBuffer)
        image.orientation = imageOrientation(
          deviceOrientation: UIDevice.current.orientation,
          cameraPosition: cameraPosition)

        XCTAssertEqual(image.orientation, .leftMirrored)
        let transposed = try MPImage(pixels: Self.transposed(cat), width: cat.height, height: cat.width)
        XCTAssertEqual(try labeler.results(in: image), try labeler.results(in: transposed))
        // Not the same as ignoring the orientation (the check has teeth).
        XCTAssertNotEqual(try labeler.results(in: image), try labeler.results(in: cat))
    }

    /// `.upMirrored` labels the left-right flipped picture.
    func testMirroredOrientationEqualsTheFlippedImage() throws {
        let cat = try TaskFixtures.demoCatImage()
        let options = ImageLabelerOptions()
        options.confidenceThreshold = 0
        let labeler = ImageLabeler.imageLabeler(options: options)
        let mirrored = VisionImage(image: cat)
        mirrored.orientation = .upMirrored
        var flipped = [UInt8](repeating: 0, count: cat.pixels.count)
        for y in 0 ..< cat.height {
            for x in 0 ..< cat.width {
                let from = (y * cat.width + x) * 3, to = (y * cat.width + (cat.width - 1 - x)) * 3
                flipped[to ..< to + 3] = cat.pixels[from ..< from + 3]
            }
        }
        let expected = try labeler.results(in: MPImage(pixels: flipped, width: cat.width, height: cat.height))
        XCTAssertEqual(try labeler.results(in: mirrored), expected)
        XCTAssertNotEqual(try labeler.results(in: VisionImage(image: cat)), expected)
    }

    /// Pixels of `image` transposed: upright pixel (u, v) is stored pixel (v, u).
    static func transposed(_ image: MPImage) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: image.pixels.count)
        for v in 0 ..< image.width {
            for u in 0 ..< image.height {
                let from = (u * image.width + v) * 3, to = (v * image.height + u) * 3
                out[to ..< to + 3] = image.pixels[from ..< from + 3]
            }
        }
        return out
    }

    /// ML Kit's factories do not throw: a model that cannot be loaded is the error of every call.
    func testLoadErrorsSurfaceThroughProcessAndResults() throws {
        let image = VisionImage(image: try TaskFixtures.demoCatImage())
        let localModel = AutoMLImageLabelerLocalModel(manifestPath: "/nonexistent/your_model_directory/manifest.json")
        let options = AutoMLImageLabelerOptions(localModel: localModel)
        let imageLabeler = ImageLabeler.imageLabeler(options: options)
        assertTaskError(try imageLabeler.results(in: image), "invalidOptions", isInvalidOptions)
        let done = expectation(description: "completion")
        let failure = Box<String?>(nil)
        imageLabeler.process(image) { labels, error in
            XCTAssertNil(labels)
            failure.value = error.map { "\($0)" }
            done.fulfill()
        }
        wait(for: [done], timeout: 60)
        XCTAssertTrue(failure.value?.contains("manifest.json") == true, failure.value ?? "no error")
        let bad = ImageLabelerOptions()
        bad.confidenceThreshold = 1.5
        assertTaskError(try ImageLabeler.imageLabeler(options: bad).results(in: image), "invalidOptions", isInvalidOptions)
    }

    // MARK: - ML Kit AutoML Vision Edge, bundled (mlkit-automl-image-labeling-ios)

    func testAutoMLLocalModel() throws {
        guard FileManager.default.fileExists(atPath: Self.autoMLFolder + "/manifest.json") else { throw XCTSkip("no Models/dog_breeds_automl") }
        let Bundle = GuideBundle(resources: ["your_model_directory/manifest.json": Self.autoMLFolder + "/manifest.json"])
        let image = VisionImage(image: try MPImage(contentsOf: Fixtures.shared("images/pets.jpg")))
        var shown: [ImageLabel] = []
        try { () throws in
            guard let manifestPath = Bundle.main.path(
                forResource: "manifest",
                ofType: "json",
                inDirectory: "your_model_directory"
            ) else { return }
            let localModel = AutoMLImageLabelerLocalModel(manifestPath: manifestPath)

            let options = AutoMLImageLabelerOptions(localModel: localModel)
            options.confidenceThreshold = NSNumber(value: 0.0)  // Evaluate your model in the Firebase console
                                                                // to determine an appropriate value.
            let imageLabeler = ImageLabeler.imageLabeler(options: options)

            var labels: [ImageLabel]
            do {
                labels = try imageLabeler.results(in: image)
            } catch let error {
                // Handle the error.
                XCTFail("\(error)")
                return
            }
            // Show results.
            shown = labels
        }()
        // Threshold 0: ML Kit's default of 10 labels, from dict.txt, best first.
        let names = try String(contentsOfFile: Self.autoMLFolder + "/dict.txt", encoding: .utf8).split(separator: "\n").map(String.init)
        XCTAssertEqual(shown.count, 10)
        XCTAssertEqual(shown.map(\.confidence), shown.map(\.confidence).sorted(by: >))
        for label in shown { XCTAssertEqual(names[label.index], label.text) }
    }
}

// MARK: - The guides' delegate classes, as written

// Class that conforms to the `ImageClassifierLiveStreamDelegate` protocol and
// implements the method that the image classifier calls once it
// finishes performing classification on each input frame.
class ImageClassifierResultProcessor: NSObject, ImageClassifierLiveStreamDelegate {

   func imageClassifier(
    _ imageClassifier: ImageClassifier,
    didFinishClassification result: ImageClassifierResult?,
    timestampInMilliseconds: Int,
    error: Error?) {

    // Process the image classifier result or errors here.

  }
}

// Class that conforms to the `ObjectDetectorLiveStreamDelegate` protocol and // implements the method that the object detector calls once it // finishes performing detection on each input frame.
class ObjectDetectorResultProcessor: NSObject, ObjectDetectorLiveStreamDelegate { func objectDetector( _ objectDetector: ObjectDetector, didFinishDetection objectDetectionResult: ObjectDetectorResult?, timestampInMilliseconds: Int, error: Error?) { // Process the detection result or errors here.
 } }

/// The guide's classifier processor, recording what it receives for the test.
final class RecordingClassifierProcessor: ImageClassifierResultProcessor, @unchecked Sendable {
    let done: XCTestExpectation
    let received = Box<[(Int, [Classifications])]>([])
    init(_ done: XCTestExpectation) { self.done = done }

    override func imageClassifier(_ imageClassifier: ImageClassifier, didFinishClassification result: ImageClassifierResult?,
                                  timestampInMilliseconds: Int, error: Error?) {
        super.imageClassifier(imageClassifier, didFinishClassification: result, timestampInMilliseconds: timestampInMilliseconds, error: error)
        received.mutate { $0.append((timestampInMilliseconds, result?.classificationResult.classifications ?? [])) }
        done.fulfill()
    }
}

/// The guide's detector processor, recording what it receives for the test.
final class RecordingDetectorProcessor: ObjectDetectorResultProcessor, @unchecked Sendable {
    let done: XCTestExpectation
    let received = Box<[(Int, [Detection])]>([])
    init(_ done: XCTestExpectation) { self.done = done }

    override func objectDetector(_ objectDetector: ObjectDetector, didFinishDetection objectDetectionResult: ObjectDetectorResult?,
                                 timestampInMilliseconds: Int, error: Error?) {
        super.objectDetector(objectDetector, didFinishDetection: objectDetectionResult, timestampInMilliseconds: timestampInMilliseconds, error: error)
        received.mutate { $0.append((timestampInMilliseconds, objectDetectionResult?.detections ?? [])) }
        done.fulfill()
    }
}

// MARK: - Stand-ins for the app bundle, UIKit and AVFoundation

/// `Bundle.main` for the snippets: resources by `name.type` (or `directory/name.type`).
struct GuideBundle {
    let resources: [String: String]
    var main: GuideBundle { self }

    func path(forResource name: String?, ofType ext: String?) -> String? {
        resources["\(name ?? "").\(ext ?? "")"]
    }

    func path(forResource name: String?, ofType ext: String?, inDirectory directory: String?) -> String? {
        resources["\(directory.map { $0 + "/" } ?? "")\(name ?? "").\(ext ?? "")"]
    }
}

/// `UIImage.Orientation` is the orientation `VisionImage` takes.
enum UIImage {
    typealias Orientation = MPImage.Orientation
}

extension MPImage {
    /// `UIImage.imageOrientation`.
    var imageOrientation: MPImage.Orientation { orientation }
}

enum UIDeviceOrientation {
    case unknown, portrait, portraitUpsideDown, landscapeLeft, landscapeRight, faceUp, faceDown
}

/// `UIDevice.current` held in portrait.
struct UIDevice {
    static let current = UIDevice()
    let orientation = UIDeviceOrientation.portrait
}

enum AVCaptureDevice {
    enum Position { case unspecified, back, front }
}

/// The ML Kit guides' orientation helper, as written.
func imageOrientation(
  deviceOrientation: UIDeviceOrientation,
  cameraPosition: AVCaptureDevice.Position
) -> UIImage.Orientation {
  switch deviceOrientation {
  case .portrait:
    return cameraPosition == .front ? .leftMirrored : .right
  case .landscapeLeft:
    return cameraPosition == .front ? .downMirrored : .up
  case .portraitUpsideDown:
    return cameraPosition == .front ? .rightMirrored : .left
  case .landscapeRight:
    return cameraPosition == .front ? .upMirrored : .down
  case .faceDown, .faceUp, .unknown:
    return .up
  }
}

/// Vision's `regionOfInterest` on `VisionClassificationRequest`: normalised, origin at the lower
/// left, in the oriented image.
final class VisionRegionOfInterestTests: XCTestCase {
    /// The top `rows` rows of `image` (upright, `.up`).
    static func topRows(_ image: MPImage, _ rows: Int) throws -> MPImage {
        try MPImage(pixels: Array(image.pixels[0 ..< rows * image.width * 3]), width: image.width, height: rows)
    }

    func observations(_ image: MPImage, orientation: MPImage.Orientation = .up, region: CGRect? = nil) throws -> [ClassificationObservation] {
        let request = VisionClassificationRequest(model: try VisionModel(modelPath: TaskFixtures.efficientnetF32))
        request.imageCropAndScaleOption = .scaleFill
        if let region { request.regionOfInterest = region }
        try ImageRequestHandler(image: image, orientation: orientation).perform([request])
        return try XCTUnwrap(request.results)
    }

    func testRegionIsLowerLeftOriginInTheOrientedImage() throws {
        let cat = try TaskFixtures.demoCatImage()   // 451 × 300
        XCTAssertEqual(try observations(cat, region: CGRect(x: 0, y: 0, width: 1, height: 1)), try observations(cat))
        // y 0.5...1 from the lower left is the top half: rows 0..<150.
        let top = try Self.topRows(cat, 150)
        let region = try observations(cat, region: CGRect(x: 0, y: 0.5, width: 1, height: 0.5))
        let cropped = try observations(top)
        XCTAssertEqual(region.prefix(5).map(\.identifier), cropped.prefix(5).map(\.identifier))
        // Not bit-equal: at the region's edge the bilinear taps read the next stored row, where
        // the cropped image replicates its last row.
        for (a, b) in zip(region.prefix(5), cropped.prefix(5)) { XCTAssertEqual(a.confidence, b.confidence, accuracy: 0.01) }
        XCTAssertNotEqual(region.prefix(5).map(\.identifier), try observations(cat, region: CGRect(x: 0, y: 0, width: 1, height: 0.5)).prefix(5).map(\.identifier))
        // With orientation .down (turned 180°) the oriented image's top half is the stored bottom
        // half turned: the same as the stored top half of the cat turned upside down.
        let turned = try MPImage(pixels: cat.pixels, width: cat.width, height: cat.height)
        let bottomOfTurned = try observations(turned, orientation: .down, region: CGRect(x: 0, y: 0, width: 1, height: 0.5))
        let topTurned = try observations(top, orientation: .down)
        XCTAssertEqual(bottomOfTurned.prefix(5).map(\.identifier), topTurned.prefix(5).map(\.identifier))
    }
}
