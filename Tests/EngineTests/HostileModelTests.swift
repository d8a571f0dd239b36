import Foundation
import XCTest
@testable import Engine
import TestSupport

/// Valid flatbuffers that lie (made by Tests/Goldens/make_hostile_models.py): each must be
/// refused with an error naming the problem before any kernel runs — never a crash or a write
/// outside the memory the engine owns.
final class HostileModelTests: XCTestCase {
    private let directory = Fixtures.directory("EngineTests").appendingPathComponent("hostile")

    /// Loads, allocates and invokes `name` as an app would; the error's text, or "no error".
    private func runError(_ name: String) -> String {
        do {
            let interpreter = try Interpreter(modelPath: directory.appendingPathComponent(name).path)
            try interpreter.allocateTensors()
            try interpreter.invoke()
            return "no error"
        } catch {
            return "\(error)"
        }
    }

    private func assertError(_ name: String, mentions fragments: String..., file: StaticString = #filePath, line: UInt = #line) {
        let message = runError(name)
        for fragment in fragments {
            XCTAssert(message.contains(fragment), "\(name): '\(message)' does not mention '\(fragment)'", file: file, line: line)
        }
    }

    /// The fuzzer's heap overflow: an empty variable output used to alias a shared 16-byte block.
    func testOperatorCannotResizeAnEmptyVariable() {
        assertError("pad_into_empty_variable.tflite", mentions: "PAD", "'out'", "variable of shape [0]")
    }

    func testOperatorCannotWriteAnEmptyConstant() {
        assertError("pad_into_empty_constant.tflite", mentions: "operator 0 (PAD)", "'out'", "constant")
    }

    func testOperatorCannotWriteAConstant() {
        assertError("pad_into_constant.tflite", mentions: "operator 0 (PAD)", "'out'", "constant")
    }

    func testVariableWithFileDataIsRefused() {
        assertError("variable_with_data.tflite", mentions: "tensor 2", "variable tensor with constant data")
    }

    func testOperatorCannotChangeAVariablesShape() {
        assertError("pad_resizes_variable.tflite", mentions: "PAD", "variable of shape [1, 1, 1, 1]", "[1, 4, 5, 1]")
    }

    // MARK: - Resource exhaustion (Limits)

    /// `assertError`, and the refusal must come in well under a second (the old engine allocated
    /// gigabytes or ran for minutes).
    private func assertRefusedQuickly(_ name: String, mentions fragments: String..., file: StaticString = #filePath, line: UInt = #line) {
        let start = Date()
        let message = runError(name)
        for fragment in fragments {
            XCTAssert(message.contains(fragment), "\(name): '\(message)' does not mention '\(fragment)'", file: file, line: line)
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 1, "\(name) took too long to refuse", file: file, line: line)
    }

    /// The fuzzer's out-of-memory: an 8 KB model whose sparse input declares [1, 16187404, 12, 3]
    /// floats with an empty traversal order. The dense 2.3 GB were allocated before the sparsity
    /// parameters were checked; now they are checked first (and a valid sparse tensor's dense
    /// form is held to 64 × the file, at least 64 MiB: Fixtures/sparse_errors). The allocation
    /// itself shows only under the fuzzer's malloc limit, which replays this input from
    /// Fuzz/Corpus/model.
    func testSparseParametersAreCheckedBeforeTheDenseMemory() {
        assertRefusedQuickly("fuzz_sparse_huge_shape_bad_traversal.tflite", mentions: "sparse tensor", "traversal_order [] is not a permutation")
    }

    func testThreeGiBOfActivationsAreRefused() {
        assertRefusedQuickly("add_16384x16384.tflite", mentions: "[1, 16384, 16384]", "1024 MiB", "Limits.maxActivationBytes")
    }

    func testOneOutputBeyondTheMemoryLimitIsRefusedAtItsOperator() {
        assertRefusedQuickly("resize_to_1_2_gib.tflite", mentions: "operator 0 (RESIZE_BILINEAR)", "'resized'", "[1, 16384, 20000, 1]",
                             "Limits.maxActivationBytes")
    }

    func testAbsurdWorkIsRefusedBeforeRunning() {
        assertRefusedQuickly("conv_52g_macs.tflite", mentions: "operator 0 (CONV_2D)", "52613349376 multiply-accumulates", "Limits.maxMACsPerInvoke")
    }

    /// Pooling costs its window per output, not just the elements it reads and writes.
    func testPoolingWindowsCountAsWork() {
        assertRefusedQuickly("average_pool_huge_window.tflite", mentions: "operator 0 (AVERAGE_POOL_2D)", "Limits.maxMACsPerInvoke")
    }

