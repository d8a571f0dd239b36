import Foundation
import Tasks

/// Finds a bundled default model: `Models/<name>` under the current directory or any directory
/// above the executable (so both `swift run` and `.build/release/swiftlite` find the repo's models).
func defaultModel(_ name: String) throws -> String {
    var candidates = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath)]
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0 ..< 6 {
        candidates.append(dir)
        dir = dir.deletingLastPathComponent()
    }
    for base in candidates {
        let path = base.appendingPathComponent("Models").appendingPathComponent(name).path
        if FileManager.default.fileExists(atPath: path) { return path }
    }
    throw CLIError.failed("default model Models/\(name) not found (run from the repository, or pass --model)")
}

/// Comma-separated names (`--allow a,b`).
func nameList(_ text: String?) -> [String] {
    (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
}

/// Loads each image path, reporting progress on a terminal for batches.
func forEachImage(_ paths: [String], _ body: (String, Image) throws -> Void) throws {
    guard !paths.isEmpty else { throw CLIError.usage("no IMAGE given") }
    let showProgress = paths.count > 3 && isatty(STDERR_FILENO) != 0
    for (i, path) in paths.enumerated() {
        if showProgress { FileHandle.standardError.write(Data("\r[\(i + 1)/\(paths.count)] \(path)\u{1B}[K".utf8)) }
        let image: Image
        do { image = try Image(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw CLIError.failed("\(path): \(error)")
        }
        try body(path, image)
    }
    if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
}

/// Pretty JSON text of a JSON-compatible value.
func jsonText(_ value: Any) throws -> String {
    String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
}

func categoryJSON(_ c: Category) -> [String: Any] {
    ["index": c.index, "score": Double(c.score), "categoryName": c.categoryName ?? "", "displayName": c.displayName ?? ""]
}
