import Foundation
import XCTest
@testable import Engine
import TestSupport

/// Kernels that index their input by values computed at prepare, driven to the edge sizes against
/// LiteRT's reference kernels byte for byte (Tests/Goldens/make_bounds_goldens.py →
/// Fixtures/bounds/FAMILY/). Where LiteRT itself reads outside its input (int8 RESIZE_BILINEAR
/// whose rounded scale puts the last sample's lower index at the input size), the expected bytes
/// are SwiftLite's documented semantics instead: that index clamped to the last row or column.
final class IndexBoundsGoldenTests: XCTestCase {
    private func suite(_ family: String) -> URL {
        Fixtures.directory("EngineTests").appendingPathComponent("bounds").appendingPathComponent(family)
    }

    /// 8 → 242, 3 → 1000, 1-pixel inputs and outputs, downscales; every align_corners /
    /// half_pixel_centers combination; float32, int8 (fixed point) and uint8 (float path).
    func testResizeBilinearEdgeSizes() throws { try checkSuite(suite("resize_bilinear")) }

    func testResizeNearestNeighborEdgeSizes() throws { try checkSuite(suite("resize_nearest")) }

    /// MAX_POOL_2D / AVERAGE_POOL_2D: windows larger than the input, strides larger than the window.
    func testPoolingWindowEdges() throws { try checkSuite(suite("pool")) }

    /// STRIDED_SLICE past both ends, negative strides, masks, shrink.
    func testSliceEdges() throws { try checkSuite(suite("slice")) }

    /// PAD on one side of a 1-pixel input; MIRROR_PAD at its largest REFLECT / SYMMETRIC pads.
    func testPadEdges() throws { try checkSuite(suite("pad")) }

    /// GATHER at the first and last index of an axis, negative axis, a 1-element input.
    func testGatherEdges() throws { try checkSuite(suite("gather")) }

    /// TRANSPOSE (rank 5, 1-sized axes), SPACE_TO_DEPTH / DEPTH_TO_SPACE at the block size,
    /// CONCATENATION on a negative axis, SPLIT / SPLIT_V into 1-wide pieces.
    func testLayoutEdges() throws { try checkSuite(suite("layout")) }

    /// ARG_MAX / ARG_MIN / MEAN / SUM / REDUCE_MAX over first, last, negative and repeated axes.
    func testReductionAxisEdges() throws { try checkSuite(suite("reduce")) }

    /// TRANSPOSE_CONV (float32): a 1-pixel input at stride 5, a filter larger than the output,
    /// strides beyond the filter, an odd SAME output: windows stick out of the output on every side.
    func testTransposeConvEdges() throws { try checkSuite(suite("transpose_conv")) }

    /// The fuzzed model (Fixtures/hostile/fuzz_resize_bilinear_int8_242x191.tflite): int8
    /// [1, 8, 8, 8] to 242 × 191, where TFLite's row scale 34 gives output row 241 the lower index
    /// 8 of 8 (LiteRT reads the bytes after its input there). SwiftLite clamps that index: with an
    /// input whose eight rows are equal, every output row is the same, the last one included.
    func testFuzzedResizeReadsOnlyItsInput() throws {
        let path = Fixtures.directory("EngineTests").appendingPathComponent("hostile")
            .appendingPathComponent("fuzz_resize_bilinear_int8_242x191.tflite").path
        let interpreter = try Interpreter(modelPath: path)
        try interpreter.allocateTensors()
        let row = (0 ..< 64).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
        try interpreter.copy(Data((0 ..< 8).flatMap { _ in row }), toInputAt: 0)
        try interpreter.invoke()
        let output = try interpreter.output(at: 0)
        XCTAssertEqual(output.shape.dimensions, [1, 242, 191, 8])
        let bytes = [UInt8](output.data), rowBytes = 191 * 8
        let first = bytes[0 ..< rowBytes]
        for r in 1 ..< 242 where bytes[r * rowBytes ..< (r + 1) * rowBytes] != first {
            XCTFail("output row \(r) differs from row 0: a sample read something other than the input")
            return
        }
    }

    /// Every sample the int8 fixed-point resize uses is inside the input, for every size pair up
    /// to 64 → 1024 and every option combination (the invariant prepare checks).
    func testFixedPointSamplesStayInside() {
        for (align, half) in [(false, false), (true, false), (false, true)] {
            let options = ResizeBilinearOptions(alignCorners: align, halfPixelCenters: half)
            for input in 1 ... 64 {
                for output in [1, 2, 3, 7, 191, 242, 255, 1000, 1024] {
                    for s in ResizeBilinear.fixedPointSamples(input: input, output: output, options)
                    where !(0 ..< input).contains(s.lower) || !(0 ..< input).contains(s.upper) {
                        XCTFail("\(input) → \(output) align=\(align) half=\(half): \(s)")
                        return
                    }
                    for s in ResizeBilinear.samples(input: input, output: output, options)
                    where !(0 ..< input).contains(s.lower) || !(0 ..< input).contains(s.upper) {
                        XCTFail("float \(input) → \(output) align=\(align) half=\(half): \(s)")
                        return
                    }
                }
            }
        }
    }
}
