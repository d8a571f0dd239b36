import Foundation

/// Reads the EXIF `Orientation` tag (274, `0x0112`) of a JPEG or PNG file from its raw bytes,
/// without decoding any pixels.
///
/// Where the tag lives:
/// - JPEG: an APP1 segment (`FF E1`) whose payload starts `Exif\0\0`, followed by a TIFF block
///   (EXIF 2.32 §4.5.4). Segments are walked from SOI until the first SOS or EOI.
/// - PNG: an `eXIf` chunk holding the TIFF block directly (PNG Extensions 1.5.0 §3.7; a leading
///   `Exif\0\0`, which some writers add, is skipped too).
///
/// The TIFF block: `II*\0` (little-endian) or `MM\0*` (big-endian), the offset of IFD0, then
/// IFD0's 12-byte entries `tag, type, count, value`. Orientation is a SHORT (type 3) with count 1.
///
/// Every read is bounds-checked; a truncated or malformed block yields nil (no orientation), never
/// an error, as viewers treat a broken EXIF block.
enum EXIF {
    /// The orientation the file's EXIF block names, or nil when there is none (or it is broken or
    /// not 1...8).
    static func orientation(in data: Data) -> MPImage.Orientation? {
        data.withUnsafeBytes { raw -> MPImage.Orientation? in
            let bytes = Bytes(raw)
            let tiff: Range<Int>?
            switch MPImage.Format(detecting: data) {
            case .jpeg: tiff = jpegTIFFBlock(bytes)
            case .png: tiff = pngTIFFBlock(bytes)
            default: tiff = nil
            }
            guard let tiff, let value = orientationValue(bytes, tiff: tiff) else { return nil }
            return MPImage.Orientation(exifValue: value)
        }
    }

    /// The range of the TIFF block inside the first `Exif` APP1 segment.
    static func jpegTIFFBlock(_ b: Bytes) -> Range<Int>? {
        var p = 2  // after SOI (FF D8)
        while let marker = b.u8(p), marker == 0xFF, let code = b.u8(p + 1) {
            switch code {
            case 0xFF:
                p += 1  // fill byte
                continue
            case 0xD8, 0x01, 0xD0 ... 0xD7:
                p += 2  // markers without a length
                continue
            case 0xD9, 0xDA:
                return nil  // end of image, or the start of scan: no metadata after it
            default:
                break
            }
            guard let length = b.u16(p + 2, bigEndian: true), length >= 2 else { return nil }
            let start = p + 4, end = p + 2 + Int(length)
            guard end <= b.count else { return nil }
            if code == 0xE1, end - start >= 6, b.matches(start, "Exif\0\0") {
                return start + 6 ..< end
            }
            p = end
        }
        return nil
    }

    /// The range of the TIFF block of the first `eXIf` chunk.
    static func pngTIFFBlock(_ b: Bytes) -> Range<Int>? {
        var p = 8  // after the signature
        while let length = b.u32(p, bigEndian: true) {
            let start = p + 8, end = start + Int(length)
            guard length <= 0x7FFF_FFFF, end + 4 <= b.count else { return nil }
            if b.matches(p + 4, "eXIf") {
                return b.matches(start, "Exif\0\0") ? start + 6 ..< end : start ..< end
            }
            if b.matches(p + 4, "IEND") { return nil }
            p = end + 4  // data, then the CRC
        }
        return nil
    }

    /// The value of tag 274 in IFD0 of the TIFF block at `tiff`.
    static func orientationValue(_ b: Bytes, tiff: Range<Int>) -> Int? {
        let block = Bytes(b, tiff)
        let bigEndian: Bool
        if block.matches(0, "MM\0*") {
            bigEndian = true
        } else if block.matches(0, "II*\0") {
            bigEndian = false
        } else {
            return nil
        }
        guard let ifd = block.u32(4, bigEndian: bigEndian), let count = block.u16(Int(ifd), bigEndian: bigEndian) else { return nil }
        for i in 0 ..< Int(count) {
            let entry = Int(ifd) + 2 + i * 12
            guard let tag = block.u16(entry, bigEndian: bigEndian) else { return nil }
            guard tag == 0x0112 else { continue }
            guard block.u16(entry + 2, bigEndian: bigEndian) == 3, block.u32(entry + 4, bigEndian: bigEndian) == 1,
                  let value = block.u16(entry + 8, bigEndian: bigEndian) else { return nil }
            return Int(value)
        }
        return nil
    }

    /// Bounds-checked reads from a window of raw bytes; out of range reads give nil.
    struct Bytes {
        let raw: UnsafeRawBufferPointer
        let base: Int
        let count: Int

        init(_ raw: UnsafeRawBufferPointer) { self.raw = raw; base = 0; count = raw.count }
        init(_ outer: Bytes, _ range: Range<Int>) { raw = outer.raw; base = outer.base + range.lowerBound; count = range.count }

        func u8(_ i: Int) -> UInt8? { i >= 0 && i < count ? raw[base + i] : nil }

        func u16(_ i: Int, bigEndian: Bool) -> UInt16? {
            guard let a = u8(i), let b = u8(i + 1) else { return nil }
            return bigEndian ? UInt16(a) << 8 | UInt16(b) : UInt16(b) << 8 | UInt16(a)
        }

        func u32(_ i: Int, bigEndian: Bool) -> UInt32? {
            guard let a = u16(i, bigEndian: bigEndian), let b = u16(i + 2, bigEndian: bigEndian) else { return nil }
            return bigEndian ? UInt32(a) << 16 | UInt32(b) : UInt32(b) << 16 | UInt32(a)
        }

        func matches(_ i: Int, _ text: String) -> Bool {
            for (k, byte) in text.utf8.enumerated() where u8(i + k) != byte { return false }
            return true
        }
    }
}
