import CJPEGShim
import Foundation

/// JPEG decoding with libjpeg(-turbo) through the `CJPEGShim` C target, whose
/// setjmp-based error manager turns libjpeg's fatal errors (which would otherwise
/// call `exit()`) into status codes and messages.
///
/// Decoding uses libjpeg's defaults, as Pillow does: accurate integer IDCT
/// (`JDCT_ISLOW`) and fancy upsampling, full scale. Baseline and progressive
/// streams are supported; grayscale images are replicated to RGB, YCbCr and RGB
/// JPEGs are converted to RGB. CMYK and YCCK JPEGs are rejected. EXIF orientation is
/// not read. Data that ends before the last scanline is an error (libjpeg would
/// otherwise pad the image with gray); other recoverable corruption warnings are
/// tolerated, again like Pillow.
enum JPEGDecoder {
    static func decode(_ data: Data) throws -> DecodedPixels {
        guard let decoder = swl_jpeg_create() else {
            throw ImageError.corruptData(format: .jpeg,
                                         message: "out of memory creating the JPEG decoder")
        }
        defer { swl_jpeg_destroy(decoder) }

        return try data.withUnsafeBytes { raw -> DecodedPixels in
            let base = raw.bindMemory(to: UInt8.self).baseAddress
            var info = swl_jpeg_info()
            try check(swl_jpeg_read_header(decoder, base, raw.count, &info), decoder)

            switch info.color_space {
            case SWL_JPEG_CS_GRAYSCALE, SWL_JPEG_CS_YCBCR, SWL_JPEG_CS_RGB:
                break
            case SWL_JPEG_CS_CMYK:
                throw ImageError.unsupported(
                    format: .jpeg, feature: "CMYK color (\(info.components) components); "
                        + "only grayscale, YCbCr and RGB JPEGs are decoded. "
                        + "Convert the file to RGB first.")
            case SWL_JPEG_CS_YCCK:
                throw ImageError.unsupported(
                    format: .jpeg, feature: "YCCK color (Adobe CMYK, \(info.components) "
                        + "components); only grayscale, YCbCr and RGB JPEGs are decoded. "
                        + "Convert the file to RGB first.")
            default:
                throw ImageError.unsupported(
                    format: .jpeg, feature: "unknown color space with \(info.components) "
                        + "components; only grayscale, YCbCr and RGB JPEGs are decoded.")
            }

            let width = Int(info.width)
            let height = Int(info.height)
            try Image.checkDimensions(width: width, height: height)
            let count = width * height * 3
            var status = SWL_JPEG_OK
            let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                status = swl_jpeg_decode_rgb(decoder, buffer.baseAddress, count)
                // On failure the bytes are partly written; zero them so the array is
                // fully initialized before it is discarded.
                if status != SWL_JPEG_OK {
                    buffer.initialize(repeating: 0)
                }
                initialized = count
            }
            try check(status, decoder)
            return DecodedPixels(width: width, height: height, pixels: pixels)
        }
    }

    private static func check(_ status: swl_jpeg_status,
                              _ decoder: OpaquePointer) throws {
        guard status != SWL_JPEG_OK else { return }
        let message = String(cString: swl_jpeg_message(decoder))
        switch status {
        case SWL_JPEG_UNSUPPORTED:
            throw ImageError.unsupported(format: .jpeg, feature: message)
        case SWL_JPEG_TRUNCATED:
            throw ImageError.corruptData(format: .jpeg, message: "truncated: \(message)")
        case SWL_JPEG_NO_MEMORY:
            throw ImageError.corruptData(format: .jpeg, message: "out of memory: \(message)")
        default:
            throw ImageError.corruptData(format: .jpeg, message: message)
        }
    }
}
