import XCTest
import TestSupport

/// RESIZE_NEAREST_NEIGHBOR (the upsampling of FPN-style detector heads) in float32, int8 and
/// uint8 I/O, against LiteRT's reference kernels, byte for byte (Tests/Goldens/make_nearest_goldens.py).
final class ResizeNearestNeighborGoldenTests: XCTestCase {
    func testResizeNearestNeighborGoldens() throws {
        try checkSuite(Fixtures.directory("EngineTests").appendingPathComponent("resize_nearest"))
    }
}
