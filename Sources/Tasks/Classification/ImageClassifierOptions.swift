import Foundation

/// Options of an `ImageClassifier` (MediaPipe's `ImageClassifierOptions`).
public struct ImageClassifierOptions: Sendable {
    public var baseOptions = BaseOptions()
    public var runningMode = RunningMode.image
    /// Locale of the display names, when the model's metadata has translated label files.
    public var displayNamesLocale = "en"
    /// How many top categories to return per head; any negative value returns all. 0 is an error.
    public var maxResults = -1
    /// Keep categories whose score is ≥ this. nil uses the model metadata's threshold, if any (as
    /// MediaPipe's C++ and Python APIs do; MediaPipe's iOS API always sends its default 0).
    public var scoreThreshold: Float?
    /// Only these category names (mutually exclusive with `categoryDenylist`). Unknown names are
    /// ignored; a list with no known name does not filter.
    public var categoryAllowlist: [String] = []
    /// Never these category names. Unknown names are ignored.
    public var categoryDenylist: [String] = []
    /// How the image is fitted to the model's input (MediaPipe stretches: `.scaleFill`).
    public var cropAndScale = ImageCropAndScale.scaleFill
    /// A label file (one label per line). When set it is used instead of any labels in the
    /// model's metadata.
    public var labelsPath: String?
    /// The threshold when neither `scoreThreshold` nor the metadata sets one (the labeler's 0.0).
    var defaultScoreThreshold = -Float.greatestFiniteMagnitude
    /// Receives live-stream results, held weakly (as MediaPipe's delegate), on a serial queue.
    public weak var imageClassifierLiveStreamDelegate: (any ImageClassifierLiveStreamDelegate)?
    /// Receives live-stream results on a serial queue (the result, the frame, its timestamp).
    public var resultListener: (@Sendable (Result<ImageClassifierResult, TaskError>, MPImage, Int) -> Void)?

    public init(modelPath: String = "") {
        baseOptions.modelAssetPath = modelPath
    }

    /// Options for a model held in memory (MediaPipe's `baseOptions.modelAssetBuffer`).
    public init(modelData: Data) {
        baseOptions.modelAssetBuffer = modelData
    }

    /// Routes live-stream results into an `AsyncStream` (setting `resultListener`) and returns it.
    ///
    /// ```swift
    /// var options = ImageClassifierOptions(modelPath: path)
    /// options.runningMode = .liveStream
    /// let results = options.makeLiveStreamResults()
    /// let classifier = try ImageClassifier(options: options)
    /// Task { @MainActor in for await r in results { model.show(r) } }
    /// ```
    /// - Parameter bufferingNewest: results kept while nobody reads (older ones are dropped).
    public mutating func makeLiveStreamResults(bufferingNewest: Int = 1) -> AsyncStream<LiveStreamResult<ImageClassifierResult>> {
        let (stream, listener) = liveStream(of: ImageClassifierResult.self, bufferingNewest: bufferingNewest)
        resultListener = { result, _, timestamp in listener(result, timestamp) }
        return stream
    }

    func validate() throws(TaskError) {
        try ResultFilter.validate(maxResults: maxResults, scoreThreshold: scoreThreshold,
                                  allowlist: categoryAllowlist, denylist: categoryDenylist)
        try ResultFilter.validate(runningMode: runningMode,
                                  hasListener: resultListener != nil || imageClassifierLiveStreamDelegate != nil)
    }
}

/// Receives an `ImageClassifier`'s live-stream results (MediaPipe's
/// `ImageClassifierLiveStreamDelegate`). The classifier holds its delegate weakly and calls it on
/// a private serial queue; a `@MainActor` type implements the method `nonisolated` and hops to
/// the main actor with the (Sendable) result.
public protocol ImageClassifierLiveStreamDelegate: AnyObject, Sendable {
    func imageClassifier(_ imageClassifier: ImageClassifier, didFinishClassification result: ImageClassifierResult?,
                         timestampInMilliseconds: Int, error: TaskError?)
}
