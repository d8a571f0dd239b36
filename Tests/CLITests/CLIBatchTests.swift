import Foundation
import TestSupport
import XCTest

/// The image commands over batches: every input gets exactly one result, in input order, whatever
/// fails; exit status 0 / 1 / 2; `--help` generated from the option declarations; `models`.
final class CLIBatchTests: XCTestCase {
    static let cat = CLITests.demoCat
    static let model = CLITests.efficientnetF32

    struct Output {
        let status: Int32
        let stdout: String
        let stderr: String
        var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
        var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// Runs `swiftlite` from the repository root with `stdin` as its standard input (empty if nil);
    /// stdout and stderr go to files, so neither is a terminal.
    func swiftlite(_ arguments: [String], stdin: String = "") throws -> Output {
        guard let executable = CLITests.executable else {
            XCTFail("swiftlite executable not found; run `swift build` first (`make test` does)")
            throw XCTSkip("no swiftlite executable")
        }
        let run = try runProcess(executable, arguments, stdin: stdin, in: try temporaryDirectory())
        return Output(status: run.status, stdout: run.stdout, stderr: run.stderr)
    }

    func swiftlite(_ arguments: String...) throws -> Output { try swiftlite(arguments) }

    func temporaryDirectory() throws -> URL {
        try TemporaryDirectories.make(for: self, prefix: "swiftlite-batch")
    }

    /// A folder with a file that is not an image (`notimage.png`) and copies of the demo cat.
    func batchFolder() throws -> (dir: URL, bad: String, good: [String]) {
        let dir = try temporaryDirectory()
        let bad = dir.appendingPathComponent("notimage.png")
        try Data("this is not a PNG".utf8).write(to: bad)
        var good = [String]()
        for name in ["a.png", "b.png"] {
            let url = dir.appendingPathComponent(name)
            try FileManager.default.copyItem(atPath: Self.cat, toPath: url.path)
            good.append(url.path)
        }
        return (dir, bad.path, good)
    }

    func jsonObjects(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [[String: Any]] {
        guard let value = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]] else {
            XCTFail("not a JSON array of objects: \(text.prefix(300))", file: file, line: line)
            return []
        }
        return value
    }

    // MARK: - Mixed batches

    func testMixedBatchText() throws {
        let (_, bad, good) = try batchFolder()
        let output = try swiftlite("classify", "--model", Self.model, "--max-results", "1", good[0], bad, good[1])
        XCTAssertEqual(output.status, 1, "some input failed")
        XCTAssertEqual(output.stdoutLines, ["\(good[0]):", "  (0.78) Egyptian cat", "\(good[1]):", "  (0.78) Egyptian cat"])
        XCTAssertEqual(output.stderrLines.count, 2, output.stderr)
        XCTAssertTrue(output.stderrLines[0].hasPrefix("error: \(bad): Unknown image format"), output.stderr)
        XCTAssertEqual(output.stderrLines[1], "error: 1 of 3 inputs failed")
    }

    func testMixedBatchJSON() throws {
        let (_, bad, good) = try batchFolder()
        let output = try swiftlite("classify", "--json", "--model", Self.model, "--max-results", "2", good[0], bad, "/nonexistent/x.jpg", good[1])
        XCTAssertEqual(output.status, 1)
        let results = try jsonObjects(output.stdout)
        XCTAssertEqual(results.map { $0["image"] as? String }, [good[0], bad, "/nonexistent/x.jpg", good[1]])
        XCTAssertNotNil(results[0]["classifications"])
        XCTAssertNil(results[0]["error"])
        XCTAssertTrue((results[1]["error"] as? String)?.contains("Unknown image format") == true, "\(results[1])")
        XCTAssertTrue((results[2]["error"] as? String)?.hasPrefix("cannot read the file: ") == true, "\(results[2])")
        XCTAssertTrue(output.stderr.contains("error: /nonexistent/x.jpg: cannot read the file: "), output.stderr)
        XCTAssertNil(results[1]["classifications"])
        let categories = ((results[3]["classifications"] as? [[String: Any]])?.first?["categories"] as? [[String: Any]]) ?? []
        XCTAssertEqual(categories.first?["categoryName"] as? String, "Egyptian cat")
        XCTAssertEqual(output.stderrLines.filter { $0.hasPrefix("error: ") }.count, 3, output.stderr)
    }

