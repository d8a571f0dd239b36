/// Options of an `ImageClassifier` (MediaPipe's `ImageClassifierOptions`).
public struct ImageClassifierOptions: Sendable {
    public var baseOptions = BaseOptions()
    public var runningMode = RunningMode.image
    /// Locale of the display names, when the model's metadata has translated label files.
    public var displayNamesLocale = "en"
    /// How many top categories to return per head; −1 returns all. 0 is an error.
    public var maxResults = -1
    /// Keep categories whose score is ≥ this. nil uses the model metadata's threshold, if any.
    public var scoreThreshold: Float?
    /// Only these category names (mutually exclusive with `categoryDenylist`).
    public var categoryAllowlist: [String] = []
    /// Never these category names.
    public var categoryDenylist: [String] = []
    /// How the image is fitted to the model's input (MediaPipe stretches: `.scaleFill`).
    public var cropAndScale = ImageCropAndScale.scaleFill
    /// Labels to use when the model has no label metadata (a path to a label file, one per line).
    public var labelsPath: String?
    /// Receives live-stream results, on a serial queue.
    public var resultListener: (@Sendable (Result<ImageClassifierResult, TaskError>, Image, Int) -> Void)?

    public init(modelPath: String = "") {
        baseOptions.modelAssetPath = modelPath
    }

    func validate() throws(TaskError) {
        guard categoryAllowlist.isEmpty || categoryDenylist.isEmpty else {
            throw .invalidOptions("categoryAllowlist and categoryDenylist are mutually exclusive; set at most one")
        }
        guard maxResults != 0, maxResults >= -1 else {
            throw .invalidOptions("maxResults must be -1 (all) or positive, got \(maxResults)")
        }
        if let t = scoreThreshold, !t.isFinite { throw .invalidOptions("scoreThreshold must be finite") }
        if runningMode == .liveStream, resultListener == nil {
            throw .invalidOptions("the liveStream running mode needs a resultListener")
        }
        if runningMode != .liveStream, resultListener != nil {
            throw .invalidOptions("a resultListener is only used in the liveStream running mode")
        }
    }
}
