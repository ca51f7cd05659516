// Seeded random programs, each run under the JIT and the precompiled
// kernels and checked against a float64 reference with a first-order
// error bound (tests/random_program_reference.h, Note [Reference values
// and bounds]). The generator is in random_program_gen.h; this file runs,
// compares and reports.
//
// Programs mix every op family: elementwise unary and binary ops, casts,
// comparisons and where, clamp, reductions (sum mean max min prod argmax
// over random axes, with and without keepdims, negative axes), softmax,
// log_softmax, layer_norm, rms_norm, matmul (2-D, batched, 1-D operands,
// K = 0), and movement (reshape, permute, transpose, slice, concat,
// broadcast_to), on tensors of rank 0 to 4 with empty (0) and size-1 dims
// and every dtype. Three flavours choose inputs and ops:
//  - Continuous: finite float32 / float64 inputs (float16 / bfloat16 one in
//    four), ops kept well conditioned;
//  - Integer: bool and every integer dtype (8 to 64 bits, signed and
//    unsigned), wrapping arithmetic;
//  - Mixed: all thirteen dtypes, nan, inf and -0 inputs, every op unguarded.
// Half-precision values follow Note [Half values in the reference]: computed
// in float32, and rounded by the precompiled kernels at every op but by a
// fused kernel only where stored, so they are checked within a bound.
// Every output is checked against the reference where its bound is known;
// JIT and precompiled must agree bitwise where docs/numerics.md promises it
// (no float sum, mean or product on the path) and within the bound
// otherwise. A failure prints a standalone C++ reproducer (a main() using
// <wok/wok.h> that rebuilds the inputs and the ops).
//
// Environment:
//   WOK_FUZZ_PROGRAMS=N  programs per flavour (default 700 + 650 + 650 = 2,000), plus
//                        the regression seeds of kRegressionSeeds past them
//   WOK_TEST_SEED=S      run only program S (the seed a failure names)
//   WOK_TEST_VERBOSE=1   print each seed before it runs (to find a crash) and
//                        the counts of checked elements
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "random_program_gen.h"
#include "random_program_gen_ops.h"
#include "wok/runtime/cpu_features.h"

