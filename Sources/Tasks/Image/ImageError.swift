/// Why an image could not be created, decoded, encoded or re-oriented.
///
/// Every decoder in SwiftLite reports failures through this type; none of them
/// crashes or exits on bad input. `description` is a complete sentence meant for
/// people, so `print(error)` is usually all an app needs.
///
/// ```swift
/// do {
///     let image = try MPImage(contentsOf: url)
///     print(image.width, image.height)
/// } catch let error as ImageError {
///     print(error)   // e.g. "Unsupported JPEG: CMYK color (...)"
/// }
/// ```
public enum ImageError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The data is not PNG, JPEG or BMP. `firstBytes` holds up to its first 8 bytes
    /// (empty for empty data).
    case unknownFormat(firstBytes: [UInt8])

    /// The data looks like `format` but is truncated or corrupt. `message` is the
    /// decoder's explanation (libpng's or libjpeg's own text, or the BMP decoder's).
    case corruptData(format: MPImage.Format, message: String)

    /// A well-formed file of a variant SwiftLite does not decode, such as a CMYK JPEG,
    /// an RLE-compressed BMP or an unusual bit depth. `feature` names it.
    case unsupported(format: MPImage.Format, feature: String)

    /// The image is larger than ``MPImage/maxDimension`` on a side or has more than
    /// ``MPImage/maxPixelCount`` pixels. Refused before any pixel memory is allocated.
    case dimensionsTooLarge(width: Int, height: Int)

    /// A decoder's header claims more than `limit` pixels (`Limits.maxImagePixels`), as a
    /// decompression bomb does. Refused from the header, before any pixel memory is allocated.
    case tooManyPixels(width: Int, height: Int, limit: Int)

    /// Width or height is zero or negative.
    case invalidDimensions(width: Int, height: Int)

    /// Raw pixels passed to ``MPImage/init(pixels:width:height:orientation:)`` do not
    /// hold exactly `width * height * 3` bytes.
    case pixelCountMismatch(expected: Int, actual: Int)

    /// ``MPImage/upright()`` was asked to apply a mirrored orientation. Like MediaPipe,
    /// SwiftLite supports rotations only.
    case unsupportedOrientation(MPImage.Orientation)

    /// The file at `path` could not be read; `reason` is the system's explanation.
    case fileUnreadable(path: String, reason: String)

    /// A pixel buffer whose rows do not fit its bytes (`bytesPerRow` too small, too few bytes).
    case invalidPixelBuffer(String)

    /// Encoding (``MPImage/pngData(fast:)``) failed; `message` is the encoder's explanation.
    case encodingFailed(format: MPImage.Format, message: String)

    /// A one-sentence explanation naming the problem and, where useful, what to do.
    public var description: String {
        switch self {
        case .unknownFormat(let bytes):
            if bytes.isEmpty {
                return "Unknown image format: the data is empty (0 bytes)."
            }
            let hex = bytes.map { byte -> String in
                let digits = String(byte, radix: 16, uppercase: true)
                return digits.count == 1 ? "0" + digits : digits
            }.joined(separator: " ")
            return "Unknown image format: the data starts with \(hex); "
                + "supported formats are PNG, JPEG and BMP."
        case .corruptData(let format, let message):
            return "Corrupt or truncated \(format) data: \(message)"
        case .unsupported(let format, let feature):
            return "Unsupported \(format) variant: \(feature)"
        case .dimensionsTooLarge(let width, let height):
            return "Image of \(width)x\(height) pixels is too large: the limits are "
                + "\(MPImage.maxDimension) pixels per side and \(MPImage.maxPixelCount) pixels in all."
        case .tooManyPixels(let width, let height, let limit):
            return "Image of \(width)x\(height) = \(width * height) pixels exceeds the limit of \(limit) "
                + "pixels (a decompression bomb?); raise Limits.maxImagePixels to decode it."
        case .invalidDimensions(let width, let height):
            return "Invalid image size \(width)x\(height): width and height must be positive."
        case .pixelCountMismatch(let expected, let actual):
            return "Wrong pixel buffer size: RGB8 pixels need \(expected) bytes "
                + "(width * height * 3), got \(actual)."
        case .unsupportedOrientation(let orientation):
            return "Unsupported orientation .\(orientation): mirrored orientations are not "
                + "supported (as in MediaPipe); only .up, .down, .left and .right can be applied."
        case .fileUnreadable(let path, let reason):
            return "Cannot read image file \(path): \(reason)"
        case .invalidPixelBuffer(let reason):
            return "Invalid pixel buffer: \(reason)"
        case .encodingFailed(let format, let message):
            return "\(format) encoding failed: \(message)"
        }
    }
}
