import Foundation
import XCTest
import Engine
import TestSupport

/// Whole SSD detectors, image in, four post-processed outputs out, against LiteRT's reference
/// kernels (Tests/Goldens/make_mediapipe_detector_goldens.py): the COCO SSD from ../shared on every
/// shared photo and 5 random inputs, and the bundled person detectors. Quantized pipelines are
/// compared byte for byte (classes, count, and the float boxes and scores).
final class DetectionModelGoldenTests: XCTestCase {
    private let fixtures = Fixtures.directory("EngineTests")

    func testCOCOSSDMobileNetV1() throws { try checkSuite(fixtures.appendingPathComponent("ssd_coco")) }
    func testBundledPersonDetectors() throws { try checkSuite(fixtures.appendingPathComponent("person_detector")) }
}
