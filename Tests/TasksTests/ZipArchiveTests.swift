import Foundation
import XCTest
@testable import Tasks
import TestSupport

/// The zip reader behind TFLite Metadata's associated files, on archives written by Python's zipfile
/// (Tests/Goldens/make_zip_fixtures.py) after 1000 bytes of other data, as in a .tflite file.
final class ZipArchiveTests: XCTestCase {
    private let directory = Fixtures.directory("TasksTests").appendingPathComponent("zip")

    private func withArchive<R>(_ name: String, _ body: (ZipArchive) throws -> R) throws -> R {
        let bytes = try Data(contentsOf: directory.appendingPathComponent(name))
        return try bytes.withUnsafeBytes { raw in
            let archive = try XCTUnwrap(try ZipArchive(raw))
            return try body(archive)
        }
    }

    func testStoredAndDeflatedEntries() throws {
        let expected = try String(contentsOf: directory.appendingPathComponent("labels.txt"), encoding: .utf8)
        try withArchive("appended.zip") { archive in
            XCTAssertEqual(archive.entries.map(\.name), ["note.txt", "labels.txt"])
            XCTAssertEqual(archive.entries.map(\.method), [0, 8], "stored, then deflated")
            XCTAssertEqual(try archive.contents(of: "note.txt").map { String(decoding: $0, as: UTF8.self) }, "stored entry\n")
            XCTAssertEqual(try archive.contents(of: "labels.txt").map { String(decoding: $0, as: UTF8.self) }, expected)
            XCTAssertNil(try archive.contents(of: "missing.txt"))
        }
    }

    func testCorruptDeflatedDataThrows() throws {
        try withArchive("corrupt_deflate.zip") { archive in
            XCTAssertEqual(try archive.contents(of: "note.txt").map { String(decoding: $0, as: UTF8.self) }, "stored entry\n")
            XCTAssertThrowsError(try archive.contents(of: "labels.txt")) { error in
                XCTAssert("\(error)".contains("labels.txt"), "\(error)")
            }
        }
    }
}
