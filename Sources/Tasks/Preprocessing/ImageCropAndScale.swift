/// How an image is fitted to a model's input size (as Vision's `imageCropAndScaleOption`).
public enum ImageCropAndScale: String, Sendable, CaseIterable {
    /// Take the largest centred region with the input's aspect ratio, then scale it.
    case centerCrop
    /// Scale the whole image to fit inside the input, preserving aspect ratio; pad with black.
    case scaleFit
    /// Stretch the whole image to the input size (MediaPipe's behaviour; the default).
    case scaleFill
}

/// A rectangle in normalised coordinates of the upright image: `x`, `y`, `width`, `height` in 0...1.
public struct RegionOfInterest: Sendable, Equatable {
    public var x: Double, y: Double, width: Double, height: Double
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    public static let full = RegionOfInterest(x: 0, y: 0, width: 1, height: 1)
}
