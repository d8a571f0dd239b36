import Foundation

/// A packed pixel layout an app's camera or graphics stack hands over: the type parameter of
/// ``PixelBuffer``, so the format is part of the buffer's type.
public protocol PackedPixelFormat: Sendable {
    /// Bytes per pixel.
    static var bytesPerPixel: Int { get }
    /// The byte offsets of red, green and blue within one pixel.
    static var channelOffsets: (red: Int, green: Int, blue: Int) { get }
    /// The format's usual name, for messages.
    static var name: String { get }
}

/// Interleaved `R, G, B` (Core Video's `kCVPixelFormatType_24RGB`).
public enum RGB8: PackedPixelFormat {
    public static let bytesPerPixel = 3
    public static let channelOffsets = (red: 0, green: 1, blue: 2)
    public static let name = "RGB8"
}

/// `R, G, B, A` (alpha ignored).
public enum RGBA8: PackedPixelFormat {
    public static let bytesPerPixel = 4
    public static let channelOffsets = (red: 0, green: 1, blue: 2)
    public static let name = "RGBA8"
}

/// `B, G, R, A` in memory (`kCVPixelFormatType_32BGRA`, the iOS camera's usual format; alpha ignored).
public enum BGRA8: PackedPixelFormat {
    public static let bytesPerPixel = 4
    public static let channelOffsets = (red: 2, green: 1, blue: 0)
    public static let name = "BGRA8"
}

/// `A, R, G, B` in memory (`kCVPixelFormatType_32ARGB`; alpha ignored).
public enum ARGB8: PackedPixelFormat {
    public static let bytesPerPixel = 4
    public static let channelOffsets = (red: 1, green: 2, blue: 3)
    public static let name = "ARGB8"
}

/// One 8-bit luminance byte per pixel (`kCVPixelFormatType_OneComponent8`), replicated to R, G, B.
public enum Gray8: PackedPixelFormat {
    public static let bytesPerPixel = 1
    public static let channelOffsets = (red: 0, green: 0, blue: 0)
    public static let name = "Gray8"
}

/// Rows of packed pixels in format `Format`, each `bytesPerRow` bytes apart (rows may be padded,
/// as Core Video and Android's `Image.Plane` pad them).
///
/// ```swift
/// let buffer = try PixelBuffer<BGRA8>(bytes: frame, width: 1280, height: 720, bytesPerRow: 5120)
/// let image = try MPImage(buffer, orientation: .right)
/// ```
public struct PixelBuffer<Format: PackedPixelFormat>: Sendable {
    public let bytes: Data
    public let width: Int
    public let height: Int
    public let bytesPerRow: Int

    /// - Parameters:
    ///   - bytes: `height` rows of `width` pixels, `bytesPerRow` apart.
    ///   - width: pixels per row.
    ///   - height: rows.
    ///   - bytesPerRow: the row stride; nil means `width * Format.bytesPerPixel` (no padding).
    /// - Throws: ``ImageError/invalidDimensions(width:height:)``,
    ///   ``ImageError/dimensionsTooLarge(width:height:)``, or ``ImageError/invalidPixelBuffer(_:)``
    ///   when a row does not fit its stride or the bytes end before the last row.
    public init(bytes: Data, width: Int, height: Int, bytesPerRow: Int? = nil) throws(ImageError) {
        try MPImage.checkedDimensions(width: width, height: height)
        let stride = bytesPerRow ?? width * Format.bytesPerPixel
        try PixelBuffer.checkPlane(Format.name, bytes: bytes.count, rowBytes: width * Format.bytesPerPixel, stride: stride, rows: height)
        self.bytes = bytes
        self.width = width
        self.height = height
        self.bytesPerRow = stride
    }

    /// Checks that `rows` rows of `rowBytes` bytes, `stride` apart, fit in `bytes` bytes (the last
    /// row needs no padding after it).
    static func checkPlane(_ what: String, bytes: Int, rowBytes: Int, stride: Int, rows: Int) throws(ImageError) {
        guard stride >= rowBytes else {
            throw .invalidPixelBuffer("\(what) bytesPerRow \(stride) is less than a row's \(rowBytes) bytes")
        }
        let needed = stride * (rows - 1) + rowBytes
        guard bytes >= needed else {
            throw .invalidPixelBuffer("\(what) needs \(needed) bytes (\(rows) rows of \(rowBytes), \(stride) apart), got \(bytes)")
        }
    }
}

