import Foundation
import XCTest
import Engine
import TestSupport

/// The FlexBuffers reader against blobs written by the Python `flatbuffers.flexbuffers` Builder
/// (Tests/Goldens/make_flexbuffer_fixtures.py), and against malformed blobs that must throw.
final class FlexBuffersTests: XCTestCase {
    private struct Fixture: Decodable {
        struct Valid: Decodable { let name, hex, rendering: String }
        struct Malformed: Decodable { let name, hex, why: String }
        let valid: [Valid]
        let malformed: [Malformed]
    }

    private func fixtures() throws -> Fixture {
        let url = Fixtures.directory("EngineTests").appendingPathComponent("flexbuffers/cases.json")
        return try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
    }

    func testValidBlobsRenderLikePython() throws {
        let fixture = try fixtures()
        XCTAssertGreaterThan(fixture.valid.count, 40)
        for c in fixture.valid {
            let bytes = try XCTUnwrap(bytes(hex: c.hex), c.name)
            bytes.withUnsafeBytes { raw in
                do {
                    let rendering = try render(FlexBuffer.root(raw))
                    XCTAssertEqual(rendering, c.rendering, c.name)
                } catch {
                    XCTFail("\(c.name): \(error)")
                }
            }
        }
    }

    func testMalformedBlobsThrow() throws {
        let fixture = try fixtures()
        XCTAssertGreaterThan(fixture.malformed.count, 15)
        for c in fixture.malformed {
            let bytes = try XCTUnwrap(bytes(hex: c.hex), c.name)
            bytes.withUnsafeBytes { raw in
                do {
                    let rendering = try render(FlexBuffer.root(raw))
                    XCTFail("\(c.name) (\(c.why)) was read as \(rendering.prefix(120))")
                } catch {
                    // Expected; the message must say where the problem is.
                    print("  \(c.name): \(error)")
                }
            }
        }
    }

    /// Every key of the detection options map is found by binary search, and absent keys are not.
    func testMapLookup() throws {
        let fixture = try fixtures()
        for name in ["detection_postprocess_options", "map_300_keys", "map_keys_sharing_prefixes", "map_empty"] {
            let c = try XCTUnwrap(fixture.valid.first { $0.name == name })
            try XCTUnwrap(bytes(hex: c.hex)).withUnsafeBytes { raw in
                let map = try FlexBuffer.root(raw).map()
                for i in 0 ..< map.count {
                    let key = try map.key(at: i)
                    let found = try XCTUnwrap(try map.value(forKey: key), "\(name): key '\(key)'")
                    XCTAssertEqual(try render(found), try render(map.values.element(at: i)), "\(name): key '\(key)'")
                    XCTAssertNil(try map.value(forKey: key + "\u{1}"), "\(name)")
                }
                XCTAssertNil(try map.value(forKey: "zzzz_missing"))
            }
        }
        let options = try XCTUnwrap(fixture.valid.first { $0.name == "detection_postprocess_options" })
        try XCTUnwrap(bytes(hex: options.hex)).withUnsafeBytes { raw in
            let map = try FlexBuffer.root(raw).map()
            XCTAssertEqual(try map.value(forKey: "max_detections")?.int(), 10)
            XCTAssertEqual(try map.value(forKey: "num_classes")?.uint(), 90)
            XCTAssertEqual(try map.value(forKey: "use_regular_nms")?.bool(), false)
            XCTAssertEqual(try map.value(forKey: "nms_iou_threshold")?.double(), 0.6)
            XCTAssertEqual(try map.value(forKey: "y_scale")?.double(), 10)
            XCTAssertThrowsError(try map.value(forKey: "nms_iou_threshold")?.bool())
            XCTAssertThrowsError(try map.value(forKey: "max_detections")?.string())
        }
    }

    func testConversionsAndTypeMismatches() throws {
        // uint 2^64-1 does not fit Int64; -3 is not a uint; a string is not a number.
        try XCTUnwrap(bytes(hex: "ffffffffffffffff0b08")).withUnsafeBytes { raw in
            let root = try FlexBuffer.root(raw)
            XCTAssertEqual(root.type, .uint)
            XCTAssertEqual(try root.uint(), UInt64.max)
            XCTAssertThrowsError(try root.int())
            XCTAssertEqual(try root.double(), 18446744073709551615.0)
        }
        try XCTUnwrap(bytes(hex: "fd0401")).withUnsafeBytes { raw in
            let root = try FlexBuffer.root(raw)
            XCTAssertEqual(try root.int(), -3)
            XCTAssertThrowsError(try root.uint()) { error in
                XCTAssertEqual(error as? FlexBufferError, .typeMismatch(expected: "a non-negative integer", found: .int))
            }
            XCTAssertEqual(try root.bool(), true)
            XCTAssertThrowsError(try root.map())
            XCTAssertThrowsError(try root.vector())
        }
    }

    // MARK: - Rendering (must match render() in make_flexbuffer_fixtures.py)

    private func render(_ ref: FlexBufferReference) throws -> String {
        let name = typeName(ref.type)
        switch ref.type {
        case .null: return "null"
        case .int, .indirectInt: return "\(name)(\(try ref.int()))"
        case .uint, .indirectUInt: return "\(name)(\(try ref.uint()))"
        case .float, .indirectFloat:
            let bits = String(try ref.double().bitPattern, radix: 16)
            return "\(name)(\(String(repeating: "0", count: 16 - bits.count))\(bits))"
        case .bool: return "bool(\(try ref.bool()))"
        case .string: return "string(\(hex(Array(try ref.string().utf8))))"
        case .key: return "key(\(hex(Array(try ref.string().utf8))))"
        case .blob: return "blob(\(hex(Array(try ref.blob()))))"
        case .map:
            let map = try ref.map()
            var parts = [String]()
            for i in 0 ..< map.count {
                parts.append("key(\(hex(Array(try map.key(at: i).utf8)))):\(try render(map.values.element(at: i)))")
            }
            return "map{" + parts.joined(separator: ",") + "}"
        default:
            let vector = try ref.vector()
            var parts = [String]()
            for i in 0 ..< vector.count { parts.append(try render(vector.element(at: i))) }
            return "\(name)[" + parts.joined(separator: ",") + "]"
        }
    }

    /// `vectorUInt2` → `vector_uint2`, the lower-cased name of Python's `Type` enum.
    private func typeName(_ type: FlexBufferType) -> String {
        var out = ""
        for ch in "\(type)".replacingOccurrences(of: "UInt", with: "Uint") {
            if ch.isUppercase { out += "_" + ch.lowercased() } else { out.append(ch) }
        }
        return out
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    private func bytes(hex: String) -> [UInt8]? {
        var out = [UInt8](), chars = Array(hex.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var i = 0
        while i < chars.count {
            guard let byte = UInt8(String(decoding: chars[i ..< i + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(byte)
            i += 2
        }
        return out
    }
}
