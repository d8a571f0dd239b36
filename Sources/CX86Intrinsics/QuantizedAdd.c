// The same-shape 8-bit ADD and SUB of TFLite's reference kernels with one operand's rescaling read
// from a table, 64 elements a step (AVX-512 F, BW and VBMI). Compiled for the x86-64 baseline
// like ByteLookup.c; the engine calls it only where `swiftlite_cpu_runs_vbmi_lookup` says so.
//
// TFLite moves both operands to a common scale, `(v − zp) · 2^20` times a multiplier below 1, and
// the operand of the larger scale always has the multiplier ½, whose rescaling is the exact
// `(v − zp) · 2^19` (the *half* operand). The other operand's rescaling depends on its byte alone:
// the engine's 256-entry table of it, held as four byte planes, is read with `vpermt2b` (as
// ByteLookup.c reads one byte table) and the planes are interleaved back into 32-bit lanes. Only
// the sum's rescaling to the output is computed, in the one-shift form of
// `swiftlite_requantize_wide_block` (the header's body of it, `SWIFTLITE_REQUANTIZE_WIDE_BODY`).
// Every step is exact, so the bytes are those of the reference.

#if defined(__x86_64__)
#include <immintrin.h>

#include "CX86Intrinsics.h"

#define SWIFTLITE_ADD_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi")))
// Inlined into each copy of the loop, so that the flags are constants in it.
#define SWIFTLITE_ADD_INLINE SWIFTLITE_ADD_TARGET static inline __attribute__((always_inline))

/// The sum's rescaling's constants, as `swiftlite_requantize_wide_block` takes them.
typedef struct {
    __m512i multipliers, oddMultipliers, evenNudges, oddNudges, shifts;
} swiftlite_add_stage;

/// The sum's one-shift rescaling (`SWIFTLITE_REQUANTIZE_WIDE_BODY`); with `nonnegative` without
/// its correction for negative products, for clamps at or above the zero point.
SWIFTLITE_ADD_INLINE __m512i swiftlite_add_rescaled(__m512i x, const swiftlite_add_stage *s, int nonnegative) {
    return SWIFTLITE_REQUANTIZE_WIDE_BODY(x, s->multipliers, s->oddMultipliers, s->evenNudges, s->oddNudges, s->shifts,
                                          !nonnegative);
}

/// 64 elements from `h` and `t` (`lanes` of them read, the rest zero) to `z`: the loop's body, with
/// `isSigned`, `negateHalf` and `nonnegative` constants at each call.
SWIFTLITE_ADD_INLINE void swiftlite_add_step(const uint8_t *h, const uint8_t *t, uint8_t *z, __mmask64 lanes,
                                             const __m512i planes[16], __m512i halfZeroPoint,
                                             const swiftlite_add_stage *stage, int isSigned, int negateHalf,
                                             int nonnegative, __m512i offset, __m512i minimum, __m512i maximum) {
    // Dword 4L + j of the index vector holds the operand's dword 4j + L, so that after the planes'
    // interleaving (which keeps each 128-bit lane L) vector j holds elements 16j ... 16j + 15.
    const __m512i transpose = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m512i index = _mm512_permutexvar_epi32(transpose, _mm512_maskz_loadu_epi8(lanes, t));
    const __mmask64 upper = _mm512_movepi8_mask(index);
    __m512i b[4];
#pragma clang loop unroll(full)
    for (int p = 0; p < 4; p++) {
        const __m512i *plane = planes + 4 * p;
        b[p] = _mm512_mask_blend_epi8(upper, _mm512_permutex2var_epi8(plane[0], index, plane[1]),
                                      _mm512_permutex2var_epi8(plane[2], index, plane[3]));
    }
    const __m512i low01 = _mm512_unpacklo_epi8(b[0], b[1]), high01 = _mm512_unpackhi_epi8(b[0], b[1]);
    const __m512i low23 = _mm512_unpacklo_epi8(b[2], b[3]), high23 = _mm512_unpackhi_epi8(b[2], b[3]);
    const __m512i other[4] = {_mm512_unpacklo_epi16(low01, low23), _mm512_unpackhi_epi16(low01, low23),
                              _mm512_unpacklo_epi16(high01, high23), _mm512_unpackhi_epi16(high01, high23)};
    const __m512i bytes = _mm512_maskz_loadu_epi8(lanes, h);
    __m512i q[4];
#pragma clang loop unroll(full)
    for (int j = 0; j < 4; j++) {
        const __m128i chunk = j == 0 ? _mm512_castsi512_si128(bytes)
                            : j == 1 ? _mm512_extracti32x4_epi32(bytes, 1)
                            : j == 2 ? _mm512_extracti32x4_epi32(bytes, 2)
                                     : _mm512_extracti32x4_epi32(bytes, 3);
        const __m512i v = isSigned ? _mm512_cvtepi8_epi32(chunk) : _mm512_cvtepu8_epi32(chunk);
        const __m512i half = _mm512_slli_epi32(_mm512_sub_epi32(v, halfZeroPoint), 19);
        const __m512i sum = negateHalf ? _mm512_sub_epi32(other[j], half) : _mm512_add_epi32(half, other[j]);
        q[j] = swiftlite_add_rescaled(sum, stage, nonnegative);
    }
    // The packs saturate (|q| ≥ 2^15 stays beyond the byte range with its sign) and keep each
    // 128-bit lane: dword 4L + j of the packed bytes holds elements 16j + 4L ... 16j + 4L + 3.
    const __m512i words01 = _mm512_adds_epi16(_mm512_packs_epi32(q[0], q[1]), offset);
    const __m512i words23 = _mm512_adds_epi16(_mm512_packs_epi32(q[2], q[3]), offset);
    __m512i packed = isSigned ? _mm512_packs_epi16(words01, words23) : _mm512_packus_epi16(words01, words23);
    packed = _mm512_permutexvar_epi32(transpose, packed);
    packed = isSigned ? _mm512_min_epi8(_mm512_max_epi8(packed, minimum), maximum)
                      : _mm512_min_epu8(_mm512_max_epu8(packed, minimum), maximum);
    _mm512_mask_storeu_epi8(z, lanes, packed);
}

