// 256-entry byte tables applied to runs of bytes, `y[i] = table[x[i]]`, in vector shuffles. The
// file is compiled for the x86-64 baseline; each function carries the target of the instructions
// it uses, and the engine calls one only where the CPUID check beside it says the machine has
// them. A table look-up is exact whatever the instructions, so every form gives the same bytes.

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <string.h>

#include "CX86Intrinsics.h"

/// XCR0 (the register state the OS saves), read only where CPUID reports OSXSAVE.
static unsigned swiftlite_saved_state(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & 1u << 27)) return 0;
    unsigned xcr0, xcr0High;
    __asm__ __volatile__("xgetbv" : "=a"(xcr0), "=d"(xcr0High) : "c"(0));
    return xcr0;
}

int swiftlite_cpu_runs_vbmi_lookup(void) {
    unsigned a, b, c, d;
    // XMM, YMM, opmask and both halves of the 32 ZMM registers.
    if ((swiftlite_saved_state() & 0xE6) != 0xE6) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    // EBX: AVX512F 16, AVX512BW 30; ECX: AVX512_VBMI 1.
    return (b & (1u << 16 | 1u << 30)) == (1u << 16 | 1u << 30) && (c & 1u << 1) != 0;
}

int swiftlite_cpu_runs_avx2_lookup(void) {
    unsigned a, b, c, d;
    if ((swiftlite_saved_state() & 0x6) != 0x6) return 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & 1u << 28)) return 0;  // AVX
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b & 1u << 5) != 0;  // AVX2
}

/// 64 bytes at a time: `vpermt2b` picks from a 128-byte half of the table by each index's low 7
/// bits, once from each half, and the index's top bit chooses between the two.
__attribute__((target("avx512f,avx512bw,avx512vbmi")))
void swiftlite_lookup_bytes_vbmi(const uint8_t *table, const uint8_t *x, uint8_t *y, intptr_t count) {
    const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
    const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
    intptr_t i = 0;
    for (; i + 64 <= count; i += 64) {
        const __m512i v = _mm512_loadu_si512(x + i);
        const __m512i low = _mm512_permutex2var_epi8(t0, v, t1), high = _mm512_permutex2var_epi8(t2, v, t3);
        _mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), low, high));
    }
    if (i < count) {
        // Fewer than 64 left: masked loads and stores touch only those bytes.
        const __mmask64 lanes = (1ull << (count - i)) - 1;
        const __m512i v = _mm512_maskz_loadu_epi8(lanes, x + i);
        const __m512i low = _mm512_permutex2var_epi8(t0, v, t1), high = _mm512_permutex2var_epi8(t2, v, t3);
        _mm512_mask_storeu_epi8(y + i, lanes, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), low, high));
    }
}

/// The entries of 32 indices from `rows`, the table's sixteen 16-byte rows in both 128-bit
/// halves: `vpshufb` reads every row at each index's low 4 bits, then a tree of byte blends keeps,
/// by index bits 4, 5, 6 and 7 in turn, the row each index names. `vpblendvb` tests a byte's top
/// bit; a left shift of the 16-bit words by 3, 2 and 1 brings bits 4, 5 and 6 there (the bits a
/// word's low byte pushes into its high byte land below bit 7).
__attribute__((target("avx2")))
static inline __m256i swiftlite_lookup_32(const __m256i rows[16], __m256i v) {
    const __m256i column = _mm256_and_si256(v, _mm256_set1_epi8(0x0F));
    const __m256i bit4 = _mm256_slli_epi16(v, 3), bit5 = _mm256_slli_epi16(v, 2), bit6 = _mm256_slli_epi16(v, 1);
    __m256i pairs[8], quads[4];
    for (int j = 0; j < 8; j++) {
        pairs[j] = _mm256_blendv_epi8(_mm256_shuffle_epi8(rows[2 * j], column),
                                      _mm256_shuffle_epi8(rows[2 * j + 1], column), bit4);
    }
    for (int j = 0; j < 4; j++) quads[j] = _mm256_blendv_epi8(pairs[2 * j], pairs[2 * j + 1], bit5);
    const __m256i low = _mm256_blendv_epi8(quads[0], quads[1], bit6), high = _mm256_blendv_epi8(quads[2], quads[3], bit6);
    return _mm256_blendv_epi8(low, high, v);
}

__attribute__((target("avx2")))
void swiftlite_lookup_bytes_avx2(const uint8_t *table, const uint8_t *x, uint8_t *y, intptr_t count) {
    __m256i rows[16];
    for (int j = 0; j < 16; j++) rows[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(table + 16 * j)));
    intptr_t i = 0;
    for (; i + 32 <= count; i += 32) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(x + i));
        _mm256_storeu_si256((__m256i *)(y + i), swiftlite_lookup_32(rows, v));
    }
    if (i < count) {
        // Fewer than 32 left: through a buffer, so that no byte past either run is read or written.
        uint8_t buffer[32] = {0};
        memcpy(buffer, x + i, (size_t)(count - i));
        const __m256i v = _mm256_loadu_si256((const __m256i *)buffer);
        _mm256_storeu_si256((__m256i *)buffer, swiftlite_lookup_32(rows, v));
        memcpy(y + i, buffer, (size_t)(count - i));
    }
}
#endif
