import Engine
import Foundation
import Tasks

/// `swiftlite metadata write MODEL --out OUT [...]` and `swiftlite metadata show MODEL`: writes
/// or shows TFLite Metadata (what MediaPipe and ML Kit read: normalization, labels, thresholds).
struct MetadataCommand: ParsedCommand {
    static let name = "metadata"
    static let summary = "write or show a model's TFLite Metadata (labels, normalization, score threshold)"
    static let synopsis = "metadata write MODEL --out OUT [options] | metadata show MODEL [--json]"

    static let out = Option<String?>.string("out", value: "OUT", help: "write: the model with metadata goes here (never over MODEL)")
    static let labels = Option<String?>.string("labels", value: "FILE", help: "write: label file, one label per class, packed into the model")
    static let normalization = Option<String?>.string("normalization", value: "MEAN,STD", help: "write: float input normalization (x - MEAN) / STD, one pair or per-channel MEAN1:MEAN2:MEAN3,STD1:STD2:STD3")
    static let scoreThreshold = Option<Double?>.number("score-threshold", value: "X", help: "write: recommended score threshold", in: 0 ... 1)
    static let modelName = Option<String?>.string("name", value: "N", help: "write: the model's name")
    static let outputRoles = Option<String?>.string("output-roles", value: "R,R,R,R", help: "write: detector output roles in output order, each of boxes, classes, scores, count")
    static let json = Option<Bool>.flag("json", help: "show: print JSON")
    static let declarations = [out.spec, labels.spec, normalization.spec, scoreThreshold.spec, modelName.spec, outputRoles.spec, json.spec]
    static let discussion = """
        write never modifies MODEL: it writes OUT through a temporary file in OUT's folder, then renames it.
        It refuses metadata that would be wrong for the model (label count differs from the classes,
        normalization of an integer input, a float input without normalization).
        exit status: 0 written/shown, 1 refused or failed, 2 usage error
        """

    enum Action { case write, show }
    let action: Action
    let modelPath: String
    let outPath: String?
    let request: MetadataWriteRequest
    let labelsPath: String?
    let json: Bool

    init(_ arguments: Arguments) throws(CLIError) {
        let p = arguments.positionals
        guard p.count == 2, let action = ["write": Action.write, "show": .show][p[0]] else {
            throw .usage("expected 'metadata write MODEL --out OUT' or 'metadata show MODEL', got \(p.isEmpty ? "nothing" : p.joined(separator: " "))")
        }
        self.action = action
        modelPath = p[1]
        outPath = try arguments[Self.out]
        json = try arguments[Self.json]
        labelsPath = try arguments[Self.labels]
        var request = MetadataWriteRequest()
        request.name = try arguments[Self.modelName]
        request.scoreThreshold = try arguments[Self.scoreThreshold].map(Float.init)
        if let text = try arguments[Self.normalization] {
            request.normalization = try Self.parseNormalization(text)
        }
        if let text = try arguments[Self.outputRoles] {
            let words = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            let roles = words.compactMap(DetectionRole.init(rawValue:))
            guard roles.count == words.count else {
                throw .usage("--output-roles must list boxes, classes, scores and count in output order, got '\(text)'")
            }
            request.outputRoles = roles
        }
        if let labelsPath { request.labelFileName = URL(fileURLWithPath: labelsPath).lastPathComponent }
        self.request = request
        if action == .show, [Self.out.spec, Self.labels.spec, Self.normalization.spec, Self.scoreThreshold.spec, Self.modelName.spec, Self.outputRoles.spec].contains(where: arguments.contains) {
            throw .usage("metadata show takes only MODEL and --json")
        }
    }

