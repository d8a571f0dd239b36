import Engine
import Foundation

/// Detects objects with an SSD-style `.tflite` model that ends in `TFLite_Detection_PostProcess`,
/// with MediaPipe Tasks semantics.
///
/// ```swift
/// var options = ObjectDetectorOptions(modelPath: "ssd_mobilenet.tflite")
/// options.scoreThreshold = 0.5
/// let detector = try ObjectDetector(options: options)
/// for d in try detector.detect(image: photo).detections {
///     print(d.categories[0].categoryName ?? "?", d.categories[0].score, d.boundingBox)
/// }
/// ```
///
/// The model's four outputs are boxes `[1, N, 4]` (ymin, xmin, ymax, xmax, normalised), classes
/// `[1, N]`, scores `[1, N]` and the detection count `[1]`, in any order: `DetectionOutputRoles`
/// tells them apart (metadata names, tensor names, the post-process op's slots, shapes) and
/// `roles` says which rule decided. Labels come from `options.labelsPath` when set, else the
/// model's metadata (`labelChoice`); a leading background line ("???") is skipped.
///
/// With `options.rawOutputDecoding`, a raw-output SSD (boxes and scores, no post-process op, such
/// as MediaPipe's BlazeFace models) is decoded with the given anchors and NMS instead. A YOLO
/// export (one `[1, 4 + C, N]` or `[1, N, 5 + C]` output, see `YOLOOptions`) is letterboxed and
/// decoded as Ultralytics' predictor does, boxes mapped back onto the image.
///
/// One detector may be used from many threads at once (one plan, a session per concurrent call).
public final class ObjectDetector: Sendable {
    /// The options as they were when the task was created: a private copy, never mutated after
    /// `init` (so reading it from any thread is safe).
    nonisolated(unsafe) private let frozen: ObjectDetectorOptions
    /// A copy of the options the task was created with; changing it does not change the task.
    public var options: ObjectDetectorOptions { frozen.copy() }
    private let model: TaskModel
    private let encoder: InputTensorEncoder
    private let labels: Labels?
    /// Which output is boxes, classes, scores and count, and the rule that decided it.
    public let roles: DetectionOutputRoles
    /// Where the labels came from (`labelsPath` wins over the metadata) and how they were fitted.
    public let labelChoice: LabelChoice
    private let filter: ResultFilter
    private let gate: StreamGate
    /// The anchors and decoding of a raw-output SSD (`options.rawOutputDecoding`), nil for post-process models.
    private let rawDecoder: SsdDecoder?
    /// The layout and NMS of a YOLO export, nil for other models.
    private let yoloDecoder: YOLODecoder?

