import Engine
import Foundation
import XCTest
@testable import Tasks
import TestSupport

/// Hostile images, model archives and AutoML folders (made by Tests/Goldens/make_hostile_images.py
/// and make_hostile_archives.py): each must be refused with a typed error whose message names the
/// problem, in well under a second — never gigabytes allocated, never padding passed off as pixels.
final class HostileInputTests: XCTestCase {
    private let directory = Fixtures.directory("TasksTests").appendingPathComponent("hostile")

    /// The error decoding fixture `name` gives, checked to come quickly.
    private func imageError(_ name: String, limits: Limits = .default, file: StaticString = #filePath, line: UInt = #line) throws -> ImageError? {
        let data = try Data(contentsOf: directory.appendingPathComponent(name))
        let start = Date()
        defer { XCTAssertLessThan(Date().timeIntervalSince(start), 1, "\(name) took too long to refuse", file: file, line: line) }
        do {
            let image = try MPImage(data: data, limits: limits)
            XCTFail("\(name): decoded as \(image.width)x\(image.height)", file: file, line: line)
            return nil
        } catch let error as ImageError {
            return error
        }
    }

    // MARK: - Images

    func testJPEGHeaderClaiming16000x16000IsRefusedFromTheHeader() throws {
        XCTAssertEqual(try imageError("jpeg_claims_16000x16000.jpg"), .tooManyPixels(width: 16000, height: 16000, limit: 178_956_970))
        XCTAssertEqual(try imageError("jpeg_progressive_claims_16000x16000.jpg"), .tooManyPixels(width: 16000, height: 16000, limit: 178_956_970))
        XCTAssert(ImageError.tooManyPixels(width: 16000, height: 16000, limit: 178_956_970).description
            .contains("16000x16000 = 256000000 pixels exceeds the limit of 178956970"))
    }

    /// Within the pixel limit, 600 bytes cannot hold 10⁸ pixels: the missing data is an error, not
    /// zeros decoded into 300 MB (baseline) or a whole-image coefficient buffer (progressive).
    func testJPEGClaimingMoreThanItsDataHoldsIsCorrupt() throws {
        for name in ["jpeg_claims_10000x10000.jpg", "jpeg_progressive_claims_10000x10000.jpg"] {
            guard case .corruptData(.jpeg, let message)? = try imageError(name) else { return XCTFail(name) }
            XCTAssert(message.contains("premature end") || message.contains("Premature end"), "\(name): \(message)")
        }
    }

    /// A real photo cut in the middle of its scan data used to decode (libjpeg pads with gray).
    func testTruncatedJPEGIsAnError() throws {
        for name in ["jpeg_truncated.jpg", "jpeg_progressive_truncated.jpg"] {
            guard case .corruptData(.jpeg, let message)? = try imageError(name) else { return XCTFail(name) }
            XCTAssert(message.contains("Premature end of JPEG file"), "\(name): \(message)")
        }
    }

    /// The class, not the sample: the photo cut after any byte of its scan data is an error, and so
    /// is the cut file with an end-of-image marker put back (as copying tools and partial downloads
    /// leave them; libjpeg pads the missing scan data with gray, which passed as an image). Only a
    /// file that lacks just its end-of-image marker still decodes, as documented.
    func testJPEGCutAnywhereInItsScanDataIsAnError() throws {
        let whole = try Data(contentsOf: directory.appendingPathComponent("jpeg_whole_64x64.jpg"))
        XCTAssertNoThrow(try MPImage(data: whole))
        let scan = try XCTUnwrap(whole.range(of: Data([0xFF, 0xDA]))).upperBound
        var decoded = [String]()
        for length in scan ..< whole.count - 2 {
            if (try? MPImage(data: whole.prefix(length))) != nil { decoded.append("\(length)") }
            if (try? MPImage(data: whole.prefix(length) + [0xFF, 0xD9])) != nil { decoded.append("\(length)+EOI") }
        }
        XCTAssertEqual(decoded, [], "cuts of a \(whole.count)-byte JPEG that decoded as images")
    }

    func testPNGBombIsRefusedFromTheHeader() throws {
        XCTAssertEqual(try imageError("png_bomb_20000x20000.png"), .tooManyPixels(width: 20000, height: 20000, limit: 178_956_970))
    }

    func testBMPWithLyingSizeIsRefused() throws {
        XCTAssertEqual(try imageError("bmp_claims_30000x30000.bmp"), .tooManyPixels(width: 30000, height: 30000, limit: 178_956_970))
        guard case .corruptData(.bmp, let message)? = try imageError("bmp_claims_10000x10000.bmp") else { return XCTFail() }
        XCTAssert(message.contains("pixel data of 300000000 bytes"), message)
    }

