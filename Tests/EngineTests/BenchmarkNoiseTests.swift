import Engine
import Foundation
import TestSupport
import XCTest

/// `Interpreter.fillInputsWithNoise`: the benchmark inputs are SplitMix64 draws, checked against
/// the published first outputs of SplitMix64 from seed 0 (0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4).
final class BenchmarkNoiseTests: XCTestCase {
    func testFloatInputsTakeTheTop24BitsOfEachDraw() throws {
        let model = Fixtures.directory("EngineTests").appendingPathComponent("float/add_bcast_1x4x4x3_1x1x1x3/model.tflite")
        let interpreter = try Interpreter(modelPath: model.path)
        try interpreter.fillInputsWithNoise(seed: 0)
        let first = try interpreter.input(at: 0).data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        XCTAssertEqual(first.count, 3)
        XCTAssertEqual(first[0], Float(0xE220A8) / Float(1 << 23) - 1)
        XCTAssertEqual(first[1], Float(0x6E789E) / Float(1 << 23) - 1)
        XCTAssertTrue(first.allSatisfy { $0 >= -1 && $0 < 1 })
        // The stream goes on into the second input: its first element is the 4th draw.
        let second = try interpreter.input(at: 1).data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        XCTAssertEqual(second.count, 48)
        XCTAssertFalse(first.contains(second[0]))
    }

    func testIntegerInputsTakeTheLowByteOfEachDraw() throws {
        let model = Fixtures.directory("EngineTests").appendingPathComponent("quant/int8_conv_k1_s1_valid_8x8_c16to35/model.tflite")
        let interpreter = try Interpreter(modelPath: model.path)
        try interpreter.fillInputsWithNoise(seed: 0)
        let bytes = [UInt8](try interpreter.input(at: 0).data)
        XCTAssertEqual(Array(bytes.prefix(2)), [0xAF, 0xF4])
        // Deterministic: a second interpreter gets the same bytes; another seed does not.
        let again = try Interpreter(modelPath: model.path)
        try again.fillInputsWithNoise(seed: 0)
        XCTAssertEqual([UInt8](try again.input(at: 0).data), bytes)
        try again.fillInputsWithNoise(seed: 1)
        XCTAssertNotEqual([UInt8](try again.input(at: 0).data), bytes)
    }
}
