import Engine
import Foundation

/// Classifies images with a `.tflite` model, with MediaPipe Tasks semantics.
///
/// ```swift
/// var options = ImageClassifierOptions(modelPath: "efficientnet_lite0.tflite")
/// options.maxResults = 5
/// let classifier = try ImageClassifier(options: options)
/// let result = try classifier.classify(image: Image(contentsOf: URL(fileURLWithPath: "cat.jpg")))
/// print(result.classifications[0].categories[0].categoryName ?? "?")
/// ```
///
/// Every output of the model is a classification head (`[1, classes]` scores). Labels come from
/// the model's metadata, or from `options.labelsPath`. Scores are the dequantized outputs as they
/// are (a model should end in softmax or logistic).
public final class ImageClassifier: @unchecked Sendable {
    public let options: ImageClassifierOptions
    private let model: TaskModel
    private let encoder: InputTensorEncoder
    private let heads: [(name: String?, labels: Labels?, classes: Int)]
    private let filter: ResultFilter
    private let gate: StreamGate

    /// Creates a classifier.
    /// - Throws: `TaskError.invalidOptions` (allow and deny lists both set, maxResults 0, ...),
    ///   `TaskError.model` if the model cannot be loaded, `TaskError.invalidLabels` if a label file
    ///   does not match an output.
    public init(options: ImageClassifierOptions) throws(TaskError) {
        try options.validate()
        self.options = options
        model = try TaskModel(options.baseOptions)
        guard model.graph.inputs.count == 1 else {
            throw .unsupportedModel("an image classifier needs exactly one input, the model has \(model.graph.inputs.count)")
        }
        encoder = try InputTensorEncoder(input: model.inputDescriptor(), metadata: model.metadata?.inputs.first)
        var heads = [(name: String?, labels: Labels?, classes: Int)]()
        for i in 0 ..< model.graph.outputs.count {
            let output = model.outputDescriptor(i)
            let classes = output.shape.last ?? 0
            guard output.elementCount == classes, classes > 0, [.float32, .uint8, .int8].contains(output.dataType) else {
                throw .unsupportedModel("output \(i) '\(output.name)' has shape \(output.shape) \(output.dataType), expected [1, classes] scores")
            }
            var labels = try model.metadataLabels(output: i, locale: options.displayNamesLocale)
            if labels == nil, let path = options.labelsPath { labels = try Labels(contentsOf: path, limits: options.baseOptions.limits) }
            if let l = labels, l.names.count != classes {
                throw .invalidLabels("\(l.names.count) labels for output \(i) '\(output.name)' with \(classes) classes")
            }
            heads.append((model.metadata?.outputs[safe: i]?.name, labels, classes))
        }
        filter = ResultFilter(
            threshold: options.scoreThreshold ?? model.metadata?.outputs.first?.scoreThreshold ?? -.greatestFiniteMagnitude,
            allow: Set(options.categoryAllowlist), deny: Set(options.categoryDenylist), maxResults: options.maxResults)
        if heads.contains(where: { $0.labels == nil }), filter.usesNames {
            throw .invalidOptions("categoryAllowlist/categoryDenylist need labels, and the model has none (pass labelsPath)")
        }
        self.heads = heads
        gate = StreamGate(mode: options.runningMode)
    }

    /// Classifies one image (image running mode).
    public func classify(image: Image, regionOfInterest: RegionOfInterest = .full) throws(TaskError) -> ImageClassifierResult {
        try gate.checkMode(.image, method: "classify(image:)")
        return try run(image, region: regionOfInterest, timestamp: 0)
    }

    /// Classifies one video frame; timestamps must increase from call to call.
    public func classify(videoFrame image: Image, timestampInMilliseconds: Int, regionOfInterest: RegionOfInterest = .full) throws(TaskError) -> ImageClassifierResult {
        try gate.checkMode(.video, method: "classify(videoFrame:timestampInMilliseconds:)")
        try gate.advance(to: timestampInMilliseconds)
        return try run(image, region: regionOfInterest, timestamp: timestampInMilliseconds)
    }

    /// Sends a live-stream frame; the result arrives on `options.resultListener` (on a serial
    /// queue). A frame that arrives while the previous one is still being processed is dropped.
    /// - Throws: for the wrong running mode or a timestamp that does not increase.
    public func classifyAsync(image: Image, timestampInMilliseconds: Int, regionOfInterest: RegionOfInterest = .full) throws(TaskError) {
        try gate.checkMode(.liveStream, method: "classifyAsync(image:timestampInMilliseconds:)")
        try gate.advance(to: timestampInMilliseconds)
        gate.submit({ [self] () throws(TaskError) in try run(image, region: regionOfInterest, timestamp: timestampInMilliseconds) },
                    deliver: { [self] result in options.resultListener?(result, image, timestampInMilliseconds) })
    }

    private func run(_ image: Image, region: RegionOfInterest, timestamp: Int) throws(TaskError) -> ImageClassifierResult {
        let upright: Image
        do { upright = try image.upright() } catch { throw .invalidArgument("\(error)") }
        let input = try encoder.encode(upright, crop: options.cropAndScale, region: region)
        let outputs = try model.run(input, outputs: heads.count)
        let classifications = heads.enumerated().map { i, head in
            Classifications(headIndex: i, headName: head.name, categories: select(outputs[i], labels: head.labels))
        }
        return ImageClassifierResult(classifications: classifications, timestampInMilliseconds: timestamp)
    }

    /// MediaPipe's post-processing: threshold and allow/deny filtering, then sort by score
    /// (ties: lower index first), then the top `maxResults`.
    private func select(_ scores: [Float], labels: Labels?) -> [Category] {
        var kept = scores.enumerated().compactMap { index, score -> Category? in
            let name = labels?.name(index)
            guard filter.accepts(score: score, name: name) else { return nil }
            return Category(index: index, score: score, categoryName: name, displayName: labels?.displayName(index) ?? "")
        }
        kept.sort { $0.score != $1.score ? $0.score > $1.score : $0.index < $1.index }
        filter.cap(&kept)
        return kept
    }
}
