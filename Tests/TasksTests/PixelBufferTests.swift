import Foundation
import XCTest
import Tasks
import TestSupport

/// Pixel buffers as apps have them — packed RGB, RGBA, BGRA, ARGB, gray, with padded rows, and
/// NV12/NV21 camera frames — give the same image (and the same classification) as the photo's PNG.
final class PixelBufferTests: XCTestCase {
    func photo() throws -> MPImage { try MPImage(contentsOf: Fixtures.shared("images/grace_hopper.png")) }

    func classify(_ image: MPImage) throws -> [Category] {
        let options = ImageClassifierOptions(modelPath: TaskFixtures.efficientnetF32)
        options.maxResults = 5
        return try ImageClassifier(options: options).classify(image: image).classifications[0].categories
    }

    /// The photo's pixels in a layout of `bytesPerPixel` bytes whose red, green and blue sit at
    /// `offsets`, rows padded to `stride` with 0xAB (alpha and padding bytes are 0xAB too).
    func packed(_ image: MPImage, bytesPerPixel: Int, offsets: [Int], stride: Int) -> Data {
        var bytes = [UInt8](repeating: 0xAB, count: stride * image.height)
        for y in 0 ..< image.height {
            for x in 0 ..< image.width {
                let (r, g, b) = image.rgb(x: x, y: y)
                let p = y * stride + x * bytesPerPixel
                for (c, value) in zip(offsets, [r, g, b]) { bytes[p + c] = value }
            }
        }
        return Data(bytes)
    }

    func testPackedFormatsWithPaddedRowsMatchThePNG() throws {
        let png = try photo()
        let expected = try classify(png)
        let w = png.width
        let images: [(String, MPImage)] = [
            ("RGB8", try MPImage(PixelBuffer<RGB8>(bytes: packed(png, bytesPerPixel: 3, offsets: [0, 1, 2], stride: w * 3 + 7),
                                                   width: w, height: png.height, bytesPerRow: w * 3 + 7))),
            ("RGB8 unpadded", try MPImage(PixelBuffer<RGB8>(bytes: Data(png.pixels), width: w, height: png.height))),
            ("RGBA8", try MPImage(PixelBuffer<RGBA8>(bytes: packed(png, bytesPerPixel: 4, offsets: [0, 1, 2], stride: w * 4 + 64),
                                                     width: w, height: png.height, bytesPerRow: w * 4 + 64))),
            ("BGRA8", try MPImage(PixelBuffer<BGRA8>(bytes: packed(png, bytesPerPixel: 4, offsets: [2, 1, 0], stride: w * 4 + 16),
                                                     width: w, height: png.height, bytesPerRow: w * 4 + 16))),
            ("ARGB8", try MPImage(PixelBuffer<ARGB8>(bytes: packed(png, bytesPerPixel: 4, offsets: [1, 2, 3], stride: w * 4),
                                                     width: w, height: png.height, bytesPerRow: w * 4))),
        ]
        for (name, image) in images {
            XCTAssertEqual(image, png, "\(name): not the PNG's pixels")
            XCTAssertEqual(try classify(image), expected, name)
        }
    }

    func testGray8MatchesThePNGInGray() throws {
        let png = try photo()
        // BT.601 luma of the PNG, computed here; the buffer replicates it to R, G, B.
        let luma = (0 ..< png.width * png.height).map { i -> UInt8 in
            let r = Double(png.pixels[i * 3]), g = Double(png.pixels[i * 3 + 1]), b = Double(png.pixels[i * 3 + 2])
            return UInt8((0.299 * r + 0.587 * g + 0.114 * b).rounded())
        }
        let stride = png.width + 3
        var bytes = [UInt8](repeating: 0, count: stride * png.height)
        for y in 0 ..< png.height { bytes.replaceSubrange(y * stride ..< y * stride + png.width, with: luma[y * png.width ..< (y + 1) * png.width]) }
        let image = try MPImage(PixelBuffer<Gray8>(bytes: Data(bytes), width: png.width, height: png.height, bytesPerRow: stride))
        let gray = try MPImage(pixels: luma.flatMap { [$0, $0, $0] }, width: png.width, height: png.height)
        XCTAssertEqual(image, gray)
        let categories = try classify(image)
        XCTAssertEqual(categories, try classify(gray))
        print("gray8 grace_hopper: \(categories.prefix(2).map { "\($0.categoryName ?? "?") \($0.score)" })")
    }

