import Foundation

/// Options of an `ImageClassifier` (MediaPipe's `ImageClassifierOptions`).
///
/// A class, as MediaPipe's, so the guide's lines compile as written:
///
/// ```swift
/// let options = ImageClassifierOptions()
/// options.baseOptions.modelAssetPath = Bundle.main.path(forResource: "model", ofType: "tflite")
/// options.maxResults = 5
/// let imageClassifier = try ImageClassifier(options: options)
/// ```
///
/// `ImageClassifier(options:)` copies the options (`copy()`), so changing this object afterwards
/// (another running mode for a second classifier, say) leaves the first classifier as it was.
public final class ImageClassifierOptions {
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

    /// Default options; set `baseOptions.modelAssetPath` (or `modelAssetBuffer`) before creating a task.
    public init() {}

    /// An independent instance with the same values (the base options copied too; the delegate
    /// is the same object, still held weakly).
    public func copy() -> ImageClassifierOptions {
        let copy = ImageClassifierOptions()
        copy.baseOptions = baseOptions.copy()
        copy.runningMode = runningMode
        copy.displayNamesLocale = displayNamesLocale
        copy.maxResults = maxResults
        copy.scoreThreshold = scoreThreshold
        copy.categoryAllowlist = categoryAllowlist
        copy.categoryDenylist = categoryDenylist
        copy.cropAndScale = cropAndScale
        copy.labelsPath = labelsPath
        copy.defaultScoreThreshold = defaultScoreThreshold
        copy.imageClassifierLiveStreamDelegate = imageClassifierLiveStreamDelegate
        copy.resultListener = resultListener
        return copy
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
/// a private serial queue.
///
/// Not `Sendable`, as MediaPipe's Objective-C protocol is not: the guide's
/// `class P: NSObject, ImageClassifierLiveStreamDelegate` conforms as written in Swift 5 and 6
/// modes. A `@MainActor` type implements the method `nonisolated` and hops to the main actor
/// with the (Sendable) result.
public protocol ImageClassifierLiveStreamDelegate: AnyObject {
    func imageClassifier(_ imageClassifier: ImageClassifier, didFinishClassification result: ImageClassifierResult?,
                         timestampInMilliseconds: Int, error: (any Error)?)
}
