import Foundation
import Tasks

/// `swiftlite detect [options] IMAGE...`: MediaPipe-style object detection.
struct DetectCommand: ParsedCommand {
    static let name = "detect"
    static let summary = "detect objects (default model: SSDLite MobileNetV2 person detector)"
    static let synopsis = "detect [options] IMAGE|DIR|- ..."
    static let defaultName = "person_detector_f32.tflite"

    static let model = Option<String?>.string("model", value: "M", help: "SSD .tflite ending in TFLite_Detection_PostProcess, or a YOLOv5/v8 export", default: "Models/\(defaultName)")
    static let maxResults = Option<Int>.integer("max-results", value: "N", help: "at most N detections; any negative number for all (as MediaPipe)", default: -1, in: Int(Int32.min) ... Int(Int32.max))
    static let iou = Option<Double?>.number("iou", value: "X", help: "YOLO models: drop boxes overlapping a kept one of the same class by IoU > X (default 0.7 for v8, 0.45 for v5, as Ultralytics)", in: 0 ... 1)
    static let agnostic = Option.flag("agnostic", help: "YOLO models: suppress overlapping boxes across classes too")
    static let annotate = Option<String?>.string("annotate", value: "OUT.png", help: "draw the boxes and labels (several images: OUT-1.png, OUT-2.png, ... by input number)")
    static let declarations = [model.spec, maxResults.spec] + CategoryOptions.declarations + [iou.spec, agnostic.spec, annotate.spec] + BatchOptions.declarations
    static let discussion = BatchOptions.discussion

    let options: ObjectDetectorOptions
    let annotatePath: String?
    let batch: BatchOptions
    let verbose: Bool

    init(_ arguments: Arguments) throws(CLIError) {
        options = try CategoryOptions.read(arguments, model: Self.model, defaultName: Self.defaultName,
                                           maxResults: Self.maxResults, ObjectDetectorOptions.init(modelPath:))
        let iou = try arguments[Self.iou], agnostic = try arguments[Self.agnostic]
        if iou != nil || agnostic {
            options.yolo = YOLOOptions(iouThreshold: iou.map(Float.init), classAgnostic: agnostic)
        }
        annotatePath = try arguments[Self.annotate]
        batch = try BatchOptions(arguments)
        verbose = try arguments[CategoryOptions.verbose]
    }

    func validate() throws(CLIError) {
        try CategoryOptions.validate(options)
        try Self.validateAnnotation(annotatePath)
        try batch.validate()
    }

    /// `--annotate OUT`: its folder must exist, and the name must not say a format other than PNG.
    static func validateAnnotation(_ path: String?) throws(CLIError) {
        guard let path else { return }
        try checkOutputFolder(of: path, option: "--annotate")
        let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
        guard ext.isEmpty || ext == "png" else {
            throw .usage("--annotate \(path): annotated images are written as PNG; name the file .png")
        }
    }

    /// The annotated image's path for input `number` (1-based) of `count`.
    static func annotationPath(_ out: String, number: Int, count: Int) -> String {
        guard count > 1 else { return out }
        let url = URL(fileURLWithPath: out)
        let base = (out as NSString).deletingPathExtension
        return base + "-\(number)." + (url.pathExtension.isEmpty ? "png" : url.pathExtension)
    }

    /// One image's detections and the annotated picture's path (also `faces`'s).
    struct Output: Sendable {
        let detections: [Detection]
        let annotated: String?
    }

    /// One image's `--json` record (also `faces`'s).
    struct Record: Encodable {
        let image: String
        let detections: [Detection]
        let annotated: String?
    }

    func run() throws {
        let annotatePath = annotatePath
        let path = options.baseOptions.modelAssetPath
        if verbose || !options.categoryAllowlist.isEmpty || !options.categoryDenylist.isEmpty {
            let detector = try namingModel(path) { try ObjectDetector(options: options) }
            if verbose { writeStderr("labels: \(detector.labelChoice)\ndetection outputs: \(detector.roles)\n") }
            CategoryOptions.warnAboutUnknownNames(options, labels: detector.labelChoice.labels?.names)
        }
        let filters = CategoryOptions.filterDescription(options)
        let capWarnings = DetectionCapWarnings(modelPath: path ?? "", maxResults: options.maxResults, reportFilled: verbose)
        try runBatch(batch, makeWorker: { try namingModel(path) { try ObjectDetector(options: options) } },
                     process: { detector, item in
                         let image = try loadImage(item.path)
                         let result = try detector.detect(image: image)
                         if let filters, result.detections.isEmpty {
                             writeStderr("note: \(item.path): no detection passes \(filters)\n")
                         }
                         capWarnings.check(count: result.detections.count, path: item.path)
                         guard let annotatePath else { return Output(detections: result.detections, annotated: nil) }
                         let target = Self.annotationPath(annotatePath, number: item.number, count: item.count)
                         try writeFile(try Annotator.draw(result.detections, on: image.upright()).pngData(), to: target)
                         return Output(detections: result.detections, annotated: target)
                     },
                     text: { path, output in
                         var lines = ["\(path): \(output.detections.count) detection\(output.detections.count == 1 ? "" : "s")"]
                         for d in output.detections {
                             let b = d.boundingBox
                             lines.append(String(format: "  %@ %.2f at (%d, %d) %dx%d", d.categories[0].label, d.categories[0].score, b.originX, b.originY, b.width, b.height))
                         }
                         if let a = output.annotated { lines.append("  annotated: \(a)") }
                         return lines.joined(separator: "\n") + "\n"
                     },
                     record: { path, output in Record(image: path, detections: output.detections, annotated: output.annotated) })
    }
}