    func testImagePixelLimitIsConfigurable() throws {
        var limits = Limits()
        limits.maxImagePixels = 1000
        XCTAssertEqual(try imageError("bmp_claims_10000x10000.bmp", limits: limits), .tooManyPixels(width: 10000, height: 10000, limit: 1000))
        let cat = try Data(contentsOf: TaskFixtures.demoCat)
        XCTAssertThrowsError(try MPImage(data: cat, limits: limits)) { error in
            guard case .tooManyPixels(_, _, 1000)? = error as? ImageError else { return XCTFail("\(error)") }
        }
        XCTAssertNoThrow(try MPImage(data: cat))
    }

    // MARK: - Metadata archives

    private var zipBomb: String { directory.appendingPathComponent("classifier_zip_bomb.tflite").path }

    /// labels.txt inflates to 1 GiB (156 s and 2.1 GB before): refused from the archive's header.
    func testZipBombInAModelIsRefusedFromTheHeader() {
        let start = Date()
        assertTaskError(try ImageClassifier(options: ImageClassifierOptions(modelPath: zipBomb)),
                        "unsupportedModel") { error in
            guard case .unsupportedModel(let message) = error else { return false }
            return message.contains("'labels.txt' holds 1073741824 bytes") && message.contains("Limits.maxAssociatedFileBytes")
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 1)
    }

    /// A header that understates the size: inflating stops at the claimed size (and the limit).
    func testZipEntryInflatingPastItsClaimedSizeStops() throws {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: zipBomb))
        let central = try XCTUnwrap(bytes.range(of: Data([0x50, 0x4b, 0x01, 0x02]), options: .backwards)).lowerBound
        bytes.replaceSubrange(central + 24 ..< central + 28, with: [0xE8, 0x03, 0, 0])  // uncompressed size 1000
        let start = Date()
        try bytes.withUnsafeBytes { raw in
            let archive = try XCTUnwrap(try ZipArchive(raw))
            XCTAssertThrowsError(try archive.contents(of: "labels.txt")) { error in
                XCTAssert("\(error)".contains("deflated data of 'labels.txt' is corrupt"), "\(error)")
            }
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 1)
    }

    func testAssociatedFileLimitIsConfigurable() throws {
        let options = ImageClassifierOptions(modelPath: zipBomb)
        options.baseOptions.limits.maxAssociatedFileBytes = 100
        assertTaskError(try ImageClassifier(options: options), "unsupportedModel") { error in
            guard case .unsupportedModel(let message) = error else { return false }
            return message.contains("the limit is 100 (Limits.maxAssociatedFileBytes)")
        }
    }

    // MARK: - AutoML folders

    func testAutoMLManifestNamingFilesOutsideItsFolderIsRefused() {
        let folder = directory.appendingPathComponent("automl_traversal").path
        XCTAssertThrowsError(try LocalModel(manifestFolder: folder)) { error in
            guard case .invalidOptions(let message)? = error as? TaskError else { return XCTFail("\(error)") }
            XCTAssert(message.contains("../../../../../../../../etc/passwd"), message)
            XCTAssertFalse(message.contains("root:"), message)
        }
    }

    /// The AutoML fuzzer's leak (fuzz_automl_leak.bin: an empty manifest.json): reading an empty file
    /// with FileManager.contents(atPath:) leaked 4 KiB (`make sanitize` catches the leak itself).
    func testEmptyManifestAndLabelFilesAreReadSafely() throws {
        let folder = directory.appendingPathComponent("automl_empty_manifest").path
        XCTAssertThrowsError(try LocalModel(manifestFolder: folder)) { error in
            XCTAssert("\(error)".contains("is not a JSON object"), "\(error)")
        }
        XCTAssertEqual(try Labels(contentsOf: folder + "/dict.txt").names, [])
    }

    /// A path that never ends (a device, a FIFO's writer, a huge file) is read up to the limit only.
    func testEndlessFilesAreRefusedAtTheLimit() throws {
        guard FileManager.default.fileExists(atPath: "/dev/zero") else { throw XCTSkip("no /dev/zero") }
        let start = Date()
        XCTAssertThrowsError(try LocalModel(manifestPath: "/dev/zero")) { error in
            XCTAssert("\(error)".contains("larger than 1 MiB"), "\(error)")
        }
        XCTAssertThrowsError(try Labels(contentsOf: "/dev/zero")) { error in
            XCTAssert("\(error)".contains("Limits.maxAssociatedFileBytes"), "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 1)
    }
}
