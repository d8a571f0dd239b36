/// The float 5×5 depthwise planes of the engine's `DepthwiseConv2DFloat32` (EfficientNet-Lite's
/// and BlazeFace's 5 × 5 layers): a row of output pixels at a time, from a ring of input rows.
///
/// Compiled twice, like `FloatDepthwiseRows` (see there).
extension FloatDepthwiseRows {
    /// The ring rows of one output row's window: filter row `ky` (in `taps`, the rows inside the
    /// input) reads ring slot `(firstSlot + ky - taps.lowerBound) % size`; `ring` points at the
    /// first pixel's first column.
    struct PlaneWindow {
        let ring: UnsafeRawPointer
        let rowBytes: Int
        let firstSlot: Int
        let taps: Range<Int>
    }

    /// The planes' micro-kernel for one step of some pixels of one group: the window (the ring's
    /// first pixel, the bytes between ring slots, the slot of the first filter row inside the
    /// input, and that range of filter rows), the group's packed bias and taps, the first pixel's
    /// output, the bytes between output pixels, and the activation's bounds.
    public typealias PlaneRow = @Sendable (_ ring: UnsafeRawPointer, _ rowBytes: Int, _ firstSlot: Int, _ taps: Range<Int>,
                                           _ filter: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ pixelBytes: Int,
                                           _ lower: Float, _ upper: Float) -> Void

    /// The 5×5 micro-kernel for `stride` (1 or 2) across and `pixels` (1 to 8) per step, each a
    /// specialisation with those constants.
    public static func planeRow5x5(stride: Int, pixels: Int) -> PlaneRow {
        switch pixels {
        case 8: row5x5(stride: stride, Eight.self)
        case 7: row5x5(stride: stride, Seven.self)
        case 6: row5x5(stride: stride, Six.self)
        case 5: row5x5(stride: stride, Five.self)
        case 4: row5x5(stride: stride, Four.self)
        case 3: row5x5(stride: stride, Three.self)
        case 2: row5x5(stride: stride, Two.self)
        default: row5x5(stride: stride, One.self)
        }
    }

    private static func row5x5<P: PixelCount>(stride: Int, _: P.Type) -> PlaneRow {
        if stride == 1 {
            return { ring, rowBytes, firstSlot, taps, filter, dst, pixelBytes, lower, upper in
                pixels5x5Stride1(P.self, PlaneWindow(ring: ring, rowBytes: rowBytes, firstSlot: firstSlot, taps: taps), filter, dst,
                                 pixelBytes: pixelBytes, lower: lower, upper: upper)
            }
        }
        return { ring, rowBytes, firstSlot, taps, filter, dst, pixelBytes, lower, upper in
            pixels5x5Stride2(P.self, PlaneWindow(ring: ring, rowBytes: rowBytes, firstSlot: firstSlot, taps: taps), filter, dst,
                             pixelBytes: pixelBytes, lower: lower, upper: upper)
        }
    }

    @inline(never)
    private static func pixels5x5Stride1<P: PixelCount>(_: P.Type, _ rows: PlaneWindow, _ filter: UnsafeRawPointer,
                                                        _ dst: UnsafeMutableRawPointer, pixelBytes: Int, lower: Float, upper: Float) {
        planePixelsBody(size: 5, stride: 1, count: P.value, rows, filter, dst, pixelBytes: pixelBytes, lower: lower, upper: upper)
    }

    @inline(never)
    private static func pixels5x5Stride2<P: PixelCount>(_: P.Type, _ rows: PlaneWindow, _ filter: UnsafeRawPointer,
                                                        _ dst: UnsafeMutableRawPointer, pixelBytes: Int, lower: Float, upper: Float) {
        planePixelsBody(size: 5, stride: 2, count: P.value, rows, filter, dst, pixelBytes: pixelBytes, lower: lower, upper: upper)
    }

    /// `count` (1 to 8) adjacent output pixels of one group of 16 channels of the 5×5 planes path
    /// (`DepthwiseConv2DFloat32.convolvePlanes`): `filter` is the group's packed bias and taps,
    /// `dst` the first pixel's output, pixels `pixelBytes` apart. `size`, `stride` and `count`
    /// are constants in each specialisation, so the unused accumulators fold away.
    @inline(always)
    static func planePixelsBody(size k: Int, stride s: Int, count p: Int, _ rows: PlaneWindow, _ filter: UnsafeRawPointer,
                                       _ dst: UnsafeMutableRawPointer, pixelBytes pixel: Int, lower: Float, upper: Float) {
        let vector = MemoryLayout<Lanes>.stride
        let b = filter.loadUnaligned(as: Lanes.self)
        var a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b
        var slot = rows.firstSlot
        for ky in rows.taps {
            let row = rows.ring + slot * rows.rowBytes
            let taps = filter + (1 + ky * k) * vector
            /// Filter row `ky`'s taps for pixel `j`: the same input vectors recur across pixels
            /// (at stride 1, pixel `j`'s tap `kx + 1` is pixel `j + 1`'s tap `kx`) and load once.
            @inline(always)
            func add(_ a: inout Lanes, _ j: Int) {
                for kx in 0 ..< k {
                    a = a.addingProduct(row.loadUnaligned(fromByteOffset: (j * s + kx) * vector, as: Lanes.self),
                                        taps.loadUnaligned(fromByteOffset: kx * vector, as: Lanes.self))
                }
            }
            add(&a0, 0)
            if p > 1 { add(&a1, 1) }
            if p > 2 { add(&a2, 2) }
            if p > 3 { add(&a3, 3) }
            if p > 4 { add(&a4, 4) }
            if p > 5 { add(&a5, 5) }
            if p > 6 { add(&a6, 6) }
            if p > 7 { add(&a7, 7) }
            slot = slot + 1 == k ? 0 : slot + 1
        }
        dst.storeBytes(of: FloatTiles.clamp(a0, lower, upper), as: Lanes.self)
        if p > 1 { dst.storeBytes(of: FloatTiles.clamp(a1, lower, upper), toByteOffset: pixel, as: Lanes.self) }
        if p > 2 { dst.storeBytes(of: FloatTiles.clamp(a2, lower, upper), toByteOffset: 2 * pixel, as: Lanes.self) }
        if p > 3 { dst.storeBytes(of: FloatTiles.clamp(a3, lower, upper), toByteOffset: 3 * pixel, as: Lanes.self) }
        if p > 4 { dst.storeBytes(of: FloatTiles.clamp(a4, lower, upper), toByteOffset: 4 * pixel, as: Lanes.self) }
        if p > 5 { dst.storeBytes(of: FloatTiles.clamp(a5, lower, upper), toByteOffset: 5 * pixel, as: Lanes.self) }
        if p > 6 { dst.storeBytes(of: FloatTiles.clamp(a6, lower, upper), toByteOffset: 6 * pixel, as: Lanes.self) }
        if p > 7 { dst.storeBytes(of: FloatTiles.clamp(a7, lower, upper), toByteOffset: 7 * pixel, as: Lanes.self) }
    }
}
