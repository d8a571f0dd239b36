// x86 SIMD instructions that Swift's SIMD types cannot express, as inline wrappers for the
// engine's micro-kernels. Everything is typed in 16 × int32 vectors, which Swift imports as
// `SIMD16<Int32>`, so the Swift side keeps its own vector types.
//
// The wrappers exist only when the build targets the instructions (the compiler's `__AVX2__`,
// `__AVX512VNNI__`, ... follow Swift's `-target-cpu`): Swift code that uses them is compiled
// only under `#if SWIFTLITE_AVX2`, `SWIFTLITE_AVX512`, `SWIFTLITE_AVX512VNNI`, which Package.swift defines for
// the same target CPU. Should the two ever disagree, the build fails with "cannot find
// 'swiftlite_dpbusd' in scope" rather than producing code for the wrong machine.
#ifndef SWIFTLITE_CX86INTRINSICS_H
#define SWIFTLITE_CX86INTRINSICS_H

#include <stdint.h>

typedef int32_t swiftlite_i32x16 __attribute__((vector_size(64)));

/// A spin-wait hint for the worker pool's spin loops, on every target: `pause` on x86-64 (the
/// core lets its other hardware thread run, and leaving the loop costs no memory-order flush),
/// `yield` on arm64, nothing elsewhere.
static inline __attribute__((always_inline)) void swiftlite_spin_pause(void) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/// Asks the cache hierarchy for the line holding `address` ahead of its use, into the outer
/// caches (`prefetcht1` on x86-64, `prfm pldl2keep` on arm64): for weights that the next block of
/// a product reads, while the current block computes from the inner cache.
static inline __attribute__((always_inline)) void swiftlite_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 2);
}

/// Where, in bytes, a tap row of the quantized depthwise kernels holds the `quads` (1 for a
/// 3×3 filter, 2 for a 5×5) vectors of 16 lanes of output column `column` for the block of
/// 16 channels at `channel` (a multiple of 16): block-major, `width` columns per block, so a
/// kernel walking a row one block at a time reads consecutive vectors. The one definition of
/// that layout, for the builders (SIMDKernels) and the kernels (Microkernels, the engine's
/// AVX2 rows) alike; its arguments are bounded by the ring that prepare sized.
static inline __attribute__((always_inline)) intptr_t swiftlite_tap_row_offset(intptr_t column, intptr_t channel,
                                                                               intptr_t width, intptr_t quads) {
    return ((channel >> 4) * width + column) * quads * 64;
}

#if defined(__x86_64__)
#include <cpuid.h>

/// Whether this CPU, and the operating system's saving of its registers, run code compiled for
/// `-target-cpu cascadelake` (the Microkernels module when the build's own target lacks AVX-512
/// VNNI): AVX-512 F, CD, BW, DQ, VL and VNNI, the AVX2-generation instructions LLVM may emit for
/// such a target (AVX2, FMA, F16C, BMI1, BMI2, LZCNT, MOVBE, POPCNT), and XCR0 enabling the
/// XMM, YMM, opmask and all 32 ZMM registers (Linux enables them on every CPU that has them).
static inline int swiftlite_cpu_runs_cascadelake_code(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    // FMA 12, MOVBE 22, POPCNT 23, OSXSAVE 27, AVX 28, F16C 29.
    const unsigned leaf1 = 1u << 12 | 1u << 22 | 1u << 23 | 1u << 27 | 1u << 28 | 1u << 29;
    if ((c & leaf1) != leaf1) return 0;
    unsigned xcr0, xcr0High;
    __asm__ __volatile__("xgetbv" : "=a"(xcr0), "=d"(xcr0High) : "c"(0));
    if ((xcr0 & 0xE6) != 0xE6) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    // BMI1 3, AVX2 5, BMI2 8, AVX512F 16, AVX512DQ 17, AVX512CD 28, AVX512BW 30, AVX512VL 31.
    const unsigned leaf7 = 1u << 3 | 1u << 5 | 1u << 8 | 1u << 16 | 1u << 17 | 1u << 28 | 1u << 30 | 1u << 31;
    if ((b & leaf7) != leaf7 || !(c & 1u << 11)) return 0;  // AVX512_VNNI: ECX bit 11
    if (!__get_cpuid(0x80000001, &a, &b, &c, &d)) return 0;
    return (c & 1u << 5) != 0;  // LZCNT
}

/// Whether this CPU, and the OS's saving of its `zmm` and mask registers, run
/// `swiftlite_lookup_bytes_vbmi` (AVX-512 F, BW and VBMI: Intel Ice Lake and later, AMD Zen 4).
int swiftlite_cpu_runs_vbmi_lookup(void);
/// Whether this CPU, and the OS's saving of its `ymm` registers, run `swiftlite_lookup_bytes_avx2`.
int swiftlite_cpu_runs_avx2_lookup(void);
/// `y[i] = table[x[i]]` for `i < count` (ByteLookup.c), `table` 256 bytes; `y` may be `x`. Only
/// where `swiftlite_cpu_runs_vbmi_lookup` says so: 64 bytes a step.
void swiftlite_lookup_bytes_vbmi(const uint8_t *table, const uint8_t *x, uint8_t *y, intptr_t count);
/// The same, 32 bytes a step, only where `swiftlite_cpu_runs_avx2_lookup` says so.
void swiftlite_lookup_bytes_avx2(const uint8_t *table, const uint8_t *x, uint8_t *y, intptr_t count);
/// The one-shift requantization of the 16 lanes of `X` (an `__m512i`), the body of
/// `swiftlite_requantize_wide_block` (`CORRECT` 1) and `swiftlite_requantize_wide_nonnegative_block`
/// (0), all operands `__m512i`. A macro so that QuantizedAdd.c, compiled for the baseline with
/// AVX-512 by a function attribute (the wrappers below exist only where the compiler targets
/// AVX-512), takes the same instructions. `P < 0` is tested as `P + nudge < nudge` (no
/// overflow): a compare with zero LLVM turns into `vpmovq2m`.
#define SWIFTLITE_REQUANTIZE_WIDE_BODY(X, MULTIPLIERS, ODD_MULTIPLIERS, EVEN_NUDGES, ODD_NUDGES, SHIFTS, CORRECT) ({          \
    __m512i swiftlite_even_ = _mm512_add_epi64(_mm512_mul_epi32((X), (MULTIPLIERS)), (EVEN_NUDGES));                        \
    __m512i swiftlite_odd_ = _mm512_add_epi64(_mm512_mul_epi32(_mm512_shuffle_epi32((X), _MM_PERM_DDBB), (ODD_MULTIPLIERS)), \
                                              (ODD_NUDGES));                                                                 \
    if (CORRECT) {                                                                                                           \
        const __m512i swiftlite_adjust_ = _mm512_set1_epi64(-((int64_t)1 << 31));                                            \
        swiftlite_even_ = _mm512_mask_add_epi64(swiftlite_even_, _mm512_cmplt_epi64_mask(swiftlite_even_, (EVEN_NUDGES)),    \
                                                swiftlite_even_, swiftlite_adjust_);                                         \
        swiftlite_odd_ = _mm512_mask_add_epi64(swiftlite_odd_, _mm512_cmplt_epi64_mask(swiftlite_odd_, (ODD_NUDGES)),        \
                                               swiftlite_odd_, swiftlite_adjust_);                                           \
    }                                                                                                                        \
    const __m512i swiftlite_high_ = _mm512_setr_epi32(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);            \
    _mm512_srav_epi32(_mm512_permutex2var_epi32(swiftlite_even_, swiftlite_high_, swiftlite_odd_), (SHIFTS));               \
})

