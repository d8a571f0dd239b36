import Engine
import Foundation

/// Windows BMP decoding in pure Swift.
///
/// Supported: BITMAPINFOHEADER (40 bytes) and its V2/V3 (52/56), V4 (108) and
/// V5 (124) extensions; bottom-up and top-down (negative height) row order; rows
/// padded to 4 bytes (the last row may omit its padding);
/// - 24-bit BI_RGB (BGR) and 32-bit BI_RGB (BGRX, the 4th byte ignored);
/// - 16-bit BI_RGB (X1R5G5B5);
/// - 16- and 32-bit BI_BITFIELDS / BI_ALPHABITFIELDS with any contiguous masks
///   (alpha ignored). Channels of fewer than 8 bits are scaled with `v * 255 / max`
///   (truncating, as Pillow does), wider ones keep their top 8 bits;
/// - 1-, 4- and 8-bit palettes (BI_RGB). A pixel whose index is beyond the palette
///   is black.
///
/// Everything else (RLE4/RLE8, embedded JPEG/PNG, OS/2 headers, 2- and 64-bit) throws
/// ``ImageError/unsupported(format:feature:)``; every offset and size is checked
/// against the data and a file that is too short throws
/// ``ImageError/corruptData(format:message:)``.
enum BMPDecoder {
    private static let fileHeaderSize = 14

    static func decode(_ data: Data, maxPixels: Int = Limits.default.maxImagePixels) throws -> DecodedPixels {
        try data.withUnsafeBytes { try decode(bytes: $0, maxPixels: maxPixels) }
    }

    private static func corrupt(_ message: String) -> ImageError {
        .corruptData(format: .bmp, message: message)
    }

    private static func unsupported(_ feature: String) -> ImageError {
        .unsupported(format: .bmp, feature: feature)
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer

        func u16(_ offset: Int) -> Int {
            Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
        }

        func u32(_ offset: Int) -> Int {
            u16(offset) | u16(offset + 2) << 16
        }

        func i32(_ offset: Int) -> Int {
            Int(Int32(bitPattern: UInt32(u32(offset))))
        }
    }

    /// One color channel described by a BI_BITFIELDS mask.
    private struct Channel {
        let mask: UInt32
        let shift: UInt32
        let bits: Int

        init?(mask: UInt32) {
            guard mask != 0 else { return nil }
            let shift = UInt32(mask.trailingZeroBitCount)
            let bits = (~(mask >> shift)).trailingZeroBitCount
            // Contiguous: after shifting, the mask is 2^bits - 1.
            guard bits == mask.nonzeroBitCount else { return nil }
            self.mask = mask
            self.shift = shift
            self.bits = bits
        }

        @inline(__always)
        func extract(_ value: UInt32) -> UInt8 {
            let v = (value & mask) >> shift
            if bits == 8 { return UInt8(truncatingIfNeeded: v) }
            if bits > 8 { return UInt8(truncatingIfNeeded: v >> UInt32(bits - 8)) }
            let max = (UInt32(1) << UInt32(bits)) - 1
            return UInt8(truncatingIfNeeded: v * 255 / max)
        }
    }

