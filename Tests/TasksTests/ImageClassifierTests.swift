import Foundation
import XCTest
import Tasks
import TestSupport

/// `ImageClassifier` with MediaPipe Tasks semantics: results, options, running modes, errors.
///
/// The EfficientNet-Lite0 models carry MediaPipe metadata (1000 labels, normalisation 127.5/127.5).
/// Option semantics that need many inferences use the small unlabelled MobileNet fixture with a
/// label file written by the test, to keep the suite fast in debug builds.
final class ImageClassifierTests: XCTestCase {
    func classifier(_ model: String = TaskFixtures.efficientnetF32, _ configure: (inout ImageClassifierOptions) -> Void = { _ in }) throws -> ImageClassifier {
        var options = ImageClassifierOptions(modelPath: model)
        configure(&options)
        return try ImageClassifier(options: options)
    }

    func assertSorted(_ categories: [Category], file: StaticString = #filePath, line: UInt = #line) {
        for (a, b) in zip(categories, categories.dropFirst()) {
            XCTAssertTrue(a.score > b.score || (a.score == b.score && a.index < b.index),
                          "not sorted: \(a) before \(b)", file: file, line: line)
        }
    }

    // MARK: - Results on the demo photo

    func checkCatTop3(model: String) throws {
        let result = try classifier(model) { $0.maxResults = 3 }.classify(image: TaskFixtures.demoCatImage())
        XCTAssertEqual(result.classifications.count, 1)
        XCTAssertEqual(result.timestampInMilliseconds, 0)
        let categories = result.classifications[0].categories
        XCTAssertEqual(categories.count, 3)
        assertSorted(categories)
        XCTAssertTrue(TaskFixtures.catNames.contains(categories[0].categoryName ?? ""), "top-1 is \(categories[0]), not a cat")
        XCTAssertEqual(categories[0].categoryName, "Egyptian cat")
        XCTAssertEqual(categories[0].index, 285)
    }

    func testFloatModelTop1IsACatAndMaxResults3() throws { try checkCatTop3(model: TaskFixtures.efficientnetF32) }

    func testInt8ModelTop1IsACatAndMaxResults3() throws { try checkCatTop3(model: TaskFixtures.efficientnetInt8) }

    func testMaxResultsMinusOneReturnsAllClasses() throws {
        let categories = try classifier { $0.maxResults = -1 }.classify(image: TaskFixtures.demoCatImage()).classifications[0].categories
        XCTAssertEqual(categories.count, 1000)
        XCTAssertEqual(Set(categories.map(\.index)), Set(0 ..< 1000))
        assertSorted(categories)
        XCTAssertTrue(categories.allSatisfy { $0.categoryName != nil && !$0.categoryName!.isEmpty })
        XCTAssertEqual(categories.first { $0.index == 0 }?.categoryName, "tench")
        XCTAssertEqual(Double(categories.reduce(0) { $0 + $1.score }), 1, accuracy: 1e-3, "softmax probabilities")
    }

    /// Filtering happens before top-k: the allowlist's class is returned even though it is not the top-1.
    func testAllowlistFiltersBeforeTopKAndIgnoresUnknownNames() throws {
        let categories = try classifier {
            $0.maxResults = 1
            $0.categoryAllowlist = ["tabby", "no such category"]
        }.classify(image: TaskFixtures.demoCatImage()).classifications[0].categories
        XCTAssertEqual(categories.map(\.categoryName), ["tabby"])
        XCTAssertEqual(categories.first?.index, 281)
    }

    func testDenylistRemovesNamesAndIgnoresUnknownNames() throws {
        let categories = try classifier {
            $0.maxResults = 2
            $0.categoryDenylist = ["Egyptian cat", "no such category"]
        }.classify(image: TaskFixtures.demoCatImage()).classifications[0].categories
        XCTAssertEqual(categories.map(\.categoryName), ["tiger cat", "tabby"])
    }

    // MARK: - Option semantics on the small model

    func smallClassifier(_ configure: (inout ImageClassifierOptions) -> Void = { _ in }) throws -> ImageClassifier {
        let labels = try TaskFixtures.labelFile(count: 10, in: TaskFixtures.temporaryDirectory(self))
        return try classifier(TaskFixtures.smallUnlabelled) {
            $0.labelsPath = labels
            configure(&$0)
        }
    }

