import XCTest
import Tasks

/// Label files as people write them (the real-world-models issue: an AutoML Vision Edge
/// `dict.txt` with CRLF endings used to be read as a single label).
final class LabelsTests: XCTestCase {
    func testLineEndings() {
        for text in ["cat\ndog\nbird", "cat\r\ndog\r\nbird\r\n", "cat\rdog\rbird\r", "cat\r\ndog\nbird\r"] {
            XCTAssertEqual(Labels(fileContents: text).names, ["cat", "dog", "bird"], text.debugDescription)
        }
    }

    func testByteOrderMarkAndTrailingBlankLinesAreDropped() {
        XCTAssertEqual(Labels(fileContents: "\u{FEFF}cat\r\ndog\r\n\r\n  \n").names, ["cat", "dog"])
        XCTAssertEqual(Labels(fileContents: "").names, [])
    }

    /// Blank lines inside the file are labels too (a class may have an empty name), and
    /// spaces inside a label are kept.
    func testInnerBlankLinesAndSpacesAreKept() {
        XCTAssertEqual(Labels(fileContents: "background\n\nsea lion\n").names, ["background", "", "sea lion"])
    }

    func testCRLFFileFromDisk() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("labels-\(UUID().uuidString).txt")
        try Data("\u{FEFF}daisy\r\ndandelion\r\nroses\r\n".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        XCTAssertEqual(try Labels(contentsOf: url.path).names, ["daisy", "dandelion", "roses"])
    }
}
