import Foundation
import Tasks

/// Finds a bundled default model: `Models/<name>` under the current directory or any directory
/// above the executable (so both `swift run` and `.build/release/swiftlite` find the repo's models).
func defaultModel(_ name: String) throws(CLIError) -> String {
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
    throw .failed("default model Models/\(name) not found (run from the repository, or pass --model)")
}

/// Comma-separated names (`--allow a,b`).
func nameList(_ text: String?) -> [String] {
    (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
}

/// The label shown for a category (`Category.label`: display name, else category name, else `#index`).
func categoryLabel(_ c: Category) -> String { c.label }

/// JSON of an Encodable value with sorted keys and slashes unescaped: pretty-printed, or on one
/// line (`pretty: false`, for JSON lines). Every command prints its JSON through this.
func jsonText(_ value: some Encodable, pretty: Bool = true) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

/// Writes `data` to `path`, failing with one line that names the path and the system's reason
/// ("No such file or directory"), not Foundation's error domain text.
func writeFile(_ data: Data, to path: String) throws(CLIError) {
    guard let file = fopen(path, "wb") else {
        throw .failed("cannot write '\(path)': \(String(cString: strerror(errno)))")
    }
    let written = data.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    let closed = fclose(file)
    guard written == data.count, closed == 0 else {
        throw .failed("cannot write '\(path)': \(String(cString: strerror(errno)))")
    }
}

/// Refuses an output path whose folder does not exist or is not a folder, before any work.
func checkOutputFolder(of path: String, option: String) throws(CLIError) {
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) else {
        throw .usage("\(option) \(path): folder '\(folder)' does not exist")
    }
    guard isDirectory.boolValue else { throw .usage("\(option) \(path): '\(folder)' is not a folder") }
}

/// Creates a task, and names the model file in an error about the model that does not already
/// name it ("malformed model: ..." becomes "model 'M': malformed model: ...").
func namingModel<T>(_ path: String?, _ make: () throws -> T) throws -> T {
    do {
        return try make()
    } catch let error as TaskError {
        guard let path, !error.description.contains(path) else { throw error }
        switch error {
        case .model, .unsupportedModel, .invalidLabels: throw CLIError.failed("model '\(path)': \(error.description)")
        default: throw error
        }
    }
}
