import CPNGShim
import Engine
import Foundation

/// PNG decoding with libpng through the `CPNGShim` C target, whose setjmp-based
/// error handling turns libpng's errors (a longjmp, which Swift cannot catch) into
/// status codes and messages.
///
/// Output is the stored color values as 8-bit RGB, byte for byte what Pillow's
/// `Image.open(p).convert("RGB")` gives for every 8-bit file:
/// - gray, gray+alpha, palette (with or without tRNS), RGB and RGBA at every bit
///   depth, and Adam7 interlacing;
/// - alpha and tRNS transparency are dropped, never composited: a transparent pixel
///   keeps its stored color;
/// - no color management: gAMA, cHRM, sRGB and iCCP chunks are ignored;
/// - 16-bit samples keep their high byte (`v >> 8`), as Pillow does for 16-bit RGB,
///   RGBA and gray+alpha. For 16-bit gray Pillow's `convert("RGB")` clips the samples
///   to 255 instead; SwiftLite's high byte is the meaningful value there.
///
/// libpng's simplified `png_image` API is not used for reading: see CPNGShim.h.
enum PNGDecoder {
    static func decode(_ data: Data, maxPixels: Int = Limits.default.maxImagePixels) throws -> DecodedPixels {
        guard let decoder = swl_png_create() else {
            throw ImageError.corruptData(format: .png,
                                         message: "out of memory creating the PNG decoder")
        }
        defer { swl_png_destroy(decoder) }

        return try data.withUnsafeBytes { raw -> DecodedPixels in
            let base = raw.bindMemory(to: UInt8.self).baseAddress
            var info = swl_png_info()
            try check(swl_png_read_header(decoder, base, raw.count, &info), decoder)

            var status = SWL_PNG_OK
            let decoded = try DecodedPixels.rgb(width: Int(info.width), height: Int(info.height), maxPixels: maxPixels,
                                                success: SWL_PNG_OK, status: &status) { swl_png_decode_rgb(decoder, $0, $1) }
            try check(status, decoder)
            return decoded
        }
    }

    private static func check(_ status: swl_png_status, _ decoder: OpaquePointer) throws {
        guard status != SWL_PNG_OK else { return }
        let message = String(cString: swl_png_message(decoder))
        switch status {
        case SWL_PNG_NO_MEMORY:
            throw ImageError.corruptData(format: .png, message: "out of memory: \(message)")
        default:
            throw ImageError.corruptData(format: .png, message: message)
        }
    }
}
