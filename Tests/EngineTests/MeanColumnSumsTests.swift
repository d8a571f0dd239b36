import XCTest
@testable import Engine
import TestSupport

/// The spatial means' column sums (`ColumnSums`: vectors of 16 columns, passes of up to 64 over
/// blocks of rows, a scalar tail) against one plain sum per column.
final class MeanColumnSumsTests: XCTestCase {
    private let widths = [1, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 96, 111, 128, 180, 200]

    /// The integer sums (8-bit into `Int32`) for widths around every pass size, random bytes and
    /// the extremes (every byte −128 or 127, or 0 or 255, over many rows).
    func testIntegerColumnSumsMatchPlainSums() {
        var rng = KernelTestRandom(seed: 31)
        func check<T: FixedWidthInteger & ColumnSummand>(_: T.Type, rows: Int, columns: Int, fill: (inout KernelTestRandom) -> T) where T.Sum == Int32 {
            let source = (0 ..< rows * columns).map { _ in fill(&rng) }
            let start = (0 ..< columns).map { _ in Int32(truncatingIfNeeded: rng.next() % 1000) }
            var expected = start, actual = start
            for c in 0 ..< columns {
                for r in 0 ..< rows { expected[c] &+= Int32(source[r * columns + c]) }
            }
            source.withUnsafeBufferPointer { ColumnSums.add($0.baseAddress!, rows: rows, columns: columns, into: &actual) }
            XCTAssertEqual(actual, expected, "\(T.self) \(rows) × \(columns)")
        }
        for columns in widths {
            for rows in [1, 2, 7, 49] {
                check(Int8.self, rows: rows, columns: columns) { Int8(truncatingIfNeeded: $0.next()) }
                check(UInt8.self, rows: rows, columns: columns) { UInt8(truncatingIfNeeded: $0.next()) }
            }
            check(Int8.self, rows: 3000, columns: columns) { _ in .min }
            check(Int8.self, rows: 3000, columns: columns) { _ in .max }
            check(UInt8.self, rows: 3000, columns: columns) { _ in .max }
            check(UInt8.self, rows: 5, columns: columns) { _ in 0 }
        }
    }

    /// The float sums add each column's rows in order, as `MeanFloat32`'s generic walk and
    /// TFLite's reference do, so they are the same floats bit for bit (NaN where theirs is NaN):
    /// random values, signed zeros, infinities and NaN, rows spanning several blocks.
    func testFloatColumnSumsAddRowsInOrder() {
        var rng = KernelTestRandom(seed: 37)
        let specials: [Float] = [0, -0, .infinity, -.infinity, .nan, 1e30, -1e30, .leastNonzeroMagnitude]
        for columns in widths {
            for rows in [1, 3, 49, 700] {
                let source = (0 ..< rows * columns).map { _ -> Float in
                    let r = rng.next()
                    return r % 53 == 0 ? specials[Int(r / 53 % UInt64(specials.count))] : Float(Int64(bitPattern: r) % 20000) / 977
                }
                var expected = [Float](repeating: 0, count: columns), actual = expected
                for r in 0 ..< rows {
                    for c in 0 ..< columns { expected[c] += source[r * columns + c] }
                }
                source.withUnsafeBufferPointer { ColumnSums.add($0.baseAddress!, rows: rows, columns: columns, into: &actual) }
                let same = zip(actual, expected).allSatisfy { $0.isNaN ? $1.isNaN : $0.bitPattern == $1.bitPattern }
                XCTAssert(same, "\(rows) × \(columns): \(actual) against \(expected)")
            }
        }
    }
}