/// The same-shape 8-bit ADD or SUB (QuantizedAdd.c), only where `swiftlite_cpu_runs_vbmi_lookup`
/// says so: `z = clamp(outputOffset + R(±(h − halfZeroPoint) · 2^19 + T[t]))` for `count`
/// elements, `h` the operand whose rescaling multiplier is ½ (subtracted where `negateHalf`),
/// `T` the other one's rescaled values by byte as four planes of 256 bytes (byte `p` of entry
/// `v` at `tablePlanes[256 p + v]`), `R` the one-shift rescaling whose 16 multipliers and
/// `WideRequantization` block are at `multipliers` and `wide`, clamped to `minimum...maximum`.
/// The bytes are `Int8` where `isSigned`, else `UInt8`.
void swiftlite_add_bytes_vbmi(const uint8_t *h, const uint8_t *t, uint8_t *z, intptr_t count, const uint8_t *tablePlanes,
                              int32_t halfZeroPoint, int negateHalf, const void *multipliers, const void *wide,
                              int32_t outputOffset, int32_t minimum, int32_t maximum, int isSigned);
#endif

// The wrappers pass 64-byte vectors, whose calling convention differs with and without AVX-512
// (clang's -Wpsabi). Every wrapper is always inlined, so no call with either convention remains.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wpsabi"

#if defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>

#define SWIFTLITE_INLINE static inline __attribute__((always_inline))

typedef int32_t swiftlite_i32x8 __attribute__((vector_size(32)));
typedef float swiftlite_f32x8 __attribute__((vector_size(32)));

/// `x` limited to `lower...upper`: `vmaxps` with the bound first, then `vminps` likewise. Each
/// returns its second operand unless the bound is strictly beyond it, so a lane is `lower` only
/// where `x < lower` and `upper` only where it is `> upper`, and a NaN lane stays NaN: the lanes
/// of `FloatTiles.clamp`'s `replace(with:where:)` form.
SWIFTLITE_INLINE swiftlite_f32x8 swiftlite_clamp_f32x8(swiftlite_f32x8 x, float lower, float upper) {
    __m256 low = _mm256_max_ps(_mm256_set1_ps(lower), (__m256)x);
    return (swiftlite_f32x8)_mm256_min_ps(_mm256_set1_ps(upper), low);
}

/// `VectorExponential.shifter`: 1.5 · 2^23 + 127.
#define SWIFTLITE_EXP_SHIFTER 12583039.0f
/// `VectorExponential`'s other constants, shared by the eight- and sixteen-lane forms: log2(e),
/// −ln 2 in two parts, the polynomial's coefficients from the highest degree down (the last
/// two are 1), the cut-offs of LOGISTIC and of the one-factor scaling.
#define SWIFTLITE_EXP_LOG2E 1.44269504f
#define SWIFTLITE_EXP_LN2_HIGH -0.693147182464599609375f
#define SWIFTLITE_EXP_LN2_LOW 1.90465432314823608057e-9f
#define SWIFTLITE_EXP_C6 1.381829963e-3f
#define SWIFTLITE_EXP_C5 8.368532173e-3f
#define SWIFTLITE_EXP_C4 4.166829214e-2f
#define SWIFTLITE_EXP_C3 1.666652262e-1f
#define SWIFTLITE_EXP_C2 4.999999404e-1f
#define SWIFTLITE_LOGISTIC_LOWER -9.0f
#define SWIFTLITE_LOGISTIC_UPPER 16.619047164916992188f
#define SWIFTLITE_EXP_ONE_FACTOR_LOWER -87.5f

/// The body of `VectorExponential.reduced` for vectors `VECTOR` of the intrinsics named `MM`_…
/// (`_mm256` or `_mm512`): from `x`, `shifter + n` (returned) and `exp(r)` (in `*p`) for
/// x = n·ln 2 + r. One definition for both widths, so that their lanes compute the same
/// operations in the same order.
#define SWIFTLITE_EXP_REDUCED_BODY(MM, VECTOR) \
    const VECTOR shifter = MM##_set1_ps(SWIFTLITE_EXP_SHIFTER); \
    const VECTOR shifted = MM##_fmadd_ps(x, MM##_set1_ps(SWIFTLITE_EXP_LOG2E), shifter); \
    const VECTOR n = MM##_sub_ps(shifted, shifter); \
    VECTOR r = MM##_fmadd_ps(n, MM##_set1_ps(SWIFTLITE_EXP_LN2_HIGH), x); \
    r = MM##_fmadd_ps(n, MM##_set1_ps(SWIFTLITE_EXP_LN2_LOW), r); \
    VECTOR q = MM##_fmadd_ps(MM##_set1_ps(SWIFTLITE_EXP_C6), r, MM##_set1_ps(SWIFTLITE_EXP_C5)); \
    q = MM##_fmadd_ps(q, r, MM##_set1_ps(SWIFTLITE_EXP_C4)); \
    q = MM##_fmadd_ps(q, r, MM##_set1_ps(SWIFTLITE_EXP_C3)); \
    q = MM##_fmadd_ps(q, r, MM##_set1_ps(SWIFTLITE_EXP_C2)); \
    q = MM##_fmadd_ps(q, r, MM##_set1_ps(1.0f)); \
    *p = MM##_fmadd_ps(q, r, MM##_set1_ps(1.0f)); \
    return shifted;

