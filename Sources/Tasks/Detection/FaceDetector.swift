import Engine
import Foundation

/// Detects faces with MediaPipe's BlazeFace models (`face_detection_short_range.tflite`, 128×128
/// input; `face_detection_full_range_sparse.tflite`, 192×192), with MediaPipe Tasks semantics.
///
/// ```swift
/// let detector = try FaceDetector(modelPath: "face_detection_short_range.tflite")
/// for face in try detector.detect(image: photo).detections {
///     print(face.categories[0].score, face.boundingBox, face.keypoints?[0] ?? "")  // keypoint 0: left eye
/// }
/// ```
///
/// The pipeline is MediaPipe's `FaceDetectorGraph`: the image is letterboxed into the input (its
/// aspect ratio kept, black around it; see `Letterbox`), the model's raw boxes and scores are
/// decoded against SSD anchors chosen by the input size (`SsdDecoding.face`), scores below
/// `minDetectionConfidence` dropped, overlapping faces merged by weighted non-max suppression,
/// and the result projected back onto the image.
///
/// One detector may be used from many threads at once (one plan, a session per concurrent call).
public final class FaceDetector: Sendable {
    /// The options as they were when the task was created: a private copy, never mutated after
    /// `init` (so reading it from any thread is safe).
    nonisolated(unsafe) private let frozen: FaceDetectorOptions
    /// A copy of the options the task was created with; changing it does not change the task.
    public var options: FaceDetectorOptions { frozen.copy() }
    private let model: TaskModel
    private let encoder: InputTensorEncoder
    private let decoder: SsdDecoder
    private let gate: StreamGate

    /// Creates a face detector.
    /// - Throws: `TaskError.invalidOptions`, `TaskError.model`, and `TaskError.unsupportedModel`
    ///   for a model whose input size is not one of MediaPipe's face models' (128×128, 192×192) or
    ///   whose outputs are not the boxes and scores that size implies.
    public init(options: FaceDetectorOptions) throws(TaskError) {
        try options.validate()
        let options = options.copy()
        frozen = options
        (model, encoder) = try TaskModel.imageTask(options.baseOptions, task: "a face detector")
        guard encoder.width == encoder.height,
              let decoding = SsdDecoding.face(inputSize: encoder.width, minScore: options.minDetectionConfidence,
                                              minSuppressionThreshold: options.minSuppressionThreshold) else {
            throw .unsupportedModel("a face detector needs MediaPipe's face model input, 128x128 (short range) or 192x192 "
                + "(full range); this model's input is \(encoder.width)x\(encoder.height), whose anchors are not known")
        }
        decoder = try SsdDecoder(decoding, outputs: model.graph.outputs.indices.map(model.outputDescriptor), task: "a face detector")
        gate = StreamGate(mode: options.runningMode)
    }

    /// Creates a face detector in the image running mode with default options.
    public convenience init(modelPath: String) throws(TaskError) {
        try self.init(options: FaceDetectorOptions(modelPath: modelPath))
    }

    /// Detects faces in one image (image running mode).
    ///
    /// Boxes are in pixels of the *stored* image and keypoints normalised to it (MediaPipe's
    /// unrotated frame): for an image with orientation `.right` the model sees the upright
    /// picture, and each box and point is mapped back.
    /// - Throws: `TaskError.invalidArgument` in another running mode or for a mirrored orientation.
    public func detect(image: MPImage) throws(TaskError) -> FaceDetectorResult {
        try imageCall(image)
    }

    /// Detects faces in one image off the caller's actor (image running mode).
    @concurrent
    public func detect(image: MPImage) async throws(TaskError) -> FaceDetectorResult {
        try imageCall(image)
    }

    private func imageCall(_ image: MPImage) throws(TaskError) -> FaceDetectorResult {
        try gate.image(image, method: "detect(image:)", run)
    }

    /// Detects faces in one video frame; timestamps must increase from call to call.
    public func detect(videoFrame image: MPImage, timestampInMilliseconds: Int) throws(TaskError) -> FaceDetectorResult {
        try videoCall(image, timestampInMilliseconds)
    }

    /// Detects faces in one video frame off the caller's actor; timestamps must increase.
    @concurrent
    public func detect(videoFrame image: MPImage, timestampInMilliseconds: Int) async throws(TaskError) -> FaceDetectorResult {
        try videoCall(image, timestampInMilliseconds)
    }

    private func videoCall(_ image: MPImage, _ timestamp: Int) throws(TaskError) -> FaceDetectorResult {
        try gate.videoFrame(image, timestamp: timestamp, method: "detect(videoFrame:timestampInMilliseconds:)", run)
    }

    /// Sends a live-stream frame; the result arrives on the delegate and `resultListener` on a
    /// serial queue. A frame that arrives while the previous one is still being processed is dropped.
    /// - Throws: for the wrong running mode, a timestamp that does not increase, or a mirrored
    ///   orientation — from this call itself.
    public func detectAsync(image: MPImage, timestampInMilliseconds: Int) throws(TaskError) {
        try gate.liveStreamFrame(image, timestamp: timestampInMilliseconds, method: "detectAsync(image:timestampInMilliseconds:)", { [self] image, t throws(TaskError) in try run(image, timestamp: t) },
                                 deliver: { [self] result in
                                     frozen.resultListener?(result, image, timestampInMilliseconds)
                                     let (value, error) = result.parts
                                     frozen.faceDetectorLiveStreamDelegate?.faceDetector(self, didFinishDetection: value, timestampInMilliseconds: timestampInMilliseconds, error: error)
                                 })
    }

    private func run(_ image: MPImage, timestamp: Int) throws(TaskError) -> FaceDetectorResult {
        FaceDetectorResult(detections: try decoder.detections(in: image, model: model, encoder: encoder, letterbox: true),
                           timestampInMilliseconds: timestamp)
    }
}
