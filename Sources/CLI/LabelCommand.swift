import Foundation
import Tasks

/// `swiftlite label [--model M | --automl DIR] [--confidence X] IMAGE...`: ML Kit-style labels.
struct LabelCommand: ParsedCommand {
    static let name = "label"
    static let summary = "label images, ML Kit style (incl. AutoML Vision Edge folders)"
    static let synopsis = "label [--model M | --automl DIR] [options] IMAGE|DIR|- ..."

    static let model = Option<String?>.string("model", value: "M", help: ".tflite classifier with label metadata (default: the base model, ImageNet EfficientNet-Lite0, threshold 0.5, as ML Kit's)")
    static let automl = Option<String?>.string("automl", value: "DIR", help: "AutoML Vision Edge folder with manifest.json, dict.txt and the model, or its manifest.json, or the name of a hosted model (with --model-host)")
    static let modelHost = Option<String?>.string("model-host", value: "URL", help: "base URL of hosted AutoML models: --automl NAME downloads <URL>/NAME/{manifest.json,dict.txt,model.tflite} (default: $SWIFTLITE_MODEL_HOST)")
    static let confidence = Option<Double?>.number("confidence", value: "X", help: "minimum confidence, 0...1 (default: the model's metadata threshold, else 0, as ML Kit)", in: 0 ... 1)
    static let maxResults = Option<Int>.integer("max-results", value: "N", help: "at most N labels", default: 10, in: 1 ... Int(Int32.max))
    static let verbose = Option.flag("verbose", help: "say on stderr where the labels come from")
    static let declarations = [model.spec, automl.spec, modelHost.spec, confidence.spec, maxResults.spec, verbose.spec] + BatchOptions.declarations
    static let discussion = BatchOptions.discussion

    let modelPath: String?
    let automlFolder: String?
    let modelHost: String?
    let confidence: Float?
    let maxResults: Int
    let batch: BatchOptions
    let verbose: Bool

    init(_ arguments: Arguments) throws(CLIError) {
        modelPath = try arguments[Self.model]
        automlFolder = try arguments[Self.automl]
        modelHost = try arguments[Self.modelHost]
        confidence = try arguments[Self.confidence].map(Float.init)
        maxResults = try arguments[Self.maxResults]
        batch = try BatchOptions(arguments)
        verbose = try arguments[Self.verbose]
    }

    func validate() throws(CLIError) {
        guard modelPath == nil || automlFolder == nil else { throw .usage("--model and --automl are mutually exclusive") }
        if let modelHost {
            guard let url = URL(string: modelHost), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw .usage("--model-host \(modelHost): not an http or https URL")
            }
        }
        try batch.validate()
    }

    struct Record: Encodable {
        let image: String
        let labels: [ImageLabel]
    }

    func run() throws {
        let options: ImageLabelerOptions
        if let automlFolder {
            options = try Self.autoMLOptions(automlFolder, modelHost: modelHost)
            options.confidenceThreshold = confidence.map { NSNumber(value: $0) }
        } else if let modelPath {
            options = ImageLabelerOptions(localModel: LocalModel(path: modelPath), confidenceThreshold: confidence)
        } else {
            // ML Kit's ImageLabeler.imageLabeler(): the base model shipped with the Tasks module.
            options = ImageLabelerOptions()
            options.confidenceThreshold = confidence.map { NSNumber(value: $0) }
        }
        options.maxResultCount = maxResults
        let path = automlFolder ?? modelPath ?? ImageLabeler.baseModelPath
        if verbose { writeStderr("labels: \(try namingModel(path) { try ImageLabeler(options: options) }.labelChoice)\n") }
        try runBatch(batch, makeWorker: { try namingModel(path) { try ImageLabeler(options: options) } },
                     // The base labeler returns every label above its threshold (ML Kit's); the
                     // CLI's --max-results caps every model's list alike.
                     process: { [maxResults] labeler, item in Array(try labeler.process(loadImage(item.path)).prefix(maxResults)) },
                     text: { path, labels in
                         (["\(path):"] + labels.map { String(format: "  %@ %.2f (index %d)", $0.text, $0.confidence, $0.index) }).joined(separator: "\n") + "\n"
                     },
                     record: { path, labels in Record(image: path, labels: labels) })
    }

    /// The options for `--automl X`: a folder, a `manifest.json`, or (when it is neither and a
    /// model host is set) a hosted model's name, downloaded or revalidated first. A failed
    /// download falls back to the cached version, with a warning, when there is one.
    static func autoMLOptions(_ automl: String, modelHost: String?) throws -> ImageLabelerOptions {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: automl, isDirectory: &isDirectory)
        let manager = ModelManager.modelManager()
        if let modelHost { manager.modelHostBaseURL = URL(string: modelHost) }
        if exists, !isDirectory.boolValue {
            return ImageLabelerOptions(localModel: try LocalModel(manifestPath: automl))
        }
        guard !exists, RemoteModel.isValidName(automl), manager.modelHostBaseURL != nil else {
            return ImageLabelerOptions(localModel: try LocalModel(manifestFolder: automl))
        }
        let remote = AutoMLImageLabelerRemoteModel(name: automl)
        do {
            try manager.downloadAndWait(remote)
        } catch {
            guard manager.isModelDownloaded(remote) else { throw CLIError.failed("hosted model '\(automl)': \(error)") }
            writeStderr("warning: hosted model '\(automl)': \(error); using the version downloaded before\n")
        }
        return ImageLabelerOptions(remoteModel: remote)
    }
}
