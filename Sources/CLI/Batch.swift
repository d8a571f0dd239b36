import Foundation
import Tasks

/// The options and behaviour the image commands (`classify`, `detect`, `label`) share: many
/// inputs, one result per input in input order, a bad input reported without stopping the batch,
/// several workers, progress on stderr.
struct BatchOptions {
    static let json = Option.flag("json", help: "one JSON array at the end, one object per input")
    static let jsonl = Option.flag("jsonl", help: "one JSON object per line, written as each input finishes (input order)")
    static let workers = Option<Int>.integer("workers", value: "N", help: "images processed at once (one shared model, a session per image in flight)", default: 1, in: 1 ... 64)
    static let progress = Option.flag("progress", help: "progress and images/second on stderr (default: only when stderr is a terminal)")
    static let declarations = [json.spec, jsonl.spec, workers.spec, progress.spec]

    static let discussion = """
        IMAGE is a file, a directory (searched recursively for .png .jpg .jpeg .bmp, sorted), or - to
        read one path per line from stdin. A bad image is reported on stderr ('error: PATH: why') and,
        with --json/--jsonl, as {"image": PATH, "error": WHY}; the batch goes on.

        exit status: 0 every image succeeded, 1 some image failed (or the model could not be
        loaded), 2 usage error.
        """

    enum Format { case text, json, jsonl }

    let format: Format
    let workers: Int
    let showProgress: Bool
    let paths: [String]

    init(_ arguments: Arguments) throws(CLIError) {
        let json = try arguments[Self.json], jsonl = try arguments[Self.jsonl]
        guard !(json && jsonl) else { throw .usage("--json and --jsonl are mutually exclusive") }
        format = json ? .json : jsonl ? .jsonl : .text
        workers = try arguments[Self.workers]
        showProgress = try arguments[Self.progress] || isatty(STDERR_FILENO) != 0
        paths = arguments.positionals
    }

    func validate() throws(CLIError) {
        guard !paths.isEmpty else { throw .usage("no IMAGE given (a file, a directory, or - for paths on stdin)") }
    }
}

/// One entry of a batch: an image path, or a problem found while expanding the arguments (a
/// directory without images), reported in its place.
enum BatchInput: Equatable {
    case image(String)
    case problem(path: String, message: String)

    var path: String {
        switch self {
        case .image(let p), .problem(let p, _): return p
        }
    }

    static let imageExtensions: Set<String> = ["png", "jpg", "jpeg", "bmp"]

    /// Expands the command's IMAGE arguments: files as they are (a missing file is reported when
    /// it is read), directories into their images recursively (sorted by path), `-` into the
    /// non-empty lines of `stdin`.
    static func expand(_ arguments: [String], stdin: () -> String) -> [BatchInput] {
        var result = [BatchInput]()
        for argument in arguments {
            if argument == "-" {
                let lines = stdin().split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                for line in lines where !line.isEmpty { result += expand(path: line) }
            } else {
                result += expand(path: argument)
            }
        }
        return result
    }

    private static func expand(path: String) -> [BatchInput] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [.image(path)] }
        guard let enumerator = FileManager.default.enumerator(atPath: path) else {
            return [.problem(path: path, message: "cannot list directory")]
        }
        var images = [String]()
        while let relative = enumerator.nextObject() as? String {
            guard imageExtensions.contains((relative as NSString).pathExtension.lowercased()) else { continue }
            let full = (path as NSString).appendingPathComponent(relative)
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDir), !isDir.boolValue { images.append(full) }
        }
        guard !images.isEmpty else { return [.problem(path: path, message: "no images (.png .jpg .jpeg .bmp) in this directory")] }
        return images.sorted().map(BatchInput.image)
    }
}

/// The reason an image failed, as one line (the path is printed beside it, so not repeated).
func describe(_ error: any Error) -> String {
    switch error {
    case ImageError.fileUnreadable(_, let reason): return "cannot read the file: \(reason)"
    case let e as ImageError: return e.description
    case let e as TaskError: return e.description
    case let e as CLIError: return e.description
    default: return "\(error)"
    }
}

/// The image a worker is given: its path and its number (1-based) among `count` inputs.
struct BatchItem: Sendable {
    let path: String
    let number: Int
    let count: Int
}

