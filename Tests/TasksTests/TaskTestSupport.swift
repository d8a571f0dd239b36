import Foundation
import XCTest
import Tasks
import TestSupport

/// Models and photos the Tasks tests share.
enum TaskFixtures {
    static let models = Fixtures.repositoryRoot.appendingPathComponent("Models")
    static let efficientnetF32 = models.appendingPathComponent("efficientnet_lite0_f32.tflite").path
    static let efficientnetInt8 = models.appendingPathComponent("efficientnet_lite0_int8.tflite").path
    static let demoCat = models.appendingPathComponent("demo/cat.png")
    /// A small float MobileNet (random weights, `[1, 128, 128, 3]` → two `[1, 10]` heads: logits, then
    /// softmax) without TFLite metadata: fast enough for option semantics, and a model with no labels.
    static let smallUnlabelled = Fixtures.directory("EngineTests")
        .appendingPathComponent("float/net_mobilenet_v1_025_128/model.tflite").path
    /// ImageNet class names that are cats (EfficientNet's labels, no background class).
    static let catNames: Set<String> = ["tabby", "tiger cat", "Persian cat", "Siamese cat", "Egyptian cat"]

    static func demoCatImage() throws -> MPImage { try MPImage(contentsOf: demoCat) }

    /// A fresh temporary directory, removed when the test ends.
    static func temporaryDirectory(_ test: XCTestCase) throws -> URL {
        try TemporaryDirectories.make(for: test, prefix: "swiftlite-tests")
    }

    /// Writes `count` labels `class0`, `class1`, ... and returns the file's path.
    static func labelFile(count: Int, in directory: URL) throws -> String {
        let url = directory.appendingPathComponent("labels_\(count).txt")
        try (0 ..< count).map { "class\($0)" }.joined(separator: "\n").appending("\n").write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}

/// Asserts that `body` throws `TaskError` of the case `matches` accepts.
func assertTaskError<T>(_ body: @autoclosure () throws -> T, _ kind: String, file: StaticString = #filePath, line: UInt = #line,
                        _ matches: (TaskError) -> Bool) {
    do {
        _ = try body()
        XCTFail("expected TaskError.\(kind), got no error", file: file, line: line)
    } catch let error as TaskError {
        XCTAssertTrue(matches(error), "expected TaskError.\(kind), got \(error)", file: file, line: line)
    } catch {
        XCTFail("expected TaskError.\(kind), got \(type(of: error)): \(error)", file: file, line: line)
    }
}

func isInvalidOptions(_ e: TaskError) -> Bool { if case .invalidOptions = e { return true } else { return false } }
func isInvalidArgument(_ e: TaskError) -> Bool { if case .invalidArgument = e { return true } else { return false } }
func isInvalidLabels(_ e: TaskError) -> Bool { if case .invalidLabels = e { return true } else { return false } }

/// A counter the result listeners of live-stream tests share with the test.
final class Deliveries: @unchecked Sendable {
    private let lock = NSLock()
    private var timestamps: [Int] = []
    private var errors: [String] = []
    func record(_ timestamp: Int, error: String?) {
        lock.lock(); defer { lock.unlock() }
        timestamps.append(timestamp)
        if let error { errors.append(error) }
    }
    var snapshot: (timestamps: [Int], errors: [String]) {
        lock.lock(); defer { lock.unlock() }
        return (timestamps, errors)
    }
}
