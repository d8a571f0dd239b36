import Engine

/// How `ObjectDetector` reads a YOLO-family export: one output of candidate boxes with their class
/// scores, decoded and suppressed as Ultralytics' own post-processing does.
///
/// - `.v8` (YOLOv8 and later, YOLOv5u): `[1, 4 + C, N]` — per candidate the box centre, width and
///   height, then `C` class scores; a candidate's confidence is its best class score.
/// - `.v5` (YOLOv5, YOLOv7): `[1, N, 5 + C]` — the box, an objectness score, then `C` class
///   scores; a candidate counts only when its objectness exceeds the confidence threshold, and its
///   confidence is objectness × its best class score.
///
/// Boxes are in input pixels, or (Ultralytics' TFLite exports, the default) normalised to the
/// input size and scaled by it first. Then, as Ultralytics' `non_max_suppression`: candidates
/// whose confidence exceeds the threshold, at most `maxCandidates` of the best, hard NMS by
/// intersection over union (a box is dropped when it overlaps a kept one by more than
/// `iouThreshold`), per class unless `classAgnostic`, at most `maxDetections` kept.
///
/// ```swift
/// let options = ObjectDetectorOptions(modelPath: "yolov8n_float32.tflite")
/// options.labelsPath = "coco_labels.txt"
/// options.yolo = YOLOOptions(iouThreshold: 0.5)   // optional: a YOLO model is recognised by its output
/// ```
public struct YOLOOptions: Sendable, Equatable {
    /// The output layouts (see the type's documentation).
    public enum Layout: String, Sendable, Equatable, CaseIterable {
        case v5, v8
    }

    /// The layout; nil decides it from the output's shape (the longer axis holds the candidates).
    public var layout: Layout?
    /// Boxes overlapping a kept box of the same class by more than this are dropped; nil is
    /// Ultralytics' default for the layout (0.7 for `.v8`, 0.45 for `.v5`).
    public var iouThreshold: Float?
    /// Suppress across classes, not within each class.
    public var classAgnostic: Bool
    /// Boxes are fractions of the input size (Ultralytics' TFLite exports) rather than pixels.
    public var normalizedBoxes: Bool
    /// At most this many detections survive the suppression (Ultralytics' `max_det`).
    public var maxDetections: Int
    /// At most this many candidates, the best, enter the suppression (Ultralytics' `max_nms`).
    public var maxCandidates: Int

    public init(layout: Layout? = nil, iouThreshold: Float? = nil, classAgnostic: Bool = false, normalizedBoxes: Bool = true,
                maxDetections: Int = 300, maxCandidates: Int = 30_000) {
        self.layout = layout
        self.iouThreshold = iouThreshold
        self.classAgnostic = classAgnostic
        self.normalizedBoxes = normalizedBoxes
        self.maxDetections = maxDetections
        self.maxCandidates = maxCandidates
    }

    /// Ultralytics' default confidence threshold (`conf=0.25`), used when the options set none.
    public static let defaultConfidence: Float = 0.25

    func validate() throws(TaskError) {
        if let iou = iouThreshold, !(0 ... 1).contains(iou) {
            throw .invalidOptions("YOLO iouThreshold \(iou) is outside 0...1")
        }
        guard maxDetections > 0, maxCandidates > 0 else {
            throw .invalidOptions("YOLO maxDetections (\(maxDetections)) and maxCandidates (\(maxCandidates)) must be positive")
        }
    }
}

/// A YOLO layout checked against a model's outputs.
struct YOLODecoder: Sendable {
    let layout: YOLOOptions.Layout
    /// Class-score columns `C` and candidates `N`.
    let classes: Int, candidates: Int
    /// Position of the one output in the model's output list (always 0).
    let output = 0
    let options: YOLOOptions
    let iouThreshold: Float

    /// A decoded, kept candidate in input pixels: corners, confidence, class.
    struct Box: Equatable {
        var x1: Float, y1: Float, x2: Float, y2: Float
        var score: Float
        var classIndex: Int
    }

    /// Whether a model is read as a YOLO export when no option says so: no post-process op, and
    /// one rank-3 `[1, A, B]` output of a type the decoder reads, A and B both at least 5.
    static func recognizes(_ plan: Plan) -> Bool {
        let outputs = plan.graph.outputs.indices.map(plan.outputTensor)
        guard plan.detectionPostProcess == nil, outputs.count == 1, let o = outputs.first else { return false }
        return o.shape.count == 3 && o.shape[0] == 1 && min(o.shape[1], o.shape[2]) >= 5 && [.float32, .uint8, .int8].contains(o.dataType)
    }

