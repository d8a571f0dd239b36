import Foundation
import XCTest
@testable import Engine
@testable import Tasks
import TestSupport

/// `InputTensorEncoder` against the references of `Tests/Goldens/make_preprocessing_goldens.py`, compared
/// exactly: numpy for `.halfPixelCenters` (half-pixel centres, bilinear, edge replicate, rounded to
/// uint8), and the input tensors MediaPipe's own ImageClassifier builds for `.mediapipe`.
final class PreprocessingTests: XCTestCase {
    static let directory = Fixtures.directory("TasksTests").appendingPathComponent("preprocessing")

    /// A `[1, height, width, channels]` image input; `TensorDescriptor` has no public initialiser.
    func input(width: Int, height: Int, type: DataType, channels: Int = 3) -> TensorDescriptor {
        TensorDescriptor(index: 0, name: "image", dataType: type, shape: [1, height, width, channels], shapeSignature: nil,
                         quantization: nil, isVariable: false, constantData: nil)
    }

    func source() throws -> MPImage {
        try MPImage(contentsOf: Self.directory.appendingPathComponent("source_7x5.png"))
    }

    func testHalfPixelCentersMatchNumpyReference() throws { try checkReference(.halfPixelCenters, suffix: "half_pixel") }

    func testMediaPipeConventionMatchesMediaPipe() throws { try checkReference(.mediapipe, suffix: "mediapipe") }

