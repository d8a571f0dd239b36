import Foundation
import XCTest

import Tasks

/// MPImage decoding, orientation and PNG encoding.
///
/// Expected pixels come from Pillow (`Tests/Goldens/make_image_goldens.py`): for the
/// images in `<repo>/../shared/images` a JSON golden with the size, a 64-bit FNV-1a
/// hash of Pillow's RGB8 bytes and sampled pixels; for the tiny synthetic fixtures in
/// `Fixtures/images` also the full RGB bytes.
final class ImageDecodingTests: XCTestCase {
    // MARK: - Paths and goldens

    private static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    private static let fixtures = testsDirectory.appendingPathComponent("Fixtures/images")
    private static let repository = testsDirectory.deletingLastPathComponent()
        .deletingLastPathComponent()
    private static let sharedImages = repository.deletingLastPathComponent()
        .appendingPathComponent("shared/images")

    private struct Golden: Decodable {
        struct Sample: Decodable {
            let x: Int
            let y: Int
            let rgb: [UInt8]
        }

        let file: String
        let width: Int
        let height: Int
        let fnv1a64: String
        let samples: [Sample]
        let rgb: [UInt8]?
    }

    private func golden(_ name: String) throws -> Golden {
        let url = Self.fixtures.appendingPathComponent(name + ".json")
        return try JSONDecoder().decode(Golden.self, from: Data(contentsOf: url))
    }

    private func fixtureData(_ name: String) throws -> Data {
        try Data(contentsOf: Self.fixtures.appendingPathComponent(name))
    }

