import Engine
import Foundation
import XCTest
import Tasks
import TestSupport

/// Which labels a classifier or labeler uses: a file the user names beats the model's metadata;
/// a leading background line is skipped when the file has one line more than the model has classes.
final class LabelSourceTests: XCTestCase {
    func classifier(_ model: String, labels: String?) throws -> ImageClassifier {
        let options = ImageClassifierOptions(modelPath: model)
        options.labelsPath = labels
        options.maxResults = 3
        return try ImageClassifier(options: options)
    }

    func testMetadataLabelsWithoutAFile() throws {
        let c = try classifier(TaskFixtures.efficientnetF32, labels: nil)
        guard case .metadata = c.labelChoices[0].source else { return XCTFail("\(c.labelChoices[0])") }
        XCTAssertEqual(c.labelChoices[0].labels?.names.count, 1000)
    }

    /// ImageNet's 1001-line label file (first line "background") on EfficientNet-Lite0's 1000
    /// classes: the file wins over the metadata and its background line is skipped, so the names
    /// are right (the cat is still a cat).
    func testUserFileWinsAndItsBackgroundLineIsSkipped() throws {
        let file = try Fixtures.shared("models/labels/imagenet_labels.txt").path
        let c = try classifier(TaskFixtures.efficientnetF32, labels: file)
        XCTAssertEqual(c.labelChoices[0].source, .file(file))
        XCTAssertEqual(c.labelChoices[0].droppedBackground, "background")
        XCTAssertEqual(c.labelChoices[0].labels?.names.count, 1000)
        let top = try c.classify(image: TaskFixtures.demoCatImage()).classifications[0].categories[0]
        XCTAssertTrue(["tabby, tabby cat", "tiger cat", "Egyptian cat"].contains(top.categoryName ?? ""), "\(top)")
    }

    /// MobileNet v1 scores 1001 classes, background included: the same file is used as it is.
    func testBackgroundClassThatTheModelScoresIsKept() throws {
        let file = try Fixtures.shared("models/labels/imagenet_labels.txt").path
        let c = try classifier(try Fixtures.shared("models/mobilenet_v1_0.25_128_quant.tflite").path, labels: file)
        XCTAssertNil(c.labelChoices[0].droppedBackground)
        XCTAssertEqual(c.labelChoices[0].labels?.names.first, "background")
    }

    func testMismatchedCountsExplainWhy() throws {
        let dir = try TaskFixtures.temporaryDirectory(self)
        let eleven = try TaskFixtures.labelFile(count: 11, in: dir)
        let nine = try TaskFixtures.labelFile(count: 9, in: dir)
        for (file, hint) in [(eleven, "is not a background line"), (nine, "one label short")] {
            do {
                _ = try classifier(TaskFixtures.smallUnlabelled, labels: file)
                XCTFail("\(file) accepted")
            } catch {
                guard case TaskError.invalidLabels(let why)? = error as? TaskError else { return XCTFail("\(error)") }
                XCTAssertTrue(why.contains(hint) && why.contains("10 classes") && why.contains("label file"), why)
            }
        }
        let background = dir.appendingPathComponent("background.txt")
        try (["???"] + (0 ..< 10).map { "c\($0)" }).joined(separator: "\r\n").write(to: background, atomically: true, encoding: .utf8)
        let c = try classifier(TaskFixtures.smallUnlabelled, labels: background.path)
        XCTAssertEqual(c.labelChoices.map(\.droppedBackground), ["???", "???"])
        XCTAssertEqual(c.labelChoices[0].labels?.names.first, "c0")
    }

    func testNoLabels() throws {
        let c = try classifier(TaskFixtures.smallUnlabelled, labels: nil)
        XCTAssertEqual(c.labelChoices.map(\.source), [.none, .none])
    }
}
