#if SWIFTLITE_AVX2
import Microkernels
import SIMDKernels
import SIMDKernelsAVX512
import XCTest

/// The staged tap-row builders (`DepthwiseTapRows.Form.staged`, which copy each row of 16
/// channels aside and shuffle four columns into quads at once), in the AVX2 module and, where
/// this machine runs it, the AVX-512 one, against the column form of the AVX2 module: the same
/// bytes in every lane of every tap row, and nothing written outside the channels asked for;
/// and the column form against the layout the row kernels read.
/// The end-to-end depthwise tests compare the whole kernel with TFLite's reference on one tier
/// and only the forms it takes; this one pins every form over the geometries where they
/// differ most: padding wider than the input, rows above and below it, strides up to 3,
/// channel counts off the 16-lane width.
final class DepthwiseTapRowTests: XCTestCase {
    func testStagedTapRowsMatchTheColumnForm() throws {
        try check(avx512: false)
    }

    func testAVX512StagedTapRowsMatchTheColumnForm() throws {
        guard RunTimeCPU.runsAVX512Kernels else {
            throw XCTSkip("this machine does not run the AVX-512 kernels (or SWIFTLITE_KERNELS=avx2)")
        }
        try check(avx512: true)
    }

    private func check(avx512: Bool) throws {
        var rng = KernelTestRandom(seed: 0x7A95)
        var checked = 0
        for filterSize in [3, 5] {
            for stride in 1 ... 3 {
                for dilation in [1, 2] {
                    for inputWidth in [1, 2, 3, 5, 8, 13] {
                        for padLeft in 0 ... filterSize {
                            for channels in [1, 15, 16, 17, 40, 64] {
                                let extent = (filterSize - 1) * dilation + 1
                                let valid = (inputWidth + 2 * padLeft - extent) / stride + 1
                                let outputWidth = max(1, valid + Int.random(in: -1 ... 1, using: &rng))
                                let shape = (inputHeight: 3, inputWidth: inputWidth, channels: channels, outputWidth: outputWidth,
                                             padTop: 1, padLeft: padLeft, stride: stride, dilation: dilation)
                                let padded = (channels + 15) / 16 * 16
                                // The whole row, or only the second group of 16 where there is one.
                                let range = padded > 16 && Bool.random(using: &rng) ? 16 ..< 32 : 0 ..< padded
                                let flip: UInt8 = Bool.random(using: &rng) ? 0x80 : 0
                                let zeroPoint = UInt8.random(in: 0 ... 255, using: &rng)
                                let image = (0 ..< 3 * inputWidth * channels).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
                                for row in 0 ..< 5 {  // row 0 and row 4 lie in the padding
                                    let (column, staged) = image.withUnsafeBufferPointer { pixels in
                                        (tapRow(filterSize, pixels.baseAddress!, row, range, shape, padded, zeroPoint, flip, avx512: false,
                                                form: .columns),
                                         tapRow(filterSize, pixels.baseAddress!, row, range, shape, padded, zeroPoint, flip, avx512: avx512,
                                                form: .staged))
                                    }
                                    if column != staged {
                                        XCTFail("\(filterSize)×\(filterSize) tap row \(row) differs (AVX-512: \(avx512)): \(shape), channels \(range), flip \(flip), zero point \(zeroPoint)")
                                        return
                                    }
                                    if let lane = firstLaneOffTheDefinition(column, filterSize, image, row, range, shape, zeroPoint, flip) {
                                        XCTFail("\(filterSize)×\(filterSize) tap row \(row), lane \(lane): not the taps the kernels read there: \(shape), channels \(range)")
                                        return
                                    }
                                    checked += 1
                                }
                            }
                        }
                    }
                }
            }
        }
        XCTAssertEqual(checked, 3 * 2 * 6 * (4 + 6) * 6 * 5)
    }

