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
}
