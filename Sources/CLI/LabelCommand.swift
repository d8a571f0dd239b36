import Foundation
import Tasks

/// `swiftlite label [--model M | --automl DIR] [--confidence X] IMAGE...`: ML Kit-style labels.
struct LabelCommand: ParsedCommand {
    static let name = "label"
    static let summary = "label images, ML Kit style (incl. AutoML Vision Edge folders)"
    static let synopsis = "label [--model M | --automl DIR] [options] IMAGE|DIR|- ..."

    static let model = Option<String?>.string("model", value: "M", help: ".tflite classifier with label metadata (default: the base model, ImageNet EfficientNet-Lite0, threshold 0.5, as ML Kit's)")
    static let automl = Option<String?>.string("automl", value: "DIR", help: "AutoML Vision Edge folder with manifest.json, dict.txt and the model")
    static let confidence = Option<Double?>.number("confidence", value: "X", help: "minimum confidence, 0...1 (default: the model's metadata threshold, else 0, as ML Kit)", in: 0 ... 1)
    static let maxResults = Option<Int>.integer("max-results", value: "N", help: "at most N labels", default: 10, in: 1 ... Int(Int32.max))
    static let verbose = Option.flag("verbose", help: "say on stderr where the labels come from")
    static let declarations = [model.spec, automl.spec, confidence.spec, maxResults.spec, verbose.spec] + BatchOptions.declarations
    static let discussion = BatchOptions.discussion

    let modelPath: String?
    let automlFolder: String?
    let confidence: Float?
    let maxResults: Int
    let batch: BatchOptions
    let verbose: Bool

    init(_ arguments: Arguments) throws(CLIError) {
        modelPath = try arguments[Self.model]
        automlFolder = try arguments[Self.automl]
        confidence = try arguments[Self.confidence].map(Float.init)
        maxResults = try arguments[Self.maxResults]
        batch = try BatchOptions(arguments)
        verbose = try arguments[Self.verbose]
    }

    func validate() throws(CLIError) {
        guard modelPath == nil || automlFolder == nil else { throw .usage("--model and --automl are mutually exclusive") }
        try batch.validate()
    }

    struct Record: Encodable {
        let image: String
        let labels: [ImageLabel]
    }

    func run() throws {
        let options: ImageLabelerOptions
        if let automlFolder {
            options = ImageLabelerOptions(localModel: try LocalModel(manifestFolder: automlFolder), confidenceThreshold: confidence)
        } else if let modelPath {
            options = ImageLabelerOptions(localModel: LocalModel(path: modelPath), confidenceThreshold: confidence)
        } else {
            // ML Kit's ImageLabeler.imageLabeler(): the base model shipped with the Tasks module.
            options = ImageLabelerOptions()
            options.confidenceThreshold = confidence.map { NSNumber(value: $0) }
        }
        options.maxResultCount = maxResults
        if verbose { writeStderr("labels: \(try ImageLabeler(options: options).labelChoice)\n") }
        try runBatch(batch, makeWorker: { try ImageLabeler(options: options) },
                     process: { labeler, item in try labeler.process(loadImage(item.path)) },
                     text: { path, labels in
                         (["\(path):"] + labels.map { String(format: "  %@ %.2f (index %d)", $0.text, $0.confidence, $0.index) }).joined(separator: "\n") + "\n"
                     },
                     record: { path, labels in Record(image: path, labels: labels) })
    }
}
