import Foundation
import Tasks

/// `swiftlite classify [options] IMAGE...`: MediaPipe-style image classification.
struct ClassifyCommand: Command {
    static let name = "classify"
    static let summary = "classify images (default model: EfficientNet-Lite0, ImageNet)"
    static let usage = """
        swiftlite classify [--model M] [--labels L] [--max-results N] [--score-threshold X]
                           [--allow a,b | --deny c] [--locale xx] [--crop center|fit|fill] [--json] IMAGE...

          --model M            .tflite classifier (default Models/\(defaultName))
          --labels L           label file, for models without label metadata
          --max-results N      top N per head (default 5; -1 for all)
          --score-threshold X  keep scores >= X
          --allow a,b          only these category names      --deny c   never these
          --locale xx          display-names locale (default en)
          --crop MODE          center (crop), fit (letterbox) or fill (stretch, default — as MediaPipe)
          --json               one JSON array, one object per image
        """
    static let defaultName = "efficientnet_lite0_f32.tflite"
    static let options: Set<String> = ["model", "labels", "max-results", "score-threshold", "allow", "deny", "locale", "crop"]
    static let flags: Set<String> = ["json"]

    static func run(_ arguments: Arguments) throws {
        var options = ImageClassifierOptions(modelPath: try arguments.value("model") ?? defaultModel(defaultName))
        options.labelsPath = arguments.value("labels")
        options.maxResults = try arguments.int("max-results", in: -1 ... Int(Int32.max)) ?? 5
        options.scoreThreshold = try arguments.double("score-threshold", in: -1e9 ... 1e9).map(Float.init)
        options.categoryAllowlist = nameList(arguments.value("allow"))
        options.categoryDenylist = nameList(arguments.value("deny"))
        options.displayNamesLocale = arguments.value("locale") ?? "en"
        switch arguments.value("crop") ?? "fill" {
        case "center": options.cropAndScale = .centerCrop
        case "fit": options.cropAndScale = .scaleFit
        case "fill": options.cropAndScale = .scaleFill
        case let other: throw CLIError.usage("--crop must be center, fit or fill, got '\(other)'")
        }
        let classifier = try ImageClassifier(options: options)
        var results = [[String: Any]]()
        try forEachImage(arguments.positionals) { path, image in
            let result = try classifier.classify(image: image)
            if arguments.flag("json") {
                results.append(["image": path, "classifications": result.classifications.map { head in
                    ["headIndex": head.headIndex, "headName": head.headName ?? "", "categories": head.categories.map(categoryJSON)] as [String: Any]
                }])
            } else {
                print("\(path):")
                for head in result.classifications.indices {
                    if result.classifications.count > 1 { print(" head \(head) \(result.classifications[head].headName ?? ""):") }
                    print(result.visionStyleDescription(head: head).split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
                }
            }
        }
        if arguments.flag("json") { print(try jsonText(results)) }
    }
}
