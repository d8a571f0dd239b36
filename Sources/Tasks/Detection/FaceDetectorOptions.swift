import Foundation

/// Options of a `FaceDetector` (MediaPipe's `FaceDetectorOptions`).
///
/// A class, as MediaPipe's. `FaceDetector(options:)` copies the options, so later changes to this
/// object do not affect a detector already created.
public final class FaceDetectorOptions {
    public var baseOptions = BaseOptions()
    public var runningMode = RunningMode.image
    /// Faces scoring below this (0...1) are dropped before suppression.
    public var minDetectionConfidence: Float = 0.5
    /// Overlapping faces (intersection over union above this, 0...1) are merged into one.
    public var minSuppressionThreshold: Float = 0.3
    /// Receives live-stream results, held weakly (as MediaPipe's delegate), on a serial queue.
    public weak var faceDetectorLiveStreamDelegate: (any FaceDetectorLiveStreamDelegate)?
    /// Receives live-stream results on a serial queue (the result, the frame, its timestamp).
    public var resultListener: (@Sendable (Result<FaceDetectorResult, TaskError>, MPImage, Int) -> Void)?

    /// Default options; set `baseOptions.modelAssetPath` (or `modelAssetBuffer`) before creating a task.
    public init() {}

    /// An independent instance with the same values (the delegate is the same object, still held weakly).
    public func copy() -> FaceDetectorOptions {
        let copy = FaceDetectorOptions()
        copy.baseOptions = baseOptions.copy()
        copy.runningMode = runningMode
        copy.minDetectionConfidence = minDetectionConfidence
        copy.minSuppressionThreshold = minSuppressionThreshold
        copy.faceDetectorLiveStreamDelegate = faceDetectorLiveStreamDelegate
        copy.resultListener = resultListener
        return copy
    }

    func validate() throws(TaskError) {
        guard (0 ... 1).contains(minDetectionConfidence) else {
            throw .invalidOptions("minDetectionConfidence \(minDetectionConfidence) must be in 0...1")
        }
        guard (0 ... 1).contains(minSuppressionThreshold) else {
            throw .invalidOptions("minSuppressionThreshold \(minSuppressionThreshold) must be in 0...1")
        }
        try ResultFilter.validate(runningMode: runningMode,
                                  hasListener: resultListener != nil || faceDetectorLiveStreamDelegate != nil)
    }
}

/// Receives a `FaceDetector`'s live-stream results (MediaPipe's `FaceDetectorLiveStreamDelegate`),
/// held weakly and called on a private serial queue.
public protocol FaceDetectorLiveStreamDelegate: AnyObject {
    func faceDetector(_ faceDetector: FaceDetector, didFinishDetection result: FaceDetectorResult?,
                      timestampInMilliseconds: Int, error: (any Error)?)
}
