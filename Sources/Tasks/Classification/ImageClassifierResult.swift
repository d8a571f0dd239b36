import Foundation

/// The categories of one output head of a classifier, best first.
public struct Classifications: Sendable, Equatable, Codable {
    public var headIndex: Int
    /// The output tensor's name from the model metadata, if any.
    public var headName: String?
    public var categories: [Category]

    public init(headIndex: Int, headName: String? = nil, categories: [Category]) {
        self.headIndex = headIndex
        self.headName = headName
        self.categories = categories
    }
}

/// What `ImageClassifier` returns for one image.
public struct ImageClassifierResult: Sendable, Equatable, Codable {
    /// One entry per output head.
    public var classifications: [Classifications]
    /// The frame's timestamp (0 in image mode).
    public var timestampInMilliseconds: Int

    public init(classifications: [Classifications], timestampInMilliseconds: Int = 0) {
        self.classifications = classifications
        self.timestampInMilliseconds = timestampInMilliseconds
    }

    /// Vision-style top-k text: `(0.37) cliff, drop, drop-off`, one line per category.
    public func visionStyleDescription(head: Int = 0) -> String {
        guard classifications.indices.contains(head) else { return "" }
        return classifications[head].categories.map { c in
            "(\(String(format: "%.2f", c.score))) \(c.label)"
        }.joined(separator: "\n")
    }
}

/// The classifications of one image or frame (MediaPipe's `ClassificationResult`).
public struct ClassificationResult: Sendable, Equatable {
    /// One entry per output head.
    public var classifications: [Classifications]
    public var timestampInMilliseconds: Int

    public init(classifications: [Classifications], timestampInMilliseconds: Int) {
        self.classifications = classifications
        self.timestampInMilliseconds = timestampInMilliseconds
    }
}

extension ImageClassifierResult {
    /// MediaPipe iOS's shape: `result.classificationResult.classifications.first?.categories`
    /// (the same values as `classifications`).
    public var classificationResult: ClassificationResult {
        ClassificationResult(classifications: classifications, timestampInMilliseconds: timestampInMilliseconds)
    }
}
