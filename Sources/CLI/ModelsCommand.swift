import Foundation
import Tasks

/// `swiftlite models fetch URL [--name N] [--sha256 H]` and `swiftlite models list`: the hosted
/// model cache (`ModelManager`).
struct ModelsCommand: ParsedCommand {
    static let name = "models"
    static let summary = "download hosted models into the cache, list the cache"
    static let synopsis = "models fetch URL [--name N] [--sha256 H] [--size BYTES] | models list [--json]"

    static let modelName = Option<String?>.string("name", value: "N", help: "fetch: the model's name in the cache (default: the URL's file name without extension)")
    static let sha256 = Option<String?>.string("sha256", value: "H", help: "fetch: the expected SHA-256 (hex); a mismatch fails and keeps the old copy")
    static let size = Option<Int?>.integer("size", value: "BYTES", help: "fetch: the expected size in bytes", in: 0 ... Int.max)
    static let cache = Option<String?>.string("cache", value: "DIR", help: "the cache folder", default: "$SWIFTLITE_MODEL_CACHE, else ~/.cache/swiftlite/models")
    static let json = Option.flag("json", help: "list: one JSON array")
    static let declarations = [modelName.spec, sha256.spec, size.spec, cache.spec, json.spec]
    static let discussion = """
        fetch downloads into <cache>/<name>/model.tflite (verified, then renamed into place) and prints
        the path; fetching again revalidates with the server (ETag / Last-Modified) and keeps the copy
        on 304. classify, detect and label take that path as their model.
        """

    enum Action { case fetch(RemoteModel), list }
    let action: Action
    let asJSON: Bool
    let manager: ModelManager

    init(_ arguments: Arguments) throws(CLIError) {
        let p = arguments.positionals
        manager = ModelManager(cacheDirectory: try arguments[Self.cache].map { URL(fileURLWithPath: $0) } ?? ModelManager.defaultCacheDirectory)
        asJSON = try arguments[Self.json]
        switch p.first {
        case "fetch":
            guard p.count == 2, let url = URL(string: p[1]), url.scheme != nil else {
                throw .usage("models fetch takes one URL (see 'swiftlite models --help')")
            }
            let name = try arguments[Self.modelName] ?? url.deletingPathExtension().lastPathComponent
            action = .fetch(RemoteModel(name: name, url: url, sha256: try arguments[Self.sha256], size: try arguments[Self.size]))
        case "list":
            guard p.count == 1 else { throw .usage("models list takes no arguments") }
            for option in [Self.modelName.spec, Self.sha256.spec, Self.size.spec] where arguments.contains(option) {
                throw .usage("--\(option.name) is for models fetch")
            }
            action = .list
        default:
            throw .usage("models needs fetch or list (see 'swiftlite models --help')")
        }
    }

    func validate() throws(CLIError) {
        guard case .fetch(let model) = action else { return }
        guard RemoteModel.isValidName(model.name) else { throw .usage(RemoteModelError.invalidName(model.name).description) }
        if let sha = model.sha256, sha.count != 64 || !sha.allSatisfy(\.isHexDigit) {
            throw .usage("--sha256 must be 64 hex digits, got '\(sha)'")
        }
        guard ["http", "https"].contains(model.url.scheme?.lowercased() ?? "") else {
            throw .usage(RemoteModelError.unsupportedURL(model.url.absoluteString).description)
        }
    }

    func run() throws {
        switch action {
        case .list:
            let models = manager.downloadedModels()
            if asJSON {
                print(try jsonText(models))
            } else {
                for m in models { print("\(m.name)  \(m.size) bytes  sha256 \(m.sha256)  \(m.url.absoluteString)  \(m.path)") }
            }
        case .fetch(let model):
            let progress = Progress(totalUnitCount: -1)
            let reporter = ProgressReporter(progress) { fraction in
                writeStderr("\r\(model.name): \(Int(fraction * 100))%\u{1B}[K")
            }
            let outcome: DownloadOutcome
            do throws(RemoteModelError) {
                outcome = try manager.download(model, progress: progress)
                reporter.stop()
            } catch {
                reporter.stop()
                throw CLIError.failed("\(model.url.absoluteString): \(error.description)")
            }
            let path = manager.cachedFileURL(for: model).path
            print(outcome == .notModified ? "\(path) (not modified)" : path)
        }
    }
}

/// Polls a `Progress` on a terminal while a download runs (KVO is not available here).
final class ProgressReporter: @unchecked Sendable {
    private let timer: DispatchSourceTimer?
    private let queue = DispatchQueue(label: "swiftlite.download-progress")

    init(_ progress: Progress, report: @escaping @Sendable (Double) -> Void) {
        guard isatty(STDERR_FILENO) != 0 else {
            timer = nil
            return
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .milliseconds(200))
        timer.setEventHandler { if progress.totalUnitCount > 0 { report(progress.fractionCompleted) } }
        timer.resume()
        self.timer = timer
    }

    /// Stops polling and clears the line.
    func stop() {
        guard let timer else { return }
        timer.cancel()
        // The handler runs on `queue`: once this returns, no report can follow the clearing.
        queue.sync {}
        writeStderr("\r\u{1B}[K")
    }
}