    /// The first lane of `lanes` (a tap row built for `range`) that differs from what the row
    /// kernels expect there, straight from the layout they assume: block-major, the quads of
    /// output column `ox` for the block at channel `c` at lane `((c / 16 · width + ox) · quads + q) · 16
    /// + c % 16`, byte `k` of quad `q` the encoded input at column `ox · stride + (4q + k) · dilation
    /// − padLeft` (the zero point outside the input), zero past the filter's taps; the blocks
    /// outside `range` untouched. Lanes of the padding channels are not checked (the two forms
    /// agree on them). Nil when every lane checked is right.
    private func firstLaneOffTheDefinition(_ lanes: [UInt32], _ filterSize: Int, _ image: [UInt8], _ row: Int, _ range: Range<Int>,
                                           _ g: SIMDKernels.DepthwiseTapRows.Shape, _ zeroPoint: UInt8, _ flip: UInt8) -> Int? {
        let quads = filterSize == 5 ? 2 : 1, padded = (g.channels + 15) / 16 * 16
        let iy = row - g.padTop
        for c in 0 ..< padded {
            for ox in 0 ..< g.outputWidth {
                for q in 0 ..< quads {
                    let lane = ((c / 16 * g.outputWidth + ox) * quads + q) * 16 + c % 16
                    guard range.contains(c) else {
                        if lanes[lane] != 0xA5A5_A5A5 { return lane }
                        continue
                    }
                    guard c < g.channels else { continue }
                    var expected: UInt32 = 0
                    for k in 0 ..< 4 where 4 * q + k < filterSize {
                        let ix = ox * g.stride + (4 * q + k) * g.dilation - g.padLeft
                        let inside = iy >= 0 && iy < g.inputHeight && ix >= 0 && ix < g.inputWidth
                        let byte = inside ? image[(iy * g.inputWidth + ix) * g.channels + c] : zeroPoint
                        expected |= UInt32(byte ^ flip) << (8 * k)
                    }
                    if lanes[lane] != expected { return lane }
                }
            }
        }
        return nil
    }

    /// One tap row in `form` from the AVX-512 module or the AVX2 one, into a buffer that starts
    /// out 0xA5 in every byte (so that a lane written by one and not the other shows).
    private func tapRow(_ filterSize: Int, _ image: UnsafePointer<UInt8>, _ row: Int, _ range: Range<Int>,
                        _ shape: SIMDKernels.DepthwiseTapRows.Shape, _ padded: Int, _ zeroPoint: UInt8, _ flip: UInt8,
                        avx512: Bool, form: SIMDKernels.DepthwiseTapRows.Form) -> [UInt32] {
        let quads = filterSize == 5 ? 2 : 1
        var lanes = [UInt32](repeating: 0xA5A5_A5A5, count: shape.outputWidth * quads * padded)
        let staging = UnsafeMutableRawPointer.allocate(byteCount: SIMDKernels.DepthwiseTapRows.stagingBytes(shape: shape), alignment: 64)
        defer { staging.deallocate() }
        lanes.withUnsafeMutableBufferPointer { out in
            let into = out.baseAddress!
            let other: SIMDKernelsAVX512.DepthwiseTapRows.Form = form == .staged ? .staged : .columns
            switch (filterSize, avx512) {
            case (5, true):
                SIMDKernelsAVX512.DepthwiseTapRows.build5(image, paddedRow: row, channels: range, shape: shape,
                                                         zeroPoint: zeroPoint, flip: flip, staging: staging, form: other, into: into)
            case (5, false):
                SIMDKernels.DepthwiseTapRows.build5(image, paddedRow: row, channels: range, shape: shape,
                                                   zeroPoint: zeroPoint, flip: flip, staging: staging, form: form, into: into)
            case (_, true):
                SIMDKernelsAVX512.DepthwiseTapRows.build3(image, paddedRow: row, channels: range, shape: shape,
                                                         zeroPoint: zeroPoint, flip: flip, staging: staging, form: other, into: into)
            case (_, false):
                SIMDKernels.DepthwiseTapRows.build3(image, paddedRow: row, channels: range, shape: shape,
                                                   zeroPoint: zeroPoint, flip: flip, staging: staging, form: form, into: into)
            }
        }
        return lanes
    }
}
#endif