/// The end of `VectorExponential.exp(_:)` from `shifted` and `p` (a reduction of the clamped
/// argument): `p · 2^a · 2^b`, where a + b = n is the difference of the two sums' bit patterns
/// (same exponent) and each factor is a normal float. `BITS` is the vectors' width (256, 512).
#define SWIFTLITE_EXP_TWO_FACTORS_BODY(MM, BITS, VECTOR, INTEGERS) \
    const INTEGERS integer = MM##_sub_epi32(MM##_castps_si##BITS(shifted), MM##_castps_si##BITS(MM##_set1_ps(SWIFTLITE_EXP_SHIFTER))); \
    const INTEGERS a = MM##_srai_epi32(integer, 1), b = MM##_sub_epi32(integer, a), bias = MM##_set1_epi32(127); \
    const VECTOR scaleA = MM##_castsi##BITS##_ps(MM##_slli_epi32(MM##_add_epi32(a, bias), 23)); \
    const VECTOR scaleB = MM##_castsi##BITS##_ps(MM##_slli_epi32(MM##_add_epi32(b, bias), 23)); \
    return MM##_mul_ps(MM##_mul_ps(p, scaleA), scaleB);

/// `VectorExponential.reduced` in eight lanes (`SWIFTLITE_EXP_REDUCED_BODY`).
SWIFTLITE_INLINE __m256 swiftlite_exp_reduced_f32x8(__m256 x, __m256 *p) {
    SWIFTLITE_EXP_REDUCED_BODY(_mm256, __m256)
}

/// `VectorExponential.exp(notAbove88:)`: one product by 2^n where every lane is at least −87.5,
/// else `exp(_:)`'s clamps and two factors.
SWIFTLITE_INLINE __m256 swiftlite_exp_not_above_88_f32x8(__m256 x) {
    __m256 p;
    if (!_mm256_movemask_ps(_mm256_cmp_ps(x, _mm256_set1_ps(SWIFTLITE_EXP_ONE_FACTOR_LOWER), _CMP_LT_OQ))) {
        const __m256 shifted = swiftlite_exp_reduced_f32x8(x, &p);
        return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(shifted), 23)));
    }
    const __m256 v = (__m256)swiftlite_clamp_f32x8((swiftlite_f32x8)x, -104.0f, 89.0f);
    const __m256 shifted = swiftlite_exp_reduced_f32x8(v, &p);
    SWIFTLITE_EXP_TWO_FACTORS_BODY(_mm256, 256, __m256, __m256i)
}

/// TFLite's float LOGISTIC on eight lanes: `LogisticFloat32.portableLogistic` and the
/// `VectorExponential` functions it calls, operation for operation and constant for constant, so
/// the bits are theirs (`VectorExponentialTests` compares the two). Written with intrinsics
/// because LLVM re-vectorises the standard library's lane-by-lane `addingProduct` only in some
/// shapes of expression, and in others leaves scalar and 128-bit pieces.
SWIFTLITE_INLINE swiftlite_f32x8 swiftlite_logistic_f32x8(swiftlite_f32x8 value) {
    const __m256 v = (__m256)value, one = _mm256_set1_ps(1.0f);
    // The exponential's argument: v below the lower cut-off, −v (the sign bit flipped) elsewhere.
    const __m256 below = _mm256_cmp_ps(v, _mm256_set1_ps(SWIFTLITE_LOGISTIC_LOWER), _CMP_LT_OQ);
    const __m256 e = swiftlite_exp_not_above_88_f32x8(_mm256_blendv_ps(_mm256_xor_ps(v, _mm256_set1_ps(-0.0f)), v, below));
    // 1 / (1 + e); e itself below the lower cut-off; 1 above the upper one.
    const __m256 y = _mm256_blendv_ps(_mm256_div_ps(one, _mm256_add_ps(one, e)), e, below);
    return (swiftlite_f32x8)_mm256_blendv_ps(y, one, _mm256_cmp_ps(v, _mm256_set1_ps(SWIFTLITE_LOGISTIC_UPPER), _CMP_GT_OQ));
}

/// The 8 × 8 floats from `source` (rows `sourceStride` floats apart) transposed into `target`
/// (rows `targetStride` floats apart): `target[c · targetStride + r] = source[r · sourceStride + c]`.
/// Eight loads, 24 shuffles (pairs interleaved, then quads, then 128-bit halves swapped), eight stores.
SWIFTLITE_INLINE void swiftlite_transpose_8x8_floats(const float *source, intptr_t sourceStride,
                                                    float *target, intptr_t targetStride) {
    __m256 r0 = _mm256_loadu_ps(source), r1 = _mm256_loadu_ps(source + sourceStride);
    __m256 r2 = _mm256_loadu_ps(source + 2 * sourceStride), r3 = _mm256_loadu_ps(source + 3 * sourceStride);
    __m256 r4 = _mm256_loadu_ps(source + 4 * sourceStride), r5 = _mm256_loadu_ps(source + 5 * sourceStride);
    __m256 r6 = _mm256_loadu_ps(source + 6 * sourceStride), r7 = _mm256_loadu_ps(source + 7 * sourceStride);
    // t0 = r0[0] r1[0] r0[1] r1[1] | r0[4] r1[4] r0[5] r1[5], and so on.
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    // s0 = r0[0] r1[0] r2[0] r3[0] | r0[4] r1[4] r2[4] r3[4]: columns 0 and 4 of rows 0–3.
    __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(target, _mm256_permute2f128_ps(s0, s4, 0x20));
    _mm256_storeu_ps(target + targetStride, _mm256_permute2f128_ps(s1, s5, 0x20));
    _mm256_storeu_ps(target + 2 * targetStride, _mm256_permute2f128_ps(s2, s6, 0x20));
    _mm256_storeu_ps(target + 3 * targetStride, _mm256_permute2f128_ps(s3, s7, 0x20));
    _mm256_storeu_ps(target + 4 * targetStride, _mm256_permute2f128_ps(s0, s4, 0x31));
    _mm256_storeu_ps(target + 5 * targetStride, _mm256_permute2f128_ps(s1, s5, 0x31));
    _mm256_storeu_ps(target + 6 * targetStride, _mm256_permute2f128_ps(s2, s6, 0x31));
    _mm256_storeu_ps(target + 7 * targetStride, _mm256_permute2f128_ps(s3, s7, 0x31));
}