    /// One compact object per line, in input order, with two workers.
    func testMixedBatchJSONLines() throws {
        let (_, bad, good) = try batchFolder()
        let inputs = [good[0], bad, good[1], good[0], bad, good[1]]
        let output = try swiftlite(["label", "--jsonl", "--workers", "2", "--model", Self.model, "--confidence", "0.3"] + inputs)
        XCTAssertEqual(output.status, 1)
        let lines = output.stdoutLines
        XCTAssertEqual(lines.count, inputs.count, output.stdout)
        for (line, input) in zip(lines, inputs) {
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
            XCTAssertEqual(object["image"] as? String, input)
            if input == bad {
                XCTAssertNotNil(object["error"] as? String, line)
            } else {
                XCTAssertEqual(((object["labels"] as? [[String: Any]])?.first?["text"]) as? String, "Egyptian cat", line)
            }
        }
    }

    /// Several workers give the same results, in the same order, as one.
    func testWorkersKeepInputOrderAndResults() throws {
        let images = ["bird.png", "cat.png", "parrot.png", "grace_hopper.png", "mug.jpg", "table.jpg"]
        let paths = try images.map { try Fixtures.shared("images/\($0)").path }
        let one = try swiftlite(["classify", "--jsonl", "--model", Self.model] + paths)
        let three = try swiftlite(["classify", "--jsonl", "--workers", "3", "--model", Self.model] + paths)
        XCTAssertEqual(one.status, 0, one.stderr)
        XCTAssertEqual(three.status, 0, three.stderr)
        XCTAssertEqual(one.stdoutLines.count, paths.count)
        XCTAssertEqual(one.stdout, three.stdout)
    }

