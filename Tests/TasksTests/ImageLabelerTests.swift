import Foundation
import XCTest
import Tasks
import TestSupport

/// `ImageLabeler` with ML Kit semantics, and `LocalModel`'s AutoML Vision Edge folders.
final class ImageLabelerTests: XCTestCase {
    static let autoML = TaskFixtures.models.appendingPathComponent("dog_breeds_automl")

    func autoMLFolder() throws -> String {
        guard FileManager.default.fileExists(atPath: Self.autoML.appendingPathComponent("manifest.json").path) else {
            throw XCTSkip("Models/dog_breeds_automl is not in this checkout; the AutoML labeler tests need it")
        }
        return Self.autoML.path
    }

    func assertLabelerSemantics(_ labels: [ImageLabel], threshold: Float, maxCount: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertLessThanOrEqual(labels.count, maxCount, file: file, line: line)
        XCTAssertTrue(labels.allSatisfy { $0.confidence >= threshold }, "\(labels)", file: file, line: line)
        XCTAssertEqual(labels.map(\.confidence), labels.map(\.confidence).sorted(by: >), "highest first", file: file, line: line)
        XCTAssertEqual(Set(labels.map(\.index)).count, labels.count, file: file, line: line)
    }

    func testAutoMLDogBreedsOnPets() throws {
        let model = try LocalModel(manifestFolder: autoMLFolder())
        XCTAssertEqual(model.labelsPath, Self.autoML.appendingPathComponent("dict.txt").path)
        XCTAssertEqual(model.modelPath, Self.autoML.appendingPathComponent("model.tflite").path)
        let breeds = try Labels(contentsOf: model.labelsPath!).names
        XCTAssertEqual(breeds.count, 19)

        let image = try MPImage(contentsOf: Fixtures.shared("images/pets.jpg"))
        let options = ImageLabelerOptions(localModel: model, confidenceThreshold: 0)
        options.maxResultCount = 19
        let all = try ImageLabeler(options: options).process(image)
        XCTAssertEqual(all.count, 19, "threshold 0 keeps every class")
        assertLabelerSemantics(all, threshold: 0, maxCount: 19)
        XCTAssertTrue(all.allSatisfy { breeds[$0.index] == $0.text }, "texts come from dict.txt")

        // ML Kit's custom-model defaults: the metadata's threshold (this model has none, so 0.0), at most 10.
        let defaults = try ImageLabeler(options: ImageLabelerOptions(localModel: model)).process(image)
        assertLabelerSemantics(defaults, threshold: 0, maxCount: 10)
        XCTAssertEqual(defaults, Array(all.prefix(10)))

        let threshold = all[1].confidence
        let two = try ImageLabeler(options: ImageLabelerOptions(localModel: model, confidenceThreshold: threshold)).process(image)
        XCTAssertEqual(two, all.filter { $0.confidence >= threshold })
        print("dog breeds on pets.jpg: \(all.prefix(3).map { "\($0.text) \($0.confidence)" })")
    }

    /// The same semantics on the float EfficientNet (labels from its metadata), which the engine runs today.
    func testConfidenceThresholdAndMaxCountOnEfficientNet() throws {
        let model = LocalModel(path: TaskFixtures.efficientnetF32)
        XCTAssertNil(model.labelsPath)
        let image = try TaskFixtures.demoCatImage()
        let options = ImageLabelerOptions(localModel: model, confidenceThreshold: 0.05)
        options.maxResultCount = 2
        let labeler = try ImageLabeler(options: options)
        // The asynchronous form (one inference keeps the debug-build suite quick).
        let done = expectation(description: "asynchronous labels")
        nonisolated(unsafe) var received: ([ImageLabel]?, TaskError?)
        labeler.process(image) { labels, error in
            received = (labels, error)
            done.fulfill()
        }
        wait(for: [done], timeout: 60)
        XCTAssertNil(received.1)
        let labels = try XCTUnwrap(received.0)
        assertLabelerSemantics(labels, threshold: 0.05, maxCount: 2)
        XCTAssertEqual(labels.map(\.text), ["Egyptian cat", "tiger cat"])
        XCTAssertEqual(labels.map(\.index), [285, 282])
    }

    func testOutOfRangeOptionsAreRejected() {
        let model = LocalModel(path: TaskFixtures.efficientnetF32)
        assertTaskError(try ImageLabeler(options: ImageLabelerOptions(localModel: model, confidenceThreshold: 1.5)), "invalidOptions", isInvalidOptions)
        assertTaskError(try ImageLabeler(options: ImageLabelerOptions(localModel: model, confidenceThreshold: -0.1)), "invalidOptions", isInvalidOptions)
        // ML Kit: a maxResultCount that is not positive means the default 10 (not an error).
        let options = ImageLabelerOptions(localModel: model)
        options.maxResultCount = 0
        XCTAssertNoThrow(try ImageLabeler(options: options))
    }

    // MARK: - Broken AutoML folders

    /// A folder with `model.tflite` (a copy of a small model), `dict.txt` and `manifest` as manifest.json.
    func folder(manifest: String?) throws -> String {
        let dir = try TaskFixtures.temporaryDirectory(self)
        try FileManager.default.copyItem(atPath: TaskFixtures.smallUnlabelled, toPath: dir.appendingPathComponent("model.tflite").path)
        _ = try TaskFixtures.labelFile(count: 10, in: dir)
        try FileManager.default.moveItem(at: dir.appendingPathComponent("labels_10.txt"), to: dir.appendingPathComponent("dict.txt"))
        if let manifest { try manifest.write(to: dir.appendingPathComponent("manifest.json"), atomically: true, encoding: .utf8) }
        return dir.path
    }

