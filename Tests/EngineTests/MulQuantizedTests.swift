import XCTest
@testable import Engine
#if SWIFTLITE_AVX2
import SIMDKernels
import SIMDKernelsAVX512
#endif

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
    /// element by element through `Broadcast.apply`, with one guard byte past the output: both
    /// types, the three kinds of range, two multipliers. Rows of whole vectors (32, 144) and of
    /// vectors and a tail (35), the scale on either side, same shapes, and broadcasts that take
    /// the general loop.
    func testBroadcastsInPartsOnThreads() {
        var rng = KernelTestRandom(seed: 32)
        let shapes: [([Int], [Int])] = [([1, 9, 7, 35], [1, 1, 1, 35]), ([1, 1, 1, 35], [1, 9, 7, 35]), ([300], [300]),
                                        ([1, 5, 6, 32], [1, 1, 1, 32]), ([1, 1, 1, 144], [1, 3, 4, 144]), ([3, 7], [7]),
                                        ([2, 1, 5], [1, 3, 1]), ([4, 40], []), ([], [77]), ([3, 1, 20], [3, 5, 1])]
        func check<T: FixedWidthInteger & Sendable>(_: T.Type, rangeKind: Int, multiplier: QuantizedMultiplier) {
            for threads in [1, 3] {
                for (lhsShape, rhsShape) in shapes {
                    let broadcast = Broadcast(lhsShape, rhsShape)!
                    let mul = kernel(T.self, broadcast: broadcast, multiplier: multiplier, rangeKind: rangeKind, rng: &rng)
                    let x = (0 ..< lhsShape.reduce(1, *)).map { _ in T.random(in: .min ... .max, using: &rng) }
                    let y = (0 ..< rhsShape.reduce(1, *)).map { _ in T.random(in: .min ... .max, using: &rng) }
                    var expected = [T](repeating: 0, count: broadcast.outputCount)
                    expected.withUnsafeMutableBufferPointer { broadcast.apply(x, y, $0.baseAddress!) { mul.multiplied($0, $1) } }
                    // One guard byte past the output.
                    var tensors = [x.map { UInt8(truncatingIfNeeded: $0) }, y.map { UInt8(truncatingIfNeeded: $0) },
                                   [UInt8](repeating: 0x5A, count: broadcast.outputCount + 1)]
                    evaluate([mul], on: &tensors, threads: threads)
                    let label = "\(T.self) \(lhsShape) · \(rhsShape), range \(mul.range), on \(threads) threads"
                    XCTAssertEqual(tensors[2].prefix(broadcast.outputCount).map { T(truncatingIfNeeded: $0) }, expected, label)
                    XCTAssertEqual(tensors[2].last, 0x5A, "\(label): wrote past the output")
                }
            }
        }
        for rangeKind in 0 ..< 3 {
            for multiplier in multipliers.prefix(2) {
                check(Int8.self, rangeKind: rangeKind, multiplier: multiplier)
                check(UInt8.self, rangeKind: rangeKind, multiplier: multiplier)
            }
        }
    }

    #if SWIFTLITE_AVX2
    /// Both compilations of `QuantizedMultiplication.rows` (the AVX2 floor's, and the AVX-512
    /// one where this machine runs it) against the reference for every pair of bytes (256 rows
    /// of 256), and for one row read again under rows of 7 to 144 (tails, whole vectors, the
    /// four-vector stores across rows): both types, the three kinds of range, every multiplier
    /// that has the one-shift form.
    func testRowLoopsMatchTheReferenceForEveryPair() {
        var rng = KernelTestRandom(seed: 33)
        typealias Rows = (Bool, UnsafeRawPointer, Int, UnsafeRawPointer, Int, UnsafeMutablePointer<UInt8>, Int, Int,
                          (lhs: Int32, rhs: Int32, output: Int32), SIMDKernels.QuantizedMultiplication.Stage, Bool, Int32, Int32) -> Void
        var loops: [(String, Rows)] = [("AVX2", SIMDKernels.QuantizedMultiplication.rows)]
        if KernelSelection.runsAVX512 { loops.append(("AVX-512", SIMDKernelsAVX512.QuantizedMultiplication.rows)) }
        func check<T: FixedWidthInteger & Sendable>(_: T.Type, rangeKind: Int, multiplier: QuantizedMultiplier) {
            let mul = kernel(T.self, broadcast: Broadcast([256], [256])!, multiplier: multiplier, rangeKind: rangeKind, rng: &rng)
            guard let wide = mul.stage.wide else { return }
            let every = (0 ..< 1 << 16).map { UInt8(truncatingIfNeeded: $0) }, rowOfY = (0 ..< 1 << 16).map { UInt8($0 >> 8) }
            let cases = [(width: 256, rows: 256, yStride: 256)] + [7, 16, 32, 35, 144].map { (width: $0, rows: 9, yStride: 0) }
            for (name, rows) in loops {
                for c in cases {
                    let x = Array(every.prefix(c.width * c.rows)), y = c.yStride == 0 ? Array(every.suffix(c.width)) : rowOfY
                    var z = [UInt8](repeating: 0x5A, count: c.width * c.rows + 1)
                    rows(T.isSigned, x, c.width, y, c.yStride, &z, c.rows, c.width,
                         (mul.lhsZeroPoint, mul.rhsZeroPoint, mul.outputZeroPoint),
                         (UnsafeRawPointer(mul.stage.multipliers.pointer), UnsafeRawPointer(wide.pointer)),
                         mul.stage.clampsBelowZeroPoint, mul.range.lowerBound, mul.range.upperBound)
                    let mismatch = (0 ..< c.width * c.rows).first { i in
                        let expected = mul.multiplied(T(truncatingIfNeeded: x[i]), T(truncatingIfNeeded: y[i / c.width * c.yStride + i % c.width]))
                        return z[i] != UInt8(truncatingIfNeeded: expected)
                    }
                    XCTAssertNil(mismatch, "\(name) \(T.self) \(multiplier) range \(mul.range), \(c.rows) rows of \(c.width): element \(mismatch as Any)")
                    XCTAssertEqual(z.last, 0x5A, "\(name): wrote past the output")
                }
            }
        }
        for rangeKind in 0 ..< 3 {
            for multiplier in multipliers {
                check(Int8.self, rangeKind: rangeKind, multiplier: multiplier)
                check(UInt8.self, rangeKind: rangeKind, multiplier: multiplier)
            }
        }
    }
    #endif
}
