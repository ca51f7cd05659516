// Standalone AVX2 loops of p1 (bench/programs.h) over float32 and bfloat16
// arrays, measuring the two levers for bfloat16 stores that Note [bfloat16
// stores] (jit/x86/vec_emitter.h) records:
//   current  element order, as the JIT's row kernels do: vpmovzxwd + vpslld
//            loads, the integer round-to-nearest-even with its NaN blend,
//            vpackusdw stores
//   pairs    two vectors from one 32-byte load in even/odd order (vpslld,
//            vpand), put back by vpsrld + vpblendw: the same bits (taken by
//            the JIT's elementwise kernels, Note [bfloat16 pairs])
//   + nt     the same with streaming stores (the float32 loop too; not taken)
// Reported by bench_half_programs as time(float32) / time(bfloat16) of the
// same store kind; no target (the JIT's kernels are what the targets check).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <tuple>
#include <utility>

#include "bench_util.h"

namespace wok_bench::bf16_probe {

__attribute__((target("avx2,fma"))) inline __m256 p1(__m256 a, __m256 b) {
  __m256 t = _mm256_add_ps(_mm256_mul_ps(a, _mm256_set1_ps(2.0f)), b);
  t = _mm256_sub_ps(_mm256_mul_ps(t, _mm256_set1_ps(0.5f)), a);
  return _mm256_add_ps(_mm256_mul_ps(t, b), _mm256_set1_ps(1.0f));
}

// 32-bit lanes whose high word is v rounded to bfloat16 (the JIT's
// VecEmitter::bfloat16_high on AVX2).
__attribute__((target("avx2,fma"))) inline __m256i rounded(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i r = _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7FFF)), lsb);
  const __m256i quiet = _mm256_or_si256(bits, _mm256_set1_epi32(0x00400000));
  const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(r), _mm256_castsi256_ps(quiet), nan));
}

template <bool kStream>
__attribute__((target("avx2,fma"))) void float32_loop(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 v = p1(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    if constexpr (kStream) _mm256_stream_ps(y + i, v);
    else _mm256_storeu_ps(y + i, v);
  }
  _mm_sfence();
}

__attribute__((target("avx2,fma"))) inline __m256 load_current(const uint16_t* p) {
  const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

template <bool kStream>
__attribute__((target("avx2,fma"))) void current_loop(const uint16_t* a, const uint16_t* b, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i r = _mm256_srli_epi32(rounded(p1(load_current(a + i), load_current(b + i))), 16);
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    if constexpr (kStream) _mm_stream_si128(reinterpret_cast<__m128i*>(y + i), packed);
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), packed);
  }
  _mm_sfence();
}

template <bool kStream>
__attribute__((target("avx2,fma"))) void pairs_loop(const uint16_t* a, const uint16_t* b, uint16_t* y, int64_t n) {
  const __m256i high = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
  for (int64_t i = 0; i < n; i += 16) {
    const __m256i wa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
    const __m256i wb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i));
    const __m256 even = p1(_mm256_castsi256_ps(_mm256_slli_epi32(wa, 16)), _mm256_castsi256_ps(_mm256_slli_epi32(wb, 16)));
    const __m256 odd = p1(_mm256_castsi256_ps(_mm256_and_si256(wa, high)), _mm256_castsi256_ps(_mm256_and_si256(wb, high)));
    const __m256i words = _mm256_blend_epi16(_mm256_srli_epi32(rounded(even), 16), rounded(odd), 0xAA);
    if constexpr (kStream) _mm256_stream_si256(reinterpret_cast<__m256i*>(y + i), words);
    else _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), words);
  }
  _mm_sfence();
}

struct Ratios {
  bool ran = false;
  bool same_bits = false;  // pairs and current agree bit for bit
  double current = 0, pairs = 0, current_nt = 0, pairs_nt = 0;
};

// The inputs (written once, so no round pays for first-touch page faults)
// and an output per loop, 64-byte aligned as streaming stores need
// (HostBuffer).
struct Arrays {
  explicit Arrays(int64_t n)
      : n(n), a(4 * n), b(4 * n), y(4 * n), ah(2 * n), bh(2 * n), current(2 * n), pairs(2 * n) {}
  int64_t n;
  HostBuffer a, b, y, ah, bh, current, pairs;
};

// time(float32) / time(bfloat16) of the current loop and of the pairs loop,
// every loop storing the same way.
template <bool kStream>
std::pair<double, double> ratios(const Arrays& x, int rounds) {
  auto f32 = [&] { float32_loop<kStream>(x.a.as<float>(), x.b.as<float>(), x.y.as<float>(), x.n); };
  auto current = [&] {
    current_loop<kStream>(x.ah.as<uint16_t>(), x.bh.as<uint16_t>(), x.current.as<uint16_t>(), x.n);
  };
  auto pairs = [&] { pairs_loop<kStream>(x.ah.as<uint16_t>(), x.bh.as<uint16_t>(), x.pairs.as<uint16_t>(), x.n); };
  return {paired_ratio(f32, current, rounds), paired_ratio(f32, pairs, rounds)};
}

// n: a multiple of 16.
inline Ratios measure(int64_t n, int rounds) {
  Ratios out;
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return out;
  Arrays x(n);
  float *a = x.a.as<float>(), *b = x.b.as<float>();
  uint16_t *ah = x.ah.as<uint16_t>(), *bh = x.bh.as<uint16_t>();
  for (int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
    b[i] = static_cast<float>((i * 104729) % 997) / 997.0f - 0.5f;
    uint32_t bits;
    std::memcpy(&bits, &a[i], 4);
    ah[i] = static_cast<uint16_t>(bits >> 16);
    std::memcpy(&bits, &b[i], 4);
    bh[i] = static_cast<uint16_t>(bits >> 16);
  }
  ah[5] = 0x7F81;  // a signalling NaN, a negative quiet NaN, an infinity
  ah[6] = 0xFFC1;
  bh[9] = 0x7F80;
  current_loop<false>(ah, bh, x.current.as<uint16_t>(), n);
  pairs_loop<false>(ah, bh, x.pairs.as<uint16_t>(), n);
  out.same_bits = std::memcmp(x.current.as<uint16_t>(), x.pairs.as<uint16_t>(), 2 * n) == 0;
  std::tie(out.current, out.pairs) = ratios<false>(x, rounds);
  std::tie(out.current_nt, out.pairs_nt) = ratios<true>(x, rounds);
  out.ran = true;
  return out;
}

}  // namespace wok_bench::bf16_probe
