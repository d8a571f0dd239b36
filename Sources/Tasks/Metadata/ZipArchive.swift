import CZlib
import Engine
import Foundation

/// Reads the files of a zip archive held in memory: the associated files (labels, ...) that TFLite
/// Metadata packs at the end of a `.tflite` file, which is thereby also a zip archive.
///
/// Only what such archives need: the central directory, stored and deflated entries, no
/// encryption, no multi-disk archives, no ZIP64.
struct ZipArchive {
    struct Entry {
        let name: String
        let method: UInt16
        let compressedSize: Int
        let uncompressedSize: Int
        let localHeaderOffset: Int
    }

    enum Failure: Error, CustomStringConvertible {
        case malformed(String)
        case unsupported(String)
        /// An entry larger than `maxFileBytes`.
        case tooLarge(String)
        var description: String {
            switch self {
            case .tooLarge(let why): return "zip archive entry too large: \(why)"
            case .malformed(let why): return "malformed zip archive: \(why)"
            case .unsupported(let why): return "unsupported zip archive: \(why)"
            }
        }
    }

    /// Borrowed; the caller keeps the memory alive while the archive is used.
    let bytes: UnsafeRawBufferPointer
    let entries: [Entry]
    /// No entry may inflate to more than this (`Limits.maxAssociatedFileBytes`).
    let maxFileBytes: Int

    /// Finds the end-of-central-directory record and reads the directory. Returns nil when the
    /// bytes are not a zip archive at all.
    init?(_ bytes: UnsafeRawBufferPointer, maxFileBytes: Int = Limits.default.maxAssociatedFileBytes) throws {
        self.bytes = bytes
        self.maxFileBytes = maxFileBytes
        // The end record is 22 bytes plus a comment of up to 65535 bytes, at the very end.
        let lowest = max(0, bytes.count - 22 - 0xFFFF)
        guard bytes.count >= 22,
              let end = stride(from: bytes.count - 22, through: lowest, by: -1).first(where: { Self.u32(bytes, $0) == 0x0605_4b50 })
        else { return nil }
        let count = Int(Self.u16(bytes, end + 10))
        let directorySize = Int(Self.u32(bytes, end + 12))
        // Archives appended to another file (a .tflite) may record offsets relative to the archive
        // start; locate the directory from the end record and derive the shift.
        let recordedOffset = Int(Self.u32(bytes, end + 16))
        let directoryStart = end - directorySize
        guard directoryStart >= 0 else { throw Failure.malformed("central directory size \(directorySize) exceeds the file") }
        let shift = directoryStart - recordedOffset
        var entries = [Entry]()
        var p = directoryStart
        for _ in 0 ..< count {
            guard p + 46 <= end, Self.u32(bytes, p) == 0x0201_4b50 else { throw Failure.malformed("bad central directory entry at \(p)") }
            let nameLength = Int(Self.u16(bytes, p + 28)), extraLength = Int(Self.u16(bytes, p + 30)), commentLength = Int(Self.u16(bytes, p + 32))
            guard p + 46 + nameLength <= end else { throw Failure.malformed("entry name past the directory") }
            let flags = Self.u16(bytes, p + 8)
            guard flags & 1 == 0 else { throw Failure.unsupported("encrypted entries") }
            entries.append(Entry(
                name: String(decoding: bytes[p + 46 ..< p + 46 + nameLength], as: UTF8.self),
                method: Self.u16(bytes, p + 10),
                compressedSize: Int(Self.u32(bytes, p + 20)),
                uncompressedSize: Int(Self.u32(bytes, p + 24)),
                localHeaderOffset: Int(Self.u32(bytes, p + 42)) + shift))
            p += 46 + nameLength + extraLength + commentLength
        }
        self.entries = entries
    }

    /// The contents of the entry called `name`, or nil if there is none.
    func contents(of name: String) throws -> [UInt8]? {
        guard let entry = entries.first(where: { $0.name == name }) else { return nil }
        let h = entry.localHeaderOffset
        guard h >= 0, h + 30 <= bytes.count, Self.u32(bytes, h) == 0x0403_4b50 else {
            throw Failure.malformed("bad local header for '\(name)'")
        }
        let start = h + 30 + Int(Self.u16(bytes, h + 26)) + Int(Self.u16(bytes, h + 28))
        guard start <= bytes.count, entry.compressedSize <= bytes.count - start else {
            throw Failure.malformed("'\(name)' extends past the end of the archive")
        }
        // The header's size is a claim; inflation below stops at it, so checking it bounds the work.
        guard entry.uncompressedSize <= maxFileBytes, entry.method != 0 || entry.compressedSize <= maxFileBytes else {
            throw Failure.tooLarge("'\(name)' holds \(max(entry.uncompressedSize, entry.compressedSize)) bytes; the limit is \(maxFileBytes) (Limits.maxAssociatedFileBytes)")
        }
        let data = Array(bytes[start ..< start + entry.compressedSize])
        switch entry.method {
        case 0:
            return data
        case 8:
            return try Self.inflate(data, expectedSize: entry.uncompressedSize, name: name)
        default:
            throw Failure.unsupported("compression method \(entry.method) for '\(name)'")
        }
    }

    /// Raw-deflate decompression through zlib.
    private static func inflate(_ input: [UInt8], expectedSize: Int, name: String) throws -> [UInt8] {
        // Deflate expands at most ~1032×; a larger claimed size is a corrupt header, not a reason to allocate.
        guard expectedSize <= input.count * 1032 + 64 else {
            throw Failure.malformed("'\(name)' claims \(expectedSize) bytes from \(input.count) compressed bytes")
        }
        var output = [UInt8](repeating: 0, count: max(expectedSize, 1))
        var stream = z_stream()
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Failure.malformed("zlib could not start for '\(name)'")
        }
        defer { inflateEnd(&stream) }
        var input = input
        let status: Int32 = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = uInt(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = uInt(outBuffer.count)
                return CZlib.inflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END, Int(stream.total_out) == expectedSize else {
            throw Failure.malformed("deflated data of '\(name)' is corrupt (zlib status \(status))")
        }
        return Array(output.prefix(expectedSize))
    }

    private static func u16(_ b: UnsafeRawBufferPointer, _ p: Int) -> UInt16 {
        guard p >= 0, p + 2 <= b.count else { return 0 }
        return UInt16(b[p]) | UInt16(b[p + 1]) << 8
    }

    private static func u32(_ b: UnsafeRawBufferPointer, _ p: Int) -> UInt32 {
        guard p >= 0, p + 4 <= b.count else { return 0 }
        return UInt32(b[p]) | UInt32(b[p + 1]) << 8 | UInt32(b[p + 2]) << 16 | UInt32(b[p + 3]) << 24
    }
}
