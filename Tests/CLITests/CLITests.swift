import Engine
import Foundation
import TestSupport
import XCTest

/// End-to-end tests of the `swiftlite` executable: stdout, stderr and exit status.
///
/// SwiftPM cannot make a test target depend on an executable, so the binary must be built first:
/// `make test` runs `swift build` before `swift test`.
final class CLITests: XCTestCase {
    static let root = Fixtures.repositoryRoot
    static let floatFixtures = Fixtures.directory("EngineTests").appendingPathComponent("float")
    static let demoCat = root.appendingPathComponent("Models/demo/cat.png").path
    static let efficientnetF32 = root.appendingPathComponent("Models/efficientnet_lite0_f32.tflite").path

    /// The `swiftlite` built next to this test bundle (same configuration), else in `.build/debug`.
    static let executable: URL? = {
        let bundle = Bundle.main.bundleURL
        let candidates = [
            bundle.appendingPathComponent("swiftlite"),
            bundle.deletingLastPathComponent().appendingPathComponent("swiftlite"),
            root.appendingPathComponent(".build/debug/swiftlite"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    struct Output {
        let status: Int32
        let stdout: String
        let stderr: String
        var stderrLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast(stderr.hasSuffix("\n") ? 1 : 0) }
    }

    /// Runs `swiftlite arguments...` from the repository root.
    func swiftlite(_ arguments: String...) throws -> Output { try swiftlite(arguments) }

    func swiftlite(_ arguments: [String]) throws -> Output {
        guard let executable = Self.executable else {
            XCTFail("swiftlite executable not found next to the test bundle (\(Bundle.main.bundleURL.path)) or in .build/debug; run `swift build` first (`make test` does)")
            throw XCTSkip("no swiftlite executable")
        }
        let run = try runProcess(executable, arguments, stdin: nil, in: try temporaryDirectory())
        return Output(status: run.status, stdout: run.stdout, stderr: run.stderr)
    }

    func temporaryDirectory() throws -> URL {
        try TemporaryDirectories.make(for: self, prefix: "swiftlite-cli")
    }

    func fixture(_ name: String) -> URL { Self.floatFixtures.appendingPathComponent(name) }

    /// A failure: non-zero status, nothing on stdout, exactly one `error: ...` line on stderr.
    func assertFails(_ output: Output, mentioning text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNotEqual(output.status, 0, "exit status", file: file, line: line)
        XCTAssertEqual(output.stdout, "", "stdout", file: file, line: line)
        XCTAssertEqual(output.stderrLines.count, 1, "stderr should be one line, is: \(output.stderr)", file: file, line: line)
        XCTAssertTrue(output.stderr.hasPrefix("error: "), output.stderr, file: file, line: line)
        XCTAssertTrue(output.stderr.contains(text), "stderr '\(output.stderr)' does not mention '\(text)'", file: file, line: line)
    }

    func json(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> Any {
        do { return try JSONSerialization.jsonObject(with: Data(text.utf8)) } catch {
            XCTFail("not JSON: \(text.prefix(300))", file: file, line: line)
            throw error
        }
    }

    // MARK: - Help

    func testHelp() throws {
        let help = try swiftlite("--help")
        XCTAssertEqual(help.status, 0)
        XCTAssertEqual(help.stderr, "")
        XCTAssertTrue(help.stdout.contains("usage: swiftlite <command>"), help.stdout)
        for command in ["classify", "detect", "label", "inspect", "run", "bench"] {
            XCTAssertTrue(help.stdout.contains("\n  \(command) "), "help lists \(command)")
        }
        let commandHelp = try swiftlite("run", "--help")
        XCTAssertEqual(commandHelp.status, 0)
        XCTAssertTrue(commandHelp.stdout.contains("--dump-intermediates"), commandHelp.stdout)
        // No arguments at all: the help, and a failing status.
        let none = try swiftlite()
        XCTAssertNotEqual(none.status, 0)
        XCTAssertTrue(none.stdout.contains("usage: swiftlite <command>"))
    }

    // MARK: - inspect

    func testInspectText() throws {
        let output = try swiftlite("inspect", fixture("conv2d_k3x3_s1_same_7x7_c3to8_relu/model.tflite").path)
        XCTAssertEqual(output.status, 0, output.stderr)
        XCTAssertEqual(output.stderr, "")
        for expected in ["inputs:", "outputs:", "operators (1):", "CONV_2D", "[1, 7, 7, 3]", "[1, 7, 7, 8]", "macs=", "tensors ("] {
            XCTAssertTrue(output.stdout.contains(expected), "missing '\(expected)' in:\n\(output.stdout)")
        }
    }

    func testInspectJSON() throws {
        let output = try swiftlite("inspect", "--json", fixture("net_mobilenet_v1_025_128/model.tflite").path)
        XCTAssertEqual(output.status, 0, output.stderr)
        let report = try XCTUnwrap(try json(output.stdout) as? [String: Any])
        let operators = try XCTUnwrap(report["operators"] as? [[String: Any]])
        let tensors = try XCTUnwrap(report["tensors"] as? [[String: Any]])
        XCTAssertEqual(operators.count, 31)
        XCTAssertEqual(Set(operators.compactMap { $0["op"] as? String }), ["CONV_2D", "DEPTHWISE_CONV_2D", "MEAN", "RESHAPE", "SOFTMAX"])
        XCTAssertTrue(operators.allSatisfy { $0["inputs"] is [Int] && $0["outputs"] is [Int] && $0["macs"] is Int })
        XCTAssertGreaterThan(tensors.count, operators.count)
        XCTAssertTrue(tensors.allSatisfy { $0["name"] is String && $0["shape"] is [Int] && $0["type"] is String })
        let inputs = try XCTUnwrap(report["inputs"] as? [[String: Any]])
        XCTAssertEqual(inputs.first?["shape"] as? [Int], [1, 128, 128, 3])
        XCTAssertEqual((report["outputs"] as? [Any])?.count, 2)
        XCTAssertGreaterThan(report["total_macs"] as? Int ?? 0, 0)
    }

    // MARK: - run

    func testRunWritesTheGoldenOutput() throws {
        let golden = fixture("conv2d_k3x3_s1_same_7x7_c3to8_relu")
        let dir = try temporaryDirectory()
        let output = try swiftlite("run", golden.appendingPathComponent("model.tflite").path,
                                   "--input", golden.appendingPathComponent("input_0.npy").path, "--output-dir", dir.path)
        XCTAssertEqual(output.status, 0, output.stderr)
        XCTAssertTrue(output.stdout.hasPrefix("ran 1 operators"), output.stdout)
        let ours = try NumpyArray(contentsOf: dir.appendingPathComponent("output_0.npy"))
        let expected = try NumpyArray(contentsOf: golden.appendingPathComponent("output_0.npy"))
        let comparison = Comparison(ours, expected)
        XCTAssertNil(comparison.shapeMismatch)
        // The manifest's tolerance for this case is 1e-5 relative.
        XCTAssertLessThanOrEqual(comparison.relativeError, 1e-5)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("tensors").path))
    }

    func testRunDumpIntermediates() throws {
        let golden = fixture("net_mobilenet_v1_025_128")
        let dir = try temporaryDirectory()
        let output = try swiftlite("run", golden.appendingPathComponent("model.tflite").path, "--dump-intermediates",
                                   "--input", golden.appendingPathComponent("input_0.npy").path, "--output-dir", dir.path)
        XCTAssertEqual(output.status, 0, output.stderr)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("tensors").path).filter { $0.hasSuffix(".npy") }
        // The input and one output per operator (31 operators, two of them model outputs).
        XCTAssertEqual(files.count, 32, "\(files.sorted())")
        for file in files {
            XCTAssertNoThrow(try NumpyArray(contentsOf: dir.appendingPathComponent("tensors").appendingPathComponent(file)), file)
        }
        // Each model output was also dumped, and equals output_<k>.npy.
        for k in 0 ..< 2 {
            let written = try NumpyArray(contentsOf: dir.appendingPathComponent("output_\(k).npy"))
            XCTAssertEqual(Comparison(written, try NumpyArray(contentsOf: golden.appendingPathComponent("output_\(k).npy"))).shapeMismatch, nil)
            XCTAssertTrue(try files.contains { try NumpyArray(contentsOf: dir.appendingPathComponent("tensors/\($0)")) == written })
        }
    }

