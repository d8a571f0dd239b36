import Foundation
import Synchronization

/// A classifier model for Vision-style requests (Vision's `VNCoreMLModel`).
///
/// ```swift
/// let model = try VisionModel(modelPath: "efficientnet_lite0.tflite")
/// let request = VisionClassificationRequest(model: model)          // .centerCrop, as VNCoreMLRequest
/// try ImageRequestHandler(image: photo, orientation: .right).perform([request])
/// for o in request.results?.prefix(5) ?? [] { print(o.identifier, o.confidence) }
/// ```
public final class VisionModel: Sendable {
    let classifier: ImageClassifier

    /// Loads a `.tflite` classifier (labels from its metadata, or `labelsPath`).
    public init(modelPath: String, labelsPath: String? = nil) throws(TaskError) {
        let options = ImageClassifierOptions(modelPath: modelPath)
        options.labelsPath = labelsPath
        classifier = try ImageClassifier(options: options)
    }

    /// A model held in memory.
    public init(modelData: Data, labelsPath: String? = nil) throws(TaskError) {
        let options = ImageClassifierOptions(modelData: modelData)
        options.labelsPath = labelsPath
        classifier = try ImageClassifier(options: options)
    }
}

/// One class and its confidence (Vision's `VNClassificationObservation`).
public struct ClassificationObservation: Sendable, Equatable, Codable {
    /// The class label (its index as text when the model has no labels).
    public var identifier: String
    public var confidence: Float

    public init(identifier: String, confidence: Float) {
        self.identifier = identifier
        self.confidence = confidence
    }
}

/// Classifies an image with a `VisionModel` (Vision's `VNCoreMLRequest`): every class, highest
/// confidence first, in `results` after `ImageRequestHandler.perform`.
///
/// Vision's semantics, not MediaPipe's: the default crop is `.centerCrop`, and every one of the
/// eight orientations is applied, mirrored ones included.
public final class VisionClassificationRequest: Sendable {
    public let model: VisionModel
    private let state: Mutex<(crop: ImageCropAndScale, region: CGRect, results: [ClassificationObservation]?)>
    private let completionHandler: (@Sendable (VisionClassificationRequest, TaskError?) -> Void)?

    /// - Parameters:
    ///   - model: the classifier the request runs.
    ///   - completionHandler: called by `perform` after the request ran (with its error, if any).
    public init(model: VisionModel, completionHandler: (@Sendable (VisionClassificationRequest, TaskError?) -> Void)? = nil) {
        self.model = model
        self.completionHandler = completionHandler
        state = Mutex((.centerCrop, CGRect(x: 0, y: 0, width: 1, height: 1), nil))
    }

    /// How the image is fitted to the model's input; `.centerCrop` by default, as Vision's.
    public var imageCropAndScaleOption: ImageCropAndScale {
        get { state.withLock { $0.crop } }
        set { state.withLock { $0.crop = newValue } }
    }

    /// The part of the image the request looks at, as Vision's `regionOfInterest`: normalised to
    /// the oriented image (the orientation the handler applies), origin at the lower left;
    /// `(0, 0, 1, 1)`, the whole image, by default. The crop option then applies to this region.
    public var regionOfInterest: CGRect {
        get { state.withLock { $0.region } }
        set { state.withLock { $0.region = newValue } }
    }

    /// The observations of the last `perform`, best first; nil before it (or after it failed).
    public var results: [ClassificationObservation]? { state.withLock { $0.results } }

    func perform(on image: MPImage) throws(TaskError) {
        let (crop, roi) = state.withLock { ($0.crop, $0.region) }
        state.withLock { $0.results = nil }
        do {
            // Vision's region (lower-left origin, oriented image) as a top-left region of the
            // stored pixels, the frame `run` takes (it maps the region back through the orientation).
            let upright = RegionOfInterest(x: Double(roi.minX), y: 1 - Double(roi.maxY), width: Double(roi.width), height: Double(roi.height))
            let result = try model.classifier.run(image, region: upright.inStoredFrame(of: image.orientation), timestamp: 0, crop: crop)
            let observations = result.classifications.first?.categories.map {
                ClassificationObservation(identifier: $0.categoryName ?? "\($0.index)", confidence: $0.score)
            } ?? []
            state.withLock { $0.results = observations }
            completionHandler?(self, nil)
        } catch {
            completionHandler?(self, error)
            throw error
        }
    }
}

/// Runs requests on one image (Vision's `VNImageRequestHandler`).
public struct ImageRequestHandler: Sendable {
    public let image: MPImage
    /// As `CGImagePropertyOrientation`: how the stored pixels are shown; applied before any request.
    public let orientation: MPImage.Orientation

    /// - Parameters:
    ///   - image: the image every request of `perform` reads.
    ///   - orientation: nil uses the image's own orientation.
    public init(image: MPImage, orientation: MPImage.Orientation? = nil) {
        self.image = image
        self.orientation = orientation ?? image.orientation
    }

    /// Runs each request in order; stops at the first that fails.
    public func perform(_ requests: [VisionClassificationRequest]) throws(TaskError) {
        let oriented = MPImage(unchecked: image.pixels, width: image.width, height: image.height, orientation: orientation)
        for request in requests { try request.perform(on: oriented) }
    }
}
