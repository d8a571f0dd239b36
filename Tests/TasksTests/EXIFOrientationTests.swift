import Foundation
import XCTest
@testable import Tasks
import TestSupport

/// EXIF orientation is applied to JPEG (APP1) and PNG (eXIf) files by default, so photos are
/// upright as the camera meant — as Apple's ImageIO/`CGImagePropertyOrientation` and Pillow's
/// `ImageOps.exif_transpose` show them (EXIF 2.32 §4.6.4 A, tag 274).
///
/// Fixtures: `Tests/Goldens/make_exif_fixtures.py` (pillow 13.0.0): grace_hopper at 160 px wide,
/// stored in each orientation 1...8 with that tag, and a lossless PNG pair.
final class EXIFOrientationTests: XCTestCase {
    static let directory = Fixtures.directory("TasksTests").appendingPathComponent("exif")

    func fixture(_ name: String) -> URL { Self.directory.appendingPathComponent(name) }

    func meanDifference(_ a: MPImage, _ b: MPImage) -> Double {
        zip(a.pixels, b.pixels).reduce(0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(a.pixels.count)
    }

    /// Orientations 1...8 all decode to the upright 160×188 photo (within JPEG loss), and the
    /// classifier gives all eight the answer of the upright file. Before EXIF was read, the
    /// Orientation=6 file was classified lying on its side.
    func testOrientationsOneToEightGiveTheUprightAnswer() throws {
        let classifier = try ImageClassifier(modelPath: TaskFixtures.efficientnetF32)
        let reference = try MPImage(contentsOf: fixture("grace_hopper_1.jpg"))
        let expected = try classifier.classify(image: reference).classifications[0].categories[0]
        XCTAssertEqual(expected.categoryName, "military uniform", "the answer for the full-size photo (../shared/README.md)")
        for o in 1 ... 8 {
            let url = fixture("grace_hopper_\(o).jpg")
            XCTAssertEqual(EXIF.orientation(in: try Data(contentsOf: url))?.exifValue, o)
            let stored = try MPImage(contentsOf: url, orientation: .up)
            XCTAssertEqual([stored.width, stored.height], o >= 5 ? [188, 160] : [160, 188], "stored pixels of \(o)")
            let image = try MPImage(contentsOf: url)
            XCTAssertEqual(image.orientation, .up)
            XCTAssertEqual([image.width, image.height], [160, 188], "orientation \(o)")
            XCTAssertLessThan(meanDifference(image, reference), 5, "orientation \(o) is not the upright photo")
            let top = try classifier.classify(image: image).classifications[0].categories[0]
            XCTAssertEqual(top.categoryName, expected.categoryName, "orientation \(o)")
            XCTAssertEqual(top.score, expected.score, accuracy: 0.1, "orientation \(o)")
        }
        print("EXIF orientations 1-8: top-1 '\(expected.categoryName ?? "?")' \(expected.score)")
    }

    /// A PNG's eXIf chunk is applied too; PNG is lossless, so the bytes match exactly.
    func testPNGeXIfChunkIsApplied() throws {
        let upright = try MPImage(contentsOf: fixture("small_upright.png"))
        let stored = try MPImage(contentsOf: fixture("small_6.png"), orientation: .up)
        XCTAssertEqual([stored.width, stored.height], [56, 48])
        XCTAssertEqual(try MPImage(contentsOf: fixture("small_6.png")), upright)
        XCTAssertEqual(try MPImage(data: Data(contentsOf: fixture("small_6.png"))), upright)
        // An explicit orientation keeps the stored pixels (EXIF ignored) and says how to show them.
        XCTAssertEqual(try MPImage(contentsOf: fixture("small_6.png"), orientation: .right).applyingOrientation(), upright)
    }

    // MARK: - The parser on hand-made blocks

    /// A TIFF block with IFD0 holding `entries` (tag, type, count, value) in the given byte order.
    func tiff(bigEndian: Bool, entries: [(UInt16, UInt16, UInt32, UInt16)]) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] { bigEndian ? u16(UInt16(v >> 16)) + u16(UInt16(v & 0xFFFF)) : u16(UInt16(v & 0xFFFF)) + u16(UInt16(v >> 16)) }
        var bytes: [UInt8] = bigEndian ? Array("MM".utf8) + [0, 42] : Array("II".utf8) + [42, 0]
        bytes += u32(8) + u16(UInt16(entries.count))
        for (tag, type, count, value) in entries { bytes += u16(tag) + u16(type) + u32(count) + u16(value) + [0, 0] }
        return bytes + u32(0)
    }

    func jpeg(app1 payload: [UInt8]) -> Data {
        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += [0xFF, 0xE0, 0, 16] + Array("JFIF\0".utf8) + [1, 1, 0, 0, 1, 0, 1, 0, 0]  // APP0 first
        let length = payload.count + 2
        bytes += [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        bytes += [0xFF, 0xDA, 0, 2, 0xFF, 0xD9]
        return Data(bytes)
    }

    func testParserReadsBothByteOrdersAndSkipsOtherTags() {
        let entries: [(UInt16, UInt16, UInt32, UInt16)] = [(0x010F, 2, 4, 0), (0x0112, 3, 1, 8)]
        for bigEndian in [false, true] {
            let data = jpeg(app1: Array("Exif\0\0".utf8) + tiff(bigEndian: bigEndian, entries: entries))
            XCTAssertEqual(EXIF.orientation(in: data), .left, bigEndian ? "MM" : "II")
        }
    }

    func testBrokenOrAbsentBlocksMeanNoOrientation() {
        let good = Array("Exif\0\0".utf8) + tiff(bigEndian: false, entries: [(0x0112, 3, 1, 6)])
        XCTAssertEqual(EXIF.orientation(in: jpeg(app1: good)), .right)
        // Value 9 is not an orientation; a LONG instead of a SHORT, a count of 2: not the tag's form.
        for entry: (UInt16, UInt16, UInt32, UInt16) in [(0x0112, 3, 1, 9), (0x0112, 4, 1, 6), (0x0112, 3, 2, 6)] {
            XCTAssertNil(EXIF.orientation(in: jpeg(app1: Array("Exif\0\0".utf8) + tiff(bigEndian: false, entries: [entry]))), "\(entry)")
        }
        // Not an Exif APP1 (XMP), no TIFF header, truncated at every length.
        XCTAssertNil(EXIF.orientation(in: jpeg(app1: Array("http://ns.adobe.com/xap/1.0/\0".utf8))))
        XCTAssertNil(EXIF.orientation(in: jpeg(app1: Array("Exif\0\0XX".utf8))))
        let whole = [UInt8](jpeg(app1: good))
        for n in 0 ..< whole.count - 8 { _ = EXIF.orientation(in: Data(whole.prefix(n))) }
        // An IFD offset far past the end.
        var far = good
        far[6 + 4] = 0xFF; far[6 + 5] = 0xFF; far[6 + 6] = 0xFF; far[6 + 7] = 0x7F
        XCTAssertNil(EXIF.orientation(in: jpeg(app1: far)))
        XCTAssertNil(EXIF.orientation(in: Data([0x42, 0x4D, 0, 0])), "BMP has no EXIF")
    }

    func testPNGChunkWithExifPrefixAndTruncation() throws {
        let block = Array("Exif\0\0".utf8) + tiff(bigEndian: true, entries: [(0x0112, 3, 1, 3)])
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += [0, 0, 0, 0] + Array("tEXt".utf8) + [0, 0, 0, 0]  // an empty chunk first
        png += [0, 0, 0, UInt8(block.count)] + Array("eXIf".utf8) + block + [0, 0, 0, 0]
        XCTAssertEqual(EXIF.orientation(in: Data(png)), .down)
        for n in 8 ..< png.count - 4 { XCTAssertNil(EXIF.orientation(in: Data(png.prefix(n))), "\(n) bytes") }
    }
}