    // MARK: - NV12 / NV21

    /// BT.601 RGB → Y'CbCr, computed here from the definition (Kr 0.299, Kb 0.114), in either range.
    func yuv(_ r: Double, _ g: Double, _ b: Double, video: Bool) -> (Double, Double, Double) {
        let y = 0.299 * r + 0.587 * g + 0.114 * b
        let cb = (b - y) / 1.772, cr = (r - y) / 1.402
        return video ? (16 + y * 219 / 255, 128 + cb * 224 / 255, 128 + cr * 224 / 255) : (y, 128 + cb, 128 + cr)
    }

    /// The inverse, by solving the forward 3×3 system with Cramer's rule (not the library's formula).
    func rgb(_ y: UInt8, _ cb: UInt8, _ cr: UInt8, video: Bool) -> [Int] {
        let s = video ? 255.0 / 219 : 1, c = video ? 255.0 / 224 : 1
        let yf = (Double(y) - (video ? 16 : 0)) * s, cbf = (Double(cb) - 128) * c, crf = (Double(cr) - 128) * c
        let m = [[0.299, 0.587, 0.114], [-0.299 / 1.772, -0.587 / 1.772, 0.886 / 1.772], [0.701 / 1.402, -0.587 / 1.402, -0.114 / 1.402]]
        func det(_ a: [[Double]]) -> Double {
            a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
                + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
        }
        let d = det(m), v = [yf, cbf, crf]
        return (0 ..< 3).map { column in
            var a = m
            for row in 0 ..< 3 { a[row][column] = v[row] }
            return Int(min(max((det(a) / d).rounded(), 0), 255))
        }
    }

    /// Encodes the photo as a 4:2:0 frame (chroma averaged over each 2×2 block), with padded rows.
    func frame(_ image: MPImage, nv21: Bool, video: Bool, lumaStride: Int, chromaStride: Int) -> (luma: [UInt8], chroma: [UInt8]) {
        func byte(_ v: Double) -> UInt8 { UInt8(min(max(v.rounded(), 0), 255)) }
        let w = image.width, h = image.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        var luma = [UInt8](repeating: 0x11, count: lumaStride * h), chroma = [UInt8](repeating: 0x22, count: chromaStride * ch)
        for y in 0 ..< h {
            for x in 0 ..< w {
                let (r, g, b) = image.rgb(x: x, y: y)
                luma[y * lumaStride + x] = byte(yuv(Double(r), Double(g), Double(b), video: video).0)
            }
        }
        for cy in 0 ..< ch {
            for cx in 0 ..< cw {
                var sum = (0.0, 0.0), n = 0.0
                for y in 2 * cy ..< min(2 * cy + 2, h) {
                    for x in 2 * cx ..< min(2 * cx + 2, w) {
                        let (r, g, b) = image.rgb(x: x, y: y)
                        let (_, cb, cr) = yuv(Double(r), Double(g), Double(b), video: video)
                        sum.0 += cb; sum.1 += cr; n += 1
                    }
                }
                let (u, v) = (byte(sum.0 / n), byte(sum.1 / n))
                chroma[cy * chromaStride + 2 * cx] = nv21 ? v : u
                chroma[cy * chromaStride + 2 * cx + 1] = nv21 ? u : v
            }
        }
        return (luma, chroma)
    }

