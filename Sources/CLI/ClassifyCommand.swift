import Foundation
import Tasks

/// Options that `classify` and `detect` share (MediaPipe's classifier options).
enum CategoryOptions {
    static let labels = Option<String?>.string("labels", value: "L", help: "label file (used instead of the model's label metadata)")
    static let scoreThreshold = Option<Double?>.number("score-threshold", value: "X", help: "keep scores >= X (default: the model metadata's threshold, else all)", in: -1e9 ... 1e9)
    static let allow = Option<String?>.string("allow", value: "a,b", help: "only these category names (not with --deny)")
    static let deny = Option<String?>.string("deny", value: "c,d", help: "never these category names")
    static let locale = Option<String?>.string("locale", value: "xx", help: "display-names locale", default: "en")
    static let verbose = Option.flag("verbose", help: "say on stderr where the labels come from (and, for detect, which output is which)")
    static let declarations = [labels.spec, scoreThreshold.spec, allow.spec, deny.spec, locale.spec, verbose.spec]

    /// A task's options from the command's `--model` (else the bundled `defaultName`),
    /// `--max-results` and the category options.
    static func read<Options: CategoryFiltering>(_ arguments: Arguments, model: Option<String?>, defaultName: String,
                                                 maxResults: Option<Int>, _ make: (String) -> Options) throws(CLIError) -> Options {
        let path: String
        if let given = try arguments[model] { path = given } else { path = try defaultModel(defaultName) }
        var options = make(path)
        options.maxResults = try arguments[maxResults]
        try read(arguments, into: &options)
        return options
    }

    /// Reads the category options into a task's options.
    static func read(_ arguments: Arguments, into options: inout some CategoryFiltering) throws(CLIError) {
        options.labelsPath = try arguments[labels]
        options.scoreThreshold = try arguments[scoreThreshold].map(Float.init)
        options.categoryAllowlist = nameList(try arguments[allow])
        options.categoryDenylist = nameList(try arguments[deny])
        options.displayNamesLocale = try arguments[locale] ?? "en"
    }

    /// Says on stderr which `--allow`/`--deny` names are no label of the model (MediaPipe ignores
    /// them; an allow list with no known name filters nothing).
    static func warnAboutUnknownNames(_ options: some CategoryFiltering, labels: [String]?) {
        guard let labels else { return }
        let known = Set(labels)
        for (option, names) in [("--allow", options.categoryAllowlist), ("--deny", options.categoryDenylist)] where !names.isEmpty {
            let unknown = names.filter { !known.contains($0) }
            guard !unknown.isEmpty else { continue }
            let effect = unknown.count == names.count ? (option == "--allow" ? "; it filters nothing" : "; it removes nothing") : ""
            writeStderr("warning: \(option) names no label of the model: \(unknown.joined(separator: ", "))\(effect)\n")
        }
    }

    /// The filters the user set, as the options name them ("--score-threshold 0.9 and --allow
    /// tabby"); nil when none is set, so that an empty result is the model's alone.
    static func filterDescription(_ options: some CategoryFiltering) -> String? {
        var parts: [String] = []
        if let t = options.scoreThreshold { parts.append("--score-threshold \(t)") }
        if !options.categoryAllowlist.isEmpty { parts.append("--allow \(options.categoryAllowlist.joined(separator: ","))") }
        if !options.categoryDenylist.isEmpty { parts.append("--deny \(options.categoryDenylist.joined(separator: ","))") }
        return parts.isEmpty ? nil : parts.joined(separator: " and ")
    }

    /// Rejects `--allow` with `--deny`.
    static func validate(_ options: some CategoryFiltering) throws(CLIError) {
        guard options.categoryAllowlist.isEmpty || options.categoryDenylist.isEmpty else {
            throw .usage("--allow and --deny are mutually exclusive")
        }
    }
}

/// The category options `ImageClassifierOptions` and `ObjectDetectorOptions` share, so that
/// `CategoryOptions` reads them once for both.
protocol CategoryFiltering {
    var labelsPath: String? { get set }
    var scoreThreshold: Float? { get set }
    var categoryAllowlist: [String] { get set }
    var categoryDenylist: [String] { get set }
    var displayNamesLocale: String { get set }
    var maxResults: Int { get set }
}

extension ImageClassifierOptions: CategoryFiltering {}
extension ObjectDetectorOptions: CategoryFiltering {}

/// `swiftlite classify [options] IMAGE...`: MediaPipe-style image classification.
struct ClassifyCommand: ParsedCommand {
    static let name = "classify"
    static let summary = "classify images (default model: EfficientNet-Lite0, ImageNet)"
    static let synopsis = "classify [options] IMAGE|DIR|- ..."
    static let defaultName = "efficientnet_lite0_f32.tflite"

    static let model = Option<String?>.string("model", value: "M", help: ".tflite classifier", default: "Models/\(defaultName)")
    static let maxResults = Option<Int>.integer("max-results", value: "N", help: "top N per head; any negative number for all (as MediaPipe)", default: 5, in: Int(Int32.min) ... Int(Int32.max))
    static let crop = Option<ImageCropAndScale>.choice("crop", value: "MODE", help: "center (crop), fit (letterbox) or fill (stretch, as MediaPipe)",
                                                       default: "fill", ["center": .centerCrop, "fit": .scaleFit, "fill": .scaleFill])
    static let declarations = [model.spec, maxResults.spec] + CategoryOptions.declarations + [crop.spec] + BatchOptions.declarations
    static let discussion = BatchOptions.discussion

    let options: ImageClassifierOptions
    let batch: BatchOptions
    let verbose: Bool

    init(_ arguments: Arguments) throws(CLIError) {
        let options = try CategoryOptions.read(arguments, model: Self.model, defaultName: Self.defaultName,
                                               maxResults: Self.maxResults, ImageClassifierOptions.init(modelPath:))
        options.cropAndScale = try arguments[Self.crop]
        self.options = options
        batch = try BatchOptions(arguments)
        verbose = try arguments[CategoryOptions.verbose]
    }

    func validate() throws(CLIError) {
        try CategoryOptions.validate(options)
        try batch.validate()
    }

    struct Record: Encodable {
        let image: String
        let classifications: [Classifications]
    }

    func run() throws {
        let path = options.baseOptions.modelAssetPath
        if verbose || !options.categoryAllowlist.isEmpty || !options.categoryDenylist.isEmpty {
            let choices = try namingModel(path) { try ImageClassifier(options: options) }.labelChoices
            if verbose {
                for (i, choice) in choices.enumerated() { writeStderr("labels\(choices.count > 1 ? " (head \(i))" : ""): \(choice)\n") }
            }
            CategoryOptions.warnAboutUnknownNames(options, labels: choices.first?.labels?.names)
        }
        let filters = CategoryOptions.filterDescription(options)
        try runBatch(batch, makeWorker: { try namingModel(path) { try ImageClassifier(options: options) } },
                     process: { classifier, item in
                         let result = try classifier.classify(image: loadImage(item.path))
                         if let filters, result.classifications.allSatisfy(\.categories.isEmpty) {
                             writeStderr("note: \(item.path): no category passes \(filters)\n")
                         }
                         return result
                     },
                     text: { path, result in
                         var lines = ["\(path):"]
                         for head in result.classifications {
                             if result.classifications.count > 1 { lines.append(" head \(head.headIndex) \(head.headName ?? ""):") }
                             lines += head.categories.map { "  (\(String(format: "%.2f", $0.score))) \($0.label)" }
                         }
                         return lines.joined(separator: "\n") + "\n"
                     },
                     record: { path, result in Record(image: path, classifications: result.classifications) })
    }
}
