import Foundation

/// Options of an `ObjectDetector` (MediaPipe's `ObjectDetectorOptions`).
///
/// A class, as MediaPipe's (`let options = ObjectDetectorOptions(); options.maxResults = 5`
/// compiles). `ObjectDetector(options:)` copies the options, so later changes to this object do
/// not affect a detector already created.
public final class ObjectDetectorOptions {
    public var baseOptions = BaseOptions()
    public var runningMode = RunningMode.image
    public var displayNamesLocale = "en"
    /// How many detections to return; any negative value returns all. 0 is an error.
    public var maxResults = -1
    /// Keep detections whose score is ≥ this. nil uses the model metadata's threshold, if any.
    public var scoreThreshold: Float?
    public var categoryAllowlist: [String] = []
    public var categoryDenylist: [String] = []
    /// A label file (one per line), used instead of any labels in the model's metadata. A leading
    /// `???` or `background` line, as in COCO label maps, stands for the background class the
    /// post-process op never outputs and is skipped when the file has a line to spare.
    public var labelsPath: String?
    /// Anchor, box-decoding and NMS options for a raw-output SSD (two outputs, boxes and scores,
    /// no `TFLite_Detection_PostProcess`), e.g. `SsdDecoding.face(inputSize:minScore:minSuppressionThreshold:)`.
    /// nil (the default) expects the post-process op's four outputs. Class indices are the score
    /// columns (labels are looked up by column; a leading background line is skipped only when the
    /// file has a line more than there are columns); `scoreThreshold`, the lists and
    /// `maxResults` apply after the decoding's own threshold and NMS.
    public var rawOutputDecoding: SsdDecoding?
    /// Decode the model as a YOLO export (`YOLOOptions`: layout, IoU threshold, class-agnostic
    /// NMS). nil still decodes a model whose one output is `[1, A, B]` (and that has no
    /// post-process op) as YOLO with the default options. With YOLO, `scoreThreshold` is the
    /// confidence threshold and defaults to Ultralytics' 0.25.
    public var yolo: YOLOOptions?
    /// Receives live-stream results, held weakly (as MediaPipe's delegate), on a serial queue.
    public weak var objectDetectorLiveStreamDelegate: (any ObjectDetectorLiveStreamDelegate)?
    /// Receives live-stream results on a serial queue (the result, the frame, its timestamp).
    public var resultListener: (@Sendable (Result<ObjectDetectorResult, TaskError>, MPImage, Int) -> Void)?

    /// Default options; set `baseOptions.modelAssetPath` (or `modelAssetBuffer`) before creating a task.
    public init() {}

    /// An independent instance with the same values (the base options copied too; the delegate
    /// is the same object, still held weakly).
    public func copy() -> ObjectDetectorOptions {
        let copy = ObjectDetectorOptions()
        copy.baseOptions = baseOptions.copy()
        copy.runningMode = runningMode
        copy.displayNamesLocale = displayNamesLocale
        copy.maxResults = maxResults
        copy.scoreThreshold = scoreThreshold
        copy.categoryAllowlist = categoryAllowlist
        copy.categoryDenylist = categoryDenylist
        copy.labelsPath = labelsPath
        copy.rawOutputDecoding = rawOutputDecoding
        copy.yolo = yolo
        copy.objectDetectorLiveStreamDelegate = objectDetectorLiveStreamDelegate
        copy.resultListener = resultListener
        return copy
    }

    func validate() throws(TaskError) {
        try ResultFilter.validate(maxResults: maxResults, scoreThreshold: scoreThreshold,
                                  allowlist: categoryAllowlist, denylist: categoryDenylist)
        try ResultFilter.validate(runningMode: runningMode,
                                  hasListener: resultListener != nil || objectDetectorLiveStreamDelegate != nil)
        try yolo?.validate()
        if yolo != nil && rawOutputDecoding != nil {
            throw .invalidOptions("set rawOutputDecoding (an SSD with anchors) or yolo, not both")
        }
    }
}

/// Receives an `ObjectDetector`'s live-stream results (MediaPipe's
/// `ObjectDetectorLiveStreamDelegate`), held weakly and called on a private serial queue. Not
/// `Sendable`, as MediaPipe's protocol is not (see `ImageClassifierLiveStreamDelegate`).
public protocol ObjectDetectorLiveStreamDelegate: AnyObject {
    func objectDetector(_ objectDetector: ObjectDetector, didFinishDetection result: ObjectDetectorResult?,
                        timestampInMilliseconds: Int, error: (any Error)?)
}
