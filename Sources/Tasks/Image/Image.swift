import Engine
import Foundation

/// An 8-bit RGB image: the input type of SwiftLite's vision tasks (MediaPipe's `MPImage`; the
/// name keeps clear of `SwiftUI.Image`).
///
/// Pixels are stored interleaved (`R, G, B, R, G, B, ...`), row by row from the top,
/// with no padding: `pixels.count == width * height * 3`. Images decoded from PNG,
/// JPEG or BMP files hold the file's stored color values with any alpha channel
/// dropped and no color management applied (the same bytes Pillow gives for
/// `Image.open(path).convert("RGB")`, which is what TensorFlow Lite models are
/// usually trained on), with the file's EXIF orientation applied (JPEG APP1, PNG eXIf).
/// Camera and graphics buffers come in through ``PixelBuffer`` (RGB, RGBA, BGRA, ARGB,
/// gray, any row stride) and ``YUV420BiPlanarBuffer`` (NV12/NV21).
///
/// ```swift
/// let image = try MPImage(contentsOf: URL(fileURLWithPath: "cat.jpg"))
/// print(image.width, image.height)         // 512 341
/// let (r, g, b) = image.rgb(x: 10, y: 20)
/// ```
public struct MPImage: Sendable, Equatable {
    /// How the stored pixels must be rotated to appear upright, with the meaning of
    /// UIKit's `UIImage.Orientation` and MediaPipe's `MPImage.orientation`.
    ///
    /// For example `.right` means the stored pixels must be rotated 90° clockwise to
    /// be seen the right way up (a portrait photo from a phone held upright, EXIF
    /// orientation 6). ``MPImage/upright()`` applies the rotation (as MediaPipe: rotations
    /// only); ``MPImage/applyingOrientation()`` applies all eight (as Vision).
    ///
    /// ```swift
    /// let photo = try MPImage(contentsOf: url, orientation: .right)
    /// let upright = try photo.upright()      // width and height swapped, .up
    /// ```
    public enum Orientation: Sendable, Hashable, CaseIterable {
        /// Stored upright; nothing to do.
        case up
        /// Stored upside down: rotate 180° to display.
        case down
        /// Rotate the stored pixels 90° counterclockwise to display (EXIF 8).
        case left
        /// Rotate the stored pixels 90° clockwise to display (EXIF 6).
        case right
        /// `.up` mirrored horizontally (EXIF 2). Refused by ``MPImage/upright()`` and MediaPipe-style tasks.
        case upMirrored
        /// `.down` mirrored horizontally (EXIF 4). Refused by ``MPImage/upright()`` and MediaPipe-style tasks.
        case downMirrored
        /// `.left` mirrored (EXIF 5). Refused by ``MPImage/upright()`` and MediaPipe-style tasks.
        case leftMirrored
        /// `.right` mirrored (EXIF 7). Refused by ``MPImage/upright()`` and MediaPipe-style tasks.
        case rightMirrored
    }

    /// An encoded image format SwiftLite can read (and, for PNG, write).
    ///
    /// ```swift
    /// if MPImage.Format(detecting: data) == .jpeg { print("a JPEG") }
    /// ```
    public enum Format: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Portable Network Graphics, decoded with libpng.
        case png = "PNG"
        /// JPEG/JFIF, decoded with libjpeg(-turbo).
        case jpeg = "JPEG"
        /// Windows bitmap, decoded in Swift.
        case bmp = "BMP"

        /// The format's usual name, e.g. `"JPEG"`.
        public var description: String { rawValue }

