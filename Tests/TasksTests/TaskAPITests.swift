import Engine
import Foundation
import XCTest
import Tasks
import TestSupport

/// The API a Swift developer expects: models from memory, concurrent calls on one task, Codable
/// results, errors with the CLI's one-line message.
final class TaskAPITests: XCTestCase {
    func images() throws -> [MPImage] {
        let cat = try TaskFixtures.demoCatImage()
        let exif = Fixtures.directory("TasksTests").appendingPathComponent("exif")
        return [cat, MPImage(cat, turned: .down),
                try MPImage(contentsOf: exif.appendingPathComponent("grace_hopper_6.jpg")),
                try MPImage(contentsOf: exif.appendingPathComponent("small_upright.png"))]
    }

    /// One `Plan` shared by every caller and a `Session` per concurrent call: calls from many
    /// threads at once give exactly the serial results, never another call's.
    func testConcurrentClassifyCallsGiveTheSerialResults() throws {
        let classifier = try ImageClassifier(modelPath: TaskFixtures.efficientnetF32)
        let images = try images()
        let serial = try images.map { try classifier.classify(image: $0) }
        for i in serial.indices { for j in serial.indices where j > i { XCTAssertNotEqual(serial[i], serial[j], "distinct answers, so a mix-up shows") } }
        let calls = 16
        let results = Box<[Int: Result<ImageClassifierResult, TaskError>]>([:])
        DispatchQueue.concurrentPerform(iterations: calls) { i in
            let result: Result<ImageClassifierResult, TaskError>
            do throws(TaskError) { result = .success(try classifier.classify(image: images[i % images.count])) } catch { result = .failure(error) }
            results.mutate { $0[i] = result }
        }
        for i in 0 ..< calls {
            XCTAssertEqual(try XCTUnwrap(results.value[i]).get(), serial[i % images.count], "call \(i)")
        }
    }

    func testConcurrentDetectCallsGiveTheSerialResults() throws {
        let detector = try ObjectDetector(modelPath: TaskFixtures.models.appendingPathComponent("person_detector_f32.tflite").path)
        let images = try images()
        let serial = try images.map { try detector.detect(image: $0) }
        let results = Box<[Int: ObjectDetectorResult]>([:])
        DispatchQueue.concurrentPerform(iterations: 12) { i in
            if let r = try? detector.detect(image: images[i % images.count]) { results.mutate { $0[i] = r } }
        }
        for i in 0 ..< 12 { XCTAssertEqual(results.value[i], serial[i % images.count], "call \(i)") }
    }