    /// The fuzzer's timeout (FuzzModel, 20 M MACs allowed): a 3×3 AVERAGE_POOL_2D on [1, 64774, 7, 8]
    /// was estimated at 7 M (elements in and out) and ran for 14 s under ASan; it costs 33 M.
    func testFuzzedPoolIsHeldToTheWorkLimit() throws {
        let graph = try Graph(contentsOf: directory.appendingPathComponent("fuzz_average_pool_window_cost.tflite").path)
        var limits = Limits()
        limits.maxMACsPerInvoke = 20_000_000
        XCTAssertThrowsError(try Plan(graph: graph, limits: limits)) { error in
            XCTAssert("\(error)".contains("AVERAGE_POOL_2D") && "\(error)".contains("32646096 multiply-accumulates"), "\(error)")
        }
    }

    /// The fuzzer's trap: STRIDED_SLICE of an empty [0, 525569, 6, 805306371] input with strides
    /// [−2³¹ + 1, −1, −65534, 4351]. Prepare multiplied the empty output's unchecked steps by the
    /// input's strides and overflowed `Int` (a release build died of it); the empty slice now
    /// copies nothing. Since a fuzzed CONCATENATION of such an input trapped on the product of
    /// the dimensions after its axis, a shape whose dimensions (a 0 counted as 1) exceed the size
    /// limit is refused at load, and this input with it.
    func testEmptyStridedSliceWithHugeStepsIsNoTrap() throws {
        assertRefusedQuickly("fuzz_strided_slice_empty_huge_steps.tflite", mentions: "[0, 525569, 6, 805306371]", "a 0 counted as 1")
    }

    /// The fuzzer's slow unit: RESIZE_BILINEAR of a [1, 2, 2, 0] input to [1, 16384, 20000, 0]. No
    /// bytes and no elements (estimated cost 0), but the kernel's loops visit 327 M positions (13 s
    /// under ASan): empty dimensions still cost the loops around them.
    func testEmptyTensorsStillCostTheirLoops() throws {
        let graph = try Graph(contentsOf: directory.appendingPathComponent("fuzz_resize_zero_channels.tflite").path)
        var limits = Limits()
        limits.maxMACsPerInvoke = 20_000_000
        XCTAssertThrowsError(try Plan(graph: graph, limits: limits)) { error in
            XCTAssert("\(error)".contains("RESIZE_BILINEAR") && "\(error)".contains("Limits.maxMACsPerInvoke"), "\(error)")
        }
    }

    /// A float TANH element costs what hundreds of multiply-accumulates do (18.6 ns on a Zen 4
    /// core): counted as two elements touched, the default budget admitted minutes of TANH. The
    /// float model's 175 elements in and out count 350 × 256; its int8 twin, a table look-up per
    /// element, 350.
    func testFloatTranscendentalsCountForHundredsOfMultiplyAccumulates() throws {
        var limits = Limits()
        limits.maxMACsPerInvoke = 10_000
        let fixtures = Fixtures.directory("EngineTests")
        let float = try Graph(contentsOf: fixtures.appendingPathComponent("float/tanh_1x5x5x7/model.tflite").path)
        XCTAssertThrowsError(try Plan(graph: float, limits: limits)) { error in
            XCTAssert("\(error)".contains("TANH") && "\(error)".contains("89600 multiply-accumulates"), "\(error)")
        }
        let int8 = try Graph(contentsOf: fixtures.appendingPathComponent("quant_ops/tanh_1x5x5x7_int8/model.tflite").path)
        XCTAssertNoThrow(try Plan(graph: int8, limits: limits))
    }

    func testHundredMillionDetectionsAreRefused() {
        assertRefusedQuickly("detection_100m.tflite", mentions: "TFLite_Detection_PostProcess", "100000000 detection slots", "Limits.maxDetections")
    }

    /// Limits are configurable: raised, the same models plan (and lowered, small models fail).
    func testLimitsAreConfigurable() throws {
        let graph = try Graph(contentsOf: directory.appendingPathComponent("detection_100m.tflite").path)
        var limits = Limits()
        limits.maxDetections = 100_000_000
        limits.maxActivationBytes = 1 << 32
        XCTAssertNoThrow(try Plan(graph: graph, limits: limits))

        let conv = try Graph(contentsOf: directory.appendingPathComponent("conv_52g_macs.tflite").path)
        limits = Limits()
        limits.maxMACsPerInvoke = 60_000_000_000
        XCTAssertNoThrow(try Plan(graph: conv, limits: limits))

        var options = Interpreter.Options()
        options.limits.maxActivationBytes = 1000
        let small = Fixtures.directory("EngineTests").appendingPathComponent("float/net_mobilenet_v1_025_128/model.tflite").path
        XCTAssertNoThrow(try Interpreter(modelPath: small))
        XCTAssertThrowsError(try Interpreter(modelPath: small, options: options)) { error in
            XCTAssert("\(error)".contains("the activation memory limit is 1000 bytes"), "\(error)")
        }
    }
}

