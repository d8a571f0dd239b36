import XCTest
import Tasks

/// `Annotator` draws boxes and labels clipped to the image, wherever the detections lie.
final class AnnotatorTests: XCTestCase {
    /// Labels and boxes at and beyond every edge of a small image, empty and inverted boxes: each
    /// is clipped (on `face.jpg` a label running past the right edge built an inverted range that
    /// a checked build traps on and the unchecked release build looped on for ever).
    func testDetectionsAtEveryEdgeAreClipped() throws {
        let w = 40, h = 30
        let image = try MPImage(pixels: [UInt8](repeating: 0, count: w * h * 3), width: w, height: h)
        let label = [Category(index: 0, score: 0.9, categoryName: "a very long label that runs off the image", displayName: nil)]
        var boxes = [BoundingBox]()
        for x in [-50, -5, 0, 10, w - 3, w, w + 20] {
            for y in [-50, -5, 0, 10, h - 3, h, h + 20] {
                for (bw, bh) in [(0, 0), (5, 5), (100, 100), (-8, 6), (6, -8)] {
                    boxes.append(BoundingBox(originX: x, originY: y, width: bw, height: bh))
                }
            }
        }
        let drawn = try Annotator.draw(boxes.map { Detection(boundingBox: $0, categories: label) }, on: image)
        XCTAssertEqual(drawn.width, w)
        XCTAssertEqual(drawn.height, h)
        XCTAssertEqual(drawn.pixels.count, w * h * 3)
        XCTAssertTrue(drawn.pixels.contains { $0 != 0 }, "the boxes inside the image were not drawn")
    }

    /// A box wholly inside gets its outline and nothing far from it.
    func testBoxInsideIsOutlined() throws {
        let w = 400, h = 300
        let image = try MPImage(pixels: [UInt8](repeating: 0, count: w * h * 3), width: w, height: h)
        let box = BoundingBox(originX: 100, originY: 100, width: 50, height: 40)
        let drawn = try Annotator.draw([Detection(boundingBox: box, categories: [])], on: image)
        func pixel(_ x: Int, _ y: Int) -> [UInt8] { Array(drawn.pixels[(y * w + x) * 3 ..< (y * w + x) * 3 + 3]) }
        XCTAssertNotEqual(pixel(100, 100), [0, 0, 0])
        XCTAssertNotEqual(pixel(149, 139), [0, 0, 0])
        XCTAssertEqual(pixel(125, 120), [0, 0, 0], "the inside of the box is left alone")
        XCTAssertEqual(pixel(300, 250), [0, 0, 0])
    }
}

/// Label placement: inside the image (shifted, not clipped) and not on top of one another.
final class AnnotatorLabelPlacementTests: XCTestCase {
    func detection(_ x: Int, _ y: Int, _ w: Int, _ h: Int, _ name: String = "person") -> Detection {
        Detection(boundingBox: BoundingBox(originX: x, originY: y, width: w, height: h),
                  categories: [Category(index: 0, score: 0.5, categoryName: name, displayName: nil)])
    }

    func testLabelsStayInsideAndDoNotOverlap() throws {
        let w = 400, h = 300
        // Three boxes at one place, one at the top edge, one at the right edge, one past the bottom.
        let detections = [detection(50, 100, 80, 80), detection(50, 100, 80, 80), detection(52, 98, 80, 80),
                          detection(10, 0, 50, 50), detection(380, 150, 20, 20, "label at the right edge"),
                          detection(100, 295, 40, 40)]
        let frames = Annotator.labelFrames(for: detections, width: w, height: h).compactMap { $0 }
        XCTAssertEqual(frames.count, detections.count)
        for (i, f) in frames.enumerated() {
            XCTAssertTrue(f.x >= 0 && f.y >= 0 && f.x + f.width <= w && f.y + f.height <= h, "label \(i) \(f) leaves the image")
            XCTAssertFalse(f.text.isEmpty)
            for g in frames[(i + 1)...] { XCTAssertFalse(f.overlaps(g), "\(f) overlaps \(g)") }
        }
        // The right-edge label is shifted left, whole.
        XCTAssertEqual(frames[4].text, "label at the right edge 50%")
        XCTAssertEqual(frames[4].x + frames[4].width, w)
        // A label wider than a tiny image is cut to fit.
        let tiny = Annotator.labelFrames(for: [detection(0, 0, 10, 10, "wide")], width: 20, height: 30)
        let cut = try XCTUnwrap(tiny.first ?? nil)
        XCTAssertEqual(cut.text, "w")
        XCTAssertLessThanOrEqual(cut.x + cut.width, 20)
    }
}
