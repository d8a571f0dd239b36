@testable import Engine
import XCTest

/// `LibstdcxxOrdering` against the orderings libstdc++ itself prints for the same inputs
/// (`Tests/Goldens/make_libstdcxx_orderings.cpp`, g++ 12.2 / libstdc++ 6.0.30 of Debian 12):
/// `std::partial_sort` for every prefix length, `std::stable_sort`, and `std::inplace_merge`,
/// on scores with many ties, where the algorithms differ from a plain sort.
final class LibstdcxxOrderingTests: XCTestCase {
    /// One input of the generator: the values, `partial[p - 1]` the order after
    /// `std::partial_sort` with prefix `p`, and the order after `std::stable_sort`.
    private struct Recorded {
        var values: [Float]
        var partial: [[Int32]]
        var stable: [Int32]
    }

    private static let recorded: [Recorded] = [
        Recorded(values: [1, 1, 1, 1],
                 partial: [[0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3], [1, 3, 0, 2]],
                 stable: [0, 1, 2, 3]),
        Recorded(values: [0, 1, 0, 1, 0, 1],
                 partial: [[1, 0, 2, 3, 4, 5], [3, 1, 2, 0, 4, 5], [5, 1, 3, 2, 4, 0],
                           [1, 3, 5, 0, 4, 2], [1, 3, 5, 4, 0, 2], [1, 3, 5, 4, 0, 2]],
                 stable: [1, 3, 5, 0, 2, 4]),
        Recorded(values: [3, 1, 3, 2, 3, 1, 2],
                 partial: [[0, 1, 2, 3, 4, 5, 6], [2, 0, 1, 3, 4, 5, 6], [4, 0, 2, 1, 3, 5, 6],
                           [4, 0, 2, 3, 1, 5, 6], [4, 0, 2, 6, 3, 5, 1], [4, 0, 2, 6, 3, 1, 5],
                           [4, 0, 2, 3, 6, 1, 5]],
                 stable: [0, 2, 4, 3, 6, 1, 5]),
        Recorded(values: [2, 2, 1, 2, 2, 1, 2, 2, 1],
                 partial: [[0, 1, 2, 3, 4, 5, 6, 7, 8], [0, 1, 2, 3, 4, 5, 6, 7, 8], [3, 1, 0, 2, 4, 5, 6, 7, 8],
                           [1, 3, 4, 0, 2, 5, 6, 7, 8], [3, 4, 1, 6, 0, 5, 2, 7, 8], [3, 4, 1, 7, 6, 0, 5, 2, 8],
                           [3, 4, 1, 7, 0, 6, 2, 5, 8], [7, 4, 1, 3, 0, 6, 2, 5, 8], [3, 4, 7, 1, 0, 6, 8, 2, 5]],
                 stable: [0, 1, 3, 4, 6, 7, 2, 5, 8]),
        Recorded(values: [0.5, 0.25, 0.5, 0.75, 0.25, 0.5, 0.75, 0.5, 0.25, 0.75, 0.5, 0.5],
                 partial: [[3, 1, 2, 0, 4, 5, 6, 7, 8, 9, 10, 11], [6, 3, 1, 0, 4, 5, 2, 7, 8, 9, 10, 11],
                           [9, 6, 3, 1, 4, 5, 2, 7, 8, 0, 10, 11], [9, 3, 6, 0, 4, 1, 2, 7, 8, 5, 10, 11],
                           [9, 3, 6, 5, 0, 4, 1, 7, 8, 2, 10, 11], [6, 3, 9, 0, 7, 2, 4, 1, 8, 5, 10, 11],
                           [6, 3, 9, 7, 0, 2, 5, 4, 8, 1, 10, 11], [9, 6, 3, 7, 0, 10, 2, 5, 8, 4, 1, 11],
                           [9, 3, 6, 7, 10, 0, 11, 2, 5, 4, 1, 8], [3, 9, 6, 7, 10, 11, 0, 2, 5, 8, 4, 1],
                           [3, 9, 6, 7, 11, 0, 10, 2, 5, 8, 1, 4], [3, 9, 6, 7, 2, 0, 10, 5, 11, 8, 1, 4]],
                 stable: [3, 6, 9, 0, 2, 5, 7, 10, 11, 1, 4, 8]),
    ]

