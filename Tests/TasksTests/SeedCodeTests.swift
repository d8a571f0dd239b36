import Foundation
import XCTest
import Tasks
import TestSupport

/// The snippets developers bring from MediaPipe (iOS), ML Kit and Vision, transcribed to SwiftLite
/// and run. This file compiles in Swift 6 language mode with strict concurrency and no warnings:
/// it is the compile test of the live-stream path a `@MainActor` view model consumes.
final class SeedCodeTests: XCTestCase {
    static let modelPath = TaskFixtures.efficientnetF32
    static let detectorPath = TaskFixtures.models.appendingPathComponent("person_detector_f32.tflite").path

    // MARK: - MediaPipe ImageClassifier: image, video, live stream

    func testMediaPipeImageClassifierImageAndVideo() throws {
        let options = ImageClassifierOptions()
        options.baseOptions.modelAssetPath = Self.modelPath
        options.runningMode = .image
        options.maxResults = 5
        let imageClassifier = try ImageClassifier(options: options)
        let image = try MPImage(contentsOf: TaskFixtures.demoCat)
        let result = try imageClassifier.classify(image: image)
        XCTAssertEqual(result.classifications[0].categories.first?.categoryName, "Egyptian cat")

        options.runningMode = .video
        let videoClassifier = try ImageClassifier(options: options)
        for (frame, timestamp) in [(image, 0), (image, 33)] {
            let frameResult = try videoClassifier.classify(videoFrame: frame, timestampInMilliseconds: timestamp)
            XCTAssertEqual(frameResult.classifications, result.classifications)
        }
    }

    @MainActor
    func testMediaPipeImageClassifierLiveStreamDelegateOnTheMainActor() async throws {
        let viewModel = ClassifierViewModel()
        let options = ImageClassifierOptions(modelPath: Self.modelPath)
        options.runningMode = .liveStream
        options.maxResults = 1
        options.imageClassifierLiveStreamDelegate = viewModel
        let imageClassifier = try ImageClassifier(options: options)
        try imageClassifier.classifyAsync(image: MPImage(contentsOf: TaskFixtures.demoCat), timestampInMilliseconds: 0)
        let label = await viewModel.nextLabel()
        XCTAssertEqual(label, "Egyptian cat")
        XCTAssertEqual(viewModel.topLabel, "Egyptian cat")
    }

    @MainActor
    func testLiveStreamResultsAsAnAsyncStream() async throws {
        let options = ImageClassifierOptions(modelPath: Self.modelPath)
        options.runningMode = .liveStream
        options.maxResults = 1
        let results = options.makeLiveStreamResults()
        let classifier = try ImageClassifier(options: options)
        try classifier.classifyAsync(image: MPImage(contentsOf: TaskFixtures.demoCat), timestampInMilliseconds: 42)
        var shown: [String] = []
        for await update in results {
            XCTAssertEqual(update.timestampInMilliseconds, 42)
            shown.append(try update.result.get().classifications[0].categories[0].categoryName ?? "?")
            break
        }
        XCTAssertEqual(shown, ["Egyptian cat"])
    }

    func testAsyncAwaitEntryPoints() async throws {
        let classifier = try ImageClassifier(modelPath: Self.modelPath)
        let image = try MPImage(contentsOf: TaskFixtures.demoCat)
        let result = try await classifier.classify(image: image)
        XCTAssertEqual(result.classifications[0].categories.first?.categoryName, "Egyptian cat")
        let detector = try ObjectDetector(modelPath: Self.detectorPath)
        let detections = try await detector.detect(image: image)
        let again = try await detector.detect(image: image)
        XCTAssertEqual(detections, again)
    }

    // MARK: - MediaPipe ObjectDetector: image, video, live stream

    func testMediaPipeObjectDetectorAllModes() throws {
        let photo = try MPImage(contentsOf: Fixtures.shared("images/grace_hopper.png"))
        let options = ObjectDetectorOptions()
        options.baseOptions.modelAssetPath = Self.detectorPath
        options.runningMode = .image
        options.maxResults = 5
        options.scoreThreshold = 0.5
        let objectDetector = try ObjectDetector(options: options)
        let result = try objectDetector.detect(image: photo)
        XCTAssertEqual(result.detections.first?.categories.first?.categoryName, "person")

        options.runningMode = .video
        XCTAssertEqual(try ObjectDetector(options: options).detect(videoFrame: photo, timestampInMilliseconds: 1).detections, result.detections)

        let processor = DetectionProcessor(expectation(description: "live-stream detections"))
        options.runningMode = .liveStream
        options.objectDetectorLiveStreamDelegate = processor
        let liveDetector = try ObjectDetector(options: options)
        try liveDetector.detectAsync(image: photo, timestampInMilliseconds: 7)
        wait(for: [processor.done], timeout: 60)
        XCTAssertEqual(processor.received, [7: result.detections])
    }

