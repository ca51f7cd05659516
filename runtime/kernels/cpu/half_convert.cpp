// Bulk conversions between float32 and the 16-bit float types, compiled
// once per instruction set: F16C (AVX2) or its 512-bit form (AVX-512) for
// half, integer shifts and an integer round-to-nearest-even for bfloat16,
// scalar code on baseline and in the AVX2 tails. Every variant gives the
// bits of the scalar conversions in runtime/half.h (tests/half_test.cpp).
#include "wok/runtime/kernels/cpu/isa.h"

#include <cstdint>

#include "wok/runtime/half.h"
#include "wok/runtime/kernels/cpu/half_convert.h"

#if defined(__AVX2__)
// GCC 12 warns that the "undefined" vectors its AVX-512 intrinsics start
// from may be used uninitialized (a known false alarm of GCC 12, raised
// inside the header; google/highway#710 shows the same), so the header
// alone is compiled without that warning.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace wok::cpu {
inline namespace WOK_ISA_NS {
namespace {

// The reference, for elements [from, n): the tails of the AVX2 loops and
// the whole of the baseline build (the AVX-512 loops mask their tails).
[[maybe_unused]] void half_to_float_scalar(const half* in, float* out, int64_t from, int64_t n) {
  for (int64_t i = from; i < n; ++i) out[i] = in[i];
}
[[maybe_unused]] void float_to_half_scalar(const float* in, half* out, int64_t from, int64_t n) {
  for (int64_t i = from; i < n; ++i) out[i] = half(in[i]);
}
[[maybe_unused]] void bfloat16_to_float_scalar(const bfloat16* in, float* out, int64_t from, int64_t n) {
  for (int64_t i = from; i < n; ++i) out[i] = in[i];
}
[[maybe_unused]] void float_to_bfloat16_scalar(const float* in, bfloat16* out, int64_t from, int64_t n) {
  for (int64_t i = from; i < n; ++i) out[i] = bfloat16(in[i]);
}

// Note [No vcvtneps2bf16]
// AVX-512 BF16's vcvtneps2bf16 rounds to nearest even and quiets NaNs the
// way half_detail::float_to_bfloat16_bits does, but it treats float32
// subnormal inputs as zero: on an AMD EPYC with avx512_bf16, 0x007FFFFF
// gave 0x0000 where rounding gives 0x0080 (the smallest normal bfloat16),
// and 0x80400000 gave 0x8000 for 0x8040. Fixing those lanes up costs about
// what the integer rounding below costs (a compare, a blend), and the loop
// is bound by memory either way, so no variant uses the instruction: one
// code path, the same bits on every host.

#if defined(__AVX512F__)

// 16 floats per vector; the tail runs masked.
__mmask16 tail_mask(int64_t count) { return static_cast<__mmask16>((1u << count) - 1); }

void half_to_float_loop(const half* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(h));
  }
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(out + i, m, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, in + i)));
  }
}

void float_to_half_loop(const float* in, half* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), h);
  }
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    const __m256i h = _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_mask_storeu_epi16(out + i, m, h);
  }
}

__m512 widen_bfloat16(__m256i b) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(b), 16)); }

void bfloat16_to_float_loop(const bfloat16* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i, widen_bfloat16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i))));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(out + i, m, widen_bfloat16(_mm256_maskz_loadu_epi16(m, in + i)));
  }
}

// float_to_bfloat16_bits on 16 lanes, each result in the low half of its
// 32-bit lane.
__m512i round_to_bfloat16(__m512 v) {
  const __m512i x = _mm512_castps_si512(v);
  const __m512i top = _mm512_srli_epi32(x, 16);
  const __m512i bias = _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), _mm512_and_si512(top, _mm512_set1_epi32(1)));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(x, bias), 16);
  const __m512i quieted = _mm512_or_si512(top, _mm512_set1_epi32(0x0040));
  const __m512i magnitude = _mm512_and_si512(x, _mm512_set1_epi32(0x7FFFFFFF));
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(magnitude, _mm512_set1_epi32(0x7F800000));
  return _mm512_mask_blend_epi32(nan, rounded, quieted);
}

void float_to_bfloat16_loop(const float* in, bfloat16* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i b = _mm512_cvtepi32_epi16(round_to_bfloat16(_mm512_loadu_ps(in + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), b);
  }
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_cvtepi32_storeu_epi16(out + i, m, round_to_bfloat16(_mm512_maskz_loadu_ps(m, in + i)));
  }
}

#elif defined(__AVX2__)

// 8 floats per vector; the last n % 8 elements take the scalar code.
void half_to_float_loop(const half* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  half_to_float_scalar(in, out, i, n);
}

void float_to_half_loop(const float* in, half* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  float_to_half_scalar(in, out, i, n);
}

void bfloat16_to_float_loop(const bfloat16* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16)));
  }
  bfloat16_to_float_scalar(in, out, i, n);
}

// float_to_bfloat16_bits on 8 lanes, packed to 8 16-bit results.
__m128i round_to_bfloat16(__m256 v) {
  const __m256i x = _mm256_castps_si256(v);
  const __m256i top = _mm256_srli_epi32(x, 16);
  const __m256i bias = _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), _mm256_and_si256(top, _mm256_set1_epi32(1)));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(x, bias), 16);
  const __m256i quieted = _mm256_or_si256(top, _mm256_set1_epi32(0x0040));
  const __m256i magnitude = _mm256_and_si256(x, _mm256_set1_epi32(0x7FFFFFFF));
  const __m256i nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7F800000));
  const __m256i bits = _mm256_blendv_epi8(rounded, quieted, nan);
  // Every lane is below 2^16, so the unsigned-saturating pack keeps it as is.
  return _mm_packus_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));
}

void float_to_bfloat16_loop(const float* in, bfloat16* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), round_to_bfloat16(_mm256_loadu_ps(in + i)));
  float_to_bfloat16_scalar(in, out, i, n);
}

#else

void half_to_float_loop(const half* in, float* out, int64_t n) { half_to_float_scalar(in, out, 0, n); }
void float_to_half_loop(const float* in, half* out, int64_t n) { float_to_half_scalar(in, out, 0, n); }
void bfloat16_to_float_loop(const bfloat16* in, float* out, int64_t n) { bfloat16_to_float_scalar(in, out, 0, n); }
void float_to_bfloat16_loop(const float* in, bfloat16* out, int64_t n) { float_to_bfloat16_scalar(in, out, 0, n); }

#endif

}  // namespace
}  // inline namespace WOK_ISA_NS

const HalfConvertLoops& WOK_ISA_CONCAT(half_convert_loops_, WOK_CPU_ISA)() {
  static constexpr HalfConvertLoops loops{&half_to_float_loop, &float_to_half_loop, &bfloat16_to_float_loop,
                                          &float_to_bfloat16_loop};
  return loops;
}

}  // namespace wok::cpu
