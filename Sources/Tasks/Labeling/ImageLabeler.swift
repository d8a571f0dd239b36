import Foundation

/// Labels images with ML Kit semantics: every label at or above a confidence threshold, best
/// first, at most `maxResultCount`.
///
/// ```swift
/// let model = try AutoMLImageLabelerLocalModel(manifestPath: "Models/dog_breeds_automl/manifest.json")
/// let labeler = ImageLabeler.imageLabeler(options: try CustomImageLabelerOptions(localModel: model))
/// labeler.process(image) { labels, error in
///     for label in labels ?? [] { print(label.text, label.confidence) }
/// }
/// let labels = try labeler.results(in: image)     // the synchronous form
/// ```
public final class ImageLabeler: Sendable {
    public let options: ImageLabelerOptions
    private let classifier: ImageClassifier
    private let queue = DispatchQueue(label: "swiftlite.image-labeler")

    /// - Throws: `TaskError` when the model or its labels cannot be used, or the threshold is not
    ///   in 0...1. A `maxResultCount` that is not positive means 10, as ML Kit's
    ///   `MLKCustomImageLabelerOptions` ("if unset or set to an invalid value, 10 is used").
    public init(options: ImageLabelerOptions) throws(TaskError) {
        if let t = options.confidenceThreshold, !(0 ... 1).contains(t) {
            throw .invalidOptions("confidenceThreshold must be in 0...1, got \(t)")
        }
        self.options = options
        var c = ImageClassifierOptions(modelPath: options.localModel.modelPath)
        // An AutoML folder's dict.txt names the labels, whatever the model's metadata says.
        c.labelsPath = options.localModel.labelsPath
        // ML Kit's CustomImageLabelerOptions: unset → the model metadata's threshold, else 0.0.
        c.scoreThreshold = options.confidenceThreshold
        c.defaultScoreThreshold = 0
        c.maxResults = options.maxResultCount > 0 ? options.maxResultCount : 10
        c.baseOptions.limits = options.limits
        classifier = try ImageClassifier(options: c)
    }

    /// Where the labels came from: the AutoML `dict.txt` when the model has one, else the metadata.
    public var labelChoice: LabelChoice { classifier.labelChoices.first ?? LabelChoice(labels: nil, source: .none) }

    /// ML Kit's factory: `ImageLabeler.imageLabeler(options:)`.
    public static func imageLabeler(options: ImageLabelerOptions) throws(TaskError) -> ImageLabeler {
        try ImageLabeler(options: options)
    }

    /// The labels of `image`, highest confidence first (ML Kit's `results(in:)`).
    /// - Throws: `TaskError.invalidArgument` for a mirrored orientation, `TaskError.model` ...
    public func results(in image: MPImage) throws(TaskError) -> [ImageLabel] {
        let result = try classifier.classify(image: image)
        return (result.classifications.first?.categories ?? []).map {
            ImageLabel(text: $0.categoryName ?? "#\($0.index)", confidence: $0.score, index: $0.index)
        }
    }

    /// The labels of `image`; the same as `results(in:)`.
    public func process(_ image: MPImage) throws(TaskError) -> [ImageLabel] {
        try results(in: image)
    }

    /// Labels `image` off the caller's thread, ML Kit's way: `completion` gets the labels or the
    /// error (the other nil), on a private serial queue.
    public func process(_ image: MPImage, completion: @escaping @Sendable ([ImageLabel]?, TaskError?) -> Void) {
        queue.async { [self] in
            do throws(TaskError) { completion(try results(in: image), nil) } catch { completion(nil, error) }
        }
    }

    /// The labels of `image`, computed off the caller's actor.
    @concurrent
    public func results(in image: MPImage) async throws(TaskError) -> [ImageLabel] {
        let result = try await classifier.classify(image: image)
        return (result.classifications.first?.categories ?? []).map {
            ImageLabel(text: $0.categoryName ?? "#\($0.index)", confidence: $0.score, index: $0.index)
        }
    }
}
