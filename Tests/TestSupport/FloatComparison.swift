import XCTest

/// Fails unless `actual` matches `expected` to float rounding: element `i` may differ by
/// `1e-5 × max(scale[i], 1)`, where `scale[i]` is the sum of the magnitudes of the products behind
/// it (fast paths use FMA and another summation order than a scalar reference).
public func assertClose(_ actual: [Float], _ expected: [Float], scale: [Float], _ what: String,
                        file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(actual.count, expected.count, what, file: file, line: line)
    guard actual.count == expected.count else { return }
    for i in expected.indices where abs(actual[i] - expected[i]) > 1e-5 * max(scale[i], 1) {
        return XCTFail("\(what): element \(i) is \(actual[i]), expected \(expected[i])", file: file, line: line)
    }
}
