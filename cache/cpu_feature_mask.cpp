#include "wok/cache/cpu_feature_mask.h"

namespace wok::cache {

namespace {
struct Named {
  uint64_t bit;
  const char* name;
};
constexpr Named kNames[] = {
    {kFeatureAvx, "avx"},           {kFeatureAvx2, "avx2"},         {kFeatureFma, "fma"},
    {kFeatureF16c, "f16c"},         {kFeatureBmi2, "bmi2"},         {kFeatureAvx512F, "avx512f"},
    {kFeatureAvx512Dq, "avx512dq"}, {kFeatureAvx512Bw, "avx512bw"}, {kFeatureAvx512Vl, "avx512vl"},
    {kFeatureAvx512Bf16, "avx512bf16"},
};
}  // namespace

uint64_t host_cpu_features() {
  static const uint64_t mask = [] {
    __builtin_cpu_init();
    uint64_t m = 0;
    if (__builtin_cpu_supports("avx")) m |= kFeatureAvx;
    if (__builtin_cpu_supports("avx2")) m |= kFeatureAvx2;
    if (__builtin_cpu_supports("fma")) m |= kFeatureFma;
    if (__builtin_cpu_supports("f16c")) m |= kFeatureF16c;
    if (__builtin_cpu_supports("bmi2")) m |= kFeatureBmi2;
    if (__builtin_cpu_supports("avx512f")) m |= kFeatureAvx512F;
    if (__builtin_cpu_supports("avx512dq")) m |= kFeatureAvx512Dq;
    if (__builtin_cpu_supports("avx512bw")) m |= kFeatureAvx512Bw;
    if (__builtin_cpu_supports("avx512vl")) m |= kFeatureAvx512Vl;
    if (__builtin_cpu_supports("avx512bf16")) m |= kFeatureAvx512Bf16;
    return m;
  }();
  return mask;
}

uint64_t features_required(CpuIsa isa) {
  // As host_cpu_isa() decides: AVX2 means AVX2 + FMA; AVX-512 adds F, DQ, BW, VL.
  uint64_t avx2 = kFeatureAvx | kFeatureAvx2 | kFeatureFma;
  switch (isa) {
    case CpuIsa::kBaseline:
      return 0;
    case CpuIsa::kAvx2:
      return avx2;
    case CpuIsa::kAvx512:
      return avx2 | kFeatureAvx512F | kFeatureAvx512Dq | kFeatureAvx512Bw | kFeatureAvx512Vl;
  }
  return avx2;
}

std::string feature_names(uint64_t mask) {
  std::string out;
  auto add = [&out](const std::string& s) { out += (out.empty() ? "" : " ") + s; };
  for (const Named& n : kNames)
    if (mask & n.bit) {
      add(n.name);
      mask &= ~n.bit;
    }
  for (int b = 0; b < 64; ++b)
    if (mask & (1ull << b)) add("bit" + std::to_string(b));
  return out.empty() ? "none" : out;
}

}  // namespace wok::cache
