import Foundation
import XCTest
import Engine
import TestSupport

/// Every float32 golden fixture (single operators and whole networks) against LiteRT's outputs.
final class FloatGoldenTests: XCTestCase {
    func testFloatGoldens() throws {
        try checkSuite(Fixtures.directory("EngineTests").appendingPathComponent("float"))
    }
}
