#include "wok/runtime/cpu_features.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

namespace wok {

std::string_view cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kBaseline: return "baseline";
    case CpuIsa::kAvx2: return "avx2";
    case CpuIsa::kAvx512: return "avx512";
  }
  return "?";
}

namespace {
CpuIsa detect() {
  __builtin_cpu_init();
  CpuIsa isa = CpuIsa::kBaseline;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) isa = CpuIsa::kAvx2;
  if (isa == CpuIsa::kAvx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    isa = CpuIsa::kAvx512;
  if (const char* cap = std::getenv("WOK_CPU_ISA"); cap && *cap) {
    std::string c(cap);
    CpuIsa limit = c == "baseline" ? CpuIsa::kBaseline : c == "avx2" ? CpuIsa::kAvx2 : CpuIsa::kAvx512;
    if (c != "baseline" && c != "avx2" && c != "avx512")
      std::fprintf(stderr, "wok: ignoring WOK_CPU_ISA=%s (expected baseline, avx2 or avx512)\n", cap);
    else if (limit < isa)
      isa = limit;
  }
  return isa;
}
}  // namespace

CpuIsa host_cpu_isa() {
  static const CpuIsa isa = detect();
  return isa;
}

bool host_has_avx512_bf16() {
  static const bool has = [] {
    if (host_cpu_isa() != CpuIsa::kAvx512) return false;
    if (const char* cap = std::getenv("WOK_CPU_ISA"); cap && *cap) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") != 0;
  }();
  return has;
}

CpuIsa precompiled_kernel_isa() { return host_cpu_isa(); }

const CacheSizes& host_cache_sizes() {
  static const CacheSizes sizes = [] {
    CacheSizes c;
    // sysconf answers 0 or -1 where the kernel or a VM hides the cache.
    auto read = [](int name, int64_t fallback) {
      long v = sysconf(name);
      return v > 4096 ? static_cast<int64_t>(v) : fallback;
    };
    c.l1d = read(_SC_LEVEL1_DCACHE_SIZE, c.l1d);
    c.l2 = read(_SC_LEVEL2_CACHE_SIZE, c.l2);
    c.l3 = read(_SC_LEVEL3_CACHE_SIZE, c.l3);
    return c;
  }();
  return sizes;
}

}  // namespace wok
