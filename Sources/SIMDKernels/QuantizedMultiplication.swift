// x86-64 only: the one-shift requantization is the intrinsics header's AVX2 or AVX-512 wrapper.
#if SWIFTLITE_AVX2
import CX86Intrinsics

/// The vector loop of the engine's quantized MUL, for operands that step element by element
/// along rows: same-shape operands (one row), and a squeeze-and-excitation block's
/// `[1, h, w, c] · [1, 1, 1, c]` (rows of `c`, the scale's one row read again for each). Each
/// output is TFLite's reference arithmetic, `clamp(zz + MultiplyByQuantizedMultiplier((x − xz)
/// · (y − yz)))`, the multiplier in the one-shift form (`swiftlite_requantize_wide`, exact where
/// the engine built its constants: a right shift, no saturation). Compiled twice, like
/// `QuantizedAddition`: `SIMDKernelsAVX512` (16 lanes in a `zmm`, 64 outputs packed at once) and
/// `SIMDKernels` for the build's floor (two `ymm` per 16 lanes).
public enum QuantizedMultiplication {
    /// The output stage's constants: 16 equal multipliers and the `WideRequantization` block
    /// after them, as `ChannelRequantization` lays them out.
    public typealias Stage = (multipliers: UnsafeRawPointer, wide: UnsafeRawPointer)

    /// `rows` rows of `width` outputs: `z[r · width + j]` from `x[r · xStride + j]` and
    /// `y[r · yStride + j]` (a stride 0 reads one row again). `signed` reads the bytes as `Int8`,
    /// else `UInt8`; `nonnegative` takes the stage without its correction for negative products,
    /// which stores the same bytes where `lower` is at or above the output zero point.
    @inline(never)
    public static func rows(signed: Bool, _ x: UnsafeRawPointer, xStride: Int, _ y: UnsafeRawPointer, yStride: Int,
                            _ z: UnsafeMutablePointer<UInt8>, rows: Int, width: Int,
                            zeroPoints: (lhs: Int32, rhs: Int32, output: Int32), stage: Stage, nonnegative: Bool,
                            lower: Int32, upper: Int32) {
        let run = switch (signed, nonnegative) {
        case (true, true): signedNonnegative
        case (true, false): signedAny
        case (false, true): unsignedNonnegative
        case (false, false): unsignedAny
        }
        run(x, xStride, y, yStride, z, rows, width, zeroPoints, stage, lower, upper)
    }

    /// `rows`' arguments but for the flags, which each copy below holds as constants.
    private typealias Copy = @Sendable (UnsafeRawPointer, Int, UnsafeRawPointer, Int, UnsafeMutablePointer<UInt8>, Int, Int,
                                        (lhs: Int32, rhs: Int32, output: Int32), Stage, Int32, Int32) -> Void

    // One copy of the loop per function: four inlined into `rows` itself were too many for the
    // inliner, which left one called with the flags as variables.
    private static let signedNonnegative: Copy = { x, xStride, y, yStride, z, rows, width, zeroPoints, stage, lower, upper in
        loop(signed: true, nonnegative: true, x, xStride, y, yStride, z, rows, width, zeroPoints, stage, lower, upper)
    }
    private static let signedAny: Copy = { x, xStride, y, yStride, z, rows, width, zeroPoints, stage, lower, upper in
        loop(signed: true, nonnegative: false, x, xStride, y, yStride, z, rows, width, zeroPoints, stage, lower, upper)
    }
    private static let unsignedNonnegative: Copy = { x, xStride, y, yStride, z, rows, width, zeroPoints, stage, lower, upper in
        loop(signed: false, nonnegative: true, x, xStride, y, yStride, z, rows, width, zeroPoints, stage, lower, upper)
    }
    private static let unsignedAny: Copy = { x, xStride, y, yStride, z, rows, width, zeroPoints, stage, lower, upper in
        loop(signed: false, nonnegative: false, x, xStride, y, yStride, z, rows, width, zeroPoints, stage, lower, upper)
    }

