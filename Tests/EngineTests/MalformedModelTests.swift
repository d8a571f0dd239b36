import Foundation
import XCTest
@testable import Engine
import TestSupport

/// Broken model files (made by Tests/Goldens/make_malformed_models.py) must throw an error that
/// names the problem — never crash.
final class MalformedModelTests: XCTestCase {
    private let directory = Fixtures.directory("EngineTests").appendingPathComponent("malformed")

    private func loadError(_ name: String) -> String {
        do {
            let graph = try Graph(contentsOf: directory.appendingPathComponent(name).path)
            _ = try Plan(graph: graph)
            return "no error"
        } catch {
            return "\(error)"
        }
    }

    private func assertError(_ name: String, mentions fragments: String..., file: StaticString = #filePath, line: UInt = #line) {
        let message = loadError(name)
        print("  \(name): \(message)")
        for fragment in fragments {
            XCTAssert(message.contains(fragment), "\(name): '\(message)' does not mention '\(fragment)'", file: file, line: line)
        }
    }

    func testTruncatedFile() { assertError("truncated.tflite", mentions: "outside the 460-byte buffer") }
    func testRandomBytes() { assertError("random_bytes.tflite", mentions: "file identifier") }
    func testWrongIdentifier() { assertError("wrong_identifier.tflite", mentions: "'XYZ9'", "TFL3") }
    func testRootOffsetOutsideBuffer() { assertError("root_offset_outside.tflite", mentions: "root table", "outside") }
    func testTensorIndexOutOfRange() { assertError("tensor_index_out_of_range.tflite", mentions: "CONV_2D", "999", "out of range") }
    func testOpcodeIndexOutOfRange() { assertError("opcode_index_out_of_range.tflite", mentions: "opcode index 42") }
    func testCyclicGraph() { assertError("cyclic_graph.tflite", mentions: "produced later by operator 1") }
    func testDisconnectedGraph() { assertError("disconnected_graph.tflite", mentions: "'orphan'", "never produced") }
    func testAbsurdShape() { assertError("absurd_shape.tflite", mentions: "tensor 0", "too large", "exceed the limit") }
    func testConstantShorterThanShape() { assertError("constant_too_short.tflite", mentions: "holds 10 bytes", "needs 288") }
    func testUnknownCustomOperator() { assertError("unknown_custom_op.tflite", mentions: "operator 1", "MyUnknownOp", "not supported") }
    func testConvFilterOfWrongRank() { assertError("conv_filter_rank3.tflite", mentions: "operator 0 (CONV_2D)", "expected rank 4") }

    func testMissingFile() {
        XCTAssertThrowsError(try Graph(contentsOf: "/nonexistent/model.tflite")) { error in
            XCTAssertEqual(error as? ModelError, .unreadable(path: "/nonexistent/model.tflite", reason: "No such file or directory"))
        }
    }

    /// A shape with no elements whose other dimensions multiply past the size limit is refused
    /// like any absurd shape: kernels multiply runs of a shape's dimensions (a fuzzed model's
    /// CONCATENATION of `[0, 2^40, 2^40]` trapped on the elements after its axis).
    func testZeroSizedShapesOfAbsurdDimensionsAreRefused() {
        XCTAssertNil(checkedByteCount([0, 1 << 40, 1 << 40], elementSize: 1))
        XCTAssertNil(checkedByteCount([1 << 20, 0, 1 << 13], elementSize: 4))
        XCTAssertEqual(checkedByteCount([0, 4], elementSize: 4), 0)
        XCTAssertEqual(checkedByteCount([2, 3, 0, 7], elementSize: 2), 0)
        XCTAssertEqual(checkedByteCount([2, 3], elementSize: 4), 24)
        XCTAssertNil(checkedByteCount([2, -3], elementSize: 4))
    }

    func testEmptyData() {
        XCTAssertThrowsError(try Graph(data: Data())) { XCTAssert("\($0)".contains("too short")) }
    }

    /// Every prefix of a valid model and many single-byte corruptions either load or throw.
    func testCorruptionsNeverCrash() throws {
        try sweepCorruptions(of: directory.appendingPathComponent("valid.tflite"), count: 3000)
    }

    /// The same for models that exercise the quantized, detection and shape kernels' prepare code
    /// (corrupt quantization parameters, options and custom-option blobs). SWIFTLITE_FUZZ_COUNT
    /// raises the number of corruptions per model for a longer local run.
    func testCorruptedKernelModelsNeverCrash() throws {
        let count = Int(ProcessInfo.processInfo.environment["SWIFTLITE_FUZZ_COUNT"] ?? "") ?? 300
        let fixtures = Fixtures.directory("EngineTests")
        if ProcessInfo.processInfo.environment["SWIFTLITE_FUZZ_ALL"] != nil {
            // Every fixture model of the single-op suites (a long local run).
            for suite in ["float", "quant", "quant_ops", "detection", "detection_errors", "errors"] {
                let dir = fixtures.appendingPathComponent(suite)
                for name in try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() {
                    let model = dir.appendingPathComponent(name).appendingPathComponent("model.tflite")
                    if FileManager.default.fileExists(atPath: model.path), !name.hasPrefix("net_") {
                        try sweepCorruptions(of: model, count: count)
                    }
                }
            }
            return
        }
        for relative in ["quant/int8_conv_k1_s1_valid_8x8_c16to35", "quant_ops/add_bcast_1x4x4x3_1x4x1x1_relu_uint8",
                         "detection/op_fast_basic", "float/resize_bilinear_up_4x5_to_7x9_half_pixel",
                         "float/strided_slice_masks_shrink_1x5x6x3", "quant_ops/add_bcast_1x4x4x3_1x4x1x1_relu_int8"] {
            try sweepCorruptions(of: fixtures.appendingPathComponent(relative).appendingPathComponent("model.tflite"), count: count)
        }
    }

    private func sweepCorruptions(of url: URL, count: Int) throws {
        let valid = try Data(contentsOf: url)
        var loaded = 0, rejected = 0
        func attempt(_ data: Data) {
            do {
                let plan = try Plan(graph: Graph(data: data))
                // Corrupt shapes can ask for gigabytes; preparing them is the test, running them is slow.
                if plan.arenaBytes < 1 << 26 { Session(plan: plan).invoke() }
                loaded += 1
            } catch {
                rejected += 1
            }
        }
        for length in stride(from: 0, to: valid.count, by: 7) { attempt(valid.prefix(length)) }
        var rng = SystemRandomNumberGenerator.seeded(42)
        for _ in 0 ..< count {
            var corrupt = valid
            let position = Int(rng.next() % UInt64(valid.count))
            corrupt[position] = UInt8(truncatingIfNeeded: rng.next())
            attempt(corrupt)
        }
        print("  corruptions of \(url.deletingLastPathComponent().lastPathComponent): \(loaded) still loaded and ran, \(rejected) rejected with an error")
        XCTAssertGreaterThan(rejected, 0)
    }
}
