import XCTest
import TestSupport

/// Dynamic-range ("hybrid") CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED: int8 weights on
/// float32 activations quantized on the fly, against LiteRT's reference kernels (1e-5).
final class HybridGoldenTests: XCTestCase {
    func testHybridGoldens() throws {
        try checkSuite(Fixtures.directory("EngineTests").appendingPathComponent("hybrid"))
    }
}