    func testScoreThresholdKeepsScoresAtOrAboveIt() throws {
        let image = try TaskFixtures.demoCatImage()
        let all = try smallClassifier().classify(image: image)
        XCTAssertEqual(all.classifications.map(\.headIndex), [0, 1], "two heads")
        for head in all.classifications {
            XCTAssertEqual(head.categories.count, 10)
            XCTAssertEqual(Set(head.categories.compactMap(\.categoryName)), Set((0 ..< 10).map { "class\($0)" }))
            assertSorted(head.categories)
        }
        // A threshold equal to the third score keeps exactly three (>=, not >).
        let third = all.classifications[0].categories[2].score
        let thresholded = try smallClassifier { $0.scoreThreshold = third }.classify(image: image)
        XCTAssertEqual(thresholded.classifications[0].categories, Array(all.classifications[0].categories.prefix(3)))
        let expectedSecond = all.classifications[1].categories.filter { $0.score >= third }
        XCTAssertEqual(thresholded.classifications[1].categories, expectedSecond)
    }

    func testAllowAndDenyListsOnLabelFileNames() throws {
        let image = try TaskFixtures.demoCatImage()
        let all = try smallClassifier().classify(image: image).classifications[0].categories
        let allowed = try smallClassifier {
            $0.categoryAllowlist = ["class3", "class7", "class42"]
            $0.maxResults = 5
        }.classify(image: image).classifications[0].categories
        XCTAssertEqual(allowed, all.filter { ["class3", "class7"].contains($0.categoryName) })
        let top = all[0].categoryName!
        let denied = try smallClassifier {
            $0.categoryDenylist = [top, "class42"]
            $0.maxResults = 3
        }.classify(image: image).classifications[0].categories
        XCTAssertEqual(denied, Array(all.dropFirst().prefix(3)))
    }

    // MARK: - Errors

    func testContradictoryOrOutOfRangeOptionsFailAtCreation() {
        assertTaskError(try classifier {
            $0.categoryAllowlist = ["tabby"]
            $0.categoryDenylist = ["tiger cat"]
        }, "invalidOptions", isInvalidOptions)
        assertTaskError(try classifier { $0.maxResults = 0 }, "invalidOptions", isInvalidOptions)
        assertTaskError(try classifier { $0.scoreThreshold = .nan }, "invalidOptions", isInvalidOptions)
        assertTaskError(try classifier { $0.baseOptions.modelAssetPath = "" }, "invalidOptions", isInvalidOptions)
        assertTaskError(try classifier { $0.runningMode = .liveStream }, "invalidOptions", isInvalidOptions)
        assertTaskError(try classifier { $0.resultListener = { _, _, _ in } }, "invalidOptions", isInvalidOptions)
    }

    func testMissingModelFileIsAModelError() {
        assertTaskError(try classifier("/nonexistent/model.tflite"), "model") {
            if case .model = $0 { return true } else { return false }
        }
    }

    func testMirroredOrientationIsRejected() throws {
        let c = try smallClassifier()
        let cat = try TaskFixtures.demoCatImage()
        for orientation in [MPImage.Orientation.upMirrored, .leftMirrored] {
            let mirrored = try MPImage(pixels: cat.pixels, width: cat.width, height: cat.height, orientation: orientation)
            assertTaskError(try c.classify(image: mirrored), "invalidArgument", isInvalidArgument)
        }
    }

    func testLabelFileWithWrongCountIsRejected() throws {
        let dir = try TaskFixtures.temporaryDirectory(self)
        let five = try TaskFixtures.labelFile(count: 5, in: dir)
        assertTaskError(try classifier(TaskFixtures.smallUnlabelled) { $0.labelsPath = five }, "invalidLabels", isInvalidLabels)
        assertTaskError(try classifier(TaskFixtures.smallUnlabelled) { $0.labelsPath = dir.appendingPathComponent("missing.txt").path },
                        "invalidLabels", isInvalidLabels)
    }

    func testAllowOrDenyListWithoutLabelsIsRejected() {
        assertTaskError(try classifier(TaskFixtures.smallUnlabelled) { $0.categoryAllowlist = ["class1"] }, "invalidOptions", isInvalidOptions)
        assertTaskError(try classifier(TaskFixtures.smallUnlabelled) { $0.categoryDenylist = ["class1"] }, "invalidOptions", isInvalidOptions)
    }