    // MARK: - ML Kit ImageLabeler with an AutoML model

    func testMLKitAutoMLLabeler() throws {
        let manifestPath = TaskFixtures.models.appendingPathComponent("dog_breeds_automl/manifest.json").path
        guard FileManager.default.fileExists(atPath: manifestPath) else { throw XCTSkip("no Models/dog_breeds_automl") }
        let localModel = AutoMLImageLabelerLocalModel(manifestPath: manifestPath)
        let options = AutoMLImageLabelerOptions(localModel: localModel)
        options.confidenceThreshold = 0.0
        let imageLabeler = ImageLabeler.imageLabeler(options: options)
        let image = try MPImage(contentsOf: Fixtures.shared("images/pets.jpg"))
        let done = expectation(description: "labels")
        let texts = Box<[String]>([])
        imageLabeler.process(image) { labels, error in
            guard error == nil, let labels else { return }
            texts.value = labels.map { "\($0.text) \($0.confidence)" }
            done.fulfill()
        }
        wait(for: [done], timeout: 60)
        XCTAssertEqual(texts.value.count, 10)
        XCTAssertEqual(try imageLabeler.results(in: image).map { "\($0.text) \($0.confidence)" }, texts.value)
    }

    // MARK: - Vision: the top-5 text

    func testVisionTopFiveText() throws {
        let model = try VisionModel(modelPath: Self.modelPath)
        let text = Box("")
        let request = VisionClassificationRequest(model: model) { request, error in
            guard let results = request.results else { return }
            text.value = results.prefix(5).map { "(\(String(format: "%.2f", $0.confidence))) \($0.identifier)" }.joined(separator: "\n")
        }
        let handler = ImageRequestHandler(image: try MPImage(contentsOf: TaskFixtures.demoCat), orientation: .up)
        try handler.perform([request])
        let lines = text.value.split(separator: "\n")
        XCTAssertEqual(lines.count, 5)
        XCTAssertTrue(lines[0].hasSuffix(") Egyptian cat"), text.value)
        print(text.value)
    }
}

/// A `@MainActor` view model as an app has one: the delegate method is `nonisolated` (the
/// classifier calls it on its own queue) and hops to the main actor with the Sendable result.
@MainActor
final class ClassifierViewModel: ImageClassifierLiveStreamDelegate {
    private(set) var topLabel = ""
    private var waiting: [CheckedContinuation<String, Never>] = []

    nonisolated func imageClassifier(_ imageClassifier: ImageClassifier, didFinishClassification result: ImageClassifierResult?,
                                     timestampInMilliseconds: Int, error: (any Error)?) {
        let label = result?.classifications.first?.categories.first?.categoryName ?? error?.localizedDescription ?? "?"
        Task { @MainActor in self.show(label) }
    }

    func show(_ label: String) {
        topLabel = label
        for continuation in waiting { continuation.resume(returning: label) }
        waiting.removeAll()
    }

    /// The label shown, once there is one.
    func nextLabel() async -> String {
        if !topLabel.isEmpty { return topLabel }
        return await withCheckedContinuation { waiting.append($0) }
    }
}

/// MediaPipe's `ObjectDetectorLiveStreamDelegate` as a plain (non-UI) class.
final class DetectionProcessor: ObjectDetectorLiveStreamDelegate, @unchecked Sendable {
    let done: XCTestExpectation
    private let lock = NSLock()
    private var results: [Int: [Detection]] = [:]
    init(_ done: XCTestExpectation) { self.done = done }

    func objectDetector(_ objectDetector: ObjectDetector, didFinishDetection result: ObjectDetectorResult?,
                        timestampInMilliseconds: Int, error: (any Error)?) {
        lock.withLock { results[timestampInMilliseconds] = result?.detections }
        done.fulfill()
    }

    var received: [Int: [Detection]] { lock.withLock { results } }
}

/// A value a callback fills in for the test to read after waiting.
final class Box<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
    /// Changes the value under the lock (`value[k] = x` would be a read, then a write: two
    /// concurrent callers could each lose the other's change).
    func mutate(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}