    func checkYUV(nv21: Bool, video: Bool) throws {
        let png = try photo()
        let (lumaStride, chromaStride) = (png.width + 32, png.width + 64)
        let (luma, chroma) = frame(png, nv21: nv21, video: video, lumaStride: lumaStride, chromaStride: chromaStride)
        let buffer = try YUV420BiPlanarBuffer(width: png.width, height: png.height, chromaOrder: nv21 ? .nv21 : .nv12, range: video ? .video : .full,
                                              luma: Data(luma), lumaBytesPerRow: lumaStride, chroma: Data(chroma), chromaBytesPerRow: chromaStride)
        let image = MPImage(buffer)
        let name = "\(nv21 ? "NV21" : "NV12") \(video ? "video" : "full") range"
        // Every pixel against the independent inverse, within 1 (rounding of the two float paths).
        var worst = 0
        for y in 0 ..< png.height {
            for x in 0 ..< png.width {
                let c = (y / 2) * chromaStride + (x / 2) * 2
                let (u, v) = nv21 ? (chroma[c + 1], chroma[c]) : (chroma[c], chroma[c + 1])
                let expected = rgb(luma[y * lumaStride + x], u, v, video: video)
                let (r, g, b) = image.rgb(x: x, y: y)
                worst = max(worst, zip(expected, [Int(r), Int(g), Int(b)]).map { abs($0 - $1) }.max()!)
            }
        }
        XCTAssertLessThanOrEqual(worst, 1, "\(name): differs from the BT.601 inverse by \(worst)")
        // Against the PNG: 4:2:0 loses chroma detail, so close pixels and the same classification.
        let meanDifference = zip(image.pixels, png.pixels).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(png.pixels.count)
        XCTAssertLessThan(meanDifference, 3, name)
        let ours = try classify(image), theirs = try classify(png)
        XCTAssertEqual(ours[0].index, theirs[0].index, name)
        XCTAssertEqual(ours[0].score, theirs[0].score, accuracy: 0.05, name)
        XCTAssertGreaterThanOrEqual(Set(ours.map(\.index)).intersection(theirs.map(\.index)).count, 4, name)
        print("\(name): max |Δ| vs inverse \(worst), mean |Δ| vs PNG \(meanDifference), top-1 \(ours[0].categoryName ?? "?") \(ours[0].score) (PNG \(theirs[0].score))")
    }

    func testNV12VideoRangeMatchesThePNG() throws { try checkYUV(nv21: false, video: true) }
    func testNV21FullRangeMatchesThePNG() throws { try checkYUV(nv21: true, video: false) }

    /// An odd-sized NV12 frame in one contiguous buffer (luma rows, then chroma rows, one stride).
    func testContiguousOddSizedNV12() throws {
        let (w, h, stride) = (3, 3, 4)
        // Luma 16 (black) except one 235 (white); all chroma neutral (128).
        var bytes = [UInt8](repeating: 16, count: stride * h) + [UInt8](repeating: 128, count: stride * 2)
        bytes[1 * stride + 2] = 235
        let image = MPImage(try YUV420BiPlanarBuffer(width: w, height: h, chromaOrder: .nv12, range: .video, bytes: Data(bytes), bytesPerRow: stride))
        XCTAssertEqual(image.rgb(x: 0, y: 0).red, 0)
        XCTAssertEqual([image.rgb(x: 2, y: 1).red, image.rgb(x: 2, y: 1).green, image.rgb(x: 2, y: 1).blue], [255, 255, 255])
    }

    func testBuffersThatDoNotHoldTheirRowsAreImageErrors() {
        func isInvalidBuffer(_ body: () throws -> Void) -> Bool {
            do { try body(); return false } catch let error as ImageError {
                if case .invalidPixelBuffer = error { return true } else { return false }
            } catch { return false }
        }
        XCTAssertTrue(isInvalidBuffer { _ = try PixelBuffer<BGRA8>(bytes: Data(count: 100), width: 5, height: 5, bytesPerRow: 19) })
        XCTAssertTrue(isInvalidBuffer { _ = try PixelBuffer<BGRA8>(bytes: Data(count: 99), width: 5, height: 5) })
        // The last row needs no padding.
        XCTAssertNoThrow(try PixelBuffer<RGB8>(bytes: Data(count: 32 * 4 + 15), width: 5, height: 5, bytesPerRow: 32))
        XCTAssertTrue(isInvalidBuffer { _ = try YUV420BiPlanarBuffer(width: 4, height: 4, chromaOrder: .nv12, range: .full, luma: Data(count: 16), chroma: Data(count: 7)) })
        XCTAssertThrowsError(try PixelBuffer<Gray8>(bytes: Data(), width: 0, height: 1)) {
            XCTAssertEqual($0 as? ImageError, .invalidDimensions(width: 0, height: 1))
        }
        XCTAssertEqual(ImageError.invalidPixelBuffer("x").localizedDescription, "Invalid pixel buffer: x")
    }
}