    /// MediaPipe's `BaseOptions.modelAssetBuffer`: the same model from memory gives the same answer.
    func testModelFromMemory() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: TaskFixtures.efficientnetF32))
        let cat = try TaskFixtures.demoCatImage()
        let fromMemory = try ImageClassifier(options: ImageClassifierOptions(modelData: data)).classify(image: cat)
        XCTAssertEqual(fromMemory, try ImageClassifier(modelPath: TaskFixtures.efficientnetF32).classify(image: cat))
        XCTAssertEqual(fromMemory.classifications[0].categories[0].categoryName, "Egyptian cat", "labels from the metadata in memory")
        let detectorPath = TaskFixtures.models.appendingPathComponent("person_detector_f32.tflite").path
        let detectorData = try Data(contentsOf: URL(fileURLWithPath: detectorPath))
        XCTAssertEqual(try ObjectDetector(options: ObjectDetectorOptions(modelData: detectorData)).detect(image: cat),
                       try ObjectDetector(modelPath: detectorPath).detect(image: cat))
        let both = ImageClassifierOptions(modelData: data)
        both.baseOptions.modelAssetPath = TaskFixtures.efficientnetF32
        assertTaskError(try ImageClassifier(options: both), "invalidOptions", isInvalidOptions)
        assertTaskError(try ImageClassifier(options: ImageClassifierOptions(modelData: Data([1, 2, 3]))), "model") {
            if case .model = $0 { return true } else { return false }
        }
    }

    /// MediaPipe holds its live-stream delegate weakly: the classifier does not keep it alive.
    func testLiveStreamDelegateIsHeldWeakly() throws {
        final class Listener: ImageClassifierLiveStreamDelegate {
            func imageClassifier(_ imageClassifier: ImageClassifier, didFinishClassification result: ImageClassifierResult?,
                                 timestampInMilliseconds: Int, error: (any Error)?) {}
        }
        let options = ImageClassifierOptions(modelPath: TaskFixtures.smallUnlabelled)
        options.runningMode = .liveStream
        var listener: Listener? = Listener()
        options.imageClassifierLiveStreamDelegate = listener
        let classifier = try ImageClassifier(options: options)
        XCTAssertNotNil(classifier.options.imageClassifierLiveStreamDelegate)
        listener = nil
        XCTAssertNil(classifier.options.imageClassifierLiveStreamDelegate)
        // With the delegate gone, frames are still accepted (their results go nowhere).
        XCTAssertNoThrow(try classifier.classifyAsync(image: TaskFixtures.demoCatImage(), timestampInMilliseconds: 0))
    }

    func testResultsRoundTripThroughJSON() throws {
        let cat = try TaskFixtures.demoCatImage()
        let options = ImageClassifierOptions(modelPath: TaskFixtures.efficientnetF32)
        options.maxResults = 3
        let classification = try ImageClassifier(options: options).classify(image: cat)
        XCTAssertEqual(try JSONDecoder().decode(ImageClassifierResult.self, from: JSONEncoder().encode(classification)), classification)
        let detection = ObjectDetectorResult(detections: [Detection(boundingBox: BoundingBox(originX: 1, originY: 2, width: 3, height: 4),
                                                                    categories: [Category(index: 0, score: 0.5, categoryName: "person", displayName: nil)])],
                                             timestampInMilliseconds: 9)
        XCTAssertEqual(try JSONDecoder().decode(ObjectDetectorResult.self, from: JSONEncoder().encode(detection)), detection)
        let labels = [ImageLabel(text: "tabby", confidence: 0.25, index: 281)]
        XCTAssertEqual(try JSONDecoder().decode([ImageLabel].self, from: JSONEncoder().encode(labels)), labels)
        let observations = [ClassificationObservation(identifier: "tabby", confidence: 0.25)]
        XCTAssertEqual(try JSONDecoder().decode([ClassificationObservation].self, from: JSONEncoder().encode(observations)), observations)
        // Public initialisers build what the tasks return.
        XCTAssertEqual(ImageClassifierResult(classifications: [Classifications(headIndex: 0, categories: [])]).timestampInMilliseconds, 0)
    }

    /// Errors are `LocalizedError` with the one line the CLI prints (`error: \(error)`), and keep
    /// their cause as a case.
    func testErrorsCarryTheirCauseAndOneLineMessage() throws {
        let missing = URL(fileURLWithPath: "/nonexistent/photo.jpg")
        do {
            _ = try MPImage(contentsOf: missing)
            XCTFail("no error")
        } catch let error as ImageError {
            let task = TaskError.image(error)
            XCTAssertEqual(task.localizedDescription, error.description)
            XCTAssertEqual(task.localizedDescription, "\(task)")
            XCTAssertFalse(task.localizedDescription.contains("\n"))
            guard case .image(.fileUnreadable) = task else { return XCTFail("\(task)") }
        }
        do {
            _ = try ImageClassifier(modelPath: "/nonexistent/model.tflite")
            XCTFail("no error")
        } catch {
            guard case .model = error else { return XCTFail("\(error)") }
            XCTAssertEqual(error.localizedDescription, error.description)
        }
        XCTAssertEqual(TaskError.invalidOptions("x").localizedDescription, "invalid options: x")
    }
}
