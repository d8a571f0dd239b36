import Foundation
import Tasks

/// `swiftlite faces [options] IMAGE...`: MediaPipe-style face detection.
struct FacesCommand: ParsedCommand {
    static let name = "faces"
    static let summary = "detect faces (default model: MediaPipe's short-range face detector)"
    static let synopsis = "faces [options] IMAGE|DIR|- ..."
    static let defaultName = "face_detection_short_range.tflite"

    static let model = Option<String?>.string("model", value: "M", help: "MediaPipe face model (128x128 short range or 192x192 full range)",
                                              default: "$SWIFTLITE_MODEL_ZOO or ~/.cache/swiftlite/model_zoo/\(defaultName)")
    static let minConfidence = Option<Double?>.number("min-confidence", value: "X", help: "keep faces scoring >= X (default 0.5, as MediaPipe)", in: 0 ... 1)
    static let minSuppression = Option<Double?>.number("min-suppression", value: "X", help: "merge faces overlapping by IoU > X (default 0.3, as MediaPipe)", in: 0 ... 1)
    static let annotate = Option<String?>.string("annotate", value: "OUT.png", help: "draw the boxes and keypoints (several images: OUT-1.png, OUT-2.png, ... by input number)")
    static let declarations = [model.spec, minConfidence.spec, minSuppression.spec, annotate.spec] + BatchOptions.declarations
    static let discussion = """
        --json prints, per image, {"image", "detections": [{"boundingBox", "categories", "keypoints": [{"x", "y"}]}]}:
        boxes in pixels, keypoints normalised to the image (left eye, right eye, nose tip, mouth, left and
        right ear, as seen by the viewer).

        """ + BatchOptions.discussion

    /// The options, with the model path nil until `run` (the default model is looked up after
    /// the usage checks).
    let options: FaceDetectorOptions
    let annotatePath: String?
    let batch: BatchOptions

    init(_ arguments: Arguments) throws(CLIError) {
        options = FaceDetectorOptions()
        options.baseOptions.modelAssetPath = try arguments[Self.model]
        if let x = try arguments[Self.minConfidence] { options.minDetectionConfidence = Float(x) }
        if let x = try arguments[Self.minSuppression] { options.minSuppressionThreshold = Float(x) }
        annotatePath = try arguments[Self.annotate]
        batch = try BatchOptions(arguments)
    }

    /// The model zoo's short-range face model (`Tests/Goldens/fetch_model_zoo.py` fills the zoo).
    static func zooModel() throws(CLIError) -> String {
        let environment = ProcessInfo.processInfo.environment["SWIFTLITE_MODEL_ZOO"] ?? ""
        let zoo = environment.isEmpty
            ? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/swiftlite/model_zoo")
            : URL(fileURLWithPath: environment)
        let path = zoo.appendingPathComponent(defaultName).path
        guard FileManager.default.fileExists(atPath: path) else {
            throw .failed("default face model \(path) not found: run 'python3 Tests/Goldens/fetch_model_zoo.py' (it fetches "
                + "MediaPipe's face models into the model zoo), or pass --model M")
        }
        return path
    }

    func validate() throws(CLIError) {
        try DetectCommand.validateAnnotation(annotatePath)
        try batch.validate()
    }

    typealias Output = DetectCommand.Output
    typealias Record = DetectCommand.Record

    func run() throws {
        let annotatePath = annotatePath
        let options = options.copy()
        if options.baseOptions.modelAssetPath == nil { options.baseOptions.modelAssetPath = try Self.zooModel() }
        let path = options.baseOptions.modelAssetPath
        try runBatch(batch, makeWorker: { try namingModel(path) { try FaceDetector(options: options) } },
                     process: { detector, item in
                         let image = try loadImage(item.path)
                         let faces = try detector.detect(image: image).detections
                         guard let annotatePath else { return Output(detections: faces, annotated: nil) }
                         let target = DetectCommand.annotationPath(annotatePath, number: item.number, count: item.count)
                         // MediaPipe's faces have no category name; the picture says "face".
                         let named = faces.map { d -> Detection in
                             var d = d
                             d.categories[0].categoryName = "face"
                             return d
                         }
                         try writeFile(try Annotator.draw(named, on: image.upright()).pngData(), to: target)
                         return Output(detections: faces, annotated: target)
                     },
                     text: { path, output in
                         var lines = ["\(path): \(output.detections.count) face\(output.detections.count == 1 ? "" : "s")"]
                         for d in output.detections {
                             let b = d.boundingBox
                             let points = (d.keypoints ?? []).map { String(format: "(%.3f, %.3f)", $0.x, $0.y) }.joined(separator: " ")
                             lines.append(String(format: "  face %.2f at (%d, %d) %dx%d", d.categories[0].score, b.originX, b.originY, b.width, b.height)
                                 + (points.isEmpty ? "" : "; keypoints \(points)"))
                         }
                         if let a = output.annotated { lines.append("  annotated: \(a)") }
                         return lines.joined(separator: "\n") + "\n"
                     },
                     record: { path, output in Record(image: path, detections: output.detections, annotated: output.annotated) })
    }
}