/// `vpmaddwd`: in each 32-bit lane, `a.i16[0] · b.i16[0] + a.i16[1] · b.i16[1]` (signed
/// halfwords; the sum wraps only for −32768² + −32768², which 9-bit operands never reach).
SWIFTLITE_INLINE swiftlite_i32x8 swiftlite_madd16(swiftlite_i32x8 a, swiftlite_i32x8 b) {
    return (swiftlite_i32x8)_mm256_madd_epi16((__m256i)a, (__m256i)b);
}

/// The 16 signed bytes at `p` sign-extended to 16 halfwords (`vpmovsxbw` from memory): eight
/// 32-bit lanes of two `Int16` each, as `swiftlite_madd16` takes them.
SWIFTLITE_INLINE swiftlite_i32x8 swiftlite_widen_signed_bytes(const void *p) {
    return (swiftlite_i32x8)_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p));
}

/// Lanes 0–7 (`half` 0) or 8–15 (`half` 1) of `v`, one `ymm`; and two halves joined again.
/// (A 16-lane vector is two `ymm` on AVX2: these cost no instruction.)
SWIFTLITE_INLINE __m256i swiftlite_half(swiftlite_i32x16 v, int half) {
    return half == 0 ? (__m256i)__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)
                     : (__m256i)__builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
}

SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_join(__m256i low, __m256i high) {
    swiftlite_i32x8 r0 = (swiftlite_i32x8)low, r1 = (swiftlite_i32x8)high;
    return __builtin_shufflevector(r0, r1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

typedef uint8_t swiftlite_u8x16 __attribute__((vector_size(16)));

/// The low byte of each of the 16 lanes of `v` (two `ymm` here), in order: masked to 8 bits,
/// packed twice (`vpackusdw`, `vpackuswb`, exact on values in 0...255) and the 128-bit halves'
/// dwords put in order (`vpermd`). What a truncating `vpmovdb` does on AVX-512.
SWIFTLITE_INLINE swiftlite_u8x16 swiftlite_low_bytes(swiftlite_i32x16 v) {
    __m256i byte = _mm256_set1_epi32(0xFF);
    __m256i words = _mm256_packus_epi32(_mm256_and_si256(swiftlite_half(v, 0), byte), _mm256_and_si256(swiftlite_half(v, 1), byte));
    __m256i bytes = _mm256_packus_epi16(words, words);
    // Dwords now hold lanes 0–3, 8–11, (again), 4–7, 12–15, (again).
    __m256i ordered = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 0, 4, 1, 5));
    return (swiftlite_u8x16)_mm256_castsi256_si128(ordered);
}

/// Half of `vpdpbusd` on AVX2, for lanes whose `a` bytes are unsigned: `acc + a.byte[0] ·
/// even.i16[0] + a.byte[2] · even.i16[1]` per 32-bit lane (the odd bytes are ignored), in wrapping
/// 32-bit arithmetic. The even bytes are zero-extended to halfwords (`vpand`) and multiplied by
/// `vpmaddwd`; each product is at most 255 · 128 in magnitude, so no pair sum overflows.
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_dpbusd_even(swiftlite_i32x16 acc, swiftlite_i32x16 a, swiftlite_i32x16 even) {
    __m256i low = _mm256_set1_epi16(0x00FF), c[2];
    for (int h = 0; h < 2; h++) {
        c[h] = _mm256_add_epi32(swiftlite_half(acc, h),
                                _mm256_madd_epi16(_mm256_and_si256(swiftlite_half(a, h), low), swiftlite_half(even, h)));
    }
    return swiftlite_join(c[0], c[1]);
}

/// `vpdpbusd` on AVX2, for lanes whose `a` bytes are unsigned and whose weights come as two
/// int16 pairs: `acc + a.byte[0]·even.i16[0] + a.byte[2]·even.i16[1] + a.byte[1]·odd.i16[0] +
/// a.byte[3]·odd.i16[1]` per 32-bit lane: `swiftlite_dpbusd_even` of the even bytes, then of the
/// odd ones moved into their places (`vpsrlw`, which zero-extends them already: the compiler drops
/// the second mask). Four `vpmaddwd` per 16 lanes.
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_dpbusd_pairs(swiftlite_i32x16 acc, swiftlite_i32x16 a,
                                                         swiftlite_i32x16 even, swiftlite_i32x16 odd) {
    swiftlite_i32x16 odds = swiftlite_join(_mm256_srli_epi16(swiftlite_half(a, 0), 8), _mm256_srli_epi16(swiftlite_half(a, 1), 8));
    return swiftlite_dpbusd_even(swiftlite_dpbusd_even(acc, a, even), odds, odd);
}

/// `swiftlite_requantize_wide` (below; the same stage, constants and result) in two `ymm` halves
/// of eight channels, for AVX2. Each half reads its own 32 bytes of every row of the block's
/// constants. AVX2 has no 64-bit compare into a mask register, so `P < 0` (tested, as there, as
/// `P + nudge < nudge`) is a `vpcmpgtq` whose all-ones words, shifted left by 31, are the −2^31
/// to add; a `vpsrlq` and a `vpblendd` gather the words' high halves. 15 instructions per half,
/// against about 20 for the two rounding steps of LaneArithmetic.swift in these registers.
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_requantize_wide_avx2(swiftlite_i32x16 x, const void *multipliers,
                                                                 const void *wide) {
    const char *m = (const char *)multipliers, *w = (const char *)wide;
    __m256i halves[2];
    for (int h = 0; h < 2; h++) {
        __m256i evenNudge = _mm256_loadu_si256((const __m256i *)(w + 64 + 32 * h));
        __m256i oddNudge = _mm256_loadu_si256((const __m256i *)(w + 128 + 32 * h));
        __m256i even = _mm256_mul_epi32(swiftlite_half(x, h), _mm256_loadu_si256((const __m256i *)(m + 32 * h)));
        __m256i odd = _mm256_mul_epi32(_mm256_shuffle_epi32(swiftlite_half(x, h), 0xF5),
                                       _mm256_loadu_si256((const __m256i *)(w + 32 * h)));
        even = _mm256_add_epi64(even, evenNudge);
        odd = _mm256_add_epi64(odd, oddNudge);
        even = _mm256_add_epi64(even, _mm256_slli_epi64(_mm256_cmpgt_epi64(evenNudge, even), 31));
        odd = _mm256_add_epi64(odd, _mm256_slli_epi64(_mm256_cmpgt_epi64(oddNudge, odd), 31));
        __m256i high = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
        halves[h] = _mm256_srav_epi32(high, _mm256_loadu_si256((const __m256i *)(w + 192 + 32 * h)));
    }
    return swiftlite_join(halves[0], halves[1]);
}