/// A YUV 4:2:0 bi-planar frame as cameras deliver it: a full-resolution luma plane and a
/// half-resolution plane of interleaved chroma pairs — `Cb, Cr` for NV12
/// (`kCVPixelFormatType_420YpCbCr8BiPlanar*`), `Cr, Cb` for NV21 (Android's camera default).
///
/// Converted with ITU-R BT.601 (Kr = 0.299, Kb = 0.114), in the range the buffer says:
/// - `.video` (`...VideoRange`): Y in 16...235, chroma in 16...240 around 128;
///   `R = 1.164383·(Y − 16) + 1.596027·(Cr − 128)`, `G = 1.164383·(Y − 16) − 0.391762·(Cb − 128) − 0.812968·(Cr − 128)`,
///   `B = 1.164383·(Y − 16) + 2.017232·(Cb − 128)`;
/// - `.full` (`...FullRange`, JPEG/JFIF): all of 0...255;
///   `R = Y + 1.402·(Cr − 128)`, `G = Y − 0.344136·(Cb − 128) − 0.714136·(Cr − 128)`, `B = Y + 1.772·(Cb − 128)`,
///
/// each rounded to the nearest integer and clamped to 0...255. Chroma is upsampled by replication
/// (each 2×2 block of pixels takes its chroma pair), as libyuv's `NV12ToARGB` does. Odd widths and
/// heights have a last chroma column/row of their own (`(width + 1) / 2` pairs per row).
public struct YUV420BiPlanarBuffer: Sendable {
    /// The order of the two chroma bytes.
    public enum ChromaOrder: Sendable, Hashable {
        /// `Cb, Cr` (U, V).
        case nv12
        /// `Cr, Cb` (V, U).
        case nv21
    }

    /// Which part of 0...255 the samples use.
    public enum Range: Sendable, Hashable {
        /// Luma 16...235, chroma 16...240 (most camera video).
        case video
        /// Luma and chroma 0...255 (JPEG; `...FullRange` camera formats).
        case full
    }

    public let width: Int
    public let height: Int
    public let chromaOrder: ChromaOrder
    public let range: Range
    public let luma: Data
    public let lumaBytesPerRow: Int
    public let chroma: Data
    public let chromaBytesPerRow: Int

    /// - Parameters:
    ///   - width: pixels per row.
    ///   - height: rows.
    ///   - chromaOrder: which of the two chroma bytes of a pair comes first (NV12: Cb, NV21: Cr).
    ///   - range: video (16...235) or full (0...255) range luma and chroma.
    ///   - luma: `height` rows of `width` bytes, `lumaBytesPerRow` apart.
    ///   - lumaBytesPerRow: the luma row stride; nil means `width`.
    ///   - chroma: `(height + 1) / 2` rows of `(width + 1) / 2` byte pairs, `chromaBytesPerRow`
    ///     apart.
    ///   - chromaBytesPerRow: the chroma row stride; nil means `2 · ((width + 1) / 2)`.
    /// - Throws: ``ImageError`` when the planes do not hold the rows their strides describe.
    public init(width: Int, height: Int, chromaOrder: ChromaOrder, range: Range,
                luma: Data, lumaBytesPerRow: Int? = nil, chroma: Data, chromaBytesPerRow: Int? = nil) throws(ImageError) {
        try MPImage.checkedDimensions(width: width, height: height)
        let chromaRow = 2 * ((width + 1) / 2)
        let lumaStride = lumaBytesPerRow ?? width, chromaStride = chromaBytesPerRow ?? chromaRow
        try PixelBuffer<Gray8>.checkPlane("luma plane", bytes: luma.count, rowBytes: width, stride: lumaStride, rows: height)
        try PixelBuffer<Gray8>.checkPlane("chroma plane", bytes: chroma.count, rowBytes: chromaRow, stride: chromaStride, rows: (height + 1) / 2)
        self.width = width; self.height = height
        self.chromaOrder = chromaOrder; self.range = range
        self.luma = luma; self.lumaBytesPerRow = lumaStride
        self.chroma = chroma; self.chromaBytesPerRow = chromaStride
    }

    /// NV12/NV21 in one contiguous buffer: `height` luma rows, then the chroma rows straight after
    /// them, all `bytesPerRow` apart (nil: `width` rounded up to even).
    public init(width: Int, height: Int, chromaOrder: ChromaOrder, range: Range, bytes: Data, bytesPerRow: Int? = nil) throws(ImageError) {
        let stride = bytesPerRow ?? 2 * ((width + 1) / 2)
        let lumaBytes = min(bytes.count, stride * max(height, 0))
        try self.init(width: width, height: height, chromaOrder: chromaOrder, range: range,
                      luma: bytes.prefix(lumaBytes), lumaBytesPerRow: stride,
                      chroma: bytes.dropFirst(lumaBytes), chromaBytesPerRow: stride)
    }
}

