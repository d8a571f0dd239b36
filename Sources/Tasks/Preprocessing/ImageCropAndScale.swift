/// How an image is fitted to a model's input size (Vision's `VNImageCropAndScaleOption`).
public enum ImageCropAndScale: String, Sendable, CaseIterable, Codable {
    /// Scale the shorter side to the input, keeping the aspect ratio, and crop the centre
    /// (Vision's default for `VNCoreMLRequest`).
    case centerCrop
    /// Scale the whole image to fit inside the input, preserving aspect ratio; pad with black.
    case scaleFit
    /// Stretch the whole image to the input size (MediaPipe's behaviour; `ImageClassifier`'s default).
    case scaleFill
    /// Rotate the image 90° counterclockwise, then `scaleFit` (portrait images into landscape inputs).
    case scaleFitRotate90CCW
    /// Rotate the image 90° counterclockwise, then `scaleFill`.
    case scaleFillRotate90CCW
}

/// A rectangle in normalised coordinates, `x`, `y`, `width`, `height` in 0...1, origin top left.
///
/// `ImageClassifier` reads it in the coordinates of the *stored* pixels, as MediaPipe's
/// `ImageProcessingOptions.regionOfInterest`: the region is cut from the image as stored, then
/// the image's orientation is applied to it.
public struct RegionOfInterest: Sendable, Equatable, Codable {
    public var x: Double, y: Double, width: Double, height: Double
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    public static let full = RegionOfInterest(x: 0, y: 0, width: 1, height: 1)
}