/// `swiftlite_requantize_wide_avx2` without its correction for negative products: see
/// `swiftlite_requantize_wide_nonnegative` for when that stores the same bytes. 12 instructions per half.
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_requantize_wide_nonnegative_avx2(swiftlite_i32x16 x, const void *multipliers,
                                                                             const void *wide) {
    const char *m = (const char *)multipliers, *w = (const char *)wide;
    __m256i halves[2];
    for (int h = 0; h < 2; h++) {
        __m256i even = _mm256_mul_epi32(swiftlite_half(x, h), _mm256_loadu_si256((const __m256i *)(m + 32 * h)));
        __m256i odd = _mm256_mul_epi32(_mm256_shuffle_epi32(swiftlite_half(x, h), 0xF5),
                                       _mm256_loadu_si256((const __m256i *)(w + 32 * h)));
        even = _mm256_add_epi64(even, _mm256_loadu_si256((const __m256i *)(w + 64 + 32 * h)));
        odd = _mm256_add_epi64(odd, _mm256_loadu_si256((const __m256i *)(w + 128 + 32 * h)));
        __m256i high = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
        halves[h] = _mm256_srav_epi32(high, _mm256_loadu_si256((const __m256i *)(w + 192 + 32 * h)));
    }
    return swiftlite_join(halves[0], halves[1]);
}

/// The 16 bytes at `p` widened to 32-bit lanes, sign-extended (`isSigned`) or zero-extended:
/// two `vpmovsxbd` or `vpmovzxbd` from memory.
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_widen_16_bytes(const void *p, int isSigned) {
    __m128i low = _mm_loadl_epi64((const __m128i *)p), high = _mm_loadl_epi64((const __m128i *)((const char *)p + 8));
    return isSigned ? swiftlite_join(_mm256_cvtepi8_epi32(low), _mm256_cvtepi8_epi32(high))
                    : swiftlite_join(_mm256_cvtepu8_epi32(low), _mm256_cvtepu8_epi32(high));
}

/// TFLite's rescaling of an 8-bit ADD or SUB operand, `RoundingDivideByPOT(
/// SaturatingRoundingDoublingHighMul(v · 2^20, M), exponent)` per lane, in 32-bit arithmetic, for
/// |v| < 2^11, a multiplier `M = high · 2^11 + low` (0 ≤ `low` < 2^11, 0 ≤ M < 2^31) and
/// 0 ≤ `exponent` ≤ 31.
///
/// The doubling high product of `v · 2^20` and M is `⌊(v · M + 2^10) / 2^11⌋`: for v ≥ 0 that is
/// TFLite's `(v · M · 2^20 + 2^30) / 2^31` with both terms divided by 2^20; for v < 0 its nudge
/// `1 − 2^30` and the division's truncation toward zero round a half up as well. With M split,
/// that is `v · high + ⌊(v · low + 2^10) / 2^11⌋`: |v · high| < 2^31 (`vpmulld`) and
/// |v · low| < 2^22 (`vpmaddwd`: v fits a halfword, and `low`'s upper halfword is zero).
/// `RoundingDivideByPOT` then adds 1 to the arithmetic shift where the remainder is at least half
/// the divisor, or more than half for a negative dividend (a half rounds away from zero).
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_rescale_operand_avx2(swiftlite_i32x16 v, int32_t high, int32_t low, int exponent) {
    const __m256i mask = _mm256_set1_epi32((int32_t)((1u << exponent) - 1u));
    const __m256i half = _mm256_srli_epi32(mask, 1);
    const __m256i round = _mm256_set1_epi32(1 << 10);
    __m256i halves[2];
    for (int h = 0; h < 2; h++) {
        __m256i x = swiftlite_half(v, h);
        __m256i fraction = _mm256_srai_epi32(_mm256_add_epi32(_mm256_madd_epi16(x, _mm256_set1_epi32(low)), round), 11);
        __m256i product = _mm256_add_epi32(_mm256_mullo_epi32(x, _mm256_set1_epi32(high)), fraction);
        __m256i threshold = _mm256_add_epi32(half, _mm256_srli_epi32(product, 31));
        __m256i above = _mm256_cmpgt_epi32(_mm256_and_si256(product, mask), threshold);
        halves[h] = _mm256_sub_epi32(_mm256_srai_epi32(product, exponent), above);
    }
    return swiftlite_join(halves[0], halves[1]);
}

/// `v + offset` clamped to `minimum ... maximum` (a range inside the byte type's), as 16 bytes at
/// `p`: packed with saturation to halfwords (`vpackssdw`), `offset` added with saturation
/// (`vpaddsw`), packed with saturation to bytes (`vpacksswb`, or `vpackuswb` when
/// `unsignedBytes`), the 128-bit halves' dwords put in lane order (`vpermd`) and clamped byte by
/// byte. Exact: each saturation is monotonic and changes no value that the clamp keeps, and
/// |offset| ≤ 255 keeps a saturated halfword outside the byte range.
SWIFTLITE_INLINE void swiftlite_store_clamped_16_bytes_avx2(void *p, swiftlite_i32x16 v, int unsignedBytes, int32_t offset,
                                                           int32_t minimum, int32_t maximum) {
    __m256i words = _mm256_adds_epi16(_mm256_packs_epi32(swiftlite_half(v, 0), swiftlite_half(v, 1)),
                                      _mm256_set1_epi16((short)offset));
    __m256i bytes = unsignedBytes ? _mm256_packus_epi16(words, words) : _mm256_packs_epi16(words, words);
    // Dwords now hold lanes 0–3, 8–11, (again), 4–7, 12–15, (again).
    __m128i ordered = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 0, 4, 1, 5)));
    __m128i low = _mm_set1_epi8((char)minimum), high = _mm_set1_epi8((char)maximum);
    ordered = unsignedBytes ? _mm_min_epu8(_mm_max_epu8(ordered, low), high) : _mm_min_epi8(_mm_max_epi8(ordered, low), high);
    _mm_storeu_si128((__m128i *)p, ordered);
}

