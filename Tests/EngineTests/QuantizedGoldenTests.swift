import Foundation
import XCTest
import Engine
import TestSupport

/// Every quantized golden fixture (single CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED
/// operators, uint8 and int8) against LiteRT's reference kernels, byte for byte.
final class QuantizedGoldenTests: XCTestCase {
    func testQuantizedGoldens() throws {
        try checkSuite(Fixtures.directory("EngineTests").appendingPathComponent("quant"))
    }
}
