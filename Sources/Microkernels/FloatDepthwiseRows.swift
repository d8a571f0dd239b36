/// The float 3×3 depthwise rows of the engine's `DepthwiseConv2DFloat32` (MobileNet's windows:
/// stride 1 or 2 across, no dilation), for the pixels whose window lies inside the input across.
///
/// Written once, as a body emitted into each calling module and compiled for that module's CPU
/// (see `FloatTiles`): `inside3x3Stride1` and `inside3x3Stride2` are this module's AVX-512 copies,
/// the engine compiles its own for the AVX2 floor. The taps of a pixel are summed in the same
/// order in every copy, so the tiers give the same bytes.
public enum FloatDepthwiseRows {
    public typealias Lanes = SIMD16<Float>
    /// The three input rows of a window, each at the window's left column.
    public typealias Rows = (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>)

    /// `inside3x3Body` at stride 1 across, compiled for this module's CPU.
    @inline(never)
    public static func inside3x3Stride1(_ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int, groups: Int,
                                        channels: Int, taps: UnsafePointer<Float>, lower: Float, upper: Float) {
        inside3x3Body(stride: 1, rows, out, count: count, groups: groups, channels: channels, taps: taps, lower: lower, upper: upper)
    }

    /// `inside3x3Body` at stride 2 across, compiled for this module's CPU.
    @inline(never)
    public static func inside3x3Stride2(_ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int, groups: Int,
                                        channels: Int, taps: UnsafePointer<Float>, lower: Float, upper: Float) {
        inside3x3Body(stride: 2, rows, out, count: count, groups: groups, channels: channels, taps: taps, lower: lower, upper: upper)
    }

