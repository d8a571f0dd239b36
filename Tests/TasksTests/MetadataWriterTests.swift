import Engine
import Foundation
@testable import Tasks
import TestSupport
import XCTest

/// `MetadataWriter`: written metadata reads back, the written bytes are the ones MediaPipe accepted
/// (Tests/Goldens/make_metadata_writer_goldens.py) and SwiftLite's results on them equal MediaPipe's;
/// requests that would be wrong are refused with a typed error.
final class MetadataWriterTests: XCTestCase {
    static let fixtures = Fixtures.directory("TasksTests").appendingPathComponent("metadata_writer")
    static let shared = Fixtures.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared")

    /// The model without metadata, as the golden script makes it: the `TFLITE_METADATA` entry
    /// renamed `XFLITE_METADATA` (same length, so no offset moves).
    static func stripped(_ path: String) throws -> [UInt8] {
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let name = Array("TFLITE_METADATA".utf8)
        if let at = (0 ... bytes.count - name.count).first(where: { bytes[$0] == name[0] && Array(bytes[$0 ..< $0 + name.count]) == name }) {
            bytes[at] = UInt8(ascii: "X")
        }
        return bytes
    }

    static func golden(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: fixtures.appendingPathComponent("goldens.json"))
        let cases = try XCTUnwrap((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["cases"] as? [[String: Any]])
        return try XCTUnwrap(cases.first { $0["name"] as? String == name })
    }

    static func hex(_ bytes: [UInt8]) -> String {
        SHA256.hash(bytes).hexString
    }

    static func efficientnetRequest() throws -> MetadataWriteRequest {
        var request = MetadataWriteRequest()
        request.labels = try Labels(contentsOf: TaskFixtures.models.appendingPathComponent("imagenet_labels_1000.txt").path).names
        request.labelFileName = "imagenet_labels_1000.txt"
        request.normalization = ([127.5], [127.5])
        request.name = "EfficientNet-Lite0 (written by swiftlite)"
        return request
    }

    func testWrittenMetadataReadsBack() throws {
        let bare = try Self.stripped(TaskFixtures.efficientnetF32)
        XCTAssertNil(try ModelMetadata(graph: Graph(data: Data(bare))))
        var request = try Self.efficientnetRequest()
        request.scoreThreshold = 0.25
        let written = try MetadataWriter.write(model: bare, request)
        let graph = try Graph(data: Data(written))
        let metadata = try XCTUnwrap(try ModelMetadata(graph: graph))
        XCTAssertEqual(metadata.name, "EfficientNet-Lite0 (written by swiftlite)")
        XCTAssertEqual(metadata.minParserVersion, "1.0.0")
        XCTAssertEqual(metadata.inputs.first?.normalization?.mean, [127.5])
        XCTAssertEqual(metadata.inputs.first?.normalization?.std, [127.5])
        XCTAssertEqual(metadata.outputs.first?.scoreThreshold, 0.25)
        XCTAssertEqual(metadata.outputs.first?.associatedFiles.map(\.name), ["imagenet_labels_1000.txt"])
        XCTAssertEqual(metadata.outputs.first?.associatedFiles.first?.type, .tensorAxisLabels)
        XCTAssertEqual(try LabelFiles.lines(of: "imagenet_labels_1000.txt", graph: graph), request.labels)
        // The original tensors and operators are all still there.
        let original = try Graph(data: Data(bare))
        XCTAssertEqual(graph.tensors.count, original.tensors.count)
        XCTAssertEqual(graph.nodes.count, original.nodes.count)
        XCTAssertEqual(graph.inputs, original.inputs)
        // Writing again replaces the metadata and keeps the labels already packed.
        var again = MetadataWriteRequest()
        again.name = "renamed"
        let rewritten = try MetadataWriter.write(model: written, again)
        let g2 = try Graph(data: Data(rewritten))
        let m2 = try XCTUnwrap(try ModelMetadata(graph: g2))
        XCTAssertEqual(m2.name, "renamed")
        XCTAssertEqual(m2.inputs.first?.normalization?.mean, [127.5])
        XCTAssertEqual(g2.metadata.filter { $0.name == "TFLITE_METADATA" }.count, 1)
        XCTAssertEqual(try LabelFiles.lines(of: "imagenet_labels_1000.txt", graph: g2)?.count, 1000)
    }