    func checkReference(_ convention: ResamplingConvention, suffix: String) throws {
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.directory.appendingPathComponent("manifest.json"))) as! [String: Any]
        let cases = manifest["cases"] as! [[String: Any]]
        XCTAssertEqual(cases.count, 8)
        let image = try source()
        XCTAssertEqual([image.width, image.height], [7, 5])
        for c in cases {
            let name = c["name"] as! String, width = c["width"] as! Int, height = c["height"] as! Int
            let crop = ImageCropAndScale(rawValue: c["crop"] as! String)!
            let r = c["region"] as! [String: Double]
            let region = RegionOfInterest(x: r["x"]!, y: r["y"]!, width: r["width"]!, height: r["height"]!)
            let expected = try NumpyArray(contentsOf: Self.directory.appendingPathComponent("\(name).\(suffix).npy"))
            XCTAssertEqual(expected.shape, [height, width, 3], name)

            var encoder = try InputTensorEncoder(input: input(width: width, height: height, type: .uint8), metadata: nil)
            encoder.convention = convention
            let bytes = try encoder.encode(image, crop: crop, region: region)
            let differences = zip(bytes, expected.data).enumerated().filter { $0.element.0 != $0.element.1 }
            XCTAssertEqual(bytes.count, expected.data.count, name)
            XCTAssertTrue(differences.isEmpty, """
                \(convention) \(name) (\(width)x\(height) \(crop) \(region)): \(differences.count) of \(bytes.count) bytes differ, \
                max by \(differences.map { abs(Int($0.element.0) - Int($0.element.1)) }.max() ?? 0); first at \
                \(differences.prefix(3).map { "(x \($0.offset / 3 % width), y \($0.offset / 3 / width), c \($0.offset % 3)): \($0.element.0) vs \($0.element.1)" })
                """)
        }
    }

    /// int8 inputs get `pixel − 128`; float inputs without metadata get `pixel / 255`.
    func testInt8AndFloatNormalisation() throws {
        let image = try source()
        let pixels = Array(try InputTensorEncoder(input: input(width: 11, height: 9, type: .uint8), metadata: nil).encode(image))

        let int8 = try InputTensorEncoder(input: input(width: 11, height: 9, type: .int8), metadata: nil).encode(image)
        XCTAssertEqual(int8.map { Int(Int8(bitPattern: $0)) }, pixels.map { Int($0) - 128 })

        let float = try InputTensorEncoder(input: input(width: 11, height: 9, type: .float32), metadata: nil).encode(image)
        let floats = float.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        XCTAssertEqual(floats.count, pixels.count)
        for (f, p) in zip(floats, pixels) { XCTAssertEqual(f, Float(p) / 255, accuracy: 1e-6) }
    }

    /// One-channel inputs get one value per pixel, the mean of R, G and B, for every input type.
    func testGrayscaleInputs() throws {
        let image = try source()
        let rgb = Array(try InputTensorEncoder(input: input(width: 11, height: 9, type: .uint8), metadata: nil).encode(image))
        let means = (0 ..< 99).map { (p: Int) -> Double in
            let sum = Int(rgb[p * 3]) + Int(rgb[p * 3 + 1]) + Int(rgb[p * 3 + 2])
            return Double(sum) / 3
        }

        let uint8 = try InputTensorEncoder(input: input(width: 11, height: 9, type: .uint8, channels: 1), metadata: nil).encode(image)
        XCTAssertEqual(Array(uint8), means.map { UInt8($0.rounded()) })
        let int8 = try InputTensorEncoder(input: input(width: 11, height: 9, type: .int8, channels: 1), metadata: nil).encode(image)
        XCTAssertEqual(int8.map { Int(Int8(bitPattern: $0)) }, means.map { Int($0.rounded()) - 128 })
        let float = try InputTensorEncoder(input: input(width: 11, height: 9, type: .float32, channels: 1), metadata: nil).encode(image)
        let floats = float.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        XCTAssertEqual(floats.count, 99)
        for (f, m) in zip(floats, means) { XCTAssertEqual(Double(f), m / 255, accuracy: 1e-6) }
    }

    func testCenterCropAndScaleFitGeometryOnNonSquareImage() throws {
        let square = try InputTensorEncoder(input: input(width: 224, height: 224, type: .uint8), metadata: nil)
        // Landscape 640x480: centre crop keeps the middle 480x480, fit letterboxes to 224x168.
        var g = square.geometry(imageWidth: 640, imageHeight: 480, crop: .centerCrop, region: .full)
        XCTAssertEqual([g.source.x, g.source.y, g.source.w, g.source.h], [80, 0, 480, 480])
        XCTAssertEqual([g.destination.x, g.destination.y, g.destination.w, g.destination.h], [0, 0, 224, 224])
        g = square.geometry(imageWidth: 640, imageHeight: 480, crop: .scaleFit, region: .full)
        XCTAssertEqual([g.source.x, g.source.y, g.source.w, g.source.h], [0, 0, 640, 480])
        XCTAssertEqual([g.destination.x, g.destination.y, g.destination.w, g.destination.h], [0, 28, 224, 168])
        g = square.geometry(imageWidth: 640, imageHeight: 480, crop: .scaleFill, region: .full)
        XCTAssertEqual([g.source.x, g.source.y, g.source.w, g.source.h], [0, 0, 640, 480])
        XCTAssertEqual([g.destination.x, g.destination.y, g.destination.w, g.destination.h], [0, 0, 224, 224])

        // Portrait 300x600: centre crop keeps the middle 300x300, fit pillarboxes to 112x224.
        g = square.geometry(imageWidth: 300, imageHeight: 600, crop: .centerCrop, region: .full)
        XCTAssertEqual([g.source.x, g.source.y, g.source.w, g.source.h], [0, 150, 300, 300])
        g = square.geometry(imageWidth: 300, imageHeight: 600, crop: .scaleFit, region: .full)
        XCTAssertEqual([g.destination.x, g.destination.y, g.destination.w, g.destination.h], [56, 0, 112, 224])

        // A region of interest is cropped first, then centre-cropped to the input's aspect ratio.
        let region = RegionOfInterest(x: 0.5, y: 0.25, width: 0.5, height: 0.5)
        g = square.geometry(imageWidth: 640, imageHeight: 480, crop: .centerCrop, region: region)
        XCTAssertEqual([g.source.x, g.source.y, g.source.w, g.source.h], [360, 120, 240, 240])
        g = square.geometry(imageWidth: 640, imageHeight: 480, crop: .scaleFill, region: region)
        XCTAssertEqual([g.source.x, g.source.y, g.source.w, g.source.h], [320, 120, 320, 240])
    }

    /// A uniform colour in a region comes out as that colour, whatever the scaling.
    func testRegionOfInterestSamplesOnlyTheRegion() throws {
        // Left half red, right half blue, 8x4.
        var pixels = [UInt8]()
        for _ in 0 ..< 4 { for x in 0 ..< 8 { pixels += x < 4 ? [255, 0, 0] : [0, 0, 255] } }
        let image = try MPImage(pixels: pixels, width: 8, height: 4)
        let encoder = try InputTensorEncoder(input: input(width: 5, height: 3, type: .uint8), metadata: nil)
        // Bilinear taps may reach half a source pixel beyond the region, so keep it a pixel from the edge.
        let right = try encoder.encode(image, region: RegionOfInterest(x: 0.625, y: 0, width: 0.375, height: 1))
        XCTAssertEqual(Array(right), Array(repeating: [0, 0, 255], count: 15).flatMap { $0 })
        let left = try encoder.encode(image, region: RegionOfInterest(x: 0, y: 0.25, width: 0.375, height: 0.5))
        XCTAssertEqual(Array(left), Array(repeating: [255, 0, 0], count: 15).flatMap { $0 })
    }

    func testInvalidRegionsAreRejected() throws {
        let image = try source()
        let encoder = try InputTensorEncoder(input: input(width: 3, height: 4, type: .uint8), metadata: nil)
        for region in [RegionOfInterest(x: 0, y: 0, width: 0, height: 1), RegionOfInterest(x: -0.1, y: 0, width: 0.5, height: 0.5),
                       RegionOfInterest(x: 0.6, y: 0, width: 0.5, height: 1)] {
            XCTAssertThrowsError(try encoder.encode(image, region: region), "\(region)") { error in
                guard case TaskError.invalidArgument = error else { return XCTFail("\(error)") }
            }
        }
    }

    func testUnsupportedInputsAreRejected() {
        XCTAssertThrowsError(try InputTensorEncoder(input: input(width: 3, height: 4, type: .int32), metadata: nil)) { error in
            guard case TaskError.unsupportedModel = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try InputTensorEncoder(input: input(width: 3, height: 4, type: .uint8, channels: 4), metadata: nil)) { error in
            guard case TaskError.unsupportedModel = error else { return XCTFail("\(error)") }
        }
    }

    /// A `[1, 3, h, w]` input gets the same values as `[1, h, w, 3]`, as R, G and B planes (float
    /// and 8-bit, the image at the input size so nothing is resampled).
    func testChannelsFirstInputsGetPlanes() throws {
        let pixels: [UInt8] = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120]  // 2 × 2 RGB
        let image = try MPImage(pixels: pixels, width: 2, height: 2)
        for type in [DataType.float32, .uint8, .int8] {
            let last = try InputTensorEncoder(input: input(width: 2, height: 2, type: type, channels: 3), metadata: nil)
            let planar = TensorDescriptor(index: 0, name: "image", dataType: type, shape: [1, 3, 2, 2], shapeSignature: nil,
                                          quantization: nil, isVariable: false, constantData: nil)
            let first = try InputTensorEncoder(input: planar, metadata: nil)
            XCTAssertTrue(first.channelsFirst)
            XCTAssertFalse(last.channelsFirst)
            let size = type == .float32 ? 4 : 1
            let a = [UInt8](try last.encode(image)), b = [UInt8](try first.encode(image))
            XCTAssertEqual(a.count, b.count)
            for p in 0 ..< 4 {
                for c in 0 ..< 3 {
                    XCTAssertEqual(Array(a[(p * 3 + c) * size ..< (p * 3 + c + 1) * size]), Array(b[(c * 4 + p) * size ..< (c * 4 + p + 1) * size]),
                                   "\(type) pixel \(p) channel \(c)")
                }
            }
        }
    }
}
