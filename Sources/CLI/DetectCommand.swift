import Foundation
import Tasks

/// `swiftlite detect [options] IMAGE...`: MediaPipe-style object detection.
struct DetectCommand: Command {
    static let name = "detect"
    static let summary = "detect objects (default model: SSDLite MobileNetV2 person detector)"
    static let usage = """
        swiftlite detect [--model M] [--labels L] [--max-results N] [--score-threshold X]
                         [--allow a,b | --deny c] [--json] [--annotate OUT.png] IMAGE...

          --model M            SSD .tflite ending in TFLite_Detection_PostProcess (default Models/\(defaultName))
          --labels L           label file, for models without label metadata (a leading ??? line is skipped)
          --max-results N      at most N detections (default all)
          --score-threshold X  keep scores >= X (default: the model metadata's threshold, else all)
          --allow a,b | --deny c   filter by category name
          --json               one JSON array, one object per image
          --annotate OUT.png   draw the boxes and labels (with several images: OUT-1.png, OUT-2.png, ...)
        """
    static let defaultName = "person_detector_f32.tflite"
    static let options: Set<String> = ["model", "labels", "max-results", "score-threshold", "allow", "deny", "annotate", "locale"]
    static let flags: Set<String> = ["json"]

    static func run(_ arguments: Arguments) throws {
        var options = ObjectDetectorOptions(modelPath: try arguments.value("model") ?? defaultModel(defaultName))
        options.labelsPath = arguments.value("labels")
        options.maxResults = try arguments.int("max-results", in: -1 ... Int(Int32.max)) ?? -1
        options.scoreThreshold = try arguments.double("score-threshold", in: -1e9 ... 1e9).map(Float.init)
        options.categoryAllowlist = nameList(arguments.value("allow"))
        options.categoryDenylist = nameList(arguments.value("deny"))
        options.displayNamesLocale = arguments.value("locale") ?? "en"
        let detector = try ObjectDetector(options: options)
        var results = [[String: Any]]()
        var number = 0
        try forEachImage(arguments.positionals) { path, image in
            number += 1
            let result = try detector.detect(image: image)
            if arguments.flag("json") {
                results.append(["image": path, "detections": result.detections.map { d in
                    ["boundingBox": ["originX": d.boundingBox.originX, "originY": d.boundingBox.originY,
                                     "width": d.boundingBox.width, "height": d.boundingBox.height],
                     "categories": d.categories.map(categoryJSON)] as [String: Any]
                }])
            } else {
                print("\(path): \(result.detections.count) detection\(result.detections.count == 1 ? "" : "s")")
                for d in result.detections {
                    let c = d.categories[0], b = d.boundingBox
                    print(String(format: "  %@ %.2f at (%d, %d) %dx%d", c.categoryName ?? "#\(c.index)", c.score, b.originX, b.originY, b.width, b.height))
                }
            }
            if let out = arguments.value("annotate") {
                var target = out
                if arguments.positionals.count > 1 {
                    let url = URL(fileURLWithPath: out)
                    target = url.deletingPathExtension().path + "-\(number)." + (url.pathExtension.isEmpty ? "png" : url.pathExtension)
                }
                try Annotator.draw(result.detections, on: image.upright()).pngData().write(to: URL(fileURLWithPath: target))
            }
        }
        if arguments.flag("json") { print(try jsonText(results)) }
    }
}