    func testUnlabelledModelReturnsIndicesOnly() throws {
        let c = try classifier(TaskFixtures.smallUnlabelled) { $0.maxResults = 2 }
        let result = try c.classify(image: TaskFixtures.demoCatImage())
        XCTAssertEqual(result.classifications.count, 2)
        for head in result.classifications {
            XCTAssertEqual(head.categories.count, 2)
            XCTAssertTrue(head.categories.allSatisfy { $0.categoryName == nil })
            XCTAssertNil(head.headName)
        }
    }

    // MARK: - Running modes

    func testVideoModeNeedsIncreasingTimestamps() throws {
        let c = try smallClassifier { $0.runningMode = .video }
        let image = try TaskFixtures.demoCatImage()
        let first = try c.classify(videoFrame: image, timestampInMilliseconds: 100)
        XCTAssertEqual(first.timestampInMilliseconds, 100)
        assertTaskError(try c.classify(videoFrame: image, timestampInMilliseconds: 100), "invalidArgument", isInvalidArgument)
        assertTaskError(try c.classify(videoFrame: image, timestampInMilliseconds: 50), "invalidArgument", isInvalidArgument)
        let later = try c.classify(videoFrame: image, timestampInMilliseconds: 133)
        XCTAssertEqual(later.timestampInMilliseconds, 133)
        XCTAssertEqual(later.classifications, first.classifications, "same frame, same result")
        // The image method and the live-stream method belong to other modes.
        assertTaskError(try c.classify(image: image), "invalidArgument", isInvalidArgument)
        assertTaskError(try c.classifyAsync(image: image, timestampInMilliseconds: 200), "invalidArgument", isInvalidArgument)
    }

    func testImageModeRejectsVideoCalls() throws {
        let c = try smallClassifier()
        assertTaskError(try c.classify(videoFrame: TaskFixtures.demoCatImage(), timestampInMilliseconds: 1), "invalidArgument", isInvalidArgument)
    }

    /// Results arrive on the listener; frames sent while one is in flight are dropped.
    func testLiveStreamDeliversResultsAndDropsFramesWhileBusy() throws {
        let deliveries = Deliveries()
        let delivered = expectation(description: "a live-stream result")
        delivered.assertForOverFulfill = false
        let c = try smallClassifier {
            $0.runningMode = .liveStream
            $0.resultListener = { result, image, timestamp in
                switch result {
                case .success(let r):
                    deliveries.record(timestamp, error: r.timestampInMilliseconds == timestamp && image.width == 451 ? nil : "bad result \(r)")
                case .failure(let e):
                    deliveries.record(timestamp, error: "\(e)")
                }
                delivered.fulfill()
            }
        }
        let image = try TaskFixtures.demoCatImage()
        let sent = 20
        for t in 0 ..< sent { try c.classifyAsync(image: image, timestampInMilliseconds: t * 33) }
        assertTaskError(try c.classifyAsync(image: image, timestampInMilliseconds: 0), "invalidArgument", isInvalidArgument)
        assertTaskError(try c.classify(image: image), "invalidArgument", isInvalidArgument)
        wait(for: [delivered], timeout: 60)
        // Let any frame still in flight finish before counting.
        let drained = expectation(description: "drained")
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { drained.fulfill() }
        wait(for: [drained], timeout: 5)
        let (timestamps, errors) = deliveries.snapshot
        XCTAssertEqual(errors, [])
        XCTAssertGreaterThanOrEqual(timestamps.count, 1)
        XCTAssertLessThanOrEqual(timestamps.count, sent)
        XCTAssertEqual(timestamps, timestamps.sorted(), "results in timestamp order")
        XCTAssertEqual(timestamps.first, 0, "the first frame is never dropped")
        print("live stream: \(timestamps.count) of \(sent) frames delivered (timestamps \(timestamps))")
    }
}

/// Agreement with MediaPipe's Python `ImageClassifier` on the shared photos
/// (`Tests/Goldens/make_mediapipe_classifier_goldens.py` → `Fixtures/mediapipe_classifier/*.json`):
/// the same top-1 index, at least 4 of the same top-5, and close scores.
///
/// Score tolerance. Float models: 0.005 — the input encoder reproduces MediaPipe's resampling
/// exactly (PreprocessingTests), so what remains is float rounding (measured max 0.0028; the
/// issue's 0.03 is tightened). Quantized models: 0.06 — MediaPipe runs LiteRT's XNNPACK kernels,
/// SwiftLite the reference kernels it is bit-exact with, and the two differ by one quantized step
/// in many layers. The failure that forced it: cat.png on mobilenet_v2_1.0_224_quant, Egyptian cat
/// 0.796875 here and from LiteRT BUILTIN_REF fed MediaPipe's own input tensor, 0.832031 from
/// MediaPipe and from LiteRT XNNPACK on that same tensor (difference 0.035); the largest seen is
/// 0.055 (inat_bird, kite_and_cold.jpg, whose JPEG MediaPipe also decodes differently from
/// libjpeg-turbo/Pillow).
///
/// MediaPipe's order among equal scores is unspecified (the fixture's notes), so a category tied with
/// the boundary score counts as in the top-k on either side.
final class MediaPipeClassifierAgreementTests: XCTestCase {
    static let directory = Fixtures.directory("TasksTests").appendingPathComponent("mediapipe_classifier")
    static let floatTolerance: Float = 0.005, quantizedTolerance: Float = 0.06

