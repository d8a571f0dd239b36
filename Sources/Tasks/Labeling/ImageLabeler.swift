import Foundation

/// Labels images with ML Kit semantics: every label at or above a confidence threshold, best
/// first (at most `maxResultCount` for custom and AutoML models).
///
/// ```swift
/// let labeler = ImageLabeler.imageLabeler()              // the base model
/// let image = VisionImage(image: try MPImage(contentsOf: photoURL))
/// image.orientation = .leftMirrored                        // a front camera's frame
/// labeler.process(image) { labels, error in
///     for label in labels ?? [] { print(label.text, label.confidence, label.index) }
/// }
/// let labels = try labeler.results(in: image)             // the synchronous form
/// ```
///
/// Creating a labeler never fails, as in ML Kit: a model that cannot be loaded (a missing file, a
/// bad AutoML manifest, a hosted model not downloaded, a threshold outside 0...1) is reported by
/// every `results(in:)` (thrown) and `process` (the completion's error). `init(options:)` throws
/// that error at once instead. All eight orientations are applied, mirrored ones included, as ML
/// Kit's `VisionImage.orientation` is.
public final class ImageLabeler: Sendable {
    /// The options as they were when the labeler was made: a private copy, never mutated after
    /// `init`.
    nonisolated(unsafe) private let frozen: ImageLabelerOptions
    /// The classifier, or why there is none.
    private let loaded: Result<ImageClassifier, TaskError>
    private let queue = DispatchQueue(label: "swiftlite.image-labeler")

    /// A copy of the options the labeler was made with.
    public var options: ImageLabelerOptions { frozen.copy() }

    /// The file name of the base model in the Tasks module's resources.
    static let baseModelName = "efficientnet_lite0_int8.tflite"

    /// The base model `ImageLabeler.imageLabeler()` uses: the ImageNet EfficientNet-Lite0 (int8,
    /// 1000 labels in its metadata) shipped as a resource of the Tasks module, so an app that
    /// depends on SwiftLite finds it. nil when no copy is found.
    ///
    /// Looked for where SwiftPM puts the module's resource bundle: next to the program
    /// (`Bundle.main`, or the executable's real folder when it was reached through a link), next
    /// to a loaded bundle (a test bundle), then in this package's sources. `Bundle.module` is not
    /// used: its accessor stops the process when the bundle is missing.
    public static var baseModelPath: String? {
        let folders = ["SwiftLite_Tasks.resources", "SwiftLite_Tasks.bundle", "SwiftLite_Tasks.bundle/Contents/Resources"]
        var places = [Bundle.main.bundleURL,
                      URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath().deletingLastPathComponent()]
        places += Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        var candidates = places.flatMap { place in folders.map { place.appendingPathComponent($0).appendingPathComponent(baseModelName) } }
        // This file is Sources/Tasks/Labeling/ImageLabeler.swift; the resource is Sources/Tasks/Resources/.
        candidates.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Resources").appendingPathComponent(baseModelName))
        return candidates.first { FileManager.default.fileExists(atPath: $0.path) }?.path
    }

    /// - Throws: the `TaskError` the labeler would report: the model or its labels cannot be used,
    ///   or the threshold is not in 0...1. A `maxResultCount` that is not positive means 10, as
    ///   ML Kit's `MLKCustomImageLabelerOptions` ("if unset or set to an invalid value, 10 is used").
    public convenience init(options: ImageLabelerOptions) throws(TaskError) {
        self.init(loading: options)
        if case .failure(let error) = loaded { throw error }
    }

    private init(loading options: ImageLabelerOptions) {
        frozen = options.copy()
        do throws(TaskError) {
            loaded = .success(try Self.classifier(for: frozen))
        } catch {
            loaded = .failure(error)
        }
    }

    /// ML Kit's factory for the base model: `ImageLabeler.imageLabeler()`.
    public static func imageLabeler() -> ImageLabeler {
        ImageLabeler(loading: ImageLabelerOptions())
    }

    /// ML Kit's factory: `ImageLabeler.imageLabeler(options:)`. Never fails; a model that cannot
    /// be loaded is the error of every call.
    public static func imageLabeler(options: ImageLabelerOptions) -> ImageLabeler {
        ImageLabeler(loading: options)
    }