    private static func decode(bytes: UnsafeRawBufferPointer, maxPixels: Int) throws -> DecodedPixels {
        let r = Reader(bytes: bytes)
        let count = bytes.count
        guard count >= fileHeaderSize + 4 else {
            throw corrupt("file is \(count) bytes, shorter than the 18-byte BMP file header")
        }
        let pixelOffset = r.u32(10)
        let headerSize = r.u32(14)
        switch headerSize {
        case 40, 52, 56, 108, 124:
            break
        case 12, 16, 64:
            throw unsupported("OS/2 bitmap header (\(headerSize) bytes); only Windows "
                + "BITMAPINFOHEADER and its V2-V5 extensions are supported")
        default:
            throw corrupt("unknown bitmap header size \(headerSize)")
        }
        guard fileHeaderSize + headerSize <= count else {
            throw corrupt("the \(headerSize)-byte bitmap header runs past the end of the "
                + "\(count)-byte file")
        }
        let width = r.i32(18)
        let rawHeight = r.i32(22)
        let bitCount = r.u16(28)
        let compression = r.u32(30)
        let colorsUsed = r.u32(46)
        let topDown = rawHeight < 0
        let height = abs(rawHeight)
        try MPImage.checkDimensions(width: width, height: height, maxPixels: maxPixels)

        // Compression: 0 BI_RGB, 3 BI_BITFIELDS, 6 BI_ALPHABITFIELDS.
        var masksAfterHeader = 0
        var masks: (r: UInt32, g: UInt32, b: UInt32)?
        switch compression {
        case 0:
            break
        case 3, 6:
            guard bitCount == 16 || bitCount == 32 else {
                throw unsupported("BI_BITFIELDS with \(bitCount) bits per pixel; only 16 "
                    + "and 32 are valid")
            }
            let maskOffset: Int
            if headerSize >= 52 {
                maskOffset = fileHeaderSize + 40   // inside the V2+ header
            } else {
                maskOffset = fileHeaderSize + headerSize
                masksAfterHeader = compression == 6 ? 16 : 12
                guard maskOffset + masksAfterHeader <= count else {
                    throw corrupt("the color masks run past the end of the \(count)-byte file")
                }
            }
            masks = (UInt32(r.u32(maskOffset)), UInt32(r.u32(maskOffset + 4)),
                     UInt32(r.u32(maskOffset + 8)))
        case 1:
            throw unsupported("RLE8 compression; only uncompressed BMPs are supported")
        case 2:
            throw unsupported("RLE4 compression; only uncompressed BMPs are supported")
        case 4:
            throw unsupported("embedded JPEG data (BI_JPEG)")
        case 5:
            throw unsupported("embedded PNG data (BI_PNG)")
        default:
            throw unsupported("compression type \(compression)")
        }
        switch bitCount {
        case 1, 4, 8, 16, 24, 32:
            break
        default:
            throw unsupported("\(bitCount) bits per pixel; supported are 1, 4, 8, 16, 24 and 32")
        }

        // Palette for 1/4/8-bit images: BGRX entries right after the header (and masks).
        var palette = [UInt8](repeating: 0, count: 256 * 3)
        if bitCount <= 8 {
            let maxEntries = 1 << bitCount
            let entries = colorsUsed == 0 ? maxEntries : min(colorsUsed, maxEntries)
            let paletteOffset = fileHeaderSize + headerSize + masksAfterHeader
            guard paletteOffset + entries * 4 <= count else {
                throw corrupt("the \(entries)-color palette at offset \(paletteOffset) runs "
                    + "past the end of the \(count)-byte file")
            }
            for i in 0..<entries {
                palette[3 * i] = bytes[paletteOffset + 4 * i + 2]
                palette[3 * i + 1] = bytes[paletteOffset + 4 * i + 1]
                palette[3 * i + 2] = bytes[paletteOffset + 4 * i]
            }
        }

        // Row geometry, checked against the data before any pixel is read.
        let rowBytes = (bitCount * width + 7) / 8
        let stride = (bitCount * width + 31) / 32 * 4
        let needed = stride * (height - 1) + rowBytes
        guard pixelOffset <= count, needed <= count - pixelOffset else {
            throw corrupt("pixel data of \(needed) bytes at offset \(pixelOffset) runs past "
                + "the end of the \(count)-byte file")
        }

        let channels: (Channel, Channel, Channel)?
        if let m = masks {
            guard let cr = Channel(mask: m.r), let cg = Channel(mask: m.g),
                  let cb = Channel(mask: m.b) else {
                throw unsupported(String(format: "color masks R=0x%08X G=0x%08X B=0x%08X; "
                    + "each must be a non-zero run of contiguous bits", m.r, m.g, m.b))
            }
            channels = (cr, cg, cb)
        } else if bitCount == 16 {
            channels = (Channel(mask: 0x7C00)!, Channel(mask: 0x03E0)!, Channel(mask: 0x001F)!)
        } else {
            channels = nil
        }

        let pixelCount = width * height
        let pixels = [UInt8](unsafeUninitializedCapacity: pixelCount * 3) { out, initialized in
            let src = bytes.bindMemory(to: UInt8.self)
            for y in 0..<height {
                let row = pixelOffset + (topDown ? y : height - 1 - y) * stride
                var o = y * width * 3
                switch bitCount {
                case 24 where channels == nil, 32 where channels == nil:
                    let step = bitCount / 8
                    var s = row
                    for _ in 0..<width {
                        out[o] = src[s + 2]
                        out[o + 1] = src[s + 1]
                        out[o + 2] = src[s]
                        o += 3
                        s += step
                    }
                case 16, 32:
                    let (cr, cg, cb) = channels!
                    let step = bitCount / 8
                    var s = row
                    for _ in 0..<width {
                        var value = UInt32(src[s]) | UInt32(src[s + 1]) << 8
                        if step == 4 {
                            value |= UInt32(src[s + 2]) << 16 | UInt32(src[s + 3]) << 24
                        }
                        out[o] = cr.extract(value)
                        out[o + 1] = cg.extract(value)
                        out[o + 2] = cb.extract(value)
                        o += 3
                        s += step
                    }
                default:   // 1, 4, 8-bit palette indices, most significant bits first
                    let perByte = 8 / bitCount
                    let indexMask = (1 << bitCount) - 1
                    for x in 0..<width {
                        let byte = Int(src[row + x / perByte])
                        let shift = (perByte - 1 - x % perByte) * bitCount
                        let index = (byte >> shift) & indexMask
                        out[o] = palette[3 * index]
                        out[o + 1] = palette[3 * index + 1]
                        out[o + 2] = palette[3 * index + 2]
                        o += 3
                    }
                }
            }
            initialized = pixelCount * 3
        }
        return DecodedPixels(width: width, height: height, pixels: pixels)
    }
}