    /// The whole array after `std::partial_sort`, not only its prefix: the heap leaves the
    /// rest in an order the next call's input depends on.
    func testPartialSortMatchesLibstdcxx() {
        for r in Self.recorded {
            for prefix in 1 ... r.values.count {
                var order = (0 ..< r.values.count).map(Int32.init)
                r.values.withUnsafeBufferPointer { v in
                    order.withUnsafeMutableBufferPointer { o in
                        LibstdcxxOrdering.partialSortDescending(o.baseAddress!, count: v.count, prefix: prefix, by: v.baseAddress!)
                    }
                }
                XCTAssertEqual(order, r.partial[prefix - 1], "\(r.values) prefix \(prefix)")
            }
        }
    }

    /// `LibstdcxxOrdering.stableSortDescending` of `values`, with its working arrays.
    private func stableOrder(_ values: [Float]) -> [Int32] {
        var order = [Int32](repeating: -1, count: values.count), temp = order
        var keys = [UInt32](repeating: 0, count: 2 * values.count), histogram = [Int](repeating: 0, count: 256)
        values.withUnsafeBufferPointer { v in
            LibstdcxxOrdering.stableSortDescending(&order, count: v.count, by: v.baseAddress!, temp: &temp, keys: &keys,
                                                   histogram: &histogram)
        }
        return order
    }

    func testStableSortMatchesLibstdcxx() {
        for r in Self.recorded {
            XCTAssertEqual(stableOrder(r.values), r.stable, "\(r.values)")
        }
    }

    /// The radix sort orders as libstdc++'s stable sort does on the recorded cases, and as a
    /// stable sort does on random values drawn from few (ties), both zeros, infinities,
    /// subnormals and negatives, over lengths that take every byte pass.
    func testStableSortOfNumbersMatchesLibstdcxx() {
        for r in Self.recorded where !r.values.contains(where: \.isNaN) {
            XCTAssertEqual(stableOrder(r.values), r.stable, "\(r.values)")
        }
        var rng = KernelTestRandom(seed: 5)
        let pool: [Float] = [0, -0, 1, -1, 0.5, 0.5000001, .infinity, -.infinity, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
                             .greatestFiniteMagnitude, .leastNormalMagnitude / 4, 0.75, 0.25]  // a subnormal too
        for count in [1, 2, 7, 100, 2000] {
            for trial in 0 ..< 4 {
                let values = (0 ..< count).map { _ in
                    trial % 2 == 0 ? pool[Int.random(in: 0 ..< pool.count, using: &rng)] : Float.random(in: -2 ... 2, using: &rng)
                }
                // The stable order spelled out: decreasing values, equal ones by index.
                let expected: [Int32] = (0 ..< Int32(count)).sorted { (a: Int32, b: Int32) -> Bool in
                    let x = values[Int(a)], y = values[Int(b)]
                    return x > y || (x == y && a < b)
                }
                XCTAssertEqual(stableOrder(values), expected, "count \(count), trial \(trial)")
            }
        }
        XCTAssertEqual(stableOrder([1, 3, 3, -0, 0]), [1, 2, 0, 3, 4])
    }

    /// `std::inplace_merge` of `[5, 3, 3, 1]` (ids 0...3) and `[4, 3, 3, 1, 0]` (ids 10...14).
    func testMergeMatchesLibstdcxx() {
        var entries: [(score: Float, id: Int)] = [(5, 0), (3, 1), (3, 2), (1, 3), (4, 10), (3, 11), (3, 12), (1, 13), (0, 14)]
        var temp = entries
        entries.withUnsafeMutableBufferPointer { e in
            temp.withUnsafeMutableBufferPointer { t in
                LibstdcxxOrdering.mergeDescending(e.baseAddress!, firstCount: 4, secondCount: 5, temp: t.baseAddress!) { $0.score }
            }
        }
        XCTAssertEqual(entries.map(\.id), [0, 10, 1, 2, 11, 12, 3, 13, 14])
    }

    /// Empty inputs and a zero-length second run leave everything as it is.
    func testEmptyRuns() {
        var order: [Int32] = [7]
        var temp: [Int32] = [7]
        var keys: [UInt32] = [0, 0], histogram = [Int](repeating: 0, count: 256)
        let values: [Float] = [1]
        values.withUnsafeBufferPointer { v in
            LibstdcxxOrdering.stableSortDescending(&order, count: 0, by: v.baseAddress!, temp: &temp, keys: &keys,
                                                   histogram: &histogram)
        }
        XCTAssertEqual(order, [7])
        var entries: [Float] = [3, 2]
        var scratch: [Float] = [0, 0]
        entries.withUnsafeMutableBufferPointer { e in
            scratch.withUnsafeMutableBufferPointer { t in
                LibstdcxxOrdering.mergeDescending(e.baseAddress!, firstCount: 2, secondCount: 0, temp: t.baseAddress!) { $0 }
            }
        }
        XCTAssertEqual(entries, [3, 2])
    }
}
