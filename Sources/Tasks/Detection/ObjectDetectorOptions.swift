/// Options of an `ObjectDetector` (MediaPipe's `ObjectDetectorOptions`).
public struct ObjectDetectorOptions: Sendable {
    public var baseOptions = BaseOptions()
    public var runningMode = RunningMode.image
    public var displayNamesLocale = "en"
    /// How many detections to return; −1 returns all. 0 is an error.
    public var maxResults = -1
    /// Keep detections whose score is ≥ this. nil uses the model metadata's threshold, if any.
    public var scoreThreshold: Float?
    public var categoryAllowlist: [String] = []
    public var categoryDenylist: [String] = []
    /// Labels when the model has no label metadata (one per line; a leading `???` line, as in COCO
    /// label maps, stands for the background class the model does not output and is skipped).
    public var labelsPath: String?
    /// Receives live-stream results, on a serial queue.
    public var resultListener: (@Sendable (Result<ObjectDetectorResult, TaskError>, MPImage, Int) -> Void)?

    public init(modelPath: String = "") {
        baseOptions.modelAssetPath = modelPath
    }

    func validate() throws(TaskError) {
        try ResultFilter.validate(maxResults: maxResults, scoreThreshold: scoreThreshold,
                                  allowlist: categoryAllowlist, denylist: categoryDenylist)
        try ResultFilter.validate(runningMode: runningMode, hasListener: resultListener != nil)
    }
}
