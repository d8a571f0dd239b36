import Foundation

/// Options of an `ObjectDetector` (MediaPipe's `ObjectDetectorOptions`).
public struct ObjectDetectorOptions: Sendable {
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
    /// Receives live-stream results, held weakly (as MediaPipe's delegate), on a serial queue.
    public weak var objectDetectorLiveStreamDelegate: (any ObjectDetectorLiveStreamDelegate)?
    /// Receives live-stream results on a serial queue (the result, the frame, its timestamp).
    public var resultListener: (@Sendable (Result<ObjectDetectorResult, TaskError>, MPImage, Int) -> Void)?

    public init(modelPath: String = "") {
        baseOptions.modelAssetPath = modelPath
    }

    /// Options for a model held in memory (MediaPipe's `baseOptions.modelAssetBuffer`).
    public init(modelData: Data) {
        baseOptions.modelAssetBuffer = modelData
    }

    /// Routes live-stream results into an `AsyncStream` (setting `resultListener`) and returns it.
    /// - Parameter bufferingNewest: results kept while nobody reads (older ones are dropped).
    public mutating func makeLiveStreamResults(bufferingNewest: Int = 1) -> AsyncStream<LiveStreamResult<ObjectDetectorResult>> {
        let (stream, listener) = liveStream(of: ObjectDetectorResult.self, bufferingNewest: bufferingNewest)
        resultListener = { result, _, timestamp in listener(result, timestamp) }
        return stream
    }

    func validate() throws(TaskError) {
        try ResultFilter.validate(maxResults: maxResults, scoreThreshold: scoreThreshold,
                                  allowlist: categoryAllowlist, denylist: categoryDenylist)
        try ResultFilter.validate(runningMode: runningMode,
                                  hasListener: resultListener != nil || objectDetectorLiveStreamDelegate != nil)
    }
}

/// Receives an `ObjectDetector`'s live-stream results (MediaPipe's
/// `ObjectDetectorLiveStreamDelegate`), held weakly and called on a private serial queue.
public protocol ObjectDetectorLiveStreamDelegate: AnyObject, Sendable {
    func objectDetector(_ objectDetector: ObjectDetector, didFinishDetection result: ObjectDetectorResult?,
                        timestampInMilliseconds: Int, error: TaskError?)
}
