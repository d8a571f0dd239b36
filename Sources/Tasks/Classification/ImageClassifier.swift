import Engine
import Foundation

/// Classifies images with a `.tflite` model, with MediaPipe Tasks semantics.
///
/// ```swift
/// let classifier = try ImageClassifier(modelPath: "efficientnet_lite0.tflite")
/// let result = try classifier.classify(image: MPImage(contentsOf: URL(fileURLWithPath: "cat.jpg")))
/// print(result.classifications[0].categories[0].categoryName ?? "?")
/// ```
///
/// Every output of the model is a classification head (`[1, classes]` scores). Labels come from
/// `options.labelsPath` when set, else from the model's metadata (`labelChoices` says which); a
/// label file with one line more than classes whose first line is "background" or "???" has that
/// line skipped. Scores are the dequantized outputs as they
/// are (a model should end in softmax or logistic).
///
/// One classifier may be used from many threads at once: it holds one prepared plan, and each
/// concurrent call runs on a session of its own.
public final class ImageClassifier: Sendable {
    /// The options as they were when the task was created: a private copy, never mutated after
    /// `init` (so reading it from any thread is safe).
    nonisolated(unsafe) private let frozen: ImageClassifierOptions
    /// A copy of the options the task was created with; changing it does not change the task.
    public var options: ImageClassifierOptions { frozen.copy() }
    private let model: TaskModel
    private let encoder: InputTensorEncoder
    private let heads: [Head]
    /// For each output (head): where its labels came from (`labelsPath` wins over the metadata)
    /// and whether a leading background line was skipped.
    public let labelChoices: [LabelChoice]
    private let gate: StreamGate

    private struct Head: Sendable {
        let name: String?
        let labels: Labels?
        let filter: ResultFilter
    }

    /// Creates a classifier.
    /// - Throws: `TaskError.invalidOptions` (allow and deny lists both set, maxResults 0, ...),
    ///   `TaskError.model` if the model cannot be loaded, `TaskError.invalidLabels` if a label file
    ///   does not match an output.
    public init(options: ImageClassifierOptions) throws(TaskError) {
        try options.validate()
        let options = options.copy()
        frozen = options
        (model, encoder) = try TaskModel.imageTask(options.baseOptions, task: "an image classifier")
        var heads = [Head]()
        var choices = [LabelChoice]()
        for i in 0 ..< model.graph.outputs.count {
            let output = model.outputDescriptor(i)
            let classes = output.shape.last ?? 0
            guard output.elementCount == classes, classes > 0, [.float32, .uint8, .int8].contains(output.dataType) else {
                throw .unsupportedModel("output \(i) '\(output.name)' has shape \(output.shape) \(output.dataType), expected [1, classes] scores")
            }
            var choice = try model.labels(path: options.labelsPath, limits: options.baseOptions.limits, output: i,
                                          locale: options.displayNamesLocale)
            try choice.fit(classes: classes, allowExtra: false, what: "output \(i) '\(output.name)'")
            let labels = choice.labels
            choices.append(choice)
            if labels == nil, !options.categoryAllowlist.isEmpty || !options.categoryDenylist.isEmpty {
                throw .invalidOptions("categoryAllowlist/categoryDenylist need labels, and the model has none (pass labelsPath)")
            }
            let metadata = model.metadata?.outputs[safe: i]
            let filter = ResultFilter(
                threshold: options.scoreThreshold ?? metadata?.scoreThreshold ?? options.defaultScoreThreshold,
                allowlist: options.categoryAllowlist, denylist: options.categoryDenylist, labels: labels,
                maxResults: options.maxResults)
            heads.append(Head(name: metadata?.name, labels: labels, filter: filter))
        }
        self.heads = heads
        labelChoices = choices
        gate = StreamGate(mode: options.runningMode)
    }

    /// Creates a classifier in the image running mode with default options.
    public convenience init(modelPath: String) throws(TaskError) {
        try self.init(options: ImageClassifierOptions(modelPath: modelPath))
    }

    /// Classifies one image (image running mode).
    /// - Parameters:
    ///   - image: the image to classify.
    ///   - regionOfInterest: in normalised coordinates of the *stored* pixels, as
    ///     MediaPipe's `ImageProcessingOptions.regionOfInterest`; the image's orientation is then
    ///     applied to that region.
    /// - Throws: `TaskError.invalidArgument` in another running mode, for a mirrored orientation
    ///   (MediaPipe rejects them) or a region outside the image.
    public func classify(image: MPImage, regionOfInterest: RegionOfInterest = .full) throws(TaskError) -> ImageClassifierResult {
        try imageCall(image, regionOfInterest)
    }

