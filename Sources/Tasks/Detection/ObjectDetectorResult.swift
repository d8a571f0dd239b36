import Foundation

/// A box in pixels of the stored image (MediaPipe's unrotated frame).
public struct BoundingBox: Sendable, Equatable, Codable {
    public var originX: Int, originY: Int, width: Int, height: Int
    public init(originX: Int, originY: Int, width: Int, height: Int) {
        self.originX = originX; self.originY = originY; self.width = width; self.height = height
    }
}

/// One detected object.
public struct Detection: Sendable, Equatable, Codable {
    public var boundingBox: BoundingBox
    /// The object's categories, best first (one for SSD models).
    public var categories: [Category]
    /// Points of the object normalised to the image (a face's eyes, nose, mouth and ears from
    /// `FaceDetector`); nil for detectors without keypoints.
    public var keypoints: [NormalizedKeypoint]?

    public init(boundingBox: BoundingBox, categories: [Category], keypoints: [NormalizedKeypoint]? = nil) {
        self.boundingBox = boundingBox
        self.categories = categories
        self.keypoints = keypoints
    }
}

/// What `ObjectDetector` returns for one image: detections sorted by score, best first.
public struct ObjectDetectorResult: Sendable, Equatable, Codable {
    public var detections: [Detection]
    public var timestampInMilliseconds: Int

    public init(detections: [Detection], timestampInMilliseconds: Int = 0) {
        self.detections = detections
        self.timestampInMilliseconds = timestampInMilliseconds
    }
}

extension BoundingBox {
    /// The box as MediaPipe iOS gives it (a `CGRect` in pixels of the stored image).
    public var cgRect: CGRect { CGRect(x: originX, y: originY, width: width, height: height) }
    /// `CGRect`'s accessors, for code written against MediaPipe's `boundingBox: CGRect`.
    public var origin: CGPoint { cgRect.origin }
    public var size: CGSize { cgRect.size }
    public var minX: CGFloat { cgRect.minX }
    public var minY: CGFloat { cgRect.minY }
    public var maxX: CGFloat { cgRect.maxX }
    public var maxY: CGFloat { cgRect.maxY }
    public var midX: CGFloat { cgRect.midX }
    public var midY: CGFloat { cgRect.midY }
}