    func testDetectorMetadataRolesAndLabels() throws {
        let model = Self.shared.appendingPathComponent("models/ssd_mobilenet_v1_coco_quant.tflite").path
        guard FileManager.default.fileExists(atPath: model) else { throw XCTSkip("../shared not found: \(model) is missing") }
        var request = MetadataWriteRequest()
        request.labels = (0 ..< 90).map { "c\($0)" }
        let written = try MetadataWriter.write(model: try Self.stripped(model), request)
        let graph = try Graph(data: Data(written))
        let metadata = try XCTUnwrap(try ModelMetadata(graph: graph))
        XCTAssertEqual(metadata.outputs.map(\.name), ["location", "category", "score", "number of detections"])
        XCTAssertEqual(metadata.outputs[1].associatedFiles.first?.type, .tensorValueLabels)
        let detector = try ObjectDetector(options: ObjectDetectorOptions(modelData: Data(written)))
        XCTAssertEqual(detector.roles.rule, .metadata)
        XCTAssertEqual(detector.labelChoice.labels?.names.count, 90)
        // Roles given in another order are written in that order.
        request.outputRoles = [.scores, .boxes, .count, .classes]
        let swapped = try ModelMetadata(graph: Graph(data: Data(try MetadataWriter.write(model: try Self.stripped(model), request))))
        XCTAssertEqual(swapped?.outputs.map(\.name), ["score", "location", "number of detections", "category"])
    }

    /// The bytes MediaPipe's ImageClassifier accepted (and refused without metadata), and the same
    /// categories and scores from SwiftLite's classifier.
    func testClassifierMatchesMediaPipeOnWrittenModel() throws {
        let golden = try Self.golden("efficientnet_lite0_f32")
        XCTAssertEqual(golden["mediapipe_refused_without_metadata"] as? String,
                       "Input tensor has type float32: it requires specifying NormalizationOptions metadata to preprocess input images.")
        XCTAssertEqual(golden["written_matches_original"] as? Bool, true)
        let written = try MetadataWriter.write(model: try Self.stripped(TaskFixtures.efficientnetF32), try Self.efficientnetRequest())
        XCTAssertEqual(Self.hex(written), golden["written_sha256"] as? String, "the writer no longer writes the bytes MediaPipe accepted")
        let options = ImageClassifierOptions(modelData: Data(written))
        options.maxResults = 5
        let result = try ImageClassifier(options: options).classify(image: try TaskFixtures.demoCatImage())
        let ours = result.classifications[0].categories
        let theirs = try XCTUnwrap(golden["mediapipe_on_written"] as? [[String: Any]])
        XCTAssertEqual(ours.map(\.index), theirs.compactMap { $0["index"] as? Int })
        XCTAssertEqual(ours.map { $0.categoryName ?? "" }, theirs.compactMap { $0["name"] as? String })
        for (a, b) in zip(ours, theirs) {
            XCTAssertEqual(Double(a.score), try XCTUnwrap(b["score"] as? Double), accuracy: 2e-3, "\(a)")
        }
    }

    /// MediaPipe's ObjectDetector accepted the written SSD; SwiftLite applies the written score
    /// threshold 0.3 (MediaPipe ignores it), so it finds MediaPipe's detections scoring ≥ 0.3.
    func testDetectorMatchesMediaPipeOnWrittenModel() throws {
        let model = Self.shared.appendingPathComponent("models/ssd_mobilenet_v1_coco_quant.tflite").path
        guard FileManager.default.fileExists(atPath: model) else { throw XCTSkip("../shared not found: \(model) is missing") }
        let golden = try Self.golden("ssd_mobilenet_v1_coco_quant")
        XCTAssertEqual(golden["mediapipe_refused_without_metadata"] as? String, "Object detection models require TFLite Model Metadata but none was found")
        var request = MetadataWriteRequest()
        request.labels = try Labels(contentsOf: Self.shared.appendingPathComponent("models/labels/coco_labels.txt").path).names
        request.labelFileName = "coco_labels.txt"
        request.scoreThreshold = 0.3
        let written = try MetadataWriter.write(model: try Self.stripped(model), request)
        XCTAssertEqual(Self.hex(written), golden["written_sha256"] as? String)
        let ours = try ObjectDetector(options: ObjectDetectorOptions(modelData: Data(written))).detect(image: try TaskFixtures.demoCatImage()).detections
        let theirs = try XCTUnwrap(golden["mediapipe_on_written"] as? [[String: Any]]).filter { ($0["score"] as? Double ?? 0) >= 0.3 }
        XCTAssertEqual(ours.count, theirs.count, "\(ours)")
        for (a, b) in zip(ours, theirs) {
            XCTAssertEqual(a.categories[0].categoryName, b["name"] as? String)
            XCTAssertEqual(Double(a.categories[0].score), try XCTUnwrap(b["score"] as? Double), accuracy: 1e-2)
            let box = try XCTUnwrap(b["box"] as? [Int])
            let mine = [a.boundingBox.originX, a.boundingBox.originY, a.boundingBox.width, a.boundingBox.height]
            for (x, y) in zip(mine, box) { XCTAssertLessThanOrEqual(abs(x - y), 3, "\(mine) vs \(box)") }
        }
    }

    func refusal(_ model: [UInt8], _ request: MetadataWriteRequest, contains text: String, file: StaticString = #filePath, line: UInt = #line) {
        do {
            _ = try MetadataWriter.write(model: model, request)
            XCTFail("expected a refusal containing '\(text)'", file: file, line: line)
        } catch {
            XCTAssertTrue(error.description.contains(text), "\(error)", file: file, line: line)
        }
    }