    /// "127.5,127.5" → ([127.5], [127.5]); "0.485:0.456:0.406,0.229:0.224:0.225" → per-channel.
    static func parseNormalization(_ text: String) throws(CLIError) -> (mean: [Float], std: [Float]) {
        let halves = text.split(separator: ",", omittingEmptySubsequences: false)
        let parsed = halves.map { $0.split(separator: ":", omittingEmptySubsequences: false).map { Float($0.trimmingCharacters(in: .whitespaces)) } }
        guard parsed.count == 2, parsed.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0?.isFinite == true } }) else {
            throw .usage("--normalization must be MEAN,STD (numbers; per channel MEAN1:MEAN2:MEAN3,STD1:STD2:STD3), got '\(text)'")
        }
        return (parsed[0].map { $0! }, parsed[1].map { $0! })
    }

    func validate() throws(CLIError) {
        guard action == .write else { return }
        guard let outPath else { throw .usage("metadata write needs --out OUT") }
        let a = URL(fileURLWithPath: modelPath).standardizedFileURL.resolvingSymlinksInPath().path
        let b = URL(fileURLWithPath: outPath).standardizedFileURL.resolvingSymlinksInPath().path
        guard a != b else { throw .usage("--out \(outPath) is MODEL itself; metadata write never overwrites its input") }
        try checkOutputFolder(of: outPath, option: "--out")
    }

    func run() throws {
        switch action {
        case .show: try show()
        case .write: try write()
        }
    }

    func write() throws {
        guard let outPath else { return }
        let model: [UInt8]
        do {
            model = Array(try Data(contentsOf: URL(fileURLWithPath: modelPath)))
        } catch {
            throw CLIError.failed("cannot read '\(modelPath)': \(error.localizedDescription)")
        }
        var request = request
        if let labelsPath {
            do {
                request.labels = try Labels(contentsOf: labelsPath).names
            } catch {
                throw CLIError.failed("\(error)")
            }
        }
        let written: [UInt8]
        do {
            written = try MetadataWriter.write(model: model, request)
        } catch {
            throw CLIError.failed("\(error)")
        }
        // A temporary file in OUT's folder, renamed over OUT: OUT is either the old file or the whole new one.
        let folder = URL(fileURLWithPath: outPath).deletingLastPathComponent().path
        let temporary = folder + "/.\(URL(fileURLWithPath: outPath).lastPathComponent).\(getpid()).tmp"
        do {
            try writeFile(Data(written), to: temporary)
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, outPath) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CLIError.failed("cannot write '\(outPath)': \(reason)")
        }
        print("wrote \(outPath) (\(written.count) bytes, \(written.count - model.count) more than \(modelPath))")
    }

    struct Shown: Encodable {
        struct Tensor: Encodable {
            let name: String?
            let normalization: [String: [Float]]?
            let scoreThreshold: Float?
            let files: [String]
        }
        let name: String?
        let minParserVersion: String?
        let inputs: [Tensor]
        let outputs: [Tensor]
        /// Packed file name → line count.
        let labelCounts: [String: Int]
    }

    func show() throws {
        let graph: Graph
        let metadata: ModelMetadata?
        do {
            graph = try Graph(contentsOf: modelPath)
            metadata = try ModelMetadata(graph: graph)
        } catch {
            throw CLIError.failed("\(error)")
        }
        guard let metadata else {
            if json { print(try jsonText(["metadata": String?.none])) } else { print("\(modelPath): no TFLite Metadata") }
            return
        }
        var counts: [String: Int] = [:]
        let lines = try? LabelFiles.lineCounts(metadata, graph: graph)
        for (k, v) in lines ?? [:] { counts[k] = v }
        func tensor(_ t: TensorMetadata) -> Shown.Tensor {
            Shown.Tensor(name: t.name, normalization: t.normalization.map { ["mean": $0.mean, "std": $0.std] },
                         scoreThreshold: t.scoreThreshold, files: t.associatedFiles.map { "\($0.name) (\($0.type))" })
        }
        let shown = Shown(name: metadata.name, minParserVersion: metadata.minParserVersion,
                          inputs: metadata.inputs.map(tensor), outputs: metadata.outputs.map(tensor), labelCounts: counts)
        if json { print(try jsonText(shown)); return }
        print("\(modelPath): TFLite Metadata\(metadata.name.map { " '\($0)'" } ?? ""), min parser version \(metadata.minParserVersion ?? "unstated")")
        for (what, list) in [("input", shown.inputs), ("output", shown.outputs)] {
            for (i, t) in list.enumerated() {
                var parts = ["\(what) \(i) '\(t.name ?? "")'"]
                if let n = t.normalization { parts.append("normalization mean \(n["mean"] ?? []) std \(n["std"] ?? [])") }
                if let s = t.scoreThreshold { parts.append("score threshold \(s)") }
                for f in t.files { parts.append("file \(f)") }
                print("  " + parts.joined(separator: ", "))
            }
        }
        for (name, n) in counts.sorted(by: { $0.key < $1.key }) { print("  packed '\(name)': \(n) lines") }
    }
}