#if !(defined(__AVX512F__) && defined(__AVX512BW__))
/// The 16 bytes at `p`, or only the first `count` of them with the rest zero, where `readable`
/// bytes from `p` may be read (at least `count`): with 16 readable, one load and a mask of the
/// first `count` bytes; else byte by byte, nothing past the `count` read. The AVX2 form of the
/// AVX-512 wrapper of the same name below, whose masked load reads only the `count`.
SWIFTLITE_INLINE swiftlite_u8x16 swiftlite_load_16_bytes(const void *p, intptr_t count, intptr_t readable) {
    if (count >= 16) return (swiftlite_u8x16)_mm_loadu_si128((const __m128i *)p);
    if (readable >= 16) {
        __m128i first = _mm_cmpgt_epi8(_mm_set1_epi8((char)count), _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
        return (swiftlite_u8x16)_mm_and_si128(_mm_loadu_si128((const __m128i *)p), first);
    }
    uint8_t copy[16] = {0};
    for (intptr_t i = 0; i < count; i++) copy[i] = ((const uint8_t *)p)[i];
    return (swiftlite_u8x16)_mm_loadu_si128((const __m128i *)copy);
}

/// `swiftlite_load_16_bytes` zero-extended to 32-bit lanes (two `vpmovzxbd`). The AVX2 form of
/// the AVX-512 wrapper of the same name below.
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_load_widened_bytes(const void *p, intptr_t count, intptr_t readable) {
    __m128i bytes = (__m128i)swiftlite_load_16_bytes(p, count, readable);
    return swiftlite_join(_mm256_cvtepu8_epi32(bytes), _mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8)));
}

/// `swiftlite_load_16_bytes` sign-extended to 32-bit lanes (two `vpmovsxbd`). The AVX2 form of
/// the AVX-512 wrapper of the same name below.
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_load_widened_signed_bytes(const void *p, intptr_t count, intptr_t readable) {
    __m128i bytes = (__m128i)swiftlite_load_16_bytes(p, count, readable);
    return swiftlite_join(_mm256_cvtepi8_epi32(bytes), _mm256_cvtepi8_epi32(_mm_srli_si128(bytes, 8)));
}

/// `swiftlite_tap_quads` (below: the same result from the same 64 bytes) in two `ymm`: each
/// half loads two columns; a `vpermd` puts each column's channel quads in the order that one
/// `vpunpcklqdq` and one `vpunpckhqdq` of the two halves make channels 0–7's and 8–15's lanes
/// of the four columns, and a `vpshufb` per `ymm` transposes each 128-bit lane's 4 × 4 bytes
/// (its index 0x80 zeroes column 3's byte when `taps` is 3).
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_tap_quads(const void *p, int taps) {
    const __m256i order = _mm256_setr_epi32(0, 4, 2, 6, 1, 5, 3, 7);
    __m256i first = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)p), order);
    __m256i second = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)p + 1), order);
    const __m256i four = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                          0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m256i three = _mm256_setr_epi8(0, 4, 8, -128, 1, 5, 9, -128, 2, 6, 10, -128, 3, 7, 11, -128,
                                           0, 4, 8, -128, 1, 5, 9, -128, 2, 6, 10, -128, 3, 7, 11, -128);
    __m256i transpose = taps >= 4 ? four : three;
    return swiftlite_join(_mm256_shuffle_epi8(_mm256_unpacklo_epi64(first, second), transpose),
                          _mm256_shuffle_epi8(_mm256_unpackhi_epi64(first, second), transpose));
}
#endif
#endif

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512BW__)

typedef float swiftlite_f32x16 __attribute__((vector_size(64)));

/// `swiftlite_exp_reduced_f32x8` in sixteen lanes: the same body.
SWIFTLITE_INLINE __m512 swiftlite_exp_reduced_f32x16(__m512 x, __m512 *p) {
    SWIFTLITE_EXP_REDUCED_BODY(_mm512, __m512)
}

/// `swiftlite_exp_not_above_88_f32x8` in sixteen lanes. Where some lane is below −87.5 all
/// sixteen take the clamps and two factors, which give every lane that is not the bits of the
/// one product by 2^n (scaling by powers of two is exact while the result stays normal), so
/// the lanes do not depend on their neighbours.
SWIFTLITE_INLINE __m512 swiftlite_exp_not_above_88_f32x16(__m512 x) {
    __m512 p;
    if (!_mm512_cmp_ps_mask(x, _mm512_set1_ps(SWIFTLITE_EXP_ONE_FACTOR_LOWER), _CMP_LT_OQ)) {
        const __m512 shifted = swiftlite_exp_reduced_f32x16(x, &p);
        return _mm512_mul_ps(p, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(shifted), 23)));
    }
    const __m512 v = _mm512_min_ps(_mm512_set1_ps(89.0f), _mm512_max_ps(_mm512_set1_ps(-104.0f), x));
    const __m512 shifted = swiftlite_exp_reduced_f32x16(v, &p);
    SWIFTLITE_EXP_TWO_FACTORS_BODY(_mm512, 512, __m512, __m512i)
}

/// `swiftlite_logistic_f32x8` in sixteen lanes, lane for lane the same value (the reference's
/// three cases chosen by masks instead of blends).
SWIFTLITE_INLINE swiftlite_f32x16 swiftlite_logistic_f32x16(swiftlite_f32x16 value) {
    const __m512 v = (__m512)value, one = _mm512_set1_ps(1.0f);
    const __mmask16 below = _mm512_cmp_ps_mask(v, _mm512_set1_ps(SWIFTLITE_LOGISTIC_LOWER), _CMP_LT_OQ);
    const __m512 negated = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(v), _mm512_set1_epi32((int)0x80000000u)));
    const __m512 e = swiftlite_exp_not_above_88_f32x16(_mm512_mask_blend_ps(below, negated, v));
    const __m512 y = _mm512_mask_blend_ps(below, _mm512_div_ps(one, _mm512_add_ps(one, e)), e);
    return (swiftlite_f32x16)_mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, _mm512_set1_ps(SWIFTLITE_LOGISTIC_UPPER), _CMP_GT_OQ), y, one);
}

/// The first `count` (0...64) bytes at `p`, the rest zero; bytes past `count` are not read
/// (a masked `vmovdqu8`, which cannot fault on them).
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_load_bytes(const void *p, intptr_t count) {
    __mmask64 mask = count >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << count) - 1);
    return (swiftlite_i32x16)_mm512_maskz_loadu_epi8(mask, p);
}