namespace {

using namespace rpgen;

struct Result {
  std::vector<double> f;
  std::vector<int64_t> i;
};

bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

struct Counts {
  int64_t elements = 0, checked = 0, exact = 0;
};

std::string reproducer(const Program& p, const std::vector<int>& outs, int out, int64_t k, const std::string& what) {
  std::ostringstream s;
  s << "// " << what << "\n#include <wok/wok.h>\n\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n#include <optional>\n#include <vector>\n\n"
    << "int main() {\n  for (wok::Backend backend : {wok::Backend::kJit, wok::Backend::kPrecompiled}) {\n"
    << "    wok::set_backend(backend);\n";
  for (const std::string& line : p.code) s << "    " << line << "\n";
  s << "    wok::eval({";
  for (size_t j = 0; j < outs.size(); ++j) s << (j ? ", " : "") << T(outs[j]);
  s << "});\n    std::printf(\"%s: " << T(out) << "[" << k << "] = %.17g\\n\", backend == wok::Backend::kJit ? \"jit\" : \"precompiled\", "
    << T(out) << ".to_vector<double>()[" << k << "]);\n";
  s << "    std::printf(\"%s\\n\", " << T(out) << ".str().c_str());\n  }\n}\n";
  return s.str();
}

// Runs one random program; returns "" or a description of the mismatch.
std::string check_program(uint64_t seed, Flavour flavour, Counts& counts) {
  Program p;
  Generator(seed, flavour, p).build();
  if (p.vals.empty()) return "";
  if (!p.error.empty()) return "seed " + std::to_string(seed) + ": " + p.error;
  // Outputs: the last value and a few random others.
  std::vector<int> outs = {static_cast<int>(p.vals.size()) - 1};
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (int k = 0; k < 2; ++k) outs.push_back(static_cast<int>(rng() % p.vals.size()));
  p.vals.clear();

  auto run = [&](wok::Backend backend) {
    wok::set_backend(backend);
    std::vector<Tensor> ts;
    for (const StepFn& f : p.steps) ts.push_back(f(ts));
    std::vector<Tensor> os;
    for (int o : outs) os.push_back(ts[o]);
    wok::eval(os);
    std::vector<Result> res;
    for (Tensor& t : os) {
      Result r;
      if (rp::is_f(t.dtype())) r.f = t.to_vector<double>();
      else r.i = t.to_vector<int64_t>();
      res.push_back(std::move(r));
    }
    return res;
  };
  const auto jit = run(wok::Backend::kJit);
  const auto pre = run(wok::Backend::kPrecompiled);
  wok::set_backend(wok::Backend::kJit);

  for (size_t j = 0; j < outs.size(); ++j) {
    const Val& ref = p.refs[outs[j]];
    const bool fl = ref.floating();
    // Safety factor 2 on the first-order bound (second-order terms, and the
    // bounds evaluated at the reference's values rather than wok's); the
    // absolute term covers subnormal results only.
    const double tiny = ref.dtype == DType::kFloat16 ? 0x1p-24 : ref.dtype == DType::kFloat64 ? 1e-300 : 1e-37;
    for (int64_t k = 0; k < ref.size(); ++k) {
      const double r = ref.r[k];
      const double jv = fl ? jit[j].f[k] : static_cast<double>(jit[j].i[k]);
      const double pv = fl ? pre[j].f[k] : static_cast<double>(pre[j].i[k]);
      auto fail = [&](const std::string& what) {
        std::ostringstream m;
        m.precision(17);
        m << "seed " << seed << ": " << what << " at " << T(outs[j]) << "[" << k << "] (" << wok::dtype_name(ref.dtype)
          << wok::shape_str(ref.shape) << "): jit " << jv << ", precompiled " << pv << ", reference "
          << (fl ? ref.f[k] : static_cast<double>(ref.i[k])) << " (bound " << r << (r > 0 && r < 1e-300 ? " (sign of zero)" : "") << ", "
          << (ref.bitwise ? "bitwise" : "reassociated") << ")\n";
        const std::string head = m.str();
        m << "reproducer:\n" << reproducer(p, outs, outs[j], k, head.substr(0, head.size() - 1));
        return m.str();
      };
      ++counts.elements;
      // JIT vs precompiled.
      if (ref.bitwise || r == 0) {
        // The sign of a zero counts (a later division sees it), a nan's sign bit does not.
        bool same = fl ? same_value(jv, pv) && (std::isnan(jv) || std::signbit(jv) == std::signbit(pv))
                       : jit[j].i[k] == pre[j].i[k];
        if (!same && (ref.bitwise || r == 0)) return fail("JIT and precompiled differ");
      } else if (r < rp::kInf) {
        if (!same_value(jv, pv) && !(std::abs(jv - pv) <= 2 * (2 * r) + tiny))
          return fail("JIT and precompiled differ by more than the bound");
      }
      // Reference.
      if (!(r < rp::kInf)) continue;
      ++counts.checked;
      if (r == 0) ++counts.exact;
      for (int side = 0; side < 2; ++side) {
        const double got = side == 0 ? jv : pv;
        const double want = fl ? ref.f[k] : static_cast<double>(ref.i[k]);
        bool ok;
        if (!fl) ok = (side == 0 ? jit[j].i[k] : pre[j].i[k]) == ref.i[k];
        else if (r == 0) ok = same_value(got, want);
        else ok = std::isfinite(want) ? std::abs(got - want) <= 2 * r + tiny : same_value(got, want);
        if (!ok) return fail("result differs from the reference");
      }
    }
  }
  return "";
}

class RandomPrograms : public ::testing::TestWithParam<Flavour> {
 protected:
  void SetUp() override {
    if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
  }
};

// Flavour f's programs are seeds kSeedStride * (f + 1) + 0, 1, 2, ...
constexpr uint64_t kSeedStride = 1000003;
Flavour flavour_of(uint64_t seed) { return static_cast<Flavour>(seed / kSeedStride - 1); }

// Seeds that exposed a wok bug, run on every run whatever WOK_FUZZ_PROGRAMS
// says (with their flavour's programs, once: a seed the count already
// covers is not added again).
struct RegressionSeed {
  uint64_t seed;
  const char* found;
};
constexpr RegressionSeed kRegressionSeeds[] = {
    {1001942, "an AVX2 row kernel's spilled bool lane moved with vmovd (Note [Vector lanes into general registers])"},
    {3000034, "an AVX2 column kernel of bfloat16 sin tiled by float32's lanes, not float64's"},
    {3001067, "the same on AVX-512, over a mean of a bfloat16 where"},
    {3002083, "the reference's gelu(-inf) (nan, as docs/numerics.md says)"},
    {3002610, "the spilled bool lane again, as a bool[] output"},
    {3003714, "the spilled bool lane again, as a float64 output stored after it"},
};

TEST_P(RandomPrograms, JitMatchesPrecompiledAndReference) {
  // 2,000 programs across the three flavours (700 + 650 + 650) by default.
  int count = GetParam() == Flavour::kContinuous ? 700 : 650;
  if (const char* n = std::getenv("WOK_FUZZ_PROGRAMS")) count = std::atoi(n);
  const uint64_t base = kSeedStride * (static_cast<uint64_t>(GetParam()) + 1);
  const char* only = std::getenv("WOK_TEST_SEED");
  const bool verbose = std::getenv("WOK_TEST_VERBOSE") != nullptr;
  int failures = 0;
  Counts counts;
  std::vector<uint64_t> seeds;
  for (int i = 0; i < count; ++i) seeds.push_back(base + static_cast<uint64_t>(i));
  for (const RegressionSeed& r : kRegressionSeeds)
    if (flavour_of(r.seed) == GetParam() && r.seed >= base + static_cast<uint64_t>(count)) seeds.push_back(r.seed);
  for (size_t i = 0; i < seeds.size() && failures < 3; ++i) {
    const uint64_t seed = seeds[i];
    if (only && std::strtoull(only, nullptr, 10) != seed) continue;
    if (verbose) std::fprintf(stderr, "seed %llu\n", static_cast<unsigned long long>(seed));
    std::string msg = check_program(seed, GetParam(), counts);
    if (!msg.empty()) {
      ADD_FAILURE() << msg;
      ++failures;
    }
  }
  if (verbose || only)
    std::fprintf(stderr, "%lld output elements, %lld checked against the reference (%lld exactly)\n",
                 static_cast<long long>(counts.elements), static_cast<long long>(counts.checked),
                 static_cast<long long>(counts.exact));
  // A bound that is unknown everywhere would check nothing: most elements must be checked.
  if (!only && count >= 100) {
    const double min_fraction = GetParam() == Flavour::kMixed ? 0.5 : 0.9;
    EXPECT_GE(static_cast<double>(counts.checked), min_fraction * static_cast<double>(counts.elements));
  }
}

INSTANTIATE_TEST_SUITE_P(Flavours, RandomPrograms,
                         ::testing::Values(Flavour::kContinuous, Flavour::kInteger, Flavour::kMixed),
                         [](const auto& info) {
                           switch (info.param) {
                             case Flavour::kContinuous: return std::string("Continuous");
                             case Flavour::kInteger: return std::string("Integer");
                             case Flavour::kMixed: break;
                           }
                           return std::string("Mixed");
                         });

}  // namespace