    /// The classifier that computes the labels for `options`' model.
    private static func classifier(for options: ImageLabelerOptions) throws(TaskError) -> ImageClassifier {
        let threshold = options.confidenceThreshold?.floatValue
        if let t = threshold, !(0 ... 1).contains(t) {
            throw .invalidOptions("confidenceThreshold must be in 0...1, got \(t)")
        }
        let model: LocalModel
        switch options.source {
        case .base:
            guard let path = baseModelPath else {
                throw .invalidOptions("the base model \(baseModelName) was not found: install the SwiftLite_Tasks.resources folder next to the program")
            }
            model = LocalModel(path: path)
        case .local(let local):
            model = local
        case .autoML(let manifestPath):
            model = try LocalModel(manifestPath: manifestPath)
        case .remote(let name):
            model = try ModelManager.modelManager().downloadedAutoMLModel(named: name)
        }
        let c = ImageClassifierOptions(modelPath: model.modelPath)
        // An AutoML folder's dict.txt names the labels, whatever the model's metadata says.
        c.labelsPath = model.labelsPath
        c.baseOptions.limits = options.limits
        if options.source == .base {
            // ML Kit's base labeler: an unset threshold is 0.5; every label above it is returned.
            c.scoreThreshold = threshold ?? 0.5
            c.maxResults = -1
        } else {
            // ML Kit's CustomImageLabelerOptions: unset → the model metadata's threshold, else 0.0.
            c.scoreThreshold = threshold
            c.defaultScoreThreshold = 0
            c.maxResults = options.maxResultCount > 0 ? options.maxResultCount : 10
        }
        return try ImageClassifier(options: c)
    }

    /// Where the labels came from: the AutoML `dict.txt` when the model has one, else the
    /// metadata (`.none` when the model could not be loaded).
    public var labelChoice: LabelChoice {
        (try? loaded.get())?.labelChoices.first ?? LabelChoice(labels: nil, source: .none)
    }

    /// The labels of `image`, highest confidence first (ML Kit's `results(in:)`), with the
    /// image's orientation applied (mirrored ones too).
    /// - Throws: the labeler's load error, or `TaskError.model` when the model fails to run.
    public func results(in image: VisionImage) throws(TaskError) -> [ImageLabel] {
        try results(in: image.orientedImage)
    }

    /// The labels of `image` with its orientation applied (mirrored ones too).
    public func results(in image: MPImage) throws(TaskError) -> [ImageLabel] {
        try labels(of: image)
    }

    private func labels(of image: MPImage) throws(TaskError) -> [ImageLabel] {
        let classifier = try loaded.get()
        let result = try classifier.run(image, region: .full, timestamp: 0)
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
    public func process(_ image: VisionImage, completion: @escaping @Sendable ([ImageLabel]?, TaskError?) -> Void) {
        process(image.orientedImage, completion: completion)
    }

    /// Labels `image` off the caller's thread: `completion` gets the labels or the error (the
    /// other nil), on a private serial queue.
    public func process(_ image: MPImage, completion: @escaping @Sendable ([ImageLabel]?, TaskError?) -> Void) {
        queue.async { [self] in
            do throws(TaskError) { completion(try results(in: image), nil) } catch { completion(nil, error) }
        }
    }

    /// The labels of `image`, computed off the caller's actor.
    @concurrent
    public func results(in image: MPImage) async throws(TaskError) -> [ImageLabel] {
        try labels(of: image)
    }
}

/// An image to label, as ML Kit's `VisionImage`: the pixels and a settable orientation (all
/// eight `UIImage.Orientation` cases, mirrored ones included).
///
/// ```swift
/// let image = VisionImage(buffer: frame)        // a PixelBuffer<BGRA8> from a camera
/// image.orientation = .leftMirrored             // the front camera held in portrait
/// ```
public final class VisionImage {
    private let image: MPImage
    /// How the stored pixels must be turned (and, for the mirrored cases, flipped) to appear
    /// upright. Starts as the `MPImage`'s orientation, or `.up` for a buffer.
    public var orientation: MPImage.Orientation

    /// An image (ML Kit's `VisionImage(image:)` with a `UIImage`).
    public init(image: MPImage) {
        self.image = image
        orientation = image.orientation
    }

    /// Packed pixels (ML Kit's `VisionImage(buffer:)` with a `CMSampleBuffer`).
    public init<Format>(buffer: PixelBuffer<Format>) {
        image = MPImage(buffer)
        orientation = .up
    }

    /// A bi-planar YUV 4:2:0 camera frame (ML Kit's `VisionImage(buffer:)`).
    public init(buffer: YUV420BiPlanarBuffer) {
        image = MPImage(buffer)
        orientation = .up
    }

    /// The stored pixels with the current `orientation`.
    var orientedImage: MPImage {
        orientation == image.orientation ? image
            : MPImage(unchecked: image.pixels, width: image.width, height: image.height, orientation: orientation)
    }
}
