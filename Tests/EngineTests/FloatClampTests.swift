import XCTest
@testable import Engine

/// Float activations limit values as TFLite's reference kernels do, `std::min(std::max(x, lower),
/// upper)`: a bound replaces only a value beyond it, so −0 stays −0 under RELU (LiteRT 2.3's
/// BUILTIN_REF and BUILTIN kernels give −0 for RELU, RELU6 and ADD + RELU of −0) and NaN stays
/// NaN. Swift's `max(-0.0, 0)` is +0, which these kernels must not use.
final class FloatClampTests: XCTestCase {
    private let inputs: [Float] = [-0.0, 0, -1, 2, .nan, -.infinity, .infinity, 7]

    private func bits(_ values: [Float]) -> [UInt32] { values.map(\.bitPattern) }

    private func run(_ kernel: any Kernel, _ operands: [[Float]], outputCount: Int) -> [Float] {
        var tensors = operands.map { values in values.withUnsafeBytes { Array($0) } } + [[UInt8](repeating: 0xFF, count: 4 * outputCount)]
        evaluate([kernel], on: &tensors, threads: 1)
        return tensors.last!.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    func testReluFamilyKeepsNegativeZeroAndNaN() {
        let expected: [(ClosedRange<Float>, [Float])] = [
            (0 ... .infinity, [-0.0, 0, 0, 2, .nan, 0, .infinity, 7]),
            (0 ... 6, [-0.0, 0, 0, 2, .nan, 0, 6, 6]),
            (-1 ... 1, [-0.0, 0, -1, 1, .nan, -1, 1, 1]),
        ]
        for (range, values) in expected {
            let relu = ReluFloat32(count: inputs.count, lower: range.lowerBound, upper: range.upperBound, input: 0, output: 1)
            XCTAssertEqual(bits(run(relu, [inputs], outputCount: inputs.count)), bits(values), "\(range)")
            XCTAssertEqual(bits(inputs.map { FloatGEMM.clamp($0, range.lowerBound, range.upperBound) }), bits(values), "\(range)")
            // The lanes the convolutions and the fused stages clamp with agree with the scalar form.
            let lanes = FloatGEMM.clamp(FloatGEMM.Half(inputs), range.lowerBound, range.upperBound)
            XCTAssertEqual(bits((0 ..< 8).map { lanes[$0] }), bits(values), "\(range), lanes")
        }
    }

    func testAddWithReluKeepsNegativeZero() throws {
        let lhs: [Float] = [-0.0, -0.0, 0, -1, .nan, 1], rhs: [Float] = [-0.0, 0, -0.0, 0.5, 1, -3]
        let add = ArithmeticFloat32<Addition>(lhs: 0, rhs: 1, output: 2, broadcast: try XCTUnwrap(Broadcast([6], [6])),
                                              lower: 0, upper: .infinity)
        XCTAssertEqual(bits(run(add, [lhs, rhs], outputCount: 6)), bits([-0.0, 0, 0, 0, .nan, 0]))
    }
}