/// The first `count` (0...64) bytes of `v` stored at `p`; nothing is written past them (a
/// masked `vmovdqu8`).
SWIFTLITE_INLINE void swiftlite_store_bytes(void *p, swiftlite_i32x16 v, intptr_t count) {
    __mmask64 mask = count >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << count) - 1);
    _mm512_mask_storeu_epi8(p, mask, (__m512i)v);
}

/// The 64 bytes at `p`, any alignment (one `vmovdqu32`). The micro-kernels load through this
/// rather than `UnsafeRawPointer.loadUnaligned`, a generic that the optimiser once left as 263
/// calls in the integer product after an unrelated change elsewhere in the module.
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_load_dwords(const void *p) {
    return (swiftlite_i32x16)_mm512_loadu_si512(p);
}

/// The 4 bytes at `p`, any alignment, in every 32-bit lane (one `vpbroadcastd` from memory).
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_broadcast_dword(const void *p) {
    int32_t v;
    __builtin_memcpy(&v, p, 4);
    return (swiftlite_i32x16)_mm512_set1_epi32(v);
}

/// The 16 bytes at `p`, zero-extended to 32-bit lanes (one `vpmovzxbd` from memory; the Swift
/// lane loop sometimes became byte inserts and permutes). With `count` < 16 only the first
/// `count` bytes are read (a masked load), the other lanes are zero; `readable` (the AVX2
/// form's) is not needed.
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_load_widened_bytes(const void *p, intptr_t count, intptr_t readable) {
    (void)readable;
    if (count >= 16) {
        return (swiftlite_i32x16)_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p));
    }
    __mmask64 mask = ((__mmask64)1 << count) - 1;
    return (swiftlite_i32x16)_mm512_cvtepu8_epi32(_mm512_castsi512_si128(_mm512_maskz_loadu_epi8(mask, p)));
}

/// `swiftlite_load_widened_bytes` sign-extended (one `vpmovsxbd` from memory, or from a masked load).
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_load_widened_signed_bytes(const void *p, intptr_t count, intptr_t readable) {
    (void)readable;
    if (count >= 16) {
        return (swiftlite_i32x16)_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p));
    }
    __mmask64 mask = ((__mmask64)1 << count) - 1;
    return (swiftlite_i32x16)_mm512_cvtepi8_epi32(_mm512_castsi512_si128(_mm512_maskz_loadu_epi8(mask, p)));
}

#if defined(__AVX512VL__)
/// The 16 bytes at `p`, or only the first `count` of them with the rest zero (a masked
/// `vmovdqu8`, which cannot fault on the bytes it skips).
SWIFTLITE_INLINE swiftlite_u8x16 swiftlite_load_16_bytes(const void *p, intptr_t count, intptr_t readable) {
    (void)readable;
    __mmask16 mask = count >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << count) - 1);
    return (swiftlite_u8x16)_mm_maskz_loadu_epi8(mask, p);
}

/// Sixteen channels' tap quads from four columns: the 64 bytes at `p` are columns 0...3 of
/// 16 channel bytes each, and lane `c` of the result holds channel `c`'s bytes of columns 0, 1,
/// 2, 3 in that order (column 3's byte zero when `taps` is 3). One `vpermd` brings each group
/// of four channels' dwords from the four columns into one 128-bit lane; one `vpshufb`
/// transposes the 4 × 4 bytes of each lane.
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_tap_quads(const void *p, int taps) {
    __m512i columns = _mm512_loadu_si512(p);
    const __m512i byChannels = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    __m512i lanes = _mm512_permutexvar_epi32(byChannels, columns);
    const __m512i transpose = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    __mmask64 keep = taps >= 4 ? ~(__mmask64)0 : (__mmask64)0x7777777777777777ull;
    return (swiftlite_i32x16)_mm512_maskz_shuffle_epi8(keep, lanes, transpose);
}
#endif

/// Up to 64 `int32` lanes (`blocks` = 4, 2 or 1 vectors, `a` first) plus `offset` as bytes at
/// `p`: packed with saturation to words (`vpackssdw`), `offset` added with saturation
/// (`vpaddsw`), packed again (`vpacksswb`, or `vpackuswb` when `unsignedBytes`), put back in
/// lane order (`vpermd`), clamped to `minimum ... maximum` byte by byte and stored, the first
/// `count` (0...16 · blocks) of them. Exactly the bytes of each lane plus `offset` clamped as an
/// `int32`, for `offset` in −255...255: the clamp range lies inside the last pack's range
/// (−128...127, or 0...255 when `unsignedBytes`), and a word that saturated (|x| ≥ 2^15) stays
/// beyond it, with the sign of `x + offset`. The vectors past `blocks` are not read.
SWIFTLITE_INLINE void swiftlite_store_clamped_bytes(void *p, swiftlite_i32x16 a, swiftlite_i32x16 b,
                                                    swiftlite_i32x16 c, swiftlite_i32x16 d, intptr_t blocks,
                                                    int unsignedBytes, int32_t offset, int32_t minimum,
                                                    int32_t maximum, intptr_t count) {
    __m512i second = blocks >= 2 ? (__m512i)b : (__m512i)a;
    __m512i low = _mm512_packs_epi32((__m512i)a, second);
    __m512i high = blocks == 4 ? _mm512_packs_epi32((__m512i)c, (__m512i)d) : low;
    const __m512i words = _mm512_set1_epi16((short)offset);
    low = _mm512_adds_epi16(low, words);
    high = blocks == 4 ? _mm512_adds_epi16(high, words) : low;
    // Dword 4i + j now holds elements 4i ... 4i + 3 of vector j (of each 128-bit lane's pack).
    __m512i bytes = unsignedBytes ? _mm512_packus_epi16(low, high) : _mm512_packs_epi16(low, high);
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    bytes = _mm512_permutexvar_epi32(order, bytes);
    __m512i lo = _mm512_set1_epi8((char)minimum), hi = _mm512_set1_epi8((char)maximum);
    bytes = unsignedBytes ? _mm512_min_epu8(_mm512_max_epu8(bytes, lo), hi)
                          : _mm512_min_epi8(_mm512_max_epi8(bytes, lo), hi);
    __mmask64 mask = count >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << count) - 1);
    _mm512_mask_storeu_epi8(p, mask, bytes);
}