        /// Detects the format from the data's leading magic bytes.
        ///
        /// ```swift
        /// let format = MPImage.Format(detecting: try Data(contentsOf: url))  // .png, .jpeg, .bmp or nil
        /// ```
        /// - Parameter data: The encoded image, or at least its first 8 bytes.
        /// - Returns: `nil` when the bytes match none of PNG (`89 50 4E 47 0D 0A 1A 0A`),
        ///   JPEG (`FF D8 FF`) or BMP (`42 4D`, "BM").
        public init?(detecting data: Data) {
            let head = [UInt8](data.prefix(8))
            if head == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] {
                self = .png
            } else if head.count >= 3, head[0] == 0xFF, head[1] == 0xD8, head[2] == 0xFF {
                self = .jpeg
            } else if head.count >= 2, head[0] == 0x42, head[1] == 0x4D {
                self = .bmp
            } else {
                return nil
            }
        }
    }

    /// The largest accepted width or height, in pixels.
    public static let maxDimension = 65_535
    /// The largest accepted `width * height` for raw pixels (2^28, about 268 megapixels,
    /// 805 MB as RGB8). Decoders apply the lower, configurable `Limits.maxImagePixels`
    /// instead, checked from the header before any pixel memory is allocated.
    public static let maxPixelCount = 1 << 28

    /// Interleaved RGB8 pixel bytes, top row first; `count == width * height * 3`.
    public let pixels: [UInt8]
    /// Width of the stored pixels, in pixels.
    public let width: Int
    /// Height of the stored pixels, in pixels.
    public let height: Int
    /// How the stored pixels must be rotated to appear upright.
    public let orientation: Orientation

    /// Creates an image from raw interleaved RGB8 pixels.
    ///
    /// ```swift
    /// let red = try MPImage(pixels: [255, 0, 0, 255, 0, 0], width: 2, height: 1)
    /// ```
    /// - Parameters:
    ///   - pixels: `width * height * 3` bytes, `R, G, B` per pixel, rows top to bottom.
    ///   - width: Width in pixels, at least 1.
    ///   - height: Height in pixels, at least 1.
    ///   - orientation: How the pixels must be rotated to appear upright; default `.up`.
    /// - Throws: ``ImageError/invalidDimensions(width:height:)`` for a non-positive side,
    ///   ``ImageError/dimensionsTooLarge(width:height:)`` beyond the limits, and
    ///   ``ImageError/pixelCountMismatch(expected:actual:)`` when the byte count is wrong.
    public init(pixels: [UInt8], width: Int, height: Int, orientation: Orientation = .up) throws {
        try MPImage.checkDimensions(width: width, height: height)
        let expected = width * height * 3
        guard pixels.count == expected else {
            throw ImageError.pixelCountMismatch(expected: expected, actual: pixels.count)
        }
        self.init(unchecked: pixels, width: width, height: height, orientation: orientation)
    }

    /// Reads and decodes a PNG, JPEG or BMP file; the format is detected from its bytes,
    /// not its name.
    ///
    /// ```swift
    /// let image = try MPImage(contentsOf: URL(fileURLWithPath: "/tmp/parrot.jpg"))
    /// ```
    /// - Parameters:
    ///   - url: A file URL.
    ///   - orientation: nil (the default) applies the file's EXIF orientation, as
    ///     ``init(data:orientation:limits:)`` describes; a value keeps the stored pixels with it.
    ///   - limits: the largest image the decoder accepts (see `Limits`).
    /// - Throws: ``ImageError/fileUnreadable(path:reason:)`` when the file cannot be read
    ///   (or `url` is not a file URL), and otherwise the errors of ``init(data:orientation:limits:)``.
    public init(contentsOf url: URL, orientation: Orientation? = nil, limits: Limits = .default) throws {
        guard url.isFileURL else {
            throw ImageError.fileUnreadable(path: url.absoluteString,
                                            reason: "only file URLs can be read")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ImageError.fileUnreadable(path: url.path,
                                            reason: MPImage.reason(for: error, path: url.path))
        }
        try self.init(data: data, orientation: orientation, limits: limits)
    }

    /// Decodes a PNG, JPEG or BMP image held in memory; the format is detected from
    /// the leading magic bytes.
    ///
    /// ```swift
    /// let image = try MPImage(data: pngBytes)
    /// ```
    /// - Parameters:
    ///   - data: The complete encoded file.
    ///   - orientation: nil (the default): the EXIF `Orientation` of a JPEG (APP1) or PNG
    ///     (`eXIf`) is applied to the pixels — all eight values, mirrored ones included — so
    ///     the image is upright as the camera meant, with orientation `.up` (no tag: `.up`).
    ///     A value: the stored pixels are kept as they are, with that orientation, and any
    ///     EXIF tag is ignored.
    ///   - limits: the largest image the decoder accepts (see `Limits`).
    /// - Throws: ``ImageError/unknownFormat(firstBytes:)`` for other data (including
    ///   empty data), ``ImageError/corruptData(format:message:)`` for truncated or
    ///   corrupt files, ``ImageError/unsupported(format:feature:)`` for variants such as
    ///   CMYK JPEGs or compressed BMPs, ``ImageError/dimensionsTooLarge(width:height:)``, and
    ///   ``ImageError/tooManyPixels(width:height:limit:)`` when the header claims more than
    ///   `limits.maxImagePixels` (a decompression bomb).
    public init(data: Data, orientation: Orientation? = nil, limits: Limits = .default) throws {
        guard let format = Format(detecting: data) else {
            throw ImageError.unknownFormat(firstBytes: [UInt8](data.prefix(8)))
        }
        let decoded: DecodedPixels
        switch format {
        case .png: decoded = try PNGDecoder.decode(data, maxPixels: limits.maxImagePixels)
        case .jpeg: decoded = try JPEGDecoder.decode(data, maxPixels: limits.maxImagePixels)
        case .bmp: decoded = try BMPDecoder.decode(data, maxPixels: limits.maxImagePixels)
        }
        let stored = MPImage(unchecked: decoded.pixels, width: decoded.width, height: decoded.height,
                             orientation: orientation ?? EXIF.orientation(in: data) ?? .up)
        self = orientation == nil ? stored.applyingOrientation() : stored
    }

    /// Builds an image from pixels a decoder or transform has already validated.
    init(unchecked pixels: [UInt8], width: Int, height: Int, orientation: Orientation) {
        assert(pixels.count == width * height * 3)
        self.pixels = pixels
        self.width = width
        self.height = height
        self.orientation = orientation
    }

    /// The color of one stored pixel (ignoring ``orientation``).
    ///
    /// ```swift
    /// let (r, g, b) = image.rgb(x: 0, y: 0)   // top-left pixel
    /// ```
    /// - Parameters:
    ///   - x: Column, `0 ..< width`.
    ///   - y: Row from the top, `0 ..< height`.
    /// - Returns: The red, green and blue bytes. Traps when `x` or `y` is out of range.
    public func rgb(x: Int, y: Int) -> (red: UInt8, green: UInt8, blue: UInt8) {
        precondition(x >= 0 && x < width && y >= 0 && y < height,
                     "pixel (\(x), \(y)) outside \(width)x\(height) image")
        let i = (y * width + x) * 3
        return (pixels[i], pixels[i + 1], pixels[i + 2])
    }

    /// Applies ``orientation``: returns the pixels rotated so that they appear upright,
    /// with orientation `.up`.
    ///
    /// `.down` rotates by 180°, `.right` by 90° clockwise and `.left` by 90°
    /// counterclockwise (the last two swap width and height). An `.up` image is returned
    /// unchanged.
    ///
    /// ```swift
    /// let stored = try MPImage(pixels: [1, 1, 1, 2, 2, 2], width: 2, height: 1, orientation: .right)
    /// let shown = try stored.upright()   // 1x2: pixel 1 on top, pixel 2 below
    /// ```
    /// - Returns: An `.up` image.
    /// - Throws: ``ImageError/unsupportedOrientation(_:)`` for the mirrored orientations,
    ///   which MediaPipe rejects too.
    public func upright() throws -> MPImage {
        guard !orientation.isMirrored else { throw ImageError.unsupportedOrientation(orientation) }
        return applyingOrientation()
    }

    /// Throws unless `width × height` is a valid image size of at most `maxPixels` pixels (a
    /// decoder passes `Limits.maxImagePixels`; raw pixels are held to ``maxPixelCount``).
    static func checkDimensions(width: Int, height: Int, maxPixels: Int? = nil) throws {
        guard width > 0, height > 0 else {
            throw ImageError.invalidDimensions(width: width, height: height)
        }
        guard width <= maxDimension, height <= maxDimension,
              width * height <= maxPixelCount || maxPixels != nil else {
            throw ImageError.dimensionsTooLarge(width: width, height: height)
        }
        if let maxPixels, width * height > maxPixels {
            throw ImageError.tooManyPixels(width: width, height: height, limit: maxPixels)
        }
    }

    /// A short reason for a failed read; Foundation's own text is vague on Linux
    /// (e.g. "NSCocoaErrorDomain error 256" for a directory).
    private static func reason(for error: Error, path: String) -> String {
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        if !files.fileExists(atPath: path, isDirectory: &isDirectory) {
            return "no such file"
        }
        if isDirectory.boolValue {
            return "it is a directory"
        }
        if !files.isReadableFile(atPath: path) {
            return "permission denied"
        }
        return error.localizedDescription
    }
}