    /// Creates a detector.
    /// - Throws: `TaskError.invalidOptions`, `TaskError.model`, `TaskError.unsupportedModel` when the
    ///   model does not have four outputs whose roles can be decided, `TaskError.invalidLabels`
    ///   when the labels cannot cover the classes the post-process op emits.
    public init(options: ObjectDetectorOptions) throws(TaskError) {
        try options.validate()
        let options = options.copy()
        frozen = options
        (model, encoder) = try TaskModel.imageTask(options.baseOptions, task: "an object detector")
        let outputs = model.graph.outputs.indices.map(model.outputDescriptor)
        if let raw = options.rawOutputDecoding {
            let decoder = try SsdDecoder(raw, outputs: outputs, task: "an object detector with rawOutputDecoding")
            (rawDecoder, yoloDecoder) = (decoder, nil)
            roles = DetectionOutputRoles(rawBoxes: decoder.boxesOutput, scores: decoder.scoresOutput)
        } else if options.yolo != nil || YOLODecoder.recognizes(model.plan) {
            let decoder = try YOLODecoder(options.yolo ?? YOLOOptions(), outputs: outputs)
            (rawDecoder, yoloDecoder) = (nil, decoder)
            roles = DetectionOutputRoles(yoloOutput: decoder.output)
        } else {
            (rawDecoder, yoloDecoder) = (nil, nil)
            roles = try DetectionOutputRoles(plan: model.plan, metadata: model.metadata)
        }
        var choice = try model.labels(path: options.labelsPath, limits: options.baseOptions.limits, output: roles.classes,
                                      type: .tensorValueLabels, locale: options.displayNamesLocale)
        if let raw = options.rawOutputDecoding {
            // Class c is score column c; a leading background line is skipped only when the file has one to spare.
            try choice.fit(classes: raw.boxes.numClasses, allowExtra: true, what: "the scores output")
        } else if let yolo = yoloDecoder {
            // Class c is class-score column c (COCO exports: 80 names, no background).
            try choice.fit(classes: yolo.classes, allowExtra: true, what: "the YOLO output's class scores")
        } else if let classes = Self.classCount(model.plan.detectionPostProcess) {
            // Class indices reach classes − 1; a label map may list a background line first.
            try choice.fit(classes: classes, allowExtra: true, what: "the detection post-process op")
        } else if var l = choice.labels, let first = l.names.first, LabelChoice.isBackground(first) {
            // No op to count the classes: skip a leading background line, as the post-process op never emits it.
            l.names.removeFirst()
            if let d = l.displayNames?.first, LabelChoice.isBackground(d) { l.displayNames?.removeFirst() }
            choice.labels = l
            choice.droppedBackground = first
        }
        labelChoice = choice
        let labels = choice.labels
        let unset: Float = yoloDecoder == nil ? -.greatestFiniteMagnitude : YOLOOptions.defaultConfidence
        filter = ResultFilter(
            threshold: options.scoreThreshold ?? model.metadata?.outputs[safe: roles.scores]?.scoreThreshold ?? unset,
            allowlist: options.categoryAllowlist, denylist: options.categoryDenylist, labels: labels, maxResults: options.maxResults)
        if labels == nil, !options.categoryAllowlist.isEmpty || !options.categoryDenylist.isEmpty {
            throw .invalidOptions("categoryAllowlist/categoryDenylist need labels, and the model has none (pass labelsPath)")
        }
        self.labels = labels
        gate = StreamGate(mode: options.runningMode)
    }