    /// `groups` whole groups of 16 channels of `count` adjacent output
    /// pixels whose windows lie inside the input across; `rows` point at the first window's left
    /// column and `out` at the first pixel's output, both at the first group's channel. Eight pixels a step (at
    /// stride 1), then four; a last step of four that would run past `count` moves back to end at it
    /// (recomputing up to three pixels) rather than going one at a time. `taps` holds each group's
    /// bias and nine taps (10 vectors a group). `stride` is a constant at each call site.
    @_alwaysEmitIntoClient @inline(always)
    public static func inside3x3Body(stride: Int, _ rows: Rows, _ out: UnsafeMutablePointer<Float>, count: Int, groups: Int,
                                     channels c: Int, taps packed: UnsafePointer<Float>, lower: Float, upper: Float) {
        let pixel = c * MemoryLayout<Float>.stride, step = stride * pixel
        let vector = MemoryLayout<Lanes>.stride
        /// Adds one filter row's taps (at `w`, `w + 1`, `w + 2` in `filter`) for the `j`th pixel of a step.
        @inline(always)
        func taps(_ acc: inout Lanes, _ input: UnsafeRawPointer, _ j: Int, _ filter: UnsafeRawPointer, _ w: Int) {
            acc = acc.addingProduct(input.loadUnaligned(fromByteOffset: j * step, as: Lanes.self),
                                    filter.loadUnaligned(fromByteOffset: w * vector, as: Lanes.self))
            acc = acc.addingProduct(input.loadUnaligned(fromByteOffset: j * step + pixel, as: Lanes.self),
                                    filter.loadUnaligned(fromByteOffset: (w + 1) * vector, as: Lanes.self))
            acc = acc.addingProduct(input.loadUnaligned(fromByteOffset: j * step + 2 * pixel, as: Lanes.self),
                                    filter.loadUnaligned(fromByteOffset: (w + 2) * vector, as: Lanes.self))
        }
        var x = 0
        while x < count {
            let width = stride == 1 && count - x >= 8 ? 8 : count >= 4 ? 4 : 1
            x = min(x, count - width)
            let first = x * stride * c
            /// Runs `body` on each group of 16 channels with its input rows, filter and output.
            @inline(always)
            func forEachGroup(_ body: (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeMutableRawPointer) -> Void) {
                var r0 = UnsafeRawPointer(rows.0 + first), r1 = UnsafeRawPointer(rows.1 + first), r2 = UnsafeRawPointer(rows.2 + first)
                var filter = UnsafeRawPointer(packed), dst = UnsafeMutableRawPointer(out + x * c)
                for _ in 0 ..< groups {
                    body(r0, r1, r2, filter, dst)
                    r0 += vector
                    r1 += vector
                    r2 += vector
                    filter += 10 * vector
                    dst += vector
                }
            }
            switch width {
            case 8:
                forEachGroup { r0, r1, r2, filter, dst in
                    let b = filter.loadUnaligned(as: Lanes.self)
                    var a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b
                    taps(&a0, r0, 0, filter, 1); taps(&a1, r0, 1, filter, 1); taps(&a2, r0, 2, filter, 1); taps(&a3, r0, 3, filter, 1)
                    taps(&a4, r0, 4, filter, 1); taps(&a5, r0, 5, filter, 1); taps(&a6, r0, 6, filter, 1); taps(&a7, r0, 7, filter, 1)
                    taps(&a0, r1, 0, filter, 4); taps(&a1, r1, 1, filter, 4); taps(&a2, r1, 2, filter, 4); taps(&a3, r1, 3, filter, 4)
                    taps(&a4, r1, 4, filter, 4); taps(&a5, r1, 5, filter, 4); taps(&a6, r1, 6, filter, 4); taps(&a7, r1, 7, filter, 4)
                    taps(&a0, r2, 0, filter, 7); taps(&a1, r2, 1, filter, 7); taps(&a2, r2, 2, filter, 7); taps(&a3, r2, 3, filter, 7)
                    taps(&a4, r2, 4, filter, 7); taps(&a5, r2, 5, filter, 7); taps(&a6, r2, 6, filter, 7); taps(&a7, r2, 7, filter, 7)
                    dst.storeBytes(of: FloatTiles.clamp(a0, lower, upper), as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a1, lower, upper), toByteOffset: pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a2, lower, upper), toByteOffset: 2 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a3, lower, upper), toByteOffset: 3 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a4, lower, upper), toByteOffset: 4 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a5, lower, upper), toByteOffset: 5 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a6, lower, upper), toByteOffset: 6 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a7, lower, upper), toByteOffset: 7 * pixel, as: Lanes.self)
                }
            case 4:
                forEachGroup { r0, r1, r2, filter, dst in
                    let b = filter.loadUnaligned(as: Lanes.self)
                    var a0 = b, a1 = b, a2 = b, a3 = b
                    taps(&a0, r0, 0, filter, 1); taps(&a1, r0, 1, filter, 1); taps(&a2, r0, 2, filter, 1); taps(&a3, r0, 3, filter, 1)
                    taps(&a0, r1, 0, filter, 4); taps(&a1, r1, 1, filter, 4); taps(&a2, r1, 2, filter, 4); taps(&a3, r1, 3, filter, 4)
                    taps(&a0, r2, 0, filter, 7); taps(&a1, r2, 1, filter, 7); taps(&a2, r2, 2, filter, 7); taps(&a3, r2, 3, filter, 7)
                    dst.storeBytes(of: FloatTiles.clamp(a0, lower, upper), as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a1, lower, upper), toByteOffset: pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a2, lower, upper), toByteOffset: 2 * pixel, as: Lanes.self)
                    dst.storeBytes(of: FloatTiles.clamp(a3, lower, upper), toByteOffset: 3 * pixel, as: Lanes.self)
                }
            default:
                forEachGroup { r0, r1, r2, filter, dst in
                    var a0 = filter.loadUnaligned(as: Lanes.self)
                    taps(&a0, r0, 0, filter, 1); taps(&a0, r1, 0, filter, 4); taps(&a0, r2, 0, filter, 7)
                    dst.storeBytes(of: FloatTiles.clamp(a0, lower, upper), as: Lanes.self)
                }
            }
            x += width
        }
    }
}