/// What every decoder returns: validated dimensions and `width * height * 3` RGB bytes.
struct DecodedPixels {
    var width: Int
    var height: Int
    var pixels: [UInt8]

    /// The `width × height` image (checked by `MPImage.checkDimensions` first) whose RGB bytes
    /// `decode(buffer, count)` writes; `status` receives what `decode` returns. The pixels are kept
    /// only when that is `success`: a failed decode leaves its rows partly written.
    static func rgb<Status: Equatable>(width: Int, height: Int, maxPixels: Int, success: Status, status: inout Status,
                                       _ decode: (UnsafeMutablePointer<UInt8>?, Int) -> Status) throws -> DecodedPixels {
        try MPImage.checkDimensions(width: width, height: height, maxPixels: maxPixels)
        let count = width * height * 3
        var result = success
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            result = decode(buffer.baseAddress, count)
            // Keep none of a failed decode's rows (UInt8 needs no deinitialization, and zeroing a
            // hostile file's claimed size would cost time).
            initialized = result == success ? count : 0
        }
        status = result
        return DecodedPixels(width: width, height: height, pixels: pixels)
    }
}

/// The old name of ``MPImage``, kept so existing code compiles; it collides with `SwiftUI.Image`.
@available(*, deprecated, renamed: "MPImage")
public typealias Image = MPImage
