import Foundation
import Tasks

/// `swiftlite label [--model M | --automl DIR] [--confidence X] [--json] IMAGE...`: ML Kit-style labels.
struct LabelCommand: Command {
    static let name = "label"
    static let summary = "label images, ML Kit style (incl. AutoML Vision Edge folders)"
    static let usage = """
        swiftlite label [--model M | --automl DIR] [--confidence X] [--max-results N] [--json] IMAGE...

          --model M         .tflite classifier with label metadata (default Models/\(ClassifyCommand.defaultName))
          --automl DIR      AutoML Vision Edge folder with manifest.json, dict.txt and the model
          --confidence X    minimum confidence, 0...1 (default 0.5)
          --max-results N   at most N labels (default 10)
          --json            one JSON array, one object per image
        """
    static let options: Set<String> = ["model", "automl", "confidence", "max-results"]
    static let flags: Set<String> = ["json"]

    static func run(_ arguments: Arguments) throws {
        let model: LocalModel
        switch (arguments.value("model"), arguments.value("automl")) {
        case (.some, .some): throw CLIError.usage("--model and --automl are mutually exclusive")
        case let (path?, nil): model = LocalModel(path: path)
        case let (nil, folder?): model = try LocalModel(manifestFolder: folder)
        case (nil, nil): model = LocalModel(path: try defaultModel(ClassifyCommand.defaultName))
        }
        var options = ImageLabelerOptions(localModel: model, confidenceThreshold: Float(try arguments.double("confidence", in: 0 ... 1) ?? 0.5))
        options.maxResultCount = try arguments.int("max-results", in: 1 ... Int(Int32.max)) ?? 10
        let labeler = try ImageLabeler(options: options)
        var results = [[String: Any]]()
        try forEachImage(arguments.positionals) { path, image in
            let labels = try labeler.process(image)
            if arguments.flag("json") {
                results.append(["image": path, "labels": labels.map { ["text": $0.text, "confidence": Double($0.confidence), "index": $0.index] as [String: Any] }])
            } else {
                print("\(path):")
                for l in labels { print(String(format: "  %@ %.2f (index %d)", l.text, l.confidence, l.index)) }
            }
        }
        if arguments.flag("json") { print(try jsonText(results)) }
    }
}
