// Lane-width conversions for the integer kernels' hot loops. They are written lane by lane,
// which LLVM turns into single `vpmovsxwd`/`vpmovzxbd`/`vpmovdb` instructions: the standard
// library's converting initializers (`SIMD16<Int32>(truncatingIfNeeded:)`, and in larger
// functions the eight-lane ones too) are not always inlined and then become calls in the
// loop. `@inline(always)` because `@inline(__always)` is only a hint.

#if SWIFTLITE_AVX2
import CX86Intrinsics
#endif
import Microkernels

/// Sign-extends sixteen `Int16` lanes.
@inline(always)
func widened(_ v: SIMD16<Int16>) -> SIMD16<Int32> {
    var result = SIMD16<Int32>()
    for lane in 0 ..< 16 { result[lane] = Int32(v[lane]) }
    return result
}

/// Sign-extends sixteen `Int8` lanes.
@inline(always)
func widened(_ v: SIMD16<Int8>) -> SIMD16<Int32> {
    var result = SIMD16<Int32>()
    for lane in 0 ..< 16 { result[lane] = Int32(v[lane]) }
    return result
}

/// Zero-extends sixteen `UInt8` lanes.
@inline(always)
func widened(_ v: SIMD16<UInt8>) -> SIMD16<Int32> {
    var result = SIMD16<Int32>()
    for lane in 0 ..< 16 { result[lane] = Int32(v[lane]) }
    return result
}

/// `v + offset` clamped to `minimum ... maximum` (a range inside the 8-bit type's), the first
/// `count` lanes stored as bytes: an output stage's last step. On AVX2 a whole 16 lanes take
/// saturated words and bytes (`swiftlite_store_clamped_16_bytes_avx2`: the same bytes in 8
/// instructions instead of 14). That store does not need the type: a negative minimum is int8's,
/// and a range inside 0...255 packs as uint8 whatever the type (inside 0...127 both packs agree).
@inline(always)
func storeClampedBytes(_ v: SIMD16<Int32>, offset: Int32, minimum: Int32, maximum: Int32,
                       to destination: UnsafeMutablePointer<UInt8>, count: Int) {
    #if SWIFTLITE_AVX2 && !SWIFTLITE_AVX512
    if count >= 16 {
        return swiftlite_store_clamped_16_bytes_avx2(destination, v, minimum >= 0 ? 1 : 0, offset, minimum, maximum)
    }
    #endif
    storeLowBytes(clamped(v &+ SIMD16(repeating: offset), minimum, maximum), to: destination, count: count)
}

/// Stores the low byte of the first `count` lanes: on AVX-512 one `vpmovdb` (masked when fewer than 16); on AVX2
/// five packing instructions (LLVM made the lane loop sixteen `vpextrb` there) and one store,
/// or a byte loop over the packed bytes; elsewhere the lane loop (all sixteen: one `vpmovdb`).
@inline(always)
func storeLowBytes(_ v: SIMD16<Int32>, to destination: UnsafeMutablePointer<UInt8>, count: Int) {
    #if SWIFTLITE_AVX512
    // A constant 16 folds the mask away (its computation from `count` was eight scalar
    // instructions per store, in the GEMM's output stage too).
    if count >= 16 {
        swiftlite_store_low_bytes(destination, v, 16)
    } else {
        swiftlite_store_low_bytes(destination, v, count)
    }
    #elseif SWIFTLITE_AVX2
    let bytes = swiftlite_low_bytes(v)
    if count >= 16 {
        UnsafeMutableRawPointer(destination).storeBytes(of: bytes, as: SIMD16<UInt8>.self)
    } else {
        for lane in 0 ..< count { destination[lane] = bytes[lane] }
    }
    #else
    if count >= 16 {
        for lane in 0 ..< 16 { destination[lane] = UInt8(truncatingIfNeeded: v[lane]) }
    } else {
        for lane in 0 ..< count { destination[lane] = UInt8(truncatingIfNeeded: v[lane]) }
    }
    #endif
}