    /// Real exports name tensors with ~800 characters: the dump keeps `<index>_<short name>.npy`
    /// file names and maps each file to its full name in `tensors/index.json`.
    func testRunDumpIntermediatesWithLongTensorNames() throws {
        let model = Self.root.appendingPathComponent("Tests/EngineTests/Fixtures/hostile/long_tensor_names.tflite")
        let dir = try temporaryDirectory()
        let input = dir.appendingPathComponent("in.npy")
        let values: [Float] = [1, 2, 3, 4, 5, 6]
        try NumpyArray(dataType: .float32, shape: [1, 2, 3, 1], data: values.withUnsafeBytes { Data($0) }).npyData().write(to: input)
        let output = try swiftlite("run", model.path, "--dump-intermediates", "--input", input.path, "--output-dir", dir.path)
        XCTAssertEqual(output.status, 0, output.stderr)
        let tensors = dir.appendingPathComponent("tensors")
        let files = try FileManager.default.contentsOfDirectory(atPath: tensors.path).filter { $0.hasSuffix(".npy") }.sorted()
        XCTAssertEqual(files.count, 2, "\(files)")
        XCTAssertTrue(files.allSatisfy { $0.utf8.count <= 100 }, "\(files)")
        let index = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: tensors.appendingPathComponent("index.json"))) as? [[String: Any]])
        XCTAssertEqual(index.map { $0["file"] as? String }, files)
        let names = index.compactMap { $0["name"] as? String }
        XCTAssertEqual(names.count, 2)
        XCTAssertTrue(names[0].hasSuffix(";input") && names[0].count > 700, names[0])
        XCTAssertTrue(names[1].hasSuffix(";output"), names[1])
        XCTAssertEqual(index.map { $0["shape"] as? [Int] }, [[1, 2, 3, 1], [1, 4, 5, 1]])
        XCTAssertEqual(index.map { $0["dtype"] as? String }, ["float32", "float32"])
        let padded = try NumpyArray(contentsOf: tensors.appendingPathComponent(files[1]))
        XCTAssertEqual(padded.shape, [1, 4, 5, 1])
    }

    // MARK: - Errors: one line on stderr, non-zero status

    func testUnknownCommand() throws {
        assertFails(try swiftlite("frobnicate"), mentioning: "unknown command 'frobnicate'")
    }

    func testUnknownFlag() throws {
        assertFails(try swiftlite("inspect", "--frobnicate", fixture("softmax_1x10/model.tflite").path), mentioning: "--frobnicate")
        assertFails(try swiftlite("classify", "-x", Self.demoCat), mentioning: "-x")
    }

    func testMissingFile() throws {
        assertFails(try swiftlite("inspect", "/nonexistent/model.tflite"), mentioning: "/nonexistent/model.tflite")
        let dir = try temporaryDirectory()
        assertFails(try swiftlite("run", fixture("softmax_1x10/model.tflite").path, "--input", "/nonexistent/in.npy",
                                  "--output-dir", dir.path), mentioning: "/nonexistent/in.npy")
        assertFails(try swiftlite("classify", "--model", Self.efficientnetF32, "/nonexistent/photo.png"), mentioning: "/nonexistent/photo.png")
    }

    func testWrongPositionalCount() throws {
        assertFails(try swiftlite("inspect"), mentioning: "inspect takes exactly one MODEL path")
        assertFails(try swiftlite("run", "a.tflite", "b.tflite", "--output-dir", "/tmp/x"), mentioning: "run takes exactly one MODEL path")
    }

    /// `run`'s `validate()`: the flags it names, before the model is read.
    func testRunValidationNamesTheFlags() throws {
        let model = fixture("softmax_1x10/model.tflite").path, input = fixture("softmax_1x10/input_0.npy").path
        let dir = try temporaryDirectory()
        let file = dir.appendingPathComponent("a-file")
        try Data().write(to: file)
        assertFails(try swiftlite("run", model, "--input", input), mentioning: "--output-dir is required")
        assertFails(try swiftlite("run", model, "--input", input, "--output-dir", file.path), mentioning: "--output-dir \(file.path) is a file")
        assertFails(try swiftlite("run", model, "--input", input, "--output-dir", dir.path, "--stop-after", "-1"),
                    mentioning: "--stop-after must be an integer in 0...2147483647, got '-1'")
        assertFails(try swiftlite("run", model, "--input", input, "--output-dir", dir.path, "--threads", "0"),
                    mentioning: "--threads must be an integer in 1...64, got '0'")
        assertFails(try swiftlite("run", model, "--input", "", "--output-dir", dir.path), mentioning: "--input must be a non-empty value")
    }

    func testWrongInputCount() throws {
        let golden = fixture("add_same_shape_1x4x4x3")
        let dir = try temporaryDirectory()
        assertFails(try swiftlite("run", golden.appendingPathComponent("model.tflite").path,
                                  "--input", golden.appendingPathComponent("input_0.npy").path, "--output-dir", dir.path),
                    mentioning: "the model has 2 inputs, got 1")
    }

    func testInputOfTheWrongShape() throws {
        let golden = fixture("softmax_1x10")
        let dir = try temporaryDirectory()
        let wrong = dir.appendingPathComponent("wrong.npy")
        try NumpyArray(dataType: .float32, shape: [1, 7], data: Data(count: 28)).npyData().write(to: wrong)
        assertFails(try swiftlite("run", golden.appendingPathComponent("model.tflite").path, "--input", wrong.path,
                                  "--output-dir", dir.path), mentioning: "does not match input 0")
        let wrongType = dir.appendingPathComponent("wrong_type.npy")
        try NumpyArray(dataType: .int32, shape: [1, 10], data: Data(count: 40)).npyData().write(to: wrongType)
        assertFails(try swiftlite("run", golden.appendingPathComponent("model.tflite").path, "--input", wrongType.path,
                                  "--output-dir", dir.path), mentioning: "does not match input 0")
    }

    func testInvalidOptionValues() throws {
        assertFails(try swiftlite("classify", "--max-results", "many", Self.demoCat), mentioning: "--max-results")
        assertFails(try swiftlite("classify", "--crop", "diagonal", Self.demoCat), mentioning: "--crop")
        assertFails(try swiftlite("classify", "--model", Self.efficientnetF32, "--allow", "tabby", "--deny", "lynx", Self.demoCat),
                    mentioning: "mutually exclusive")
        assertFails(try swiftlite("classify", "--model", Self.efficientnetF32), mentioning: "no IMAGE")
    }

    // MARK: - Tasks

    /// The default model (a bundled EfficientNet-Lite0) on the demo photo, as in the README.
    func testClassifyNamesACat() throws {
        let output = try swiftlite("classify", "Models/demo/cat.png")
        XCTAssertEqual(output.status, 0, output.stderr)
        let lines = output.stdout.split(separator: "\n")
        XCTAssertEqual(lines.first, "Models/demo/cat.png:")
        XCTAssertEqual(lines.count, 6, "the path and the top 5")
        XCTAssertTrue(lines.count > 1 && lines[1].hasSuffix(" Egyptian cat"), output.stdout)
    }

    func testClassifyJSONShape() throws {
        let output = try swiftlite("classify", "--json", "--model", Self.efficientnetF32, "--max-results", "3", Self.demoCat)
        XCTAssertEqual(output.status, 0, output.stderr)
        let results = try XCTUnwrap(try json(output.stdout) as? [[String: Any]])
        XCTAssertEqual(results.count, 1)
        XCTAssertEqual(results[0]["image"] as? String, Self.demoCat)
        let heads = try XCTUnwrap(results[0]["classifications"] as? [[String: Any]])
        XCTAssertEqual(heads.count, 1)
        XCTAssertEqual(heads[0]["headIndex"] as? Int, 0)
        XCTAssertTrue(heads[0]["headName"] is String)
        let categories = try XCTUnwrap(heads[0]["categories"] as? [[String: Any]])
        XCTAssertEqual(categories.count, 3)
        for c in categories {
            XCTAssertTrue(c["index"] is Int && c["score"] is Double && c["categoryName"] is String && c["displayName"] is String, "\(c)")
        }
        XCTAssertEqual(categories[0]["categoryName"] as? String, "Egyptian cat")
        XCTAssertEqual(categories[0]["index"] as? Int, 285)
        let scores = categories.compactMap { $0["score"] as? Double }
        XCTAssertEqual(scores, scores.sorted(by: >))
    }

    /// `label` with no model uses ML Kit's base labeler: the EfficientNet-Lite0 the Tasks module
    /// ships as a resource, threshold 0.5 — the same labels as that model file from Models/ with
    /// `--confidence 0.5`.
    func testLabelWithoutAModelUsesTheBaseModel() throws {
        let base = try swiftlite("label", "--json", Self.demoCat)
        XCTAssertEqual(base.status, 0, base.stderr)
        let int8 = Self.root.appendingPathComponent("Models/efficientnet_lite0_int8.tflite").path
        let explicit = try swiftlite("label", "--json", "--model", int8, "--confidence", "0.5", Self.demoCat)
        XCTAssertEqual(explicit.status, 0, explicit.stderr)
        XCTAssertEqual(base.stdout, explicit.stdout)
        let labels = try XCTUnwrap((try json(base.stdout) as? [[String: Any]])?.first?["labels"] as? [[String: Any]])
        XCTAssertFalse(labels.isEmpty)
        XCTAssertTrue(labels.allSatisfy { ($0["confidence"] as? Double ?? 0) >= 0.5 }, base.stdout)
        // --max-results caps the base labeler's list too.
        let three = try swiftlite("label", "--json", "--confidence", "0", "--max-results", "3", Self.demoCat)
        XCTAssertEqual(((try json(three.stdout) as? [[String: Any]])?.first?["labels"] as? [Any])?.count, 3, three.stdout)
    }

    /// `--automl` takes the folder or its manifest.json (the same labels), and a hosted model's
    /// name with `--model-host` (downloaded from a server on 127.0.0.1 into
    /// `$SWIFTLITE_MODEL_CACHE`): the same network, so the same indices and confidences.
    func testLabelAutoMLManifestAndHostedName() throws {
        let folder = Self.root.appendingPathComponent("Models/dog_breeds_automl")
        guard FileManager.default.fileExists(atPath: folder.appendingPathComponent("manifest.json").path) else {
            throw XCTSkip("Models/dog_breeds_automl is not in this checkout")
        }
        let fromFolder = try swiftlite("label", "--automl", folder.path, "--json", Self.demoCat)
        XCTAssertEqual(fromFolder.status, 0, fromFolder.stderr)
        let fromManifest = try swiftlite("label", "--automl", folder.appendingPathComponent("manifest.json").path, "--json", Self.demoCat)
        XCTAssertEqual(fromManifest.stdout, fromFolder.stdout)

        var files = [String: Data]()
        for name in ["manifest.json", "dict.txt", "model.tflite"] { files[name] = try Data(contentsOf: folder.appendingPathComponent(name)) }
        let served = files
        let server = try LoopbackHTTPServer(lifetime: 60) { request in
            let parts = request.path.split(separator: "/").map(String.init)
            guard parts.count == 3, parts[0] == "models", parts[1] == "dogs", let body = served[parts[2]] else { return .init(status: 404) }
            return .init(status: 200, headers: ["ETag": "\"\(parts[2])-1\""], body: body)
        }
        defer { server.stop() }
        let cache = try temporaryDirectory()
        setenv("SWIFTLITE_MODEL_CACHE", cache.path, 1)
        defer { unsetenv("SWIFTLITE_MODEL_CACHE") }
        let hosted = try swiftlite("label", "--automl", "dogs", "--model-host", server.url("/models").absoluteString, "--json", Self.demoCat)
        XCTAssertEqual(hosted.status, 0, hosted.stderr)
        XCTAssertEqual(hosted.stdout.replacingOccurrences(of: Self.demoCat, with: ""), fromFolder.stdout.replacingOccurrences(of: Self.demoCat, with: ""))
        XCTAssertTrue(FileManager.default.fileExists(atPath: cache.appendingPathComponent("dogs/current/model.tflite").path))
        // The host down: the version downloaded before is used, with a warning.
        server.stop()
        let offline = try swiftlite("label", "--automl", "dogs", "--model-host", server.url("/models").absoluteString, "--json", Self.demoCat)
        XCTAssertEqual(offline.status, 0, offline.stderr)
        XCTAssertEqual(offline.stdout, hosted.stdout)
        XCTAssertTrue(offline.stderr.hasPrefix("warning: hosted model 'dogs'"), offline.stderr)
        // Never downloaded and the host down: one error line.
        assertFails(try swiftlite("label", "--automl", "cats", "--model-host", server.url("/models").absoluteString, Self.demoCat),
                    mentioning: "hosted model 'cats'")
    }

    /// The CLI details of issue 27: any negative --max-results is "all" (as the API and
    /// MediaPipe); --allow/--deny names that are no label are reported; --annotate refuses a
    /// name that says another format than the PNG it writes; model errors name the model file.
    func testCategoryOptionsAnnotateFormatAndModelErrors() throws {
        let all = try swiftlite("classify", "--model", Self.efficientnetF32, "--max-results", "-7", Self.demoCat)
        XCTAssertEqual(all.status, 0, all.stderr)
        XCTAssertEqual(all.stdout.split(separator: "\n").count, 1 + 1000)
        let allowed = try swiftlite("classify", "--model", Self.efficientnetF32, "--allow", "no such label,tabby", Self.demoCat)
        XCTAssertEqual(allowed.status, 0, allowed.stderr)
        XCTAssertEqual(allowed.stderr, "warning: --allow names no label of the model: no such label\n")
        XCTAssertTrue(allowed.stdout.hasSuffix(") tabby\n"), allowed.stdout)
        let denied = try swiftlite("classify", "--model", Self.efficientnetF32, "--deny", "nothing", Self.demoCat)
        XCTAssertTrue(denied.stderr.contains("--deny names no label of the model: nothing; it removes nothing"), denied.stderr)
        // Filters that leave nothing say so on stderr (the result itself is empty, status 0).
        let none = try swiftlite("classify", "--model", Self.efficientnetF32, "--score-threshold", "0.99", Self.demoCat)
        XCTAssertEqual(none.status, 0, none.stderr)
        XCTAssertEqual(none.stderr, "note: \(Self.demoCat): no category passes --score-threshold 0.99\n")
        let jpeg = try temporaryDirectory().appendingPathComponent("boxes.jpg").path
        let annotate = try swiftlite("detect", "--annotate", jpeg, Self.demoCat)
        XCTAssertEqual(annotate.status, 2)
        XCTAssertTrue(annotate.stderr.contains("name the file .png"), annotate.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: jpeg))
        let bad = try temporaryDirectory().appendingPathComponent("bad.tflite")
        try Data("not a model".utf8).write(to: bad)
        for command in ["classify", "detect", "label"] {
            assertFails(try swiftlite(command, "--model", bad.path, Self.demoCat), mentioning: "model '\(bad.path)'")
        }
    }

    func testLabelAutoML() throws {
        let folder = Self.root.appendingPathComponent("Models/dog_breeds_automl")
        guard FileManager.default.fileExists(atPath: folder.appendingPathComponent("manifest.json").path) else {
            throw XCTSkip("Models/dog_breeds_automl is not in this checkout")
        }
        let photo = (try? Fixtures.shared("images/pets.jpg").path) ?? Self.demoCat
        let output = try swiftlite("label", "--automl", folder.path, "--confidence", "0.1", "--json", photo)
        XCTAssertEqual(output.status, 0, output.stderr)
        let results = try XCTUnwrap(try json(output.stdout) as? [[String: Any]])
        XCTAssertEqual(results.first?["image"] as? String, photo)
        let labels = try XCTUnwrap(results.first?["labels"] as? [[String: Any]])
        let breeds = try String(contentsOf: folder.appendingPathComponent("dict.txt"), encoding: .utf8).split(separator: "\n").map(String.init)
        for label in labels {
            let text = try XCTUnwrap(label["text"] as? String), index = try XCTUnwrap(label["index"] as? Int)
            XCTAssertEqual(breeds[index], text)
            XCTAssertGreaterThanOrEqual(label["confidence"] as? Double ?? -1, 0.1)
        }
        assertFails(try swiftlite("label", "--automl", Self.root.appendingPathComponent("Models/demo").path, Self.demoCat),
                    mentioning: "manifest.json")
    }

    func testDetectCOCO() throws {
        let model = try Fixtures.shared("models/ssd_mobilenet_v1_coco_quant.tflite").path
        let labels = try Fixtures.shared("models/labels/coco_labelmap.txt").path
        let photo = try Fixtures.shared("images/kite_and_cold.jpg").path
        let output = try swiftlite("detect", "--model", model, "--labels", labels, "--json", photo)
        if output.status != 0, output.stderr.contains("TFLite_Detection_PostProcess"), output.stderr.contains("not supported") {
            throw XCTSkip("the engine does not support TFLite_Detection_PostProcess yet: \(output.stderr)")
        }
        XCTAssertEqual(output.status, 0, output.stderr)
        let results = try XCTUnwrap(try json(output.stdout) as? [[String: Any]])
        let detections = try XCTUnwrap(results.first?["detections"] as? [[String: Any]])
        let names = detections.compactMap { (($0["categories"] as? [[String: Any]])?.first?["categoryName"]) as? String }
        XCTAssertTrue(names.contains("person") && names.contains("kite"), "\(names)")
        for d in detections {
            let box = try XCTUnwrap(d["boundingBox"] as? [String: Int])
            XCTAssertEqual(Set(box.keys), ["originX", "originY", "width", "height"])
        }
    }
}

/// Runs `executable` from the repository root with stdout and stderr going to files in `dir` (so
/// neither is a terminal) and `stdin`, when given, as its standard input; `environment` adds to
/// (or overrides) the test's own environment.
func runProcess(_ executable: URL, _ arguments: [String], stdin: String?, in dir: URL,
                environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
    let out = dir.appendingPathComponent("stdout"), err = dir.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    _ = FileManager.default.createFile(atPath: err.path, contents: nil)
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.currentDirectoryURL = CLITests.root
    if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    if let stdin {
        let input = dir.appendingPathComponent("stdin")
        _ = FileManager.default.createFile(atPath: input.path, contents: Data(stdin.utf8))
        process.standardInput = try FileHandle(forReadingFrom: input)
    }
    process.standardOutput = try FileHandle(forWritingTo: out)
    process.standardError = try FileHandle(forWritingTo: err)
    try process.run()
    process.waitUntilExit()
    // Read through FileHandle: Data(contentsOf:) and String(contentsOf:) leak a 4 KiB buffer for
    // an empty file on Linux (found by LeakSanitizer, `make sanitize`).
    func read(_ url: URL) throws -> String {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        return String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    }
    return (process.terminationStatus, try read(out), try read(err))
}