    /// The classes the post-process op can emit: its `num_classes`, else the class-score columns
    /// less the background column.
    static func classCount(_ op: DetectionPostProcessDescription?) -> Int? {
        guard let op else { return nil }
        if let n = op.numClasses, n > 0 { return n }
        return op.scoreColumns.map { $0 - 1 }.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Creates a detector in the image running mode with default options.
    public convenience init(modelPath: String) throws(TaskError) {
        try self.init(options: ObjectDetectorOptions(modelPath: modelPath))
    }

    /// Detects objects in one image (image running mode).
    ///
    /// Boxes are in pixels of the *stored* image (the unrotated frame), as MediaPipe projects its
    /// detections back onto the input image: for an image with orientation `.right` the model sees
    /// the upright picture, and each box is mapped back into the stored pixels.
    /// - Throws: `TaskError.invalidArgument` in another running mode or for a mirrored orientation.
    public func detect(image: MPImage) throws(TaskError) -> ObjectDetectorResult {
        try imageCall(image)
    }

    /// Detects objects in one image off the caller's actor (image running mode).
    @concurrent
    public func detect(image: MPImage) async throws(TaskError) -> ObjectDetectorResult {
        try imageCall(image)
    }

    private func imageCall(_ image: MPImage) throws(TaskError) -> ObjectDetectorResult {
        try gate.image(image, method: "detect(image:)", run)
    }

    /// Detects objects in one video frame; timestamps must increase from call to call.
    public func detect(videoFrame image: MPImage, timestampInMilliseconds: Int) throws(TaskError) -> ObjectDetectorResult {
        try videoCall(image, timestampInMilliseconds)
    }

    /// Detects objects in one video frame off the caller's actor; timestamps must increase.
    @concurrent
    public func detect(videoFrame image: MPImage, timestampInMilliseconds: Int) async throws(TaskError) -> ObjectDetectorResult {
        try videoCall(image, timestampInMilliseconds)
    }

    private func videoCall(_ image: MPImage, _ timestamp: Int) throws(TaskError) -> ObjectDetectorResult {
        try gate.videoFrame(image, timestamp: timestamp, method: "detect(videoFrame:timestampInMilliseconds:)", run)
    }

    /// Sends a live-stream frame; the result arrives on the delegate and `frozen.resultListener`
    /// on a serial queue. A frame that arrives while the previous one is still being processed is
    /// dropped.
    /// - Throws: for the wrong running mode, a timestamp that does not increase, or a mirrored
    ///   orientation — from this call itself.
    public func detectAsync(image: MPImage, timestampInMilliseconds: Int) throws(TaskError) {
        try gate.liveStreamFrame(image, timestamp: timestampInMilliseconds, method: "detectAsync(image:timestampInMilliseconds:)", { [self] image, t throws(TaskError) in try run(image, timestamp: t) },
                                 deliver: { [self] result in
                                     frozen.resultListener?(result, image, timestampInMilliseconds)
                                     let (value, error) = result.parts
                                     frozen.objectDetectorLiveStreamDelegate?.objectDetector(self, didFinishDetection: value, timestampInMilliseconds: timestampInMilliseconds, error: error)
                                 })
    }

    private func run(_ image: MPImage, timestamp: Int) throws(TaskError) -> ObjectDetectorResult {
        if let rawDecoder { return try runRaw(image, rawDecoder, timestamp: timestamp) }
        if let yoloDecoder { return try runYOLO(image, yoloDecoder, timestamp: timestamp) }
        let input = try encoder.encode(image.applyingOrientation(), crop: .scaleFill)
        let outputs = try model.run(input, outputs: 4)
        let boxes = outputs[roles.boxes], classes = outputs[roles.classes], scores = outputs[roles.scores], count = outputs[roles.count]
        let n = min(Self.truncated(count.first ?? 0), scores.count, classes.count, boxes.count / 4)
        // Boxes come out normalised in the upright frame; MediaPipe reports them in the stored one.
        let width = Float(image.width), height = Float(image.height)
        var detections = [Detection]()
        for i in 0 ..< n {
            let index = Self.truncated(classes[i])
            let name = labels?.name(index)
            guard filter.accepts(score: scores[i], index: index) else { continue }
            var ymin = boxes[i * 4], xmin = boxes[i * 4 + 1], ymax = boxes[i * 4 + 2], xmax = boxes[i * 4 + 3]
            if image.orientation != .up {
                let stored = RegionOfInterest(x: Double(xmin), y: Double(ymin), width: Double(xmax - xmin), height: Double(ymax - ymin))
                    .inStoredFrame(of: image.orientation)
                xmin = Float(stored.x); ymin = Float(stored.y)
                xmax = Float(stored.x + stored.width); ymax = Float(stored.y + stored.height)
            }
            // MediaPipe's pixel boxes: float32 products truncated toward zero, origins clamped at 0
            // (without shrinking the size), sizes capped at the image's.
            let box = BoundingBox(originX: max(0, Self.truncated(xmin * width)), originY: max(0, Self.truncated(ymin * height)),
                                  width: min(image.width, Self.truncated((xmax - xmin) * width)),
                                  height: min(image.height, Self.truncated((ymax - ymin) * height)))
            detections.append(Detection(boundingBox: box, categories: [
                Category(index: index, score: scores[i], categoryName: name, displayName: labels?.displayName(index) ?? ""),
            ]))
        }
        // The op already orders by score; keep its order among equal scores (a stable sort).
        detections = detections.enumerated().sorted {
            $0.element.categories[0].score != $1.element.categories[0].score
                ? $0.element.categories[0].score > $1.element.categories[0].score : $0.offset < $1.offset
        }.map(\.element)
        filter.cap(&detections)
        return ObjectDetectorResult(detections: detections, timestampInMilliseconds: timestamp)
    }

    /// A raw-output SSD: the image stretched to the input (as MediaPipe's object detector), decoded
    /// and suppressed as `rawOutputDecoding` says, then filtered, named and capped like the post-process path.
    private func runRaw(_ image: MPImage, _ decoder: SsdDecoder, timestamp: Int) throws(TaskError) -> ObjectDetectorResult {
        var detections = try decoder.detections(in: image, model: model, encoder: encoder, letterbox: false).compactMap { d -> Detection? in
            let c = d.categories[0]
            guard filter.accepts(score: c.score, index: c.index) else { return nil }
            var named = d
            named.categories[0] = Category(index: c.index, score: c.score, categoryName: labels?.name(c.index), displayName: labels?.displayName(c.index) ?? "")
            return named
        }
        filter.cap(&detections)
        return ObjectDetectorResult(detections: detections, timestampInMilliseconds: timestamp)
    }

    /// A YOLO export: the upright image letterboxed as Ultralytics' predictor does, decoded and
    /// suppressed (`YOLODecoder`, confidences above the score threshold), the boxes mapped back onto
    /// the image (`scale_boxes`) and into the stored frame, then named, filtered and capped.
    private func runYOLO(_ image: MPImage, _ decoder: YOLODecoder, timestamp: Int) throws(TaskError) -> ObjectDetectorResult {
        let upright = image.applyingOrientation()
        let (input, letterbox) = encoder.encodeYOLOLetterboxed(upright)
        let outputs = try model.run(input, outputs: 1)
        let found = decoder.boxes(outputs[0], inputWidth: encoder.width, inputHeight: encoder.height, confidence: filter.threshold)
        let w = Double(upright.width), h = Double(upright.height)
        var detections = [Detection]()
        for b in found where filter.accepts(score: b.score, index: b.classIndex) {
            var x1 = letterbox.imageX(b.x1), y1 = letterbox.imageY(b.y1), x2 = letterbox.imageX(b.x2), y2 = letterbox.imageY(b.y2)
            if image.orientation != .up {
                let r = RegionOfInterest(x: Double(x1) / w, y: Double(y1) / h, width: Double(x2 - x1) / w, height: Double(y2 - y1) / h)
                    .inStoredFrame(of: image.orientation)
                x1 = Float(r.x * Double(image.width)); y1 = Float(r.y * Double(image.height))
                x2 = Float((r.x + r.width) * Double(image.width)); y2 = Float((r.y + r.height) * Double(image.height))
            }
            // Ultralytics' boxes are float pixels; these are their corners rounded to whole pixels.
            let box = BoundingBox(originX: Self.rounded(x1), originY: Self.rounded(y1),
                                  width: Self.rounded(x2) - Self.rounded(x1), height: Self.rounded(y2) - Self.rounded(y1))
            detections.append(Detection(boundingBox: box, categories: [
                Category(index: b.classIndex, score: b.score, categoryName: labels?.name(b.classIndex),
                         displayName: labels?.displayName(b.classIndex) ?? ""),
            ]))
        }
        filter.cap(&detections)
        return ObjectDetectorResult(detections: detections, timestampInMilliseconds: timestamp)
    }

    /// `value` rounded to the nearest whole number, NaN as 0 and huge values clamped.
    static func rounded(_ value: Float) -> Int { truncated(value.rounded()) }

    /// `value` truncated toward zero (a C++ float-to-int cast), with NaN as 0 and huge values
    /// clamped: the outputs of an untrusted model must not trap.
    static func truncated(_ value: Float) -> Int {
        guard !value.isNaN else { return 0 }
        return Int(min(max(value, -1e9), 1e9))
    }
}