    func testDetectBatchWithAnnotations() throws {
        let (dir, bad, good) = try batchFolder()
        let out = dir.appendingPathComponent("boxes.png").path
        let output = try swiftlite("detect", "--json", "--annotate", out, good[0], bad, good[1])
        XCTAssertEqual(output.status, 1)
        let results = try jsonObjects(output.stdout)
        XCTAssertEqual(results.count, 3)
        XCTAssertEqual(results[0]["annotated"] as? String, dir.appendingPathComponent("boxes-1.png").path)
        XCTAssertEqual(results[2]["annotated"] as? String, dir.appendingPathComponent("boxes-3.png").path)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("boxes-1.png").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("boxes-2.png").path))
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("boxes-3.png").path))
    }

    /// `--annotate` into a folder that does not exist: one line naming the path, before any work.
    func testAnnotateIntoAMissingFolder() throws {
        let output = try swiftlite("detect", "--annotate", "/nonexistent-folder/boxes.png", Self.cat)
        XCTAssertEqual(output.status, 2)
        XCTAssertEqual(output.stdout, "")
        XCTAssertEqual(output.stderrLines, ["error: --annotate /nonexistent-folder/boxes.png: folder '/nonexistent-folder' does not exist"])
    }

    // MARK: - Inputs

    /// A directory is searched recursively for images, sorted; other files are ignored.
    func testDirectoryInput() throws {
        let (dir, bad, good) = try batchFolder()
        let nested = dir.appendingPathComponent("sub/deeper")
        try FileManager.default.createDirectory(at: nested, withIntermediateDirectories: true)
        let deep = nested.appendingPathComponent("C.JPG")
        try FileManager.default.copyItem(atPath: try Fixtures.shared("images/mug.jpg").path, toPath: deep.path)
        try Data("notes".utf8).write(to: dir.appendingPathComponent("README.txt"))
        let empty = try temporaryDirectory()
        let output = try swiftlite("classify", "--jsonl", "--model", Self.model, dir.path, empty.path)
        let images = output.stdoutLines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["image"] as? String }
        XCTAssertEqual(images, [good[0], good[1], bad, deep.path, empty.path])
        XCTAssertTrue(output.stdoutLines.last?.contains("no images") == true, output.stdout)
        XCTAssertEqual(output.status, 1)
    }

    /// `-` reads one path per line from stdin (blank lines skipped), mixed with arguments.
    func testPathsFromStdin() throws {
        let (_, bad, good) = try batchFolder()
        let output = try swiftlite(["classify", "--jsonl", "--model", Self.model, good[1], "-"], stdin: "\(good[0])\n\n  \(bad)\n")
        let images = output.stdoutLines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["image"] as? String }
        XCTAssertEqual(images, [good[1], good[0], bad])
        XCTAssertEqual(output.status, 1)
        let none = try swiftlite(["classify", "--model", Self.model, "-"], stdin: "\n")
        XCTAssertEqual(none.status, 2)
        XCTAssertTrue(none.stderr.contains("no IMAGE"), none.stderr)
    }

    // MARK: - Exit status and progress

    func testExitStatus() throws {
        let (_, bad, good) = try batchFolder()
        XCTAssertEqual(try swiftlite("classify", "--model", Self.model, good[0], good[1]).status, 0)
        XCTAssertEqual(try swiftlite("classify", "--model", Self.model, good[0], bad).status, 1)
        XCTAssertEqual(try swiftlite("classify", "--model", Self.model, bad).status, 1)
        XCTAssertEqual(try swiftlite("classify", "--model", "/nonexistent.tflite", good[0]).status, 1)
        for usage in [["classify", "--frobnicate", good[0]], ["classify", "--json", "--jsonl", good[0]], ["classify"],
                      ["classify", "--workers", "0", good[0]], ["detect", "--allow", "a", "--deny", "b", good[0]],
                      ["label", "--confidence", "2", good[0]], ["frobnicate"], []] {
            let output = try swiftlite(usage)
            XCTAssertEqual(output.status, 2, "\(usage): \(output.stderr)")
        }
        let help = try swiftlite("classify", "--help")
        XCTAssertTrue(help.stdout.contains("exit status: 0 every image succeeded, 1 some image failed"), help.stdout)
    }

    /// Progress goes to stderr only on a terminal (here: a file) or with --progress, and its last
    /// write clears the line.
    func testProgressOnlyWhenAskedOffATerminal() throws {
        let quiet = try swiftlite("classify", "--model", Self.model, Self.cat, Self.cat, Self.cat, Self.cat, Self.cat)
        XCTAssertEqual(quiet.status, 0)
        XCTAssertEqual(quiet.stderr, "")
        let shown = try swiftlite("classify", "--progress", "--workers", "2", "--model", Self.model, Self.cat, Self.cat, Self.cat)
        XCTAssertEqual(shown.status, 0)
        XCTAssertTrue(shown.stderr.contains("[3/3]") && shown.stderr.contains("images/s"), shown.stderr)
        XCTAssertTrue(shown.stderr.hasSuffix("\r\u{1B}[K"), shown.stderr.debugDescription)
        XCTAssertFalse(shown.stdout.contains("images/s"))
    }

    // MARK: - Options: declared once

    struct Declared: Decodable {
        struct Spec: Decodable { let name: String; let valueName: String?; let help: String }
        let command: String
        let options: [Spec]
    }

    /// Every declared option is in its command's --help and is accepted by the parser; every
    /// `--flag` the help mentions is declared.
    func testHelpListsEveryAcceptedOption() throws {
        let declarations = try JSONDecoder().decode([Declared].self, from: Data(try swiftlite("__declarations").stdout.utf8))
        XCTAssertEqual(Set(declarations.map(\.command)), ["classify", "detect", "faces", "label", "inspect", "run", "bench", "models", "check", "metadata"])
        XCTAssertTrue(declarations.first { $0.command == "detect" }?.options.contains { $0.name == "locale" } == true)
        for command in declarations {
            let help = try swiftlite(command.command, "--help")
            XCTAssertEqual(help.status, 0)
            let declaredNames = Set(command.options.map(\.name))
            for option in command.options {
                // Every option is declared with its help and shows its synopsis.
                let synopsis = "--\(option.name)" + (option.valueName.map { " \($0)" } ?? "")
                XCTAssertFalse(option.help.isEmpty, "\(command.command) --\(option.name) has no help")
                XCTAssertTrue(help.stdout.contains(synopsis),
                              "\(command.command) --help does not show '\(synopsis)':\n\(help.stdout)")
                // The parser accepts it (whatever else then goes wrong, it is not an unknown option).
                let arguments = [command.command, "--\(option.name)"] + (option.valueName == nil ? [] : ["1"])
                let output = try swiftlite(arguments)
                XCTAssertFalse(output.stderr.contains("unknown option"), "\(arguments): \(output.stderr)")
            }
            // Every --word in the help text is a declared option.
            for name in flagsMentioned(in: help.stdout) {
                XCTAssertTrue(declaredNames.contains(name), "\(command.command) --help mentions --\(name), which is not declared")
            }
            let unknown = try swiftlite(command.command, "--not-an-option")
            XCTAssertEqual(unknown.status, 2)
            XCTAssertTrue(unknown.stderr.contains("unknown option --not-an-option"), unknown.stderr)
        }
    }

    /// The `--words` of a help text, without the dashes.
    func flagsMentioned(in text: String) -> [String] {
        text.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "-") })
            .filter { $0.hasPrefix("--") && $0.count > 2 }.map { String($0.dropFirst(2)) }
    }

    func testFlagEqualsValue() throws {
        let output = try swiftlite("classify", "--model=\(Self.model)", "--max-results=2", "--crop=center", "--jsonl", Self.cat)
        XCTAssertEqual(output.status, 0, output.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(((object["classifications"] as? [[String: Any]])?.first?["categories"] as? [Any])?.count, 2)
        // Errors name the flag as typed.
        let bad = try swiftlite("classify", "--max-results=lots", Self.cat)
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.stderrLines, ["error: --max-results must be an integer in -2147483648...2147483647, got 'lots'"])
        let flagWithValue = try swiftlite("classify", "--json=yes", Self.cat)
        XCTAssertEqual(flagWithValue.status, 2)
        XCTAssertTrue(flagWithValue.stderr.contains("--json is a flag"), flagWithValue.stderr)
        let missing = try swiftlite("classify", Self.cat, "--workers")
        XCTAssertEqual(missing.stderrLines, ["error: --workers needs a value (N)"])
    }

    func testInspectJSONDoesNotEscapeSlashes() throws {
        let model = CLITests.floatFixtures.appendingPathComponent("softmax_1x10/model.tflite").path
        let output = try swiftlite("inspect", "--json", model)
        XCTAssertEqual(output.status, 0, output.stderr)
        XCTAssertFalse(output.stdout.contains("\\/"), output.stdout)
        XCTAssertTrue(output.stdout.contains(model), output.stdout)
    }

    // MARK: - models

    func testModelsFetchAndList() throws {
        let body = try Data(contentsOf: URL(fileURLWithPath: CLITests.root.appendingPathComponent("Models/efficientnet_lite0_int8.tflite").path))
        let server = try LoopbackHTTPServer { request in
            guard request.path == "/efficientnet.tflite" else { return .init(status: 404) }
            if request.headers["if-none-match"] == "\"1\"" { return .init(status: 304, headers: ["ETag": "\"1\""]) }
            return .init(status: 200, headers: ["ETag": "\"1\""], body: body)
        }
        defer { server.stop() }
        let cache = try temporaryDirectory().path
        let fetched = try swiftlite("models", "fetch", server.url("/efficientnet.tflite").absoluteString, "--cache", cache)
        XCTAssertEqual(fetched.status, 0, fetched.stderr)
        let path = "\(cache)/efficientnet/model.tflite"
        XCTAssertEqual(fetched.stdoutLines, [path])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), body)
        let again = try swiftlite("models", "fetch", server.url("/efficientnet.tflite").absoluteString, "--cache", cache)
        XCTAssertEqual(again.stdoutLines, ["\(path) (not modified)"])

        let list = try swiftlite("models", "list", "--json", "--cache", cache)
        let models = try jsonObjects(list.stdout)
        XCTAssertEqual(models.map { $0["name"] as? String }, ["efficientnet"])
        XCTAssertEqual(models.first?["size"] as? Int, body.count)

        let classified = try swiftlite("classify", "--model", path, "--max-results", "1", Self.cat)
        XCTAssertEqual(classified.status, 0, classified.stderr)

        let missing = try swiftlite("models", "fetch", server.url("/missing.tflite").absoluteString, "--cache", cache)
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.stderrLines.count, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("HTTP status 404"), missing.stderr)
        let wrongSum = try swiftlite("models", "fetch", server.url("/efficientnet.tflite").absoluteString, "--name", "other",
                                     "--sha256", String(repeating: "ab", count: 32), "--cache", cache)
        XCTAssertEqual(wrongSum.status, 1)
        XCTAssertTrue(wrongSum.stderr.contains("SHA-256"), wrongSum.stderr)
        XCTAssertEqual(try swiftlite("models", "fetch", "ftp://127.0.0.1/x", "--cache", cache).status, 2)
        XCTAssertEqual(try swiftlite("models", "fetch", server.url("/x").absoluteString, "--name", "../up", "--cache", cache).status, 2)
    }
}