    func testEfficientNetLite0Float32() throws { try checkAgreement("efficientnet_lite0_f32", tolerance: Self.floatTolerance) }
    func testEfficientNetLite0Int8() throws { try checkAgreement("efficientnet_lite0_int8", tolerance: Self.quantizedTolerance) }
    func testMobileNetV2Quant() throws { try checkAgreement("mobilenet_v2_1.0_224_quant", tolerance: Self.quantizedTolerance) }
    func testMobileNetV2INatBirdQuant() throws { try checkAgreement("mobilenet_v2_1.0_224_inat_bird_quant", tolerance: Self.quantizedTolerance) }

    func checkAgreement(_ name: String, tolerance: Float) throws {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.directory.appendingPathComponent("\(name).json"))) as! [String: Any]
        let model = json["model"] as! [String: Any]
        let file = model["file"] as! String
        let modelURL = model["relative_to"] as? String == "../shared"
            ? try Fixtures.shared(file) : Fixtures.repositoryRoot.appendingPathComponent(file)
        let options = ImageClassifierOptions(modelPath: modelURL.path)
        options.maxResults = -1
        let classifier = try ImageClassifier(options: options)

        var worstScore: Float = 0, failures = [String]()
        for entry in json["images"] as! [[String: Any]] {
            let imageFile = entry["file"] as! String
            let expected = (entry["categories"] as! [[String: Any]]).map {
                (index: $0["index"] as! Int, score: ($0["score"] as! NSNumber).floatValue, name: $0["category_name"] as? String)
            }
            let image = try MPImage(contentsOf: Fixtures.shared(imageFile))
            XCTAssertEqual([image.width, image.height], [entry["width"] as! Int, entry["height"] as! Int], imageFile)
            let ours = try classifier.classify(image: image).classifications[0].categories
            var score = [Int: Float]()
            for c in ours { score[c.index] = c.score }

            // Top-1: the same index, or one tied with MediaPipe's top score.
            let top = expected[0]
            let tiedTop = expected.filter { $0.score == top.score }.map(\.index)
            if !(tiedTop.contains(ours[0].index) || (ours[0].index == top.index)) {
                failures.append("\(imageFile): top-1 \(ours[0].index) '\(ours[0].categoryName ?? "")' \(ours[0].score), MediaPipe \(top.index) '\(top.name ?? "")' \(top.score)")
            } else {
                XCTAssertEqual(ours[0].categoryName, expected.first { $0.index == ours[0].index }?.name, imageFile)
            }
            // Top-5 overlap: a MediaPipe category counts if it is in our top 5, or ties our 5th score.
            let k = min(5, expected.count)
            let ourTop = Set(ours.prefix(k).map(\.index)), ourKth = ours[k - 1].score
            let shared = expected.prefix(k).filter { ourTop.contains($0.index) || score[$0.index] == ourKth }.count
            if shared < 4 {
                failures.append("\(imageFile): only \(shared) of MediaPipe's top-5 \(expected.prefix(k).map(\.index)) in ours \(ours.prefix(k).map(\.index))")
            }
            for e in expected {
                let difference = abs((score[e.index] ?? .infinity) - e.score)
                worstScore = max(worstScore, difference)
                if difference > tolerance {
                    failures.append("\(imageFile): class \(e.index) '\(e.name ?? "")' score \(score[e.index] ?? .nan), MediaPipe \(e.score) (difference \(difference))")
                }
            }
        }
        print("MediaPipe agreement \(name): max score difference \(worstScore) over \((json["images"] as! [Any]).count) images")
        XCTAssertEqual(failures, [], "\(name): \(failures.count) disagreements with MediaPipe")
    }
}
