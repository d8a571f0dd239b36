// This module's own file (the others are SIMDKernels' sources compiled again): only the AVX-512
// tier has it, the AVX2 tier computing the same lanes in the engine (`LogisticFloat32`).
#if SWIFTLITE_AVX512
import CX86Intrinsics

/// Float LOGISTIC and swish in sixteen lanes a step (`swiftlite_logistic_f32x16`), each lane the
/// bits of the engine's eight-lane form (`LogisticFloat32.logistic`, the same operations in the
/// same order): half the instructions of two `ymm` halves.
public enum FloatElementwise {
    /// `y[i] = logistic(x[i])` for `count` elements.
    @inline(never)
    public static func logistic(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int) {
        map(x, y, count: count, swish: false, lower: 0, upper: 0)
    }

    /// `y[i] = clamp(x[i] · logistic(x[i]), lower, upper)` for `count` elements, the clamp as
    /// `FloatTiles.clamp`'s.
    @inline(never)
    public static func swish(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int, lower: Float, upper: Float) {
        map(x, y, count: count, swish: true, lower: lower, upper: upper)
    }

    /// Logistic, or swish where `swish` (a constant at both call sites), sixteen lanes a step;
    /// the last `count % 16` through one more step on a zero-padded copy, of which only those
    /// lanes are stored (as the engine's `mapLanes`).
    @inline(__always)
    private static func map(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int, swish: Bool,
                            lower: Float, upper: Float) {
        @inline(__always)
        func lanes(_ v: SIMD16<Float>) -> SIMD16<Float> {
            let s = swiftlite_logistic_f32x16(v)
            return swish ? FloatTiles.clamp(v * s, lower, upper) : s
        }
        let end = count - count % 16
        var i = 0
        while i < end {
            let v = UnsafeRawPointer(x + i).loadUnaligned(as: SIMD16<Float>.self)
            UnsafeMutableRawPointer(y + i).storeBytes(of: lanes(v), as: SIMD16<Float>.self)
            i &+= 16
        }
        guard end < count else { return }
        var tail = SIMD16<Float>()
        for lane in 0 ..< count - end { tail[lane] = x[end + lane] }
        let result = lanes(tail)
        for lane in 0 ..< count - end { y[end + lane] = result[lane] }
    }
}
#endif