/// The low byte of the first `count` (0...16) lanes of `v`, stored at `p`; nothing is written
/// past them (a masked `vpmovdb`).
SWIFTLITE_INLINE void swiftlite_store_low_bytes(void *p, swiftlite_i32x16 v, intptr_t count) {
    __mmask16 mask = count >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << count) - 1);
    _mm512_mask_cvtepi32_storeu_epi8(p, mask, (__m512i)v);
}
#endif

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
/// `vpdpbusd`: in each 32-bit lane, `acc + Σ_{i<4} u8(a.byte[i]) · s8(b.byte[i])`, in wrapping
/// 32-bit arithmetic (the products and their sum cannot overflow 32 bits; only the add to `acc` wraps).
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_dpbusd(swiftlite_i32x16 acc, swiftlite_i32x16 a, swiftlite_i32x16 b) {
    return (swiftlite_i32x16)_mm512_dpbusd_epi32((__m512i)acc, (__m512i)a, (__m512i)b);
}

/// `swiftlite_dpbusd` of the low eight lanes only, in `ymm` (the EVEX form AVX-512 VL allows),
/// with the 32 bytes of `b` read from memory; the high eight lanes of the result are undefined.
/// For a product's last panel of at most 8 columns: AMD Zen 4 runs two of these per cycle where
/// it runs one on `zmm`. `a` passes an empty `asm` first: where `a` is a broadcast that a `zmm`
/// product uses too, LLVM would otherwise rebuild it as two broadcasts of one load, which then
/// no longer folds into either (a scalar load and a `vpbroadcastd` from a general register).
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_dpbusd_low(swiftlite_i32x16 acc, swiftlite_i32x16 a, const void *b) {
    __m512i x = (__m512i)a;
    __asm__("" : "+v"(x));
    __m256i low = _mm256_dpbusd_epi32(_mm512_castsi512_si256((__m512i)acc), _mm512_castsi512_si256(x),
                                      _mm256_loadu_si256((const __m256i *)b));
    return (swiftlite_i32x16)_mm512_castsi256_si512(low);
}

/// TFLite's `MultiplyByQuantizedMultiplier` for sixteen channels that all shift right (e ≥ 1),
/// as one rounding shift of each 64-bit product (Microkernels/WideRequantization.swift derives it
/// and lays out its constants): `((x·M + nudge − [x·M < 0]·2^31) >> 32) >> (e − 1)` per lane,
/// `M` the channels' `multipliers`, `oddMultipliers` those of the odd lanes as `int64`, the
/// nudges as `int64` and the shifts `e − 1`, all in registers (a row of pixels keeps them
/// there). Even lanes are multiplied in the low halves of the 64-bit words (`vpmuldq`), odd
/// lanes after a `vpshufd` that moves them there; `vpermt2d` gathers the words' high halves;
/// one 32-bit shift finishes all sixteen. Only the multiplies and that shift
/// need the port that 512-bit shifts, `vpmovq2m` and `vpdpbusd` share.
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_requantize_wide_block(swiftlite_i32x16 x, swiftlite_i32x16 multipliers,
                                                                  swiftlite_i32x16 oddMultipliers, swiftlite_i32x16 evenNudges,
                                                                  swiftlite_i32x16 oddNudges, swiftlite_i32x16 shifts) {
    return (swiftlite_i32x16)SWIFTLITE_REQUANTIZE_WIDE_BODY((__m512i)x, (__m512i)multipliers, (__m512i)oddMultipliers,
                                                            (__m512i)evenNudges, (__m512i)oddNudges, (__m512i)shifts, 1);
}

/// `swiftlite_requantize_wide_block` with the block's constants read from memory: `multipliers`
/// its 16 `int32` multipliers, `wide` its 4 vectors of `WideRequantization`.
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_requantize_wide(swiftlite_i32x16 x, const void *multipliers,
                                                            const void *wide) {
    const __m512i *w = (const __m512i *)wide;
    return swiftlite_requantize_wide_block(x, (swiftlite_i32x16)_mm512_loadu_si512(multipliers), (swiftlite_i32x16)_mm512_loadu_si512(w),
                                           (swiftlite_i32x16)_mm512_loadu_si512(w + 1), (swiftlite_i32x16)_mm512_loadu_si512(w + 2),
                                           (swiftlite_i32x16)_mm512_loadu_si512(w + 3));
}

/// `swiftlite_requantize_wide` without its correction for negative products (the
/// `−[x·M < 0]·2^31`): `((x·M + nudge) >> 32) >> (e − 1)`. Equal to it wherever `x·M ≥ 0`; where
/// `x·M < 0` both are ≤ 0 (`x·M + nudge < nudge < 2^(31+e)`). So a stage that clamps its results
/// at the zero point or above (`minimum ≥ zeroPoint`: ReLU, ReLU6, and the fused activations
/// of most convolutions) stores the same bytes from either, and this one drops a compare and a
/// masked add from each half.
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_requantize_wide_nonnegative_block(swiftlite_i32x16 x, swiftlite_i32x16 multipliers,
                                                                              swiftlite_i32x16 oddMultipliers,
                                                                              swiftlite_i32x16 evenNudges,
                                                                              swiftlite_i32x16 oddNudges, swiftlite_i32x16 shifts) {
    return (swiftlite_i32x16)SWIFTLITE_REQUANTIZE_WIDE_BODY((__m512i)x, (__m512i)multipliers, (__m512i)oddMultipliers,
                                                            (__m512i)evenNudges, (__m512i)oddNudges, (__m512i)shifts, 0);
}

/// `swiftlite_requantize_wide_nonnegative_block` with the block's constants read from memory (as
/// `swiftlite_requantize_wide`).
SWIFTLITE_INLINE swiftlite_i32x16 swiftlite_requantize_wide_nonnegative(swiftlite_i32x16 x, const void *multipliers,
                                                                        const void *wide) {
    const __m512i *w = (const __m512i *)wide;
    return swiftlite_requantize_wide_nonnegative_block(
        x, (swiftlite_i32x16)_mm512_loadu_si512(multipliers), (swiftlite_i32x16)_mm512_loadu_si512(w),
        (swiftlite_i32x16)_mm512_loadu_si512(w + 1), (swiftlite_i32x16)_mm512_loadu_si512(w + 2),
        (swiftlite_i32x16)_mm512_loadu_si512(w + 3));
}

#endif

#undef SWIFTLITE_INLINE
#pragma clang diagnostic pop

#endif