    /// - Throws: `TaskError.unsupportedModel` when the model has not one `[1, A, B]` float32 or
    ///   8-bit output, or its layout cannot be decided (A = B) or does not fit (too few columns).
    init(_ options: YOLOOptions, outputs: [TensorDescriptor]) throws(TaskError) {
        try options.validate()
        let list = outputs.enumerated().map { "\($0) '\($1.name)' \($1.shape) \($1.dataType)" }.joined(separator: ", ")
        guard outputs.count == 1, let o = outputs.first, o.shape.count == 3, o.shape[0] == 1,
              [.float32, .uint8, .int8].contains(o.dataType) else {
            throw .unsupportedModel("a YOLO detector needs one output [1, 4 + classes, candidates] (v8) or [1, candidates, 5 + classes] (v5), float32 or 8-bit; the model has \(outputs.count): \(list)")
        }
        let a = o.shape[1], b = o.shape[2]
        let layout: YOLOOptions.Layout
        if let chosen = options.layout {
            layout = chosen
        } else if b == 6 && a > b {
            // Ultralytics reads [1, N, 6] as an end-to-end (NMS-free) export's final boxes.
            throw .unsupportedModel("YOLO output \(o.shape) looks like an end-to-end export (YOLOv10, YOLO26: N final boxes x1, y1, x2, y2, score, class), "
                + "which SwiftLite does not decode; for a one-class YOLOv5 export set ObjectDetectorOptions.yolo.layout to .v5")
        } else if a < b {
            layout = .v8
        } else if a > b {
            layout = .v5
        } else {
            throw .unsupportedModel("YOLO output \(o.shape) is square: set ObjectDetectorOptions.yolo.layout to .v5 or .v8")
        }
        switch layout {
        case .v8:
            guard a > 4 else { throw .unsupportedModel("YOLOv8 output \(o.shape) has \(a) rows; it needs 4 box rows and at least one class") }
            (classes, candidates) = (a - 4, b)
        case .v5:
            guard b > 5 else { throw .unsupportedModel("YOLOv5 output \(o.shape) has \(b) columns; it needs 4 box columns, objectness and at least one class") }
            (classes, candidates) = (b - 5, a)
        }
        self.layout = layout
        self.options = options
        iouThreshold = options.iouThreshold ?? (layout == .v8 ? 0.7 : 0.45)
    }

    /// The kept boxes of one output (`values`, dequantized, in the model's layout), best first, in
    /// pixels of an input `inputWidth` × `inputHeight`.
    func boxes(_ values: [Float], inputWidth: Int, inputHeight: Int, confidence: Float) -> [Box] {
        guard values.count == candidates * (classes + (layout == .v8 ? 4 : 5)) else { return [] }
        let n = candidates, columns = classes + 5
        // Element `field` of candidate `i`: v8 stores fields as rows, v5 as columns.
        func value(_ i: Int, _ field: Int) -> Float { layout == .v8 ? values[field * n + i] : values[i * columns + field] }
        let sx: Float = options.normalizedBoxes ? Float(inputWidth) : 1, sy: Float = options.normalizedBoxes ? Float(inputHeight) : 1
        var found = [Box]()
        for i in 0 ..< n {
            let first = layout == .v8 ? 4 : 5
            var objectness: Float = 1
            if layout == .v5 {
                objectness = value(i, 4)
                guard objectness > confidence else { continue }
            }
            // The best class: the first of equal maxima; NaN scores never win.
            var best = 0, top = -Float.infinity
            for c in 0 ..< classes {
                let s = value(i, first + c) * objectness
                if s > top { top = s; best = c }
            }
            guard top > confidence else { continue }
            let cx = value(i, 0) * sx, cy = value(i, 1) * sy, w = value(i, 2) * sx, h = value(i, 3) * sy
            found.append(Box(x1: cx - w / 2, y1: cy - h / 2, x2: cx + w / 2, y2: cy + h / 2, score: top, classIndex: best))
        }
        return suppress(found)
    }

    /// Ultralytics' class offset: each class's boxes move by `classIndex × 7680` pixels so that
    /// one NMS never compares boxes of different classes.
    static let classOffset: Float = 7680

    /// Hard NMS, as `torchvision.ops.nms` after Ultralytics' class offset: by descending score
    /// (equal scores in candidate order), a box is kept unless its IoU with a kept one exceeds
    /// the threshold; IoU in float32 on the offset corners.
    func suppress(_ boxes: [Box]) -> [Box] {
        var order = boxes.indices.sorted { boxes[$0].score != boxes[$1].score ? boxes[$0].score > boxes[$1].score : $0 < $1 }
        if order.count > options.maxCandidates { order.removeLast(order.count - options.maxCandidates) }
        let shifted = boxes.map { b -> Box in
            let d = options.classAgnostic ? 0 : Float(b.classIndex) * Self.classOffset
            return Box(x1: b.x1 + d, y1: b.y1 + d, x2: b.x2 + d, y2: b.y2 + d, score: b.score, classIndex: b.classIndex)
        }
        var kept = [Int]()
        for i in order {
            let a = shifted[i]
            let areaA = (a.x2 - a.x1) * (a.y2 - a.y1)
            let overlaps = kept.contains { k in
                let b = shifted[k]
                let w = max(0, min(a.x2, b.x2) - max(a.x1, b.x1)), h = max(0, min(a.y2, b.y2) - max(a.y1, b.y1))
                let intersection = w * h
                return intersection / ((b.x2 - b.x1) * (b.y2 - b.y1) + areaA - intersection) > iouThreshold
            }
            if !overlaps { kept.append(i) }
            if kept.count == options.maxDetections { break }
        }
        return kept.map { boxes[$0] }
    }
}