    private func sharedImage(_ name: String) throws -> URL {
        let url = Self.sharedImages.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("../shared not found: \(url.path) is missing")
        }
        return url
    }

    /// 64-bit FNV-1a, the hash the golden script stores.
    private func fnv1a64(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    private func assertMatches(_ image: MPImage, _ golden: Golden, tolerance: Int = 0,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(image.width, golden.width, "\(golden.file): width", file: file, line: line)
        XCTAssertEqual(image.height, golden.height, "\(golden.file): height", file: file, line: line)
        XCTAssertEqual(image.orientation, .up, file: file, line: line)
        guard image.width == golden.width, image.height == golden.height else { return }
        for sample in golden.samples {
            let (r, g, b) = image.rgb(x: sample.x, y: sample.y)
            let diff = zip([r, g, b], sample.rgb).map { abs(Int($0) - Int($1)) }.max() ?? 0
            XCTAssertLessThanOrEqual(diff, tolerance,
                                     "\(golden.file) pixel (\(sample.x), \(sample.y)): got "
                                         + "\([r, g, b]), Pillow has \(sample.rgb)",
                                     file: file, line: line)
        }
        if let rgb = golden.rgb {
            XCTAssertEqual(rgb.count, image.pixels.count, file: file, line: line)
            let diffs = zip(image.pixels, rgb).map { abs(Int($0) - Int($1)) }
            let worst = diffs.max() ?? 0
            let first = diffs.firstIndex { $0 > tolerance }
            XCTAssertLessThanOrEqual(
                worst, tolerance,
                "\(golden.file): \(diffs.filter { $0 > tolerance }.count) bytes differ from "
                    + "Pillow by more than \(tolerance) (max \(worst)), first at byte \(first ?? -1)",
                file: file, line: line)
        }
        if tolerance == 0 {
            XCTAssertEqual(String(fnv1a64(image.pixels), radix: 16).leftPadded(to: 16),
                           golden.fnv1a64, "\(golden.file): FNV-1a of the RGB bytes",
                           file: file, line: line)
        }
    }

    private func assertThrows(_ expression: @autoclosure () throws -> MPImage,
                              file: StaticString = #filePath, line: UInt = #line,
                              _ check: (ImageError) -> Bool) {
        do {
            let image = try expression()
            XCTFail("expected an ImageError, decoded \(image.width)x\(image.height)",
                    file: file, line: line)
        } catch let error as ImageError {
            XCTAssertTrue(check(error), "unexpected error: \(error)", file: file, line: line)
            XCTAssertFalse(error.description.isEmpty, file: file, line: line)
        } catch {
            XCTFail("expected an ImageError, got \(error)", file: file, line: line)
        }
    }

    // MARK: - Shared images against Pillow

    private func checkShared(_ names: [String]) throws {
        for name in names {
            let url = try sharedImage(name)
            let image = try MPImage(contentsOf: url)
            assertMatches(image, try golden(name))
        }
    }

    func testSharedPNGsMatchPillowExactly() throws {
        try checkShared(["bird.png", "cat.png", "grace_hopper.png", "parrot.png"])
    }

    func testSharedJPEGsMatchPillowExactly() throws {
        try checkShared(["parrot.jpg", "kite_and_cold.jpg", "face.jpg", "pets.jpg",
                         "table.jpg", "mug.jpg"])
    }

    func testSharedBMPsMatchPillowExactly() throws {
        try checkShared(["cat.bmp", "grace_hopper.bmp", "bird.bmp", "sunflower.bmp"])
    }

    func testContentsOfKeepsRequestedOrientation() throws {
        let url = try sharedImage("cat.png")
        let image = try MPImage(contentsOf: url, orientation: .left)
        XCTAssertEqual(image.orientation, .left)
        XCTAssertEqual(try image.upright().width, 341)
    }

    // MARK: - Synthetic fixtures against Pillow

    func testPNGVariantsMatchPillowExactly() throws {
        for name in ["gray8.png", "gray1.png", "gray4_trns.png", "gray_alpha8.png",
                     "palette8_trns.png", "palette4.png", "palette2_interlaced.png",
                     "rgb8_interlaced.png", "rgba8.png", "rgb8_gamma1.png"] {
            assertMatches(try MPImage(data: fixtureData(name)), try golden(name))
        }
    }

    /// 16-bit samples keep their high byte, as in Pillow. (The gray16 golden is Pillow's
    /// 16-bit samples >> 8, because Pillow's own convert("RGB") clips 16-bit gray.)
    func testSixteenBitPNGsMatchPillowExactly() throws {
        for name in ["rgb16.png", "rgba16.png", "rgba16_interlaced.png", "gray16.png",
                     "gray_alpha16_interlaced.png", "rgb16_gamma_srgb.png"] {
            assertMatches(try MPImage(data: fixtureData(name)), try golden(name))
        }
    }

    func testJPEGVariantsMatchPillowExactly() throws {
        for name in ["gray.jpg", "color444.jpg", "color420.jpg", "progressive422.jpg"] {
            assertMatches(try MPImage(data: fixtureData(name)), try golden(name))
        }
    }

    func testBMPVariantsMatchPillowExactly() throws {
        for name in ["bmp24_topdown.bmp", "bmp24_bottomup.bmp", "bmp32_rgb.bmp",
                     "bmp32_bitfields_v5.bmp", "bmp16_555.bmp", "bmp16_565.bmp",
                     "bmp8_palette.bmp", "bmp8_short_palette.bmp", "bmp4_palette.bmp",
                     "bmp1_palette_topdown.bmp"] {
            assertMatches(try MPImage(data: fixtureData(name)), try golden(name))
        }
    }

    func testFormatDetection() throws {
        XCTAssertEqual(MPImage.Format(detecting: try fixtureData("gray8.png")), .png)
        XCTAssertEqual(MPImage.Format(detecting: try fixtureData("gray.jpg")), .jpeg)
        XCTAssertEqual(MPImage.Format(detecting: try fixtureData("bmp8_palette.bmp")), .bmp)
        XCTAssertNil(MPImage.Format(detecting: Data("GIF89a".utf8)))
        XCTAssertNil(MPImage.Format(detecting: Data()))
    }

    // MARK: - Errors

    func testEmptyDataIsUnknownFormat() {
        assertThrows(try MPImage(data: Data())) { $0 == .unknownFormat(firstBytes: []) }
    }

    func testRandomBytesAreUnknownFormat() {
        var state: UInt32 = 2_463_534_242
        let bytes = (0..<256).map { _ -> UInt8 in
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            return UInt8(truncatingIfNeeded: state)
        }
        XCTAssertNil(MPImage.Format(detecting: Data(bytes)), "the seed must not produce a magic")
        assertThrows(try MPImage(data: Data(bytes))) {
            $0 == .unknownFormat(firstBytes: Array(bytes.prefix(8)))
        }
        let description = ImageError.unknownFormat(firstBytes: [0x47, 0x49, 0x46, 0x0A]).description
        XCTAssertTrue(description.contains("47 49 46 0A"), description)
    }

    func testMagicFollowedByGarbageIsCorrupt() {
        let garbage = [UInt8](repeating: 0x5A, count: 100)
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        assertThrows(try MPImage(data: Data(png + garbage))) {
            if case .corruptData(.png, _) = $0 { return true } else { return false }
        }
        assertThrows(try MPImage(data: Data([0xFF, 0xD8, 0xFF] + garbage))) {
            if case .corruptData(.jpeg, _) = $0 { return true } else { return false }
        }
        assertThrows(try MPImage(data: Data([0x42, 0x4D] + garbage))) {
            if case .corruptData(.bmp, _) = $0 { return true } else { return false }
        }
    }

    func testTruncatedPNGThrows() throws {
        let data = try fixtureData("rgb8_interlaced.png")
        assertThrows(try MPImage(data: data.prefix(data.count / 2))) {
            if case .corruptData(.png, let message) = $0 { return !message.isEmpty }
            return false
        }
    }

    func testPNGWithBadIDATChecksumThrows() throws {
        var bytes = [UInt8](try fixtureData("gray8.png"))
        // The last IDAT's CRC sits 4 bytes before the 12-byte IEND chunk.
        bytes[bytes.count - 13] ^= 0xFF
        assertThrows(try MPImage(data: Data(bytes))) {
            if case .corruptData(.png, let message) = $0 { return message.contains("CRC") }
            return false
        }
    }

    func testTruncatedJPEGThrows() throws {
        let data = try fixtureData("color420.jpg")
        assertThrows(try MPImage(data: data.prefix(data.count - 100))) {
            if case .corruptData(.jpeg, let message) = $0 { return message.contains("truncated") }
            return false
        }
    }

    func testJPEGMissingOnlyItsEndMarkerDecodes() throws {
        let data = try fixtureData("color444.jpg")
        XCTAssertEqual(Array(data.suffix(2)), [0xFF, 0xD9])
        let image = try MPImage(data: data.dropLast(2))
        assertMatches(image, try golden("color444.jpg"))
    }

    func testCMYKJPEGIsUnsupported() throws {
        assertThrows(try MPImage(data: fixtureData("cmyk.jpg"))) {
            if case .unsupported(.jpeg, let feature) = $0 {
                return feature.contains("CMYK") || feature.contains("YCCK")
            }
            return false
        }
    }

    func testBMPPixelOffsetPastEndThrows() throws {
        var bytes = [UInt8](try fixtureData("bmp24_bottomup.bmp"))
        bytes.replaceSubrange(10..<14, with: [0x00, 0x10, 0x00, 0x00])   // offset 4096
        assertThrows(try MPImage(data: Data(bytes))) {
            if case .corruptData(.bmp, let message) = $0 { return message.contains("4096") }
            return false
        }
    }

    func testBMPTruncatedPixelDataThrows() throws {
        let data = try fixtureData("bmp24_topdown.bmp")
        assertThrows(try MPImage(data: data.dropLast(10))) {
            if case .corruptData(.bmp, _) = $0 { return true } else { return false }
        }
    }

    func testBMPHeaderSizePastEndThrows() throws {
        var bytes = [UInt8](try fixtureData("bmp32_bitfields_v5.bmp"))
        bytes = Array(bytes.prefix(60))   // V5 header needs 14 + 124 bytes
        assertThrows(try MPImage(data: Data(bytes))) {
            if case .corruptData(.bmp, _) = $0 { return true } else { return false }
        }
    }

    func testBMPCompressionIsUnsupported() throws {
        var bytes = [UInt8](try fixtureData("bmp8_palette.bmp"))
        bytes[30] = 1   // BI_RLE8
        assertThrows(try MPImage(data: Data(bytes))) {
            if case .unsupported(.bmp, let feature) = $0 { return feature.contains("RLE8") }
            return false
        }
    }

    func testBMPHugeDimensionsAreRefusedBeforeAllocating() throws {
        var bytes = [UInt8](try fixtureData("bmp24_bottomup.bmp"))
        bytes.replaceSubrange(18..<22, with: [0x00, 0x00, 0x01, 0x00])   // width 65536
        assertThrows(try MPImage(data: Data(bytes))) {
            $0 == .dimensionsTooLarge(width: 65536, height: 5)
        }
        bytes.replaceSubrange(18..<22, with: [0x00, 0x00, 0x00, 0x00])   // width 0
        assertThrows(try MPImage(data: Data(bytes))) { $0 == .invalidDimensions(width: 0, height: 5) }
    }

    func testUnreadableFileThrows() {
        let url = URL(fileURLWithPath: "/nonexistent/swiftlite/none.png")
        assertThrows(try MPImage(contentsOf: url)) {
            $0 == .fileUnreadable(path: url.path, reason: "no such file")
        }
        assertThrows(try MPImage(contentsOf: Self.fixtures)) {
            $0 == .fileUnreadable(path: Self.fixtures.path, reason: "it is a directory")
        }
        assertThrows(try MPImage(contentsOf: URL(string: "https://example.com/cat.png")!)) {
            if case .fileUnreadable(_, let reason) = $0 { return reason.contains("file URL") }
            return false
        }
    }

    func testDecodesDataSlicesWithNonZeroStartIndex() throws {
        let png = try fixtureData("gray8.png")
        let slice = (Data([0xAA, 0xBB]) + png).dropFirst(2)
        XCTAssertEqual(slice.startIndex, 2)
        XCTAssertEqual(try MPImage(data: slice), try MPImage(data: png))
        let bmp = try fixtureData("bmp24_topdown.bmp")
        XCTAssertEqual(try MPImage(data: (Data([0]) + bmp).dropFirst()), try MPImage(data: bmp))
    }

    /// Every prefix of every fixture either throws an ImageError or decodes to exactly
    /// the full image (possible when only trailing bytes such as IEND, EOI or the last
    /// row's padding are missing); never a crash, never wrong pixels.
    func testEveryTruncationThrowsOrDecodesCompletely() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.fixtures.path)
            .filter { !$0.hasSuffix(".json") && $0 != "cmyk.jpg" }.sorted()
        XCTAssertGreaterThan(names.count, 20)
        for name in names {
            let data = try fixtureData(name)
            let full = try MPImage(data: data)
            for length in 0..<data.count {
                do {
                    let image = try MPImage(data: data.prefix(length))
                    XCTAssertTrue(image == full, "\(name) cut to \(length) bytes decoded differently")
                } catch is ImageError {
                    continue
                }
            }
        }
    }

    /// Real camera JPEGs and the shared PNGs/BMPs cut at a few points must throw; a
    /// baseline JPEG that loses only its EOI marker still decodes identically.
    func testTruncatedSharedImagesThrow() throws {
        for name in ["parrot.jpg", "pets.jpg", "table.jpg", "cat.png", "bird.bmp"] {
            let data = try Data(contentsOf: try sharedImage(name))
            let full = try MPImage(data: data)
            for cut in [2, 20, 100, 500, data.count / 3, data.count / 2, data.count - 100] {
                do {
                    let image = try MPImage(data: data.prefix(cut))
                    XCTFail("\(name) cut to \(cut) of \(data.count) bytes decoded "
                        + "(\(image == full ? "identical" : "different") pixels)")
                } catch let error as ImageError {
                    switch error {
                    case .corruptData, .unknownFormat: continue
                    default: XCTFail("\(name) cut to \(cut): unexpected \(error)")
                    }
                }
            }
            if name.hasSuffix(".jpg") {
                XCTAssertEqual(try MPImage(data: data.dropLast(2)), full, "\(name) without EOI")
            }
        }
    }

    /// Corrupted bytes must never crash a decoder (the result may be an error or an image).
    /// Set SWIFTLITE_IMAGE_FUZZ_ITERATIONS for a longer run than the default 60 per file.
    func testCorruptedBytesNeverCrash() throws {
        let iterations = ProcessInfo.processInfo.environment["SWIFTLITE_IMAGE_FUZZ_ITERATIONS"]
            .flatMap { Int($0) } ?? 60
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.fixtures.path)
            .filter { !$0.hasSuffix(".json") }.sorted()
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        for name in names {
            let original = [UInt8](try fixtureData(name))
            for _ in 0..<iterations {
                var bytes = original
                for _ in 0..<(1 + next() % 4) {
                    let index = 2 + next() % (bytes.count - 2)   // keep the magic
                    bytes[index] = UInt8(truncatingIfNeeded: next())
                }
                if let image = try? MPImage(data: Data(bytes)) {
                    XCTAssertEqual(image.pixels.count, image.width * image.height * 3)
                }
            }
        }
    }

    // MARK: - Raw pixels

    func testRawPixelInitializerValidates() throws {
        let image = try MPImage(pixels: [1, 2, 3, 4, 5, 6], width: 2, height: 1)
        XCTAssertEqual(image.rgb(x: 1, y: 0).red, 4)
        XCTAssertEqual(image.orientation, .up)
        assertThrows(try MPImage(pixels: [1, 2, 3], width: 2, height: 2)) {
            $0 == .pixelCountMismatch(expected: 12, actual: 3)
        }
        assertThrows(try MPImage(pixels: [], width: 0, height: 3)) {
            $0 == .invalidDimensions(width: 0, height: 3)
        }
        assertThrows(try MPImage(pixels: [], width: 1 << 15, height: 1 << 14)) {
            $0 == .dimensionsTooLarge(width: 1 << 15, height: 1 << 14)
        }
    }

    // MARK: - Orientation

    /// A 2x3 image (2 wide, 3 tall) with pixels named by letter:
    ///
    ///     A B
    ///     C D
    ///     E F
    private let a: [UInt8] = [10, 11, 12]
    private let b: [UInt8] = [20, 21, 22]
    private let c: [UInt8] = [30, 31, 32]
    private let d: [UInt8] = [40, 41, 42]
    private let e: [UInt8] = [50, 51, 52]
    private let f: [UInt8] = [60, 61, 62]
    private var letters: [[UInt8]] { [a, b, c, d, e, f] }

    private func twoByThree(_ orientation: MPImage.Orientation) throws -> MPImage {
        try MPImage(pixels: letters.flatMap { $0 }, width: 2, height: 3, orientation: orientation)
    }

    func testUprightOfUpIsUnchanged() throws {
        let image = try twoByThree(.up)
        XCTAssertEqual(try image.upright(), image)
    }

    func testUprightOfDownRotates180() throws {
        // F E
        // D C
        // B A
        let upright = try twoByThree(.down).upright()
        XCTAssertEqual(upright.width, 2)
        XCTAssertEqual(upright.height, 3)
        XCTAssertEqual(upright.orientation, .up)
        XCTAssertEqual(upright.pixels, [f, e, d, c, b, a].flatMap { $0 })
    }

    func testUprightOfRightRotatesClockwise() throws {
        // Rotating A B / C D / E F by 90° clockwise:
        // E C A
        // F D B
        let upright = try twoByThree(.right).upright()
        XCTAssertEqual(upright.width, 3)
        XCTAssertEqual(upright.height, 2)
        XCTAssertEqual(upright.pixels, [e, c, a, f, d, b].flatMap { $0 })
    }

    func testUprightOfLeftRotatesCounterclockwise() throws {
        // Rotating A B / C D / E F by 90° counterclockwise:
        // B D F
        // A C E
        let upright = try twoByThree(.left).upright()
        XCTAssertEqual(upright.width, 3)
        XCTAssertEqual(upright.height, 2)
        XCTAssertEqual(upright.pixels, [b, d, f, a, c, e].flatMap { $0 })
    }

    func testLeftThenRightIsIdentity() throws {
        let once = try twoByThree(.left).upright()
        let back = try MPImage(pixels: once.pixels, width: once.width, height: once.height,
                             orientation: .right).upright()
        XCTAssertEqual(back, try twoByThree(.up))
    }

    func testMirroredOrientationsThrow() throws {
        for orientation in [MPImage.Orientation.upMirrored, .downMirrored, .leftMirrored,
                            .rightMirrored] {
            let image = try twoByThree(orientation)
            assertThrows(try image.upright()) { $0 == .unsupportedOrientation(orientation) }
        }
        XCTAssertTrue(ImageError.unsupportedOrientation(.leftMirrored).description
            .contains("mirrored"))
    }

    // MARK: - PNG encoding

    func testPNGRoundTrip() throws {
        let width = 13
        let height = 7
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                pixels += [UInt8(x * 19), UInt8(y * 36), UInt8((x * y * 7) & 0xFF)]
            }
        }
        let image = try MPImage(pixels: pixels, width: width, height: height, orientation: .down)
        let png = try image.pngData()
        XCTAssertEqual(MPImage.Format(detecting: png), .png)
        let decoded = try MPImage(data: png, orientation: .down)
        XCTAssertEqual(decoded, image)
    }

    func testPNGRoundTripOfNoisyImage() throws {
        // Incompressible data exercises the encoder's output-size retry path.
        var state: UInt32 = 88_172_645
        let pixels = (0..<(97 * 61 * 3)).map { _ -> UInt8 in
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            return UInt8(truncatingIfNeeded: state)
        }
        let image = try MPImage(pixels: pixels, width: 97, height: 61)
        XCTAssertEqual(try MPImage(data: image.pngData()), image)
        XCTAssertEqual(try MPImage(data: image.pngData(fast: true)), image)
    }

    func testPNGRoundTripOfSharedJPEG() throws {
        let image = try MPImage(contentsOf: try sharedImage("table.jpg"))
        XCTAssertEqual(try MPImage(data: image.pngData()), image)
    }
}

private extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