extension MPImage {
    /// An image from packed pixels (RGB, RGBA, BGRA, ARGB or gray), copied into RGB8.
    ///
    /// ```swift
    /// let image = try MPImage(PixelBuffer<BGRA8>(bytes: frame, width: 640, height: 480, bytesPerRow: 2560),
    ///                         orientation: .right)
    /// ```
    /// - Parameters:
    ///   - buffer: the packed pixels.
    ///   - orientation: how the buffer's pixels must be rotated to appear upright (a camera
    ///     buffer's sensor orientation); buffers carry no EXIF.
    public init<Format>(_ buffer: PixelBuffer<Format>, orientation: Orientation = .up) {
        let w = buffer.width, h = buffer.height, stride = buffer.bytesPerRow
        let step = Format.bytesPerPixel, (r, g, b) = Format.channelOffsets
        let rgb = buffer.bytes.withUnsafeBytes { (src: UnsafeRawBufferPointer) -> [UInt8] in
            [UInt8](unsafeUninitializedCapacity: w * h * 3) { dst, initialized in
                var o = 0
                for y in 0 ..< h {
                    var s = y * stride
                    for _ in 0 ..< w {
                        dst[o] = src[s + r]; dst[o + 1] = src[s + g]; dst[o + 2] = src[s + b]
                        o += 3
                        s += step
                    }
                }
                initialized = w * h * 3
            }
        }
        self.init(unchecked: rgb, width: w, height: h, orientation: orientation)
    }

    /// An image from an NV12/NV21 camera frame, converted to RGB8 as ``YUV420BiPlanarBuffer``
    /// describes (BT.601, the buffer's range, chroma replicated).
    public init(_ buffer: YUV420BiPlanarBuffer, orientation: Orientation = .up) {
        let w = buffer.width, h = buffer.height
        // Coefficients applied to (Y − yOffset) and (C − 128).
        let (yScale, yOffset, crR, cbG, crG, cbB): (Float, Float, Float, Float, Float, Float) = switch buffer.range {
        case .video: (255 / 219, 16, 1.402 * 255 / 224, 0.344136 * 255 / 224, 0.714136 * 255 / 224, 1.772 * 255 / 224)
        case .full: (1, 0, 1.402, 0.344136, 0.714136, 1.772)
        }
        let (cbAt, crAt) = buffer.chromaOrder == .nv12 ? (0, 1) : (1, 0)
        @inline(__always) func byte(_ v: Float) -> UInt8 { UInt8(min(max(v.rounded(), 0), 255)) }
        let rgb = buffer.luma.withUnsafeBytes { (luma: UnsafeRawBufferPointer) -> [UInt8] in
            buffer.chroma.withUnsafeBytes { (chroma: UnsafeRawBufferPointer) -> [UInt8] in
                [UInt8](unsafeUninitializedCapacity: w * h * 3) { dst, initialized in
                    var o = 0
                    for y in 0 ..< h {
                        let lumaRow = y * buffer.lumaBytesPerRow, chromaRow = (y / 2) * buffer.chromaBytesPerRow
                        for x in 0 ..< w {
                            let l = (Float(luma[lumaRow + x]) - yOffset) * yScale
                            let c = chromaRow + (x / 2) * 2
                            let cb = Float(chroma[c + cbAt]) - 128, cr = Float(chroma[c + crAt]) - 128
                            dst[o] = byte(l + crR * cr)
                            dst[o + 1] = byte(l - cbG * cb - crG * cr)
                            dst[o + 2] = byte(l + cbB * cb)
                            o += 3
                        }
                    }
                    initialized = w * h * 3
                }
            }
        }
        self.init(unchecked: rgb, width: w, height: h, orientation: orientation)
    }

    /// `checkDimensions` with a typed error.
    static func checkedDimensions(width: Int, height: Int) throws(ImageError) {
        guard width > 0, height > 0 else { throw .invalidDimensions(width: width, height: height) }
        guard width <= maxDimension, height <= maxDimension, width * height <= maxPixelCount else {
            throw .dimensionsTooLarge(width: width, height: height)
        }
    }
}