    func testWellFormedTemporaryFolderLoads() throws {
        let model = try LocalModel(manifestFolder: folder(manifest: #"{"modelFile": "model.tflite", "labelsFile": "dict.txt", "modelType": "IMAGE_LABELING"}"#))
        let labels = try ImageLabeler(options: ImageLabelerOptions(localModel: model, confidenceThreshold: 0)).process(TaskFixtures.demoCatImage())
        // The first head of this model is logits, so some scores fall below the threshold 0.
        XCTAssertFalse(labels.isEmpty)
        assertLabelerSemantics(labels, threshold: 0, maxCount: 10)
        XCTAssertTrue(labels.allSatisfy { $0.text == "class\($0.index)" }, "\(labels)")
    }

    func testBrokenAutoMLFoldersAreInvalidOptions() throws {
        let cases: [(String, String?)] = [
            ("no manifest", nil),
            ("malformed JSON", #"{"modelFile": "model.tflite", "labelsFile": "#),
            ("JSON array", #"["model.tflite", "dict.txt"]"#),
            ("no labelsFile", #"{"modelFile": "model.tflite", "modelType": "IMAGE_LABELING"}"#),
            ("no modelFile", #"{"labelsFile": "dict.txt"}"#),
            ("missing labels file", #"{"modelFile": "model.tflite", "labelsFile": "labels.txt"}"#),
            ("missing model file", #"{"modelFile": "absent.tflite", "labelsFile": "dict.txt"}"#),
            ("wrong model type", #"{"modelFile": "model.tflite", "labelsFile": "dict.txt", "modelType": "OBJECT_DETECTION"}"#),
        ]
        for (what, manifest) in cases {
            let path = try folder(manifest: manifest)
            do {
                let model = try LocalModel(manifestFolder: path)
                XCTFail("\(what): accepted as \(model)")
            } catch {
                guard case .invalidOptions = error else { return XCTFail("\(what): \(error)") }
            }
        }
        assertTaskError(try LocalModel(manifestFolder: "/nonexistent/automl"), "invalidOptions", isInvalidOptions)
    }

    // MARK: - Files stay inside the folder

    /// A manifest may only name files inside its folder (the hardening issue's path traversal:
    /// `labelsFile: ../../../../etc/passwd` used to print the password file as labels). Absent,
    /// absolute, `..` and linked-out names give one message, so nothing outside can be probed.
    func testManifestCannotNameFilesOutsideItsFolder() throws {
        let outside = try TaskFixtures.temporaryDirectory(self)
        let secret = outside.appendingPathComponent("secret.txt")
        try "root:x:0:0\n".write(to: secret, atomically: true, encoding: .utf8)
        let names = ["../../../../etc/passwd", "/etc/passwd", "../" + outside.lastPathComponent + "/secret.txt",
                     secret.path, "link.txt", "linkdir/secret.txt", "nothing-here.txt", "../nothing-here.txt", "."]
        for field in ["labelsFile", "modelFile"] {
            var messages = Set<String>()
            for name in names {
                let other = field == "labelsFile" ? #""modelFile": "model.tflite""# : #""labelsFile": "dict.txt""#
                let path = try folder(manifest: #"{"\#(field)": "\#(name)", \#(other)}"#)
                try FileManager.default.createSymbolicLink(atPath: path + "/link.txt", withDestinationPath: secret.path)
                try FileManager.default.createSymbolicLink(atPath: path + "/linkdir", withDestinationPath: outside.path)
                do {
                    let model = try LocalModel(manifestFolder: path)
                    XCTFail("\(field) '\(name)': accepted as \(model)")
                } catch {
                    guard case .invalidOptions(let message) = error else { return XCTFail("\(field) '\(name)': \(error)") }
                    XCTAssertFalse(message.contains(outside.path) && !name.contains(outside.path), message)
                    messages.insert(message.replacingOccurrences(of: path, with: "FOLDER").replacingOccurrences(of: "'\(name)'", with: "'NAME'"))
                }
            }
            XCTAssertEqual(messages.count, 1, "\(field): the refusals differ, so they tell what exists: \(messages)")
        }
    }

    /// Names inside the folder, in a subfolder or through a link that stays inside, are fine.
    func testManifestMayNameFilesInSubfolders() throws {
        let path = try folder(manifest: #"{"modelFile": "sub/../model.tflite", "labelsFile": "labels/dict.txt"}"#)
        try? FileManager.default.removeItem(atPath: path + "/manifest.json")
        try #"{"modelFile": "./model.tflite", "labelsFile": "labels/dict.txt"}"#.write(toFile: path + "/manifest.json", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: path + "/labels", withIntermediateDirectories: false)
        try FileManager.default.moveItem(atPath: path + "/dict.txt", toPath: path + "/labels/dict.txt")
        let model = try LocalModel(manifestPath: path + "/manifest.json")
        XCTAssertTrue(model.labelsPath?.hasSuffix("/labels/dict.txt") ?? false, "\(model)")
        XCTAssertEqual(try LocalModel(manifestFolder: path), model)
    }
}
