import XCTest
@testable import Engine

/// The 8-bit MUL kernel: its vector lanes against its scalar reference arithmetic (`multiplied`,
/// TFLite's reference loop), for every pair of bytes and the multipliers a model can carry, and
/// whole broadcasts run in parts on several threads.
final class MulQuantizedTests: XCTestCase {
    /// Output multipliers: ordinary ones, a left shift (the scales' ratio above 1), the deepest
    /// right shift, and `Int32.min`, whose square saturates.
    private let multipliers = [QuantizedMultiplier(0.0123), QuantizedMultiplier(0.000_0071), QuantizedMultiplier(3.7),
                               QuantizedMultiplier(multiplier: 1 << 30, shift: -31), QuantizedMultiplier(multiplier: Int32.min, shift: -2),
                               QuantizedMultiplier(multiplier: Int32.max, shift: 0)]

    private func kernel<T: FixedWidthInteger & Sendable>(_: T.Type, broadcast: Broadcast, multiplier: QuantizedMultiplier,
                                                         rangeKind: Int = 0, rng: inout KernelTestRandom) -> MulQuantized<T> {
        func value() -> Int32 { Int32.random(in: Int32(T.min) ... Int32(T.max), using: &rng) }
        let bounds = [value(), value()].sorted(), zeroPoint = value()
        // `rangeKind` 0: the type's range, 1: a random one, 2: a ReLU's (from the zero point up:
        // the one-shift form's `nonnegative` variant).
        let ranges = [Int32(T.min) ... Int32(T.max), bounds[0] ... bounds[1], zeroPoint ... Int32(T.max)]
        return MulQuantized<T>(lhs: 0, rhs: 1, output: 2, broadcast: broadcast, lhsZeroPoint: value(), rhsZeroPoint: value(),
                               multiplier: multiplier, outputZeroPoint: zeroPoint, range: ranges[rangeKind % 3])
    }

    private func checkEveryPair<T: FixedWidthInteger & Sendable>(_: T.Type, offset: Int, rng: inout KernelTestRandom) {
        let count = 1 << 16 + 5  // every pair of bytes, then a tail of 5
        let x = (0 ..< count).map { T(truncatingIfNeeded: $0 & 255) }, y = (0 ..< count).map { T(truncatingIfNeeded: $0 >> 8) }
        for (k, multiplier) in multipliers.enumerated() {
            let mul = kernel(T.self, broadcast: Broadcast([count], [count])!, multiplier: multiplier, rangeKind: k + offset, rng: &rng)
            #if SWIFTLITE_AVX2
            if multiplier.shift < 0 && multiplier.multiplier != Int32.min {
                XCTAssertNotNil(mul.stage.wide, "\(multiplier): the AVX2 lanes take the one-shift form")
            }
            #endif
            for (repeatingLeft, repeatingRight) in [(false, false), (true, false), (false, true)] {
                var z = [T](repeating: 0, count: count)
                mul.multiply(x, repeatingLeft: repeatingLeft, y, repeatingRight: repeatingRight, &z, count: count)
                let mismatch = (0 ..< count).first { z[$0] != mul.multiplied(x[repeatingLeft ? 0 : $0], y[repeatingRight ? 0 : $0]) }
                XCTAssertNil(mismatch, "\(T.self) \(multiplier) zero points \(mul.lhsZeroPoint), \(mul.rhsZeroPoint), \(mul.outputZeroPoint), "
                             + "range \(mul.range), repeating \(repeatingLeft), \(repeatingRight): element \(mismatch as Any)")
            }
        }
    }

    func testVectorLanesMatchTheReferenceForEveryPair() {
        var rng = KernelTestRandom(seed: 31)
        // Each multiplier with each kind of range across the two types.
        checkEveryPair(Int8.self, offset: 0, rng: &rng)
        checkEveryPair(UInt8.self, offset: 1, rng: &rng)
    }

    /// `eval` on 1 and 3 threads (every operator cut into parts) against the reference applied
    /// element by element through `Broadcast.apply`, with one guard byte past the output.
    func testBroadcastsInPartsOnThreads() {
        var rng = KernelTestRandom(seed: 32)
        let shapes: [([Int], [Int])] = [([1, 9, 7, 35], [1, 1, 1, 35]), ([1, 1, 1, 35], [1, 9, 7, 35]), ([300], [300]),
                                        ([2, 1, 5], [1, 3, 1]), ([4, 40], []), ([], [77]), ([3, 1, 20], [3, 5, 1])]
        for threads in [1, 3] {
            for (lhsShape, rhsShape) in shapes {
                let broadcast = Broadcast(lhsShape, rhsShape)!
                let mul = kernel(Int8.self, broadcast: broadcast, multiplier: multipliers[0], rangeKind: 1, rng: &rng)
                let x = (0 ..< lhsShape.reduce(1, *)).map { _ in Int8.random(in: .min ... .max, using: &rng) }
                let y = (0 ..< rhsShape.reduce(1, *)).map { _ in Int8.random(in: .min ... .max, using: &rng) }
                var expected = [Int8](repeating: 0, count: broadcast.outputCount)
                expected.withUnsafeMutableBufferPointer { broadcast.apply(x, y, $0.baseAddress!) { mul.multiplied($0, $1) } }
                // One guard byte past the output.
                var tensors = [x.map { UInt8(bitPattern: $0) }, y.map { UInt8(bitPattern: $0) },
                               [UInt8](repeating: 0x5A, count: broadcast.outputCount + 1)]
                evaluate([mul], on: &tensors, threads: threads)
                let output = tensors[2].map { Int8(bitPattern: $0) }
                XCTAssertEqual(Array(output.prefix(broadcast.outputCount)), expected, "\(lhsShape) · \(rhsShape) on \(threads) threads")
                XCTAssertEqual(output.last, 0x5A, "\(lhsShape) · \(rhsShape): wrote past the output")
            }
        }
    }
}
