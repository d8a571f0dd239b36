import XCTest
@testable import Engine

/// The swish fusion (`Swish.fused`): the fused kernel gives the bytes of the activation then the
/// MUL run one after the other, for float and for 8-bit tables, whichever operand order the MUL
/// has; and pairs that are not a swish stay unfused.
final class SwishTests: XCTestCase {
    func testFloatSwishIsTheTwoKernelsBitForBit() throws {
        var rng = KernelTestRandom(seed: 51)
        let count = 1000  // a tail of 8 past the last 16
        var x = (0 ..< count).map { _ in Float(Double.random(in: -30 ... 30, using: &rng)) }
        x[0 ..< 8] = [.nan, .infinity, -.infinity, 0, -0, 16.62, -9, 1e-40]
        let bytes = x.withUnsafeBytes { Array($0) }
        let logistic = LogisticFloat32(count: count, input: 0, output: 1)
        for (lhs, rhs) in [(0, 1), (1, 0)] {
            for range in [-Float.greatestFiniteMagnitude ... .greatestFiniteMagnitude, 0 ... 6] {
                let mul = ArithmeticFloat32<Multiplication>(lhs: lhs, rhs: rhs, output: 2, broadcast: Broadcast([count], [count])!,
                                                           lower: range.lowerBound, upper: range.upperBound)
                let swish = try XCTUnwrap(Swish.fused(logistic, mul, readers: [2, 1, 1]) as? SwishFloat32)
                var separate = [bytes, [UInt8](repeating: 0, count: 4 * count), [UInt8](repeating: 0, count: 4 * count)]
                evaluate([logistic, mul], on: &separate, threads: 1)
                for threads in [1, 3] {
                    var fused = [bytes, [UInt8](repeating: 0xEE, count: 4 * count), [UInt8](repeating: 0, count: 4 * count)]
                    evaluate([swish], on: &fused, threads: threads)
                    XCTAssert(sameFloats(fused[2], separate[2]), "operands \(lhs), \(rhs), range \(range), \(threads) threads")
                    XCTAssertEqual(fused[1], [UInt8](repeating: 0xEE, count: 4 * count), "the logistic's output is not written")
                }
            }
        }
    }

    /// The same floats bit for bit, where any two NaNs count as the same (the sign and payload a
    /// product of two NaNs keeps depends on the order the compiler gave its operands).
    private func sameFloats(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        let x = a.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }, y = b.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return x.count == y.count && zip(x, y).allSatisfy { $0.bitPattern == $1.bitPattern || ($0.isNaN && $1.isNaN) }
    }

    private func checkTable<T: FixedWidthInteger & Sendable>(_: T.Type, rng: inout KernelTestRandom) throws {
        // Every byte, then a tail.
        let count = 256 + 7
        let x = (0 ..< count).map { UInt8(truncatingIfNeeded: $0) }
        let logistic = ActivationLookupTable.logistic(T.self, inputScale: 0.05, inputZeroPoint: 3, outputScale: 1.0 / 256,
                                                      outputZeroPoint: T.isSigned ? -128 : 0)
        let activation = ByteLookupKernel(table: logistic, count: count, input: 0, output: 1)
        for (lhs, rhs) in [(0, 1), (1, 0)] {
            let mul = MulQuantized<T>(lhs: lhs, rhs: rhs, output: 2, broadcast: Broadcast([count], [count])!,
                                      lhsZeroPoint: Int32.random(in: Int32(T.min) ... Int32(T.max), using: &rng),
                                      rhsZeroPoint: Int32.random(in: Int32(T.min) ... Int32(T.max), using: &rng),
                                      multiplier: QuantizedMultiplier(0.0173), outputZeroPoint: 5, range: Int32(T.min) ... Int32(T.max))
            let swish = try XCTUnwrap(Swish.fused(activation, mul, readers: [2, 1, 1]) as? ByteLookupKernel)
            var separate = [x, [UInt8](repeating: 0, count: count), [UInt8](repeating: 0, count: count)]
            evaluate([activation, mul], on: &separate, threads: 1)
            var fused = [x, [UInt8](repeating: 0xEE, count: count), [UInt8](repeating: 0, count: count)]
            evaluate([swish], on: &fused, threads: 2)
            XCTAssertEqual(fused[2], separate[2], "\(T.self) operands \(lhs), \(rhs)")
        }
    }

    func testByteSwishIsOneTableOfTheTwoKernels() throws {
        var rng = KernelTestRandom(seed: 52)
        try checkTable(Int8.self, rng: &rng)
        try checkTable(UInt8.self, rng: &rng)
    }

    func testOtherPairsStayUnfused() {
        let count = 64
        let logistic = LogisticFloat32(count: count, input: 0, output: 1)
        func mul(_ lhs: Int, _ rhs: Int, _ shapes: ([Int], [Int]) = ([64], [64])) -> ArithmeticFloat32<Multiplication> {
            ArithmeticFloat32<Multiplication>(lhs: lhs, rhs: rhs, output: 2, broadcast: Broadcast(shapes.0, shapes.1)!, lower: -1, upper: 1)
        }
        // The logistic's output read elsewhere too; the MUL of another tensor; a broadcast MUL.
        XCTAssertNil(Swish.fused(logistic, mul(0, 1), readers: [2, 2, 1]))
        XCTAssertNil(Swish.fused(logistic, mul(3, 1), readers: [1, 1, 1, 1]))
        XCTAssertNil(Swish.fused(logistic, mul(1, 1), readers: [1, 2, 1]))
        XCTAssertNil(Swish.fused(LogisticFloat32(count: 8, input: 0, output: 1), mul(0, 1, ([8, 8], [8])), readers: [2, 1, 1]))
        XCTAssertNil(Swish.fused(logistic, ArithmeticFloat32<Addition>(lhs: 0, rhs: 1, output: 2, broadcast: Broadcast([64], [64])!,
                                                                      lower: -1, upper: 1), readers: [2, 1, 1]))
    }
}
