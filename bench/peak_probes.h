// The machine references that bench_gemm and bench_conv read their
// figures against: an FMA peak probe (Note [FMA peak probe]) and a STREAM
// triad, registered as the benchmarks "fma_peak" and "triad" at each thread
// count, and read back for the tables.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "bench_util.h"

namespace wok_bench {

// Note [FMA peak probe]
// kChains independent accumulators, each updated acc = acc * m + c once per
// round: enough chains to cover FMA latency x FMA ports on current cores
// (4-cycle latency, two 256-bit or one/two 512-bit pipes), few enough to
// stay in registers beside the two constants. m < 1 keeps the values
// bounded and normal. The result is returned so the loop is not dropped.
constexpr int kChains = 12;
constexpr int64_t kProbeRounds = int64_t{1} << 21;

#define WOK_BENCH_FMA_ROUNDS(V, SET1, FMA, ADD, REDUCE)                                    \
  V acc[kChains];                                                                          \
  for (int j = 0; j < kChains; ++j) acc[j] = SET1(0.001f * static_cast<float>(j));         \
  const V m = SET1(0.999999f), c = SET1(1e-6f);                                            \
  for (int64_t r = 0; r < rounds; ++r) {                                                   \
    _Pragma("GCC unroll 12") for (int j = 0; j < kChains; ++j) acc[j] = FMA(acc[j], m, c); \
  }                                                                                        \
  V s = acc[0];                                                                            \
  for (int j = 1; j < kChains; ++j) s = ADD(s, acc[j]);                                    \
  return REDUCE(s);

// Sums by storing: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized.
__attribute__((target("avx512f"))) inline float reduce_m512(__m512 v) {
  alignas(64) float f[16];
  _mm512_store_ps(f, v);
  float s = 0;
  for (float x : f) s += x;
  return s;
}
__attribute__((target("avx512f"))) inline float fma_rounds_avx512(int64_t rounds) {
  WOK_BENCH_FMA_ROUNDS(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, reduce_m512)
}

__attribute__((target("avx2,fma"))) inline float reduce_m256(__m256 v) {
  alignas(32) float f[8];
  _mm256_store_ps(f, v);
  float s = 0;
  for (float x : f) s += x;
  return s;
}
__attribute__((target("avx2,fma"))) inline float fma_rounds_avx2(int64_t rounds) {
  WOK_BENCH_FMA_ROUNDS(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, reduce_m256)
}
#undef WOK_BENCH_FMA_ROUNDS

struct FmaProbe {
  const char* isa;
  int lanes;  // float32 lanes per vector
  float (*rounds)(int64_t);
};
// The widest vector FMA this host runs; lanes 0 when it has none.
inline FmaProbe fma_probe() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"AVX-512 (__m512, vfmadd...ps zmm)", 16, fma_rounds_avx512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {"AVX2 (__m256, vfmadd...ps ymm)", 8, fma_rounds_avx2};
  return {"none (no FMA)", 0, nullptr};
}

// STREAM triad a[i] = b[i] + s*c[i] over kTriadN float32 per array: 3 x
// 128 MiB, 12x a 32 MiB L3. Counted: 12 bytes per element (b and c read,
// a written; the write-allocate read of a is not counted).
constexpr int64_t kTriadN = int64_t{1} << 25;
constexpr double kTriadBytes = 12.0 * kTriadN;

inline void triad(float* a, const float* b, const float* c, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

// The triad's arrays, b and c filled with 0.5.
struct TriadArrays {
  HostBuffer a{4 * kTriadN}, b{4 * kTriadN}, c{4 * kTriadN};
  TriadArrays() {
    for (HostBuffer* x : {&b, &c}) std::fill_n(x->as<float>(), kTriadN, 0.5f);
  }
};

// One triad over `tr`, split over wok's pool (what "triad" times), for a
// benchmark that registers its own triad variant.
inline void triad_on_pool(const TriadArrays& tr) {
  float* a = tr.a.as<float>();
  const float* b = tr.b.as<float>();
  const float* c = tr.c.as<float>();
  wok::parallel_for(kTriadN, int64_t{1} << 16, [&](int64_t s, int64_t e) { triad(a + s, b + s, c + s, 3.0f, e - s); });
  benchmark::ClobberMemory();
}

// FLOPs of one "fma_peak" run at `threads`: one probe of kProbeRounds per
// thread.
inline double fma_probe_flops(const FmaProbe& probe, int threads) {
  return 2.0 * threads * kProbeRounds * kChains * probe.lanes;
}

// Registers "fma_peak" (where the host has an FMA) and "triad" at
// `threads` (register_timed, with the benchmark's `set_threads`).
inline void register_peak_probes(const FmaProbe& probe, const TriadArrays& tr, int threads, void (*set_threads)(int)) {
  if (probe.rounds) {
    register_timed("fma_peak", threads, "FLOP/s", fma_probe_flops(probe, threads), set_threads,
                   [threads, fn = probe.rounds] {
                     return Timed{[threads, fn] {
                                    float sink[2] = {};
                                    wok::parallel_for(threads, 1, [&](int64_t b, int64_t e) {
                                      for (int64_t i = b; i < e; ++i) sink[i] = fn(kProbeRounds);
                                    });
                                    benchmark::DoNotOptimize(sink);
                                  },
                                  {}};
                   });
  }
  register_timed("triad", threads, "B/s", kTriadBytes, set_threads, [&tr] {
    return Timed{[&tr] {
                   float* a = tr.a.as<float>();
                   const float* b = tr.b.as<float>();
                   const float* c = tr.c.as<float>();
                   wok::parallel_for(kTriadN, int64_t{1} << 16,
                                     [&](int64_t s, int64_t e) { triad(a + s, b + s, c + s, 3.0f, e - s); });
                   benchmark::ClobberMemory();
                 },
                 {}};
  });
}

// The probes' medians at one thread count (NaN where one did not run).
struct PeakRates {
  double peak_gflops;  // FMA peak, float32
  double triad_gbs;
};
// Prints the heading of the table at `threads`, with the probes' rates,
// and returns them.
inline PeakRates print_peak_heading(const FmaProbe& probe, int threads) {
  const PeakRates r{fma_probe_flops(probe, threads) / median_seconds(name_of("fma_peak", threads)) / 1e9,
                    kTriadBytes / median_seconds(name_of("triad", threads)) / 1e9};
  std::printf("\n#### %d thread%s: FMA peak %s GFLOP/s (float32), triad %s GB/s\n\n", threads, threads == 1 ? "" : "s",
              fmt(r.peak_gflops, 1).c_str(), fmt(r.triad_gbs, 1).c_str());
  return r;
}

// On a shared machine another process may hold a core for the whole run;
// the probe shows it. Prints a warning when the probe at 2 threads runs
// under 1.6x its rate at 1.
inline void warn_if_cores_shared() {
  const double scaling = median_seconds(name_of("fma_peak", 1)) * 2 / median_seconds(name_of("fma_peak", 2));
  if (scaling < 1.6)
    std::printf(
        "WARNING: the FMA probe at 2 threads is only %sx its rate at 1: the cores were shared with another "
        "process, so the 2-thread rows do not show 2 cores.\n",
        fmt(scaling).c_str());
}

}  // namespace wok_bench
