import XCTest
import TestSupport

/// Every quantized single-operator fixture (int8, uint8 and converter-style uint8 I/O variants)
/// against LiteRT's reference kernels, byte for byte.
final class QuantizedOpGoldenTests: XCTestCase {
    func testQuantizedOpGoldens() throws {
        try checkSuite(Fixtures.directory("EngineTests").appendingPathComponent("quant_ops"))
    }
}