/// Runs one task over a batch with several workers and hands each result back in input order.
///
/// Each worker owns one task instance (the tasks serialise calls on one instance), and takes the
/// next input when it is free. `emit` runs on the calling thread, for input 0, 1, 2, ... as soon
/// as that input and all before it are done.
final class BatchRunner<Worker: Sendable, Output: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var nextIndex = 0
    private var finished: [Int: Result<Output, any Error>] = [:]
    private let inputs: [BatchInput]
    private let process: @Sendable (Worker, BatchItem) throws -> Output

    init(inputs: [BatchInput], process: @escaping @Sendable (Worker, BatchItem) throws -> Output) {
        self.inputs = inputs
        self.process = process
    }

    func run(workers: [Worker], emit: (Int, BatchInput, Result<Output, any Error>) -> Void) {
        for worker in workers {
            let thread = Thread { [self] in work(worker) }
            thread.stackSize = 8 << 20
            thread.start()
        }
        for index in inputs.indices {
            condition.lock()
            while finished[index] == nil { condition.wait() }
            let result = finished.removeValue(forKey: index)!
            condition.unlock()
            emit(index, inputs[index], result)
        }
    }

    private func work(_ worker: Worker) {
        while true {
            condition.lock()
            let index = nextIndex
            nextIndex += 1
            condition.unlock()
            guard index < inputs.count else { return }
            let result: Result<Output, any Error>
            switch inputs[index] {
            case .image(let path): result = Result { try process(worker, BatchItem(path: path, number: index + 1, count: inputs.count)) }
            case .problem(_, let message): result = .failure(CLIError.failed(message))
            }
            condition.lock()
            finished[index] = result
            condition.broadcast()
            condition.unlock()
        }
    }
}

/// The progress line on stderr: `[12/300] 8.4 images/s path`, redrawn in place and cleared
/// (`\r\e[K`) before anything else is written to stdout or stderr.
struct ProgressLine {
    let enabled: Bool
    let total: Int
    private let start = DispatchTime.now().uptimeNanoseconds
    private var shown = false

    init(enabled: Bool, total: Int) {
        self.enabled = enabled
        self.total = total
    }

    mutating func update(done: Int, path: String) {
        guard enabled else { return }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let rate = seconds > 0 ? Double(done) / seconds : 0
        writeStderr("\r[\(done)/\(total)] \(String(format: "%.1f", rate)) images/s \(path)\u{1B}[K")
        shown = true
    }

    mutating func clear() {
        guard shown else { return }
        writeStderr("\r\u{1B}[K")
        shown = false
    }
}

func writeStderr(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }

/// Writes text to stdout now (not when the buffer fills): results of a batch appear as they finish.
func writeStdout(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
}

/// What an image command prints for a failed input in JSON.
struct FailureRecord: Encodable {
    let image: String
    let error: String
}

/// Runs a batch command end to end: expands the inputs, makes one task per worker, runs them,
/// writes each result (text, JSON array or JSON lines) in input order, reports failures, and
/// throws `CLIError.someInputsFailed` if any input failed.
///
/// - Parameters:
///   - makeWorker: creates the task (once, before any image is read), shared by every worker.
///   - process: runs the task on one input's image.
///   - text: the text lines for one result.
///   - record: the JSON record for one result.
func runBatch<Worker: Sendable, Output: Sendable, Record: Encodable>(
    _ options: BatchOptions,
    makeWorker: () throws -> Worker,
    process: @escaping @Sendable (Worker, BatchItem) throws -> Output,
    text: (String, Output) -> String,
    record: (String, Output) -> Record
) throws {
    let inputs = BatchInput.expand(options.paths) {
        String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    }
    guard !inputs.isEmpty else { throw CLIError.usage("no IMAGE given (stdin listed no paths)") }
    // Tasks run concurrent calls in parallel (one plan, a session per call), so every worker
    // shares the one task.
    let task = try makeWorker()
    let workers = [Worker](repeating: task, count: min(options.workers, inputs.count))

    var progress = ProgressLine(enabled: options.showProgress, total: inputs.count)
    var failed = 0
    var jsonArray = [String]()
    func encoded(_ value: some Encodable) -> String {
        // Results are plain structs of strings and numbers; encoding them cannot fail.
        (try? jsonText(value, pretty: options.format == .json)) ?? "{}"
    }

    BatchRunner<Worker, Output>(inputs: inputs, process: process).run(workers: workers) { index, input, result in
        progress.clear()
        switch result {
        case .success(let output):
            switch options.format {
            case .text: writeStdout(text(input.path, output))
            case .json: jsonArray.append(encoded(record(input.path, output)))
            case .jsonl: writeStdout(encoded(record(input.path, output)) + "\n")
            }
        case .failure(let error):
            failed += 1
            let message = describe(error)
            writeStderr("error: \(input.path): \(message)\n")
            switch options.format {
            case .text: break
            case .json: jsonArray.append(encoded(FailureRecord(image: input.path, error: message)))
            case .jsonl: writeStdout(encoded(FailureRecord(image: input.path, error: message)) + "\n")
            }
        }
        progress.update(done: index + 1, path: input.path)
    }
    progress.clear()
    if options.format == .json {
        // Each record is pretty-printed on its own; indent it as an element of the array.
        let elements = jsonArray.map { "  " + $0.replacingOccurrences(of: "\n", with: "\n  ") }
        writeStdout(elements.isEmpty ? "[]\n" : "[\n" + elements.joined(separator: ",\n") + "\n]\n")
    }
    if failed > 0 { throw CLIError.someInputsFailed(failed: failed, total: inputs.count) }
}

/// Reads an image for a batch worker.
func loadImage(_ path: String) throws -> MPImage {
    try MPImage(contentsOf: URL(fileURLWithPath: path))
}
