import Foundation

/// Labels images with ML Kit semantics: every label above a confidence threshold, best first.
///
/// ```swift
/// let labeler = try ImageLabeler(options: ImageLabelerOptions(
///     localModel: try LocalModel(manifestFolder: "Models/dog_breeds_automl"), confidenceThreshold: 0.3))
/// for label in try labeler.process(image) { print(label.text, label.confidence) }
/// ```
public final class ImageLabeler: @unchecked Sendable {
    public let options: ImageLabelerOptions
    private let classifier: ImageClassifier
    private let queue = DispatchQueue(label: "swiftlite.image-labeler")

    /// - Throws: `TaskError` when the model or its labels cannot be used, or the threshold is not in 0...1.
    public init(options: ImageLabelerOptions) throws(TaskError) {
        guard (0 ... 1).contains(options.confidenceThreshold) else {
            throw .invalidOptions("confidenceThreshold must be in 0...1, got \(options.confidenceThreshold)")
        }
        guard options.maxResultCount > 0 else { throw .invalidOptions("maxResultCount must be positive") }
        self.options = options
        var c = ImageClassifierOptions(modelPath: options.localModel.modelPath)
        c.labelsPath = options.localModel.labelsPath
        c.scoreThreshold = options.confidenceThreshold
        c.maxResults = options.maxResultCount
        c.baseOptions.limits = options.limits
        classifier = try ImageClassifier(options: c)
    }

    /// The labels of `image`, highest confidence first.
    public func process(_ image: Image) throws(TaskError) -> [ImageLabel] {
        let result = try classifier.classify(image: image)
        return (result.classifications.first?.categories ?? []).map {
            ImageLabel(text: $0.categoryName ?? "#\($0.index)", confidence: $0.score, index: $0.index)
        }
    }

    /// Labels `image` off the caller's thread; `completion` runs on a serial queue.
    public func process(_ image: Image, completion: @escaping @Sendable (Result<[ImageLabel], TaskError>) -> Void) {
        queue.async { [self] in
            do throws(TaskError) { completion(.success(try process(image))) } catch { completion(.failure(error)) }
        }
    }
}
