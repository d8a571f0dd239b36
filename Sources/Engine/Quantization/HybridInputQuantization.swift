#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How TFLite's hybrid kernels (float32 activations, int8 weights) quantize a float row on the
/// fly (`tensor_utils::SymmetricQuantizeFloats` / `AsymmetricQuantizeFloats`, portable
/// versions), so that the integer dot products match bit for bit.
enum HybridInputQuantization {
    /// Symmetric: `range = max(|min|, |max|)`; all-zero rows give zeros and scale 1; else
    /// `scale = range / 127` and `q = clamp(Int32(roundf(x · (127 / range))), −127, 127)`.
    ///
    /// Example: `[0.5, -1.0]` → scale `1/127`, q `[64, -127]` (63.5 rounds away from zero).
    static func symmetric(_ x: UnsafePointer<Float>, count: Int, into q: UnsafeMutablePointer<Int8>) -> Float {
        var low = Float.infinity, high = -Float.infinity
        for i in 0 ..< count {
            // std::minmax_element: the first minimum and the last maximum; NaN compares false.
            if x[i] < low { low = x[i] }
            if !(x[i] < high) { high = x[i] }
        }
        if count == 0 { return 1 }
        let range = max(abs(low), abs(high))
        if range == 0 {
            q.update(repeating: 0, count: count)
            return 1
        }
        let inverse = 127 / range
        for i in 0 ..< count {
            let value = truncatingToInt32LikeX86((x[i] * inverse).rounded(.toNearestOrAwayFromZero))
            q[i] = Int8(truncatingIfNeeded: min(127, max(-127, value)))
        }
        return range / 127
    }

    /// Asymmetric: the range `[min(0, min), max(0, max)]` in Double, `scale = span / 255`, the
    /// zero point from whichever end has the smaller error, nudged into `−128 ... 127` and
    /// rounded; `q = clamp(zp + Int32(roundf(x · (1 / scale))), −128, 127)`, the product in Float.
    /// The zero point is added after the rounding, as in LiteRT's reference kernels: where
    /// `x / scale` falls halfway between two steps the product rounds away from zero on its own,
    /// which `roundf(zp + x / scale)` would not do for a negative sum. Returns
    /// `(scale, zeroPoint)`; an all-zero row gives zeros, `(1, 0)`.
    ///
    /// Example: `[0, 2.55]` → scale `0.01`, zero point `−128`, q `[−128, 127]`; with scale
    /// `1/16` and zero point `−128`, `x = 2.78125` (44.5 steps) gives `−128 + 45 = −83`.
    static func asymmetric(_ x: UnsafePointer<Float>, count: Int, into q: UnsafeMutablePointer<Int8>) -> (scale: Float, zeroPoint: Int32) {
        var low = Float.infinity, high = -Float.infinity
        for i in 0 ..< count {
            if x[i] < low { low = x[i] }
            if !(x[i] < high) { high = x[i] }
        }
        let rmin = Double(min(0, count == 0 ? 0 : low)), rmax = Double(max(0, count == 0 ? 0 : high))
        if rmin == rmax {
            q.update(repeating: 0, count: count)
            return (1, 0)
        }
        let qmin = -128.0, qmax = 127.0
        let scale = (rmax - rmin) / (qmax - qmin)
        let fromMin = qmin - rmin / scale, fromMax = qmax - rmax / scale
        let errorMin = abs(qmin) + abs(rmin / scale), errorMax = abs(qmax) + abs(rmax / scale)
        let zeroPointDouble = errorMin < errorMax ? fromMin : fromMax
        let zeroPoint: Int32
        if zeroPointDouble <= qmin {
            zeroPoint = -128
        } else if zeroPointDouble >= qmax {
            zeroPoint = 127
        } else {
            zeroPoint = Int32(zeroPointDouble.rounded(.toNearestOrAwayFromZero))
        }
        let floatScale = Float(scale)
        let inverse = 1 / floatScale
        for i in 0 ..< count {
            let value = zeroPoint &+ truncatingToInt32LikeX86((x[i] * inverse).rounded(.toNearestOrAwayFromZero))
            q[i] = Int8(truncatingIfNeeded: min(127, max(-128, value)))
        }
        return (floatScale, zeroPoint)
    }
}