    @inline(__always)
    private static func loop(signed: Bool, nonnegative: Bool, _ x: UnsafeRawPointer, _ xStride: Int, _ y: UnsafeRawPointer,
                             _ yStride: Int, _ z: UnsafeMutablePointer<UInt8>, _ rows: Int, _ width: Int,
                             _ zeroPoints: (lhs: Int32, rhs: Int32, output: Int32), _ stage: Stage,
                             _ lower: Int32, _ upper: Int32) {
        let xOffset = SIMD16<Int32>(repeating: zeroPoints.lhs), yOffset = SIMD16<Int32>(repeating: zeroPoints.rhs)
        let unsignedBytes: CInt = signed ? 0 : 1
        /// The `count` (1...16) bytes at `p`, widened to 32-bit lanes (the others zero; only
        /// `count` bytes are read).
        @inline(__always)
        func widened(_ p: UnsafeRawPointer, _ count: Int) -> SIMD16<Int32> {
            signed ? swiftlite_load_widened_signed_bytes(p, count, count) : swiftlite_load_widened_bytes(p, count, count)
        }
        #if SWIFTLITE_AVX512VNNI
        // The stage's five vectors in registers (from memory in every step, the compiler could not
        // keep them: the byte stores might alias them).
        let multipliers = swiftlite_load_dwords(stage.multipliers), oddMultipliers = swiftlite_load_dwords(stage.wide)
        let evenNudges = swiftlite_load_dwords(stage.wide + 64), oddNudges = swiftlite_load_dwords(stage.wide + 128)
        let shifts = swiftlite_load_dwords(stage.wide + 192)
        @inline(__always)
        func product(_ row: Int, _ j: Int, _ count: Int) -> SIMD16<Int32> {
            let p = (widened(x + (row &* xStride &+ j), count) &- xOffset) &* (widened(y + (row &* yStride &+ j), count) &- yOffset)
            return nonnegative
                ? swiftlite_requantize_wide_nonnegative_block(p, multipliers, oddMultipliers, evenNudges, oddNudges, shifts)
                : swiftlite_requantize_wide_block(p, multipliers, oddMultipliers, evenNudges, oddNudges, shifts)
        }
        if width % 16 == 0 {
            // Rows of whole vectors lie end to end in the output: four vectors to a store across
            // rows (a squeeze-and-excitation block's rows are often 32 to 144 wide).
            let total = rows &* width
            var row = 0, j = 0, o = 0
            @inline(__always)
            func next() -> SIMD16<Int32> {
                let q = product(row, j, 16)
                j &+= 16
                if j == width { j = 0; row &+= 1 }
                return q
            }
            while o + 64 <= total {
                let a = next(), b = next(), c = next(), d = next()
                swiftlite_store_clamped_bytes(z + o, a, b, c, d, 4, unsignedBytes, zeroPoints.output, lower, upper, 64)
                o &+= 64
            }
            while o < total {
                let q = next()
                swiftlite_store_clamped_bytes(z + o, q, q, q, q, 1, unsignedBytes, zeroPoints.output, lower, upper, 16)
                o &+= 16
            }
            return
        }
        for row in 0 ..< rows {
            let out = z + row &* width
            var j = 0
            while j + 64 <= width {
                swiftlite_store_clamped_bytes(out + j, product(row, j, 16), product(row, j + 16, 16), product(row, j + 32, 16),
                                              product(row, j + 48, 16), 4, unsignedBytes, zeroPoints.output, lower, upper, 64)
                j &+= 64
            }
            while j < width {
                let count = min(16, width - j), q = product(row, j, count)
                swiftlite_store_clamped_bytes(out + j, q, q, q, q, 1, unsignedBytes, zeroPoints.output, lower, upper, count)
                j &+= 16
            }
        }
        #else
        @inline(__always)
        func product(_ row: Int, _ j: Int, _ count: Int) -> SIMD16<Int32> {
            let p = (widened(x + (row &* xStride &+ j), count) &- xOffset) &* (widened(y + (row &* yStride &+ j), count) &- yOffset)
            return nonnegative
                ? swiftlite_requantize_wide_nonnegative_avx2(p, stage.multipliers, stage.wide)
                : swiftlite_requantize_wide_avx2(p, stage.multipliers, stage.wide)
        }
        for row in 0 ..< rows {
            let out = z + row &* width
            var j = 0
            while j + 16 <= width {
                swiftlite_store_clamped_16_bytes_avx2(out + j, product(row, j, 16), unsignedBytes, zeroPoints.output, lower, upper)
                j &+= 16
            }
            if j < width {
                // The last 1...15 outputs through a buffer: the store writes 16 bytes.
                let count = width - j
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { buffer in
                    swiftlite_store_clamped_16_bytes_avx2(buffer.baseAddress!, product(row, j, count), unsignedBytes,
                                                          zeroPoints.output, lower, upper)
                    (out + j).update(from: buffer.baseAddress!, count: count)
                }
            }
        }
        #endif
    }
}
#endif
