import CJPEGShim
import Engine
import Foundation

/// JPEG decoding with libjpeg(-turbo) through the `CJPEGShim` C target, whose
/// setjmp-based error manager turns libjpeg's fatal errors (which would otherwise
/// call `exit()`) into status codes and messages.
///
/// Decoding uses libjpeg's defaults, as Pillow does: accurate integer IDCT
/// (`JDCT_ISLOW`) and fancy upsampling, full scale. Baseline and progressive
/// streams are supported; grayscale images are replicated to RGB, YCbCr and RGB
/// JPEGs are converted to RGB. CMYK and YCCK JPEGs are rejected. EXIF orientation is
/// not read. Data that ends before the last scanline, scan data that stops short,
/// bad Huffman codes and lost restart markers are errors (libjpeg would otherwise
/// make the missing pixels up); other warnings (extraneous bytes before a marker,
/// unknown JFIF versions) are tolerated, like Pillow. The header's size is held to
/// `Limits.maxImagePixels` and libjpeg's working memory to 8 bytes per pixel of it.
enum JPEGDecoder {
    static func decode(_ data: Data, maxPixels: Int = Limits.default.maxImagePixels) throws -> DecodedPixels {
        guard let decoder = swl_jpeg_create() else {
            throw ImageError.corruptData(format: .jpeg,
                                         message: "out of memory creating the JPEG decoder")
        }
        defer { swl_jpeg_destroy(decoder) }
        // libjpeg's working memory (progressive coefficient buffers: 2 bytes per sample) stays
        // within a small multiple of the pixel limit; beyond it libjpeg fails instead of allocating.
        let (memory, overflow) = maxPixels.multipliedReportingOverflow(by: 8)
        swl_jpeg_set_memory_limit(decoder, overflow ? Int.max : max(memory, 1 << 20))

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

            var status = SWL_JPEG_OK
            let decoded = try DecodedPixels.rgb(width: Int(info.width), height: Int(info.height), maxPixels: maxPixels,
                                                success: SWL_JPEG_OK, status: &status) { swl_jpeg_decode_rgb(decoder, $0, $1) }
            try check(status, decoder)
            return decoded
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
