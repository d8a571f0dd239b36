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
    public var resultListener: (@Sendable (Result<ImageClassifierResult, TaskError>, MPImage, Int) -> Void)?

    public init(modelPath: String = "") {
        baseOptions.modelAssetPath = modelPath
    }

    func validate() throws(TaskError) {
        try ResultFilter.validate(maxResults: maxResults, scoreThreshold: scoreThreshold,
                                  allowlist: categoryAllowlist, denylist: categoryDenylist)
        try ResultFilter.validate(runningMode: runningMode, hasListener: resultListener != nil)
    }
}
