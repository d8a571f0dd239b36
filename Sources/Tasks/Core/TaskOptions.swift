import Foundation

/// What the MediaPipe-style options classes share: made empty or for a model, with base options,
/// and a live-stream result listener that can feed an `AsyncStream`.
///
/// `ImageClassifierOptions`, `ObjectDetectorOptions` and `FaceDetectorOptions` conform.
public protocol TaskOptions: AnyObject {
    /// What the task returns for one image or frame.
    associatedtype TaskResult: Sendable & Equatable
    /// Default options; set `baseOptions.modelAssetPath` (or `modelAssetBuffer`) before creating a task.
    init()
    var baseOptions: BaseOptions { get set }
    /// Receives live-stream results on a serial queue (the result, the frame, its timestamp).
    var resultListener: (@Sendable (Result<TaskResult, TaskError>, MPImage, Int) -> Void)? { get set }
}

extension TaskOptions {
    /// Default options for the model file at `modelPath`.
    public init(modelPath: String) {
        self.init()
        baseOptions.modelAssetPath = modelPath
    }

    /// Options for a model held in memory (MediaPipe's `baseOptions.modelAssetBuffer`).
    public init(modelData: Data) {
        self.init()
        baseOptions.modelAssetBuffer = modelData
    }

    /// Routes live-stream results into an `AsyncStream` (setting `resultListener`) and returns it.
    ///
    /// ```swift
    /// let options = ImageClassifierOptions(modelPath: path)
    /// options.runningMode = .liveStream
    /// let results = options.makeLiveStreamResults()
    /// let classifier = try ImageClassifier(options: options)
    /// Task { @MainActor in for await r in results { model.show(r) } }
    /// ```
    /// - Parameter bufferingNewest: results kept while nobody reads (older ones are dropped).
    public func makeLiveStreamResults(bufferingNewest: Int = 1) -> AsyncStream<LiveStreamResult<TaskResult>> {
        let (stream, listener) = liveStream(of: TaskResult.self, bufferingNewest: bufferingNewest)
        resultListener = { result, _, timestamp in listener(result, timestamp) }
        return stream
    }
}

extension ImageClassifierOptions: TaskOptions {}
extension ObjectDetectorOptions: TaskOptions {}
extension FaceDetectorOptions: TaskOptions {}