    func testRefusesWhatWouldBeWrong() throws {
        let bare = try Self.stripped(TaskFixtures.efficientnetF32)
        var request = try Self.efficientnetRequest()
        request.labels = Array(request.labels!.dropLast())
        refusal(bare, request, contains: "the label file has 999 lines; output 'StatefulPartitionedCall:0' scores 1000 classes")
        request.labels = ["background"] + (try Self.efficientnetRequest().labels!)
        refusal(bare, request, contains: "its first line 'background' is a background line the model does not score: drop it")
        request = try Self.efficientnetRequest()
        request.normalization = nil
        refusal(bare, request, contains: "is float32: MediaPipe and ML Kit need its normalization")
        request.normalization = ([127.5], [0])
        refusal(bare, request, contains: "has a zero")
        request.normalization = ([1, 2], [1, 2])
        refusal(bare, request, contains: "normalization mean has 2 values; the input has 3 channels")
        request = try Self.efficientnetRequest()
        request.outputRoles = [.boxes, .classes, .scores, .count]
        refusal(bare, request, contains: "--output-roles names 4 outputs")
        // An integer input: a normalization the user adds is refused.
        var int8 = MetadataWriteRequest()
        int8.normalization = ([0], [1])
        refusal(try Self.stripped(TaskFixtures.efficientnetInt8), int8, contains: "an integer input takes the pixels as they are")
    }

    func testDetectorRefusesBackgroundFirstLabels() throws {
        let model = Self.shared.appendingPathComponent("models/ssd_mobilenet_v1_coco_quant.tflite").path
        guard FileManager.default.fileExists(atPath: model) else { throw XCTSkip("../shared not found: \(model) is missing") }
        var request = MetadataWriteRequest()
        request.labels = ["???"] + (0 ..< 90).map { "c\($0)" }
        refusal(try Self.stripped(model), request, contains: "starts with the background line '???': MediaPipe names class i by line i")
        request.labels = (0 ..< 80).map { "c\($0)" }
        refusal(try Self.stripped(model), request, contains: "the label file has 80 lines; the post-process op has num_classes 90")
    }

    /// Garbage, truncations and a corrupted root are typed errors, not crashes.
    func testMalformedModelsAreTypedErrors() throws {
        var request = MetadataWriteRequest()
        request.normalization = ([127.5], [127.5])
        for bytes in [[UInt8](), [UInt8](repeating: 0xFF, count: 64), Array("not a model at all".utf8)] {
            XCTAssertThrowsError(try MetadataWriter.write(model: bytes, request)) { error in
                guard case MetadataWriteError.unreadableModel = error else { return XCTFail("\(error)") }
            }
        }
        let bare = try Self.stripped(TaskFixtures.efficientnetF32)
        XCTAssertThrowsError(try MetadataWriter.write(model: Array(bare.prefix(4096)), request))
    }

    /// Corrupted and truncated models (seeded byte flips, mostly in the flatbuffer's tables near
    /// the start) end in a written model or a typed error, never a crash or a hang.
    func testCorruptedModelsNeverCrashTheWriter() throws {
        let original = try Self.stripped(TaskFixtures.efficientnetInt8)
        var generator = SplitMix64(seed: 28)
        var written = 0, refused = 0
        for round in 0 ..< 120 {
            var bytes = original
            if round % 4 == 3 {
                bytes = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count))))
            } else {
                for _ in 0 ..< 4 {
                    let window = round % 2 == 0 ? 4096 : bytes.count
                    bytes[Int(generator.next() % UInt64(window))] = UInt8(truncatingIfNeeded: generator.next())
                }
            }
            do {
                let out = try MetadataWriter.write(model: bytes, MetadataWriteRequest())
                XCTAssertNotNil(try? Graph(data: Data(out)), "round \(round): a written model must load")
                written += 1
            } catch {
                refused += 1
            }
        }
        XCTAssertEqual(written + refused, 120)
    }

    func testBuilderLaysOutTablesAReaderAccepts() throws {
        var b = FlatBufferBuilder()
        let name = b.string("labels.txt")
        let floats = b.vector([Float(1.5), -2])
        b.startTable()
        b.add(slot: 0, reference: name)
        b.add(slot: 2, Int8(3))
        b.add(slot: 3, reference: floats)
        let root = b.endTable()
        let bytes = b.finish(root: root, identifier: "M001")
        XCTAssertEqual(Array(bytes[4 ..< 8]), Array("M001".utf8))
        let raw = RawFlatBuffer(bytes: bytes)
        let table = try raw.root()
        XCTAssertEqual(try raw.string(try XCTUnwrap(try raw.target(0, table: table))), "labels.txt")
        XCTAssertNil(try raw.field(1, table: table))
        XCTAssertEqual(bytes[try XCTUnwrap(try raw.field(2, table: table))], 3)
        let v = try XCTUnwrap(try raw.target(3, table: table))
        XCTAssertEqual(try raw.u32(v), 2)
        XCTAssertEqual(Float(bitPattern: UInt32(try raw.u32(v + 8))), -2)
    }
}
