import XCTest
import TestSupport

/// The operators added for real-world models (PRELU, SPLIT, SPLIT_V, TRANSPOSE_CONV, EXP,
/// DEPTH_TO_SPACE, SPACE_TO_DEPTH, ARG_MAX, ARG_MIN, CAST, MAXIMUM, MINIMUM, TRANSPOSE, GATHER,
/// MIRROR_PAD, DIV, SQUARED_DIFFERENCE, RSQRT, SUM, REDUCE_MAX) in float32, int8 and uint8
/// against LiteRT's reference kernels: quantized byte for byte, float to 1e-5 (or exactly, for
/// operators that only move, compare or convert values).
final class NewOperatorGoldenTests: XCTestCase {
    func testNewOperatorGoldens() throws {
        try checkSuite(Fixtures.directory("EngineTests").appendingPathComponent("ops_v2"))
    }
}