    /// Classifies one image off the caller's actor (image running mode).
    @concurrent
    public func classify(image: MPImage, regionOfInterest: RegionOfInterest = .full) async throws(TaskError) -> ImageClassifierResult {
        try imageCall(image, regionOfInterest)
    }

    private func imageCall(_ image: MPImage, _ region: RegionOfInterest) throws(TaskError) -> ImageClassifierResult {
        try gate.image(image, method: "classify(image:)") { image, t throws(TaskError) in try run(image, region: region, timestamp: t) }
    }

    /// Classifies one video frame; timestamps must increase from call to call.
    public func classify(videoFrame image: MPImage, timestampInMilliseconds: Int, regionOfInterest: RegionOfInterest = .full) throws(TaskError) -> ImageClassifierResult {
        try videoCall(image, timestampInMilliseconds, regionOfInterest)
    }

    /// Classifies one video frame off the caller's actor; timestamps must increase.
    @concurrent
    public func classify(videoFrame image: MPImage, timestampInMilliseconds: Int, regionOfInterest: RegionOfInterest = .full) async throws(TaskError) -> ImageClassifierResult {
        try videoCall(image, timestampInMilliseconds, regionOfInterest)
    }

    private func videoCall(_ image: MPImage, _ timestamp: Int, _ region: RegionOfInterest) throws(TaskError) -> ImageClassifierResult {
        try gate.videoFrame(image, timestamp: timestamp, method: "classify(videoFrame:timestampInMilliseconds:)") { image, t throws(TaskError) in
            try run(image, region: region, timestamp: t)
        }
    }

    /// Sends a live-stream frame; the result arrives on the delegate and `frozen.resultListener`
    /// (on a serial queue). A frame that arrives while the previous one is still being processed
    /// is dropped.
    /// - Throws: for the wrong running mode, a timestamp that does not increase, or a mirrored
    ///   orientation — from this call itself, as MediaPipe's `classifyAsync` does.
    public func classifyAsync(image: MPImage, timestampInMilliseconds: Int, regionOfInterest: RegionOfInterest = .full) throws(TaskError) {
        try gate.liveStreamFrame(image, timestamp: timestampInMilliseconds, method: "classifyAsync(image:timestampInMilliseconds:)",
                                 { [self] image, t throws(TaskError) in try run(image, region: regionOfInterest, timestamp: t) },
                                 deliver: { [self] result in
                                     frozen.resultListener?(result, image, timestampInMilliseconds)
                                     let (value, error) = result.parts
                                     frozen.imageClassifierLiveStreamDelegate?.imageClassifier(
                                         self, didFinishClassification: value, timestampInMilliseconds: timestampInMilliseconds, error: error)
                                 })
    }

    /// Runs the model on `image` with its orientation applied (mirrored ones too: the callers
    /// that must refuse them have) and the crop option given (the options' by default).
    func run(_ image: MPImage, region: RegionOfInterest, timestamp: Int, crop: ImageCropAndScale? = nil) throws(TaskError) -> ImageClassifierResult {
        let input = try encoder.encode(image.applyingOrientation(), crop: crop ?? frozen.cropAndScale,
                                       region: try InputTensorEncoder.checked(region).inUprightFrame(of: image.orientation))
        let outputs = try model.run(input, outputs: heads.count)
        let classifications = heads.enumerated().map { i, head in
            Classifications(headIndex: i, headName: head.name, categories: select(outputs[i], head: head))
        }
        return ImageClassifierResult(classifications: classifications, timestampInMilliseconds: timestamp)
    }

    /// MediaPipe's post-processing: threshold and allow/deny filtering, then sort by score
    /// (ties: lower index first), then the top `maxResults`.
    private func select(_ scores: [Float], head: Head) -> [Category] {
        var kept = [Category]()
        for (index, score) in scores.enumerated() where head.filter.accepts(score: score, index: index) {
            kept.append(Category(index: index, score: score, categoryName: head.labels?.name(index),
                                 displayName: head.labels?.displayName(index) ?? ""))
        }
        kept.sort { $0.score != $1.score ? $0.score > $1.score : $0.index < $1.index }
        head.filter.cap(&kept)
        return kept
    }
}
