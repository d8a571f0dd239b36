import Engine
import Foundation
import XCTest
@testable import Tasks
import TestSupport

/// TFLite Metadata (`M001`) and the zip archive of associated files packed behind the model.
final class MetadataTests: XCTestCase {
    func testEfficientNetMetadata() throws {
        let graph = try Graph(contentsOf: TaskFixtures.efficientnetF32)
        let metadata = try XCTUnwrap(try ModelMetadata(graph: graph))
        XCTAssertEqual(metadata.name, "EfficientNet-Lite0 (float32)")
        XCTAssertEqual(metadata.inputs.count, 1)
        XCTAssertEqual(metadata.outputs.count, 1)
        let normalization = try XCTUnwrap(metadata.inputs[0].normalization)
        XCTAssertEqual(normalization.mean, [127.5])
        XCTAssertEqual(normalization.std, [127.5])
        XCTAssertFalse(metadata.inputs[0].isGrayscale)

        let labels = try XCTUnwrap(metadata.outputs[0].associatedFiles.first { $0.type == .tensorAxisLabels })
        XCTAssertEqual(labels.name, "labels.txt")
        let archive = try XCTUnwrap(try ZipArchive(graph.file.bytes))
        XCTAssertEqual(archive.entries.map(\.name), ["labels.txt"])
        let text = String(decoding: try XCTUnwrap(try archive.contents(of: "labels.txt")), as: UTF8.self)
        let lines = Labels(fileContents: text).names
        XCTAssertEqual(lines.count, 1000)
        XCTAssertEqual(lines.first, "tench")
        XCTAssertEqual(lines[285], "Egyptian cat")
        XCTAssertNil(try archive.contents(of: "no-such-file.txt"))
    }

    func testModelWithoutMetadataHasNone() throws {
        let graph = try Graph(contentsOf: TaskFixtures.smallUnlabelled)
        XCTAssertNil(try ModelMetadata(graph: graph))
    }

    // MARK: - Hand-made metadata buffers

    /// A minimal `M001` buffer whose root table has one field, `name` = "demo":
    ///
    ///     0: u32 16 (root table)        4: "M001"
    ///     8: vtable [8, 8, 4, 0]       16: i32 8 (vtable at 16 − 8)   20: u32 4 (string at 24)
    ///    24: u32 4, "demo", 0, padding
    static func handMade() -> [UInt8] {
        var b = [UInt8]()
        func u32(_ v: UInt32) { b += withUnsafeBytes(of: v.littleEndian, Array.init) }
        func u16(_ v: UInt16) { b += withUnsafeBytes(of: v.littleEndian, Array.init) }
        u32(16); b += Array("M001".utf8)
        u16(8); u16(8); u16(4); u16(0)
        u32(8); u32(4)
        u32(4); b += Array("demo".utf8) + [0, 0, 0, 0]
        return b
    }

    func parse(_ bytes: [UInt8]) throws -> ModelMetadata {
        try bytes.withUnsafeBytes { try ModelMetadata(bytes: $0) }
    }

    func assertMalformed(_ bytes: [UInt8], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let metadata = try parse(bytes)
            XCTFail("\(what): parsed as \(metadata.name ?? "nil")", file: file, line: line)
        } catch let error as MetadataError {
            guard case .malformed = error else { return XCTFail("\(what): \(error)", file: file, line: line) }
        } catch {
            XCTFail("\(what): \(type(of: error)) \(error), expected MetadataError.malformed", file: file, line: line)
        }
    }

    func testHandMadeBufferParses() throws {
        let metadata = try parse(Self.handMade())
        XCTAssertEqual(metadata.name, "demo")
        XCTAssertNil(metadata.description)
        XCTAssertEqual(metadata.inputs.count, 0)
        XCTAssertEqual(metadata.outputs.count, 0)
        XCTAssertEqual(metadata.associatedFiles, [])
    }

    func testCorruptBuffersThrowMetadataError() {
        let good = Self.handMade()
        assertMalformed([], "empty")
        assertMalformed(Array(good.prefix(6)), "shorter than the header")
        var wrongIdentifier = good
        wrongIdentifier[7] = UInt8(ascii: "2")
        assertMalformed(wrongIdentifier, "identifier M002")
        var rootPastEnd = good
        rootPastEnd[0] = 200
        assertMalformed(rootPastEnd, "root offset past the end")
        var badVTable = good
        badVTable[16 ..< 20] = [0x18, 0xFC, 0xFF, 0xFF]  // soffset −1000: vtable after the buffer
        assertMalformed(badVTable, "vtable outside the buffer")
        var longString = good
        longString[24] = 0xE8; longString[25] = 0x03  // string length 1000
        assertMalformed(longString, "string past the end")
        assertMalformed(Array(good.prefix(30)), "truncated in the string")
    }

    func testTruncatedRealMetadataThrows() throws {
        let graph = try Graph(contentsOf: TaskFixtures.efficientnetF32)
        let entry = try XCTUnwrap(graph.metadata.first { $0.name == "TFLITE_METADATA" })
        let bytes = Array(entry.data.bytes)
        XCTAssertNoThrow(try parse(bytes))
        assertMalformed(Array(bytes.prefix(bytes.count / 2)), "first half of the real metadata")
    }

    func testCorruptZipIsReported() throws {
        // An end-of-central-directory record claiming a directory larger than the file.
        var bytes = [UInt8](repeating: 0, count: 22)
        bytes[0 ..< 4] = [0x50, 0x4B, 0x05, 0x06]
        bytes[12] = 0xFF
        XCTAssertThrowsError(try bytes.withUnsafeBytes { try ZipArchive($0) })
        // Not a zip archive at all.
        XCTAssertNil(try [UInt8](repeating: 7, count: 100).withUnsafeBytes { try ZipArchive($0) })
    }
}