SWIFTLITE_ADD_INLINE void swiftlite_add_loop(const uint8_t *h, const uint8_t *t, uint8_t *z, intptr_t count,
                                             const uint8_t *tablePlanes, int32_t halfZeroPoint,
                                             const void *multipliers, const void *wide, int32_t outputOffset,
                                             int32_t minimum, int32_t maximum, int isSigned, int negateHalf,
                                             int nonnegative) {
    __m512i planes[16];
    for (int i = 0; i < 16; i++) planes[i] = _mm512_loadu_si512(tablePlanes + 64 * i);
    const __m512i *w = (const __m512i *)wide;
    const swiftlite_add_stage stage = {_mm512_loadu_si512(multipliers), _mm512_loadu_si512(w), _mm512_loadu_si512(w + 1),
                                       _mm512_loadu_si512(w + 2), _mm512_loadu_si512(w + 3)};
    const __m512i zero = _mm512_set1_epi32(halfZeroPoint), offset = _mm512_set1_epi16((short)outputOffset);
    const __m512i lower = _mm512_set1_epi8((char)minimum), upper = _mm512_set1_epi8((char)maximum);
    intptr_t i = 0;
    for (; i + 64 <= count; i += 64) {
        swiftlite_add_step(h + i, t + i, z + i, ~(__mmask64)0, planes, zero, &stage, isSigned, negateHalf, nonnegative,
                           offset, lower, upper);
    }
    if (i < count) {
        swiftlite_add_step(h + i, t + i, z + i, ((__mmask64)1 << (count - i)) - 1, planes, zero, &stage, isSigned, negateHalf,
                           nonnegative, offset, lower, upper);
    }
}

SWIFTLITE_ADD_TARGET
void swiftlite_add_bytes_vbmi(const uint8_t *h, const uint8_t *t, uint8_t *z, intptr_t count, const uint8_t *tablePlanes,
                              int32_t halfZeroPoint, int negateHalf, const void *multipliers, const void *wide,
                              int32_t outputOffset, int32_t minimum, int32_t maximum, int isSigned) {
    // Results below the zero point clamp to `minimum` whenever `minimum` is at or above it, which
    // is what the correction for negative products tells apart.
    const int nonnegative = minimum >= outputOffset;
    // One copy of the loop per combination of the flags, each a constant in it.
#define SWIFTLITE_ADD_CASE(s, n, p)                                                                                     \
    if (isSigned == s && negateHalf == n && nonnegative == p) {                                                          \
        swiftlite_add_loop(h, t, z, count, tablePlanes, halfZeroPoint, multipliers, wide, outputOffset, minimum, maximum, \
                           s, n, p);                                                                                     \
        return;                                                                                                          \
    }
    SWIFTLITE_ADD_CASE(1, 0, 0) SWIFTLITE_ADD_CASE(1, 0, 1) SWIFTLITE_ADD_CASE(1, 1, 0) SWIFTLITE_ADD_CASE(1, 1, 1)
    SWIFTLITE_ADD_CASE(0, 0, 0) SWIFTLITE_ADD_CASE(0, 0, 1) SWIFTLITE_ADD_CASE(0, 1, 0) SWIFTLITE_ADD_CASE(0, 1, 1)
#undef SWIFTLITE_ADD_CASE
}
#endif
