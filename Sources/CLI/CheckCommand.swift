import Engine
import Foundation
import Tasks

/// `swiftlite check MODEL [--task classify|detect|label|faces] [--json]`: does the model fit the
/// task, and if not, why.
struct CheckCommand: ParsedCommand {
    static let name = "check"
    static let summary = "does a model fit classify/detect/label, and if not, why"
    static let synopsis = "check MODEL [--task classify|detect|label|faces] [--json]"

    static let task = Option<String?>.string("task", value: "T", help: "classify, detect, label or faces (default: detect when the model ends in TFLite_Detection_PostProcess, else classify)")
    static let maxResults = Option<Int>.integer("max-results", value: "N", help: "the maxResults a detector would use, for the detection cap (-1 all)", default: -1, in: -1 ... Int(Int32.max))
    static let json = Option<Bool>.flag("json", help: "print the findings as JSON")
    static let declarations = [task.spec, maxResults.spec, json.spec]
    static let discussion = """
        Each finding is ok, note, warning or problem; the model fits when none is a problem.
        exit status: 0 fits, 1 does not fit, 2 usage error
        """

    let modelPath: String
    let taskChoice: CheckTask?
    let options: ModelCheck.Options
    let json: Bool

    init(_ arguments: Arguments) throws(CLIError) {
        guard arguments.positionals.count == 1 else {
            throw .usage("check takes one MODEL, got \(arguments.positionals.count) arguments")
        }
        modelPath = arguments.positionals[0]
        if let word = try arguments[Self.task] {
            guard let t = CheckTask(rawValue: word) else { throw .usage("--task must be classify, detect, label or faces, got '\(word)'") }
            taskChoice = t
        } else {
            taskChoice = nil
        }
        var options = ModelCheck.Options()
        options.maxResults = try arguments[Self.maxResults]
        self.options = options
        json = try arguments[Self.json]
    }

    func run() throws {
        guard FileManager.default.fileExists(atPath: modelPath) else { throw CLIError.usage("no model at '\(modelPath)'") }
        let task = taskChoice ?? ((try? Graph(contentsOf: modelPath))?.detectionPostProcess != nil ? .detect : .classify)
        let report = ModelCheck.run(modelPath: modelPath, task: task, options: options)
        if json {
            print(try jsonText(report))
        } else {
            print("\(modelPath) as \(task.rawValue)\(taskChoice == nil ? " (guessed; set --task)" : ""):")
            for f in report.findings {
                print("  \(f.level.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) \(f.topic): \(f.message)")
            }
            print(report.fits ? "fits: yes" : "fits: no")
        }
        if !report.fits { exit(1) }
    }
}

/// The detection-cap warnings of `detect`, each printed at most once per run: that the model's
/// cap is below `--max-results` (at start), and, with `--verbose`, that an image filled every slot
/// (the first such image; small test models fill every slot on every image, so it is not shown by default).
final class DetectionCapWarnings: @unchecked Sendable {
    let cap: DetectionCap?
    private let lock = NSLock()
    /// Guarded by `lock`: whether the all-slots-filled warning was printed.
    private var warnedFilled = false

    let reportFilled: Bool

    init(modelPath: String, maxResults: Int, reportFilled: Bool) {
        self.reportFilled = reportFilled
        cap = modelPath.isEmpty ? nil : DetectionCap(modelPath: modelPath)
        if let text = cap?.warning(maxResults: maxResults) { writeStderr("warning: \(text)\n") }
    }

    /// Warns, once, when `count` detections fill every slot of the model.
    func check(count: Int, path: String) {
        guard reportFilled, let cap, count >= cap.slots else { return }
        lock.lock()
        let first = !warnedFilled
        warnedFilled = true
        lock.unlock()
        if first { writeStderr("warning: \(cap.filledWarning(path: path))\n") }
    }
}
