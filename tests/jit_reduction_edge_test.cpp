// Generated reductions and normalizations on the rows users actually meet:
// length 1, odd lengths, very long rows, all-equal rows, rows holding inf,
// -inf and nan, and magnitudes where exp overflows without the max
// subtraction. Each result is checked against a float64 reference computed
// the same way, and the number of kernels per evaluation is asserted.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "wok/runtime/cpu_features.h"

namespace {

using wok::Tensor;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

class JitReductionEdges : public ::testing::Test {
 protected:
  void SetUp() override {
    if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
    wok::set_backend(wok::Backend::kJit);
  }
  void TearDown() override { wok::set_backend(wok::Backend::kJit); }
};

// The row kinds under test, filled into a [rows, n] float32 tensor.
enum class RowKind { kRandom, kAllEqual, kHuge, kWithNegInf, kAllNegInf, kWithPosInf, kWithNan };
const RowKind kKinds[] = {RowKind::kRandom,    RowKind::kAllEqual,   RowKind::kHuge,   RowKind::kWithNegInf,
                          RowKind::kAllNegInf, RowKind::kWithPosInf, RowKind::kWithNan};
const char* kind_name(RowKind k) {
  switch (k) {
    case RowKind::kRandom: return "random";
    case RowKind::kAllEqual: return "all-equal";
    case RowKind::kHuge: return "huge magnitudes";
    case RowKind::kWithNegInf: return "with -inf";
    case RowKind::kAllNegInf: return "all -inf";
    case RowKind::kWithPosInf: return "with +inf";
    case RowKind::kWithNan: return "with nan";
  }
  return "?";
}

std::vector<float> make_rows(RowKind kind, int64_t rows, int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(rows * n));
  uint32_t s = seed * 2654435761u + 1;
  auto next = [&] {
    s = s * 1664525u + 1013904223u;
    return static_cast<float>(s >> 8) / 16777216.0f * 4.0f - 2.0f;  // [-2, 2)
  };
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i) {
      float& x = v[static_cast<size_t>(r * n + i)];
      x = next();
      switch (kind) {
        case RowKind::kRandom: break;
        case RowKind::kAllEqual: x = 0.1f * static_cast<float>(r + 1); break;
        case RowKind::kHuge: x *= 60.0f; break;  // exp(120) overflows float32
        case RowKind::kWithNegInf: if (i % 3 == 1) x = -INFINITY; break;
        case RowKind::kAllNegInf: x = -INFINITY; break;
        case RowKind::kWithPosInf: if (i == n / 2) x = INFINITY; break;
        case RowKind::kWithNan: if (i == n - 1) x = NAN; break;
      }
    }
  return v;
}

// Float64 references over each row, written as the definitions.
using RowRef = std::function<void(const float* x, double* out, int64_t n)>;

void ref_softmax(const float* x, double* o, int64_t n) {
  double m = -kInf;
  for (int64_t i = 0; i < n; ++i) m = std::isnan(x[i]) || std::isnan(m) ? kNan : std::max(m, double(x[i]));
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += o[i] = std::exp(double(x[i]) - m);
  for (int64_t i = 0; i < n; ++i) o[i] /= s;
}
void ref_log_softmax(const float* x, double* o, int64_t n) {
  double m = -kInf;
  for (int64_t i = 0; i < n; ++i) m = std::isnan(x[i]) || std::isnan(m) ? kNan : std::max(m, double(x[i]));
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::exp(double(x[i]) - m);
  for (int64_t i = 0; i < n; ++i) o[i] = double(x[i]) - m - std::log(s);
}
RowRef ref_layer_norm(const std::vector<float>& w, const std::vector<float>& b, double eps) {
  return [=](const float* x, double* o, int64_t n) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) mean += x[i];
    mean /= double(n);
    for (int64_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
    double rstd = 1 / std::sqrt(var / double(n) + eps);
    for (int64_t i = 0; i < n; ++i)
      o[i] = (x[i] - mean) * rstd * (w.empty() ? 1.0 : double(w[size_t(i)])) + (b.empty() ? 0.0 : double(b[size_t(i)]));
  };
}
RowRef ref_rms_norm(const std::vector<float>& w, double eps) {
  return [=](const float* x, double* o, int64_t n) {
    double ms = 0;
    for (int64_t i = 0; i < n; ++i) ms += double(x[i]) * x[i];
    double r = 1 / std::sqrt(ms / double(n) + eps);
    for (int64_t i = 0; i < n; ++i) o[i] = x[i] * r * (w.empty() ? 1.0 : double(w[size_t(i)]));
  };
}

// |got - want| <= atol + rtol |want|, with nan matching nan and infinities
// (including float32 overflow of the float64 reference) matching exactly. Returns the first mismatch, described, or "".
std::string compare(const std::vector<float>& got, const std::vector<double>& want, double atol, double rtol) {
  for (size_t k = 0; k < got.size(); ++k) {
    const double g = got[k], w = static_cast<float>(want[k]);  // the exact result, rounded to float32
    bool ok = std::isnan(w) ? std::isnan(g) : std::isinf(w) ? g == w : std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (!ok) return "at " + std::to_string(k) + ": got " + std::to_string(g) + ", want " + std::to_string(w);
  }
  return "";
}

struct Normalization {
  const char* name;
  std::function<Tensor(const Tensor&)> fn;
  RowRef ref;
  double atol, rtol;
};

// Launches of one evaluation of `fn(x)` under the JIT, and its result.
std::vector<float> run_counted(const std::function<Tensor(const Tensor&)>& fn, const Tensor& x, int64_t* launches) {
  Tensor y = fn(x);
  wok::reset_stats();
  std::vector<float> out = y.to_vector<float>();
  *launches = wok::stats().kernel_launches;
  return out;
}

TEST_F(JitReductionEdges, NormalizationsOnEveryRowKindAndLength) {
  const int64_t lengths[] = {1, 2, 3, 7, 17, 33, 1000, 4099, 100003};
  for (int64_t n : lengths) {
    const int64_t rows = n > 5000 ? 3 : 5;
    std::vector<float> w = make_rows(RowKind::kRandom, 1, n, 91), b = make_rows(RowKind::kRandom, 1, n, 92);
    Tensor tw = wok::from_vector(w, {n}), tb = wok::from_vector(b, {n});
    // Float32 against float64: a few ulp per element, plus the rounding of
    // the row statistics, which grows with the row's length.
    const double len_tol = 4e-7 * std::sqrt(double(n));
    const Normalization norms[] = {
        {"softmax", [](const Tensor& x) { return wok::softmax(x); }, ref_softmax, 1e-12, 2e-6 + len_tol},
        {"log_softmax", [](const Tensor& x) { return wok::log_softmax(x); }, ref_log_softmax, 2e-6, 2e-6 + len_tol},
        {"layer_norm", [](const Tensor& x) { return wok::layer_norm(x, {}, {}, 1e-5); }, ref_layer_norm({}, {}, 1e-5),
         2e-5, 2e-5 + len_tol},
        {"layer_norm+weight+bias", [&](const Tensor& x) { return wok::layer_norm(x, tw, tb, 1e-5); },
         ref_layer_norm(w, b, 1e-5), 2e-5, 2e-5 + len_tol},
        {"rms_norm+weight", [&](const Tensor& x) { return wok::rms_norm(x, tw, 1e-6); }, ref_rms_norm(w, 1e-6), 1e-6,
         2e-6 + len_tol},
    };
    for (const Normalization& norm : norms)
      for (RowKind kind : kKinds) {
        const bool softmaxes = std::string(norm.name).find("softmax") != std::string::npos;
        // Norms of huge or infinite rows overflow their variance in both
        // float32 and float64 alike, differently: only the softmaxes (whose
        // stability is the point) are held to those rows.
        if (!softmaxes && kind != RowKind::kRandom && kind != RowKind::kAllEqual && kind != RowKind::kWithNan) continue;
        SCOPED_TRACE(std::string(norm.name) + ", rows of length " + std::to_string(n) + ", " + kind_name(kind));
        std::vector<float> x = make_rows(kind, rows, n, static_cast<uint32_t>(n));
        std::vector<double> want(x.size());
        for (int64_t r = 0; r < rows; ++r) norm.ref(x.data() + r * n, want.data() + r * n, n);
        int64_t launches = 0;
        std::vector<float> got = run_counted(norm.fn, wok::from_vector(x, {rows, n}), &launches);
        // An all-equal row has variance 0: the float32 mean's rounding
        // (about 1e-7 of |x|) is multiplied by 1/sqrt(eps) = 316, as in
        // every float32 layer_norm.
        const double atol = kind == RowKind::kAllEqual && !softmaxes ? 2e-4 : norm.atol;
        EXPECT_EQ(compare(got, want, atol, norm.rtol), "");
        EXPECT_LE(launches, 2) << "kernels per evaluation";
        EXPECT_GE(launches, 1);
      }
  }
}

TEST_F(JitReductionEdges, SoftmaxOverAnOuterAxisMatchesTheReference) {
  for (int64_t n : {1, 5, 129}) {
    const int64_t cols = 37;
    std::vector<float> x = make_rows(RowKind::kHuge, n, cols, 7);
    // Reference over columns: transpose, reduce rows, transpose back.
    std::vector<float> xt(x.size());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < cols; ++j) xt[size_t(j * n + i)] = x[size_t(i * cols + j)];
    std::vector<double> wt(x.size()), want(x.size());
    for (int64_t j = 0; j < cols; ++j) ref_softmax(xt.data() + j * n, wt.data() + j * n, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < cols; ++j) want[size_t(i * cols + j)] = wt[size_t(j * n + i)];
    std::vector<float> got = wok::softmax(wok::from_vector(x, {n, cols}), 0).to_vector<float>();
    EXPECT_EQ(compare(got, want, 1e-12, 4e-6), "") << "softmax over axis 0 of [" << n << ", " << cols << "]";
  }
}

struct Reduction {
  const char* name;
  Tensor (*fn)(const Tensor&, std::vector<int64_t>, bool);
  double init;
  double (*step)(double, double);
  bool average;
};
double add(double a, double b) { return a + b; }
double mul(double a, double b) { return a * b; }
double max_nan(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNan : std::max(a, b); }
double min_nan(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNan : std::min(a, b); }
const Reduction kReductions[] = {
    {"sum", &wok::sum, 0.0, add, false},      {"mean", &wok::mean, 0.0, add, true},
    {"max", &wok::max, -kInf, max_nan, false}, {"min", &wok::min, kInf, min_nan, false},
    {"prod", &wok::prod, 1.0, mul, false},
};

// Reduces [a, b, c] over `axes` (a subset of {0, 1, 2}) in float64.
std::vector<double> ref_reduce(const Reduction& red, const std::vector<float>& x, const int64_t (&dims)[3],
                               const std::vector<int64_t>& axes) {
  bool reduced[3] = {false, false, false};
  for (int64_t a : axes) reduced[a] = true;
  int64_t out_dims[3], count = 1;
  for (int d = 0; d < 3; ++d) {
    out_dims[d] = reduced[d] ? 1 : dims[d];
    if (reduced[d]) count *= dims[d];
  }
  std::vector<double> acc(size_t(out_dims[0] * out_dims[1] * out_dims[2]), red.init);
  for (int64_t i = 0; i < dims[0]; ++i)
    for (int64_t j = 0; j < dims[1]; ++j)
      for (int64_t k = 0; k < dims[2]; ++k) {
        int64_t oi = reduced[0] ? 0 : i, oj = reduced[1] ? 0 : j, ok = reduced[2] ? 0 : k;
        double& a = acc[size_t((oi * out_dims[1] + oj) * out_dims[2] + ok)];
        a = red.step(a, x[size_t((i * dims[1] + j) * dims[2] + k)]);
      }
  if (red.average)
    for (double& a : acc) a /= double(count);
  return acc;
}

TEST_F(JitReductionEdges, ReductionsOverInnerOuterAndAllAxes) {
  const int64_t shapes[][3] = {{1, 1, 1}, {3, 1, 5}, {2, 7, 33}, {5, 3, 1000}, {2, 1001, 3}, {1, 3, 100003}};
  const std::vector<int64_t> axis_sets[] = {{2}, {1, 2}, {0}, {0, 1}, {1}, {0, 1, 2}};
  for (const auto& dims : shapes)
    for (RowKind kind : {RowKind::kRandom, RowKind::kAllEqual, RowKind::kWithNegInf, RowKind::kWithPosInf,
                         RowKind::kWithNan}) {
      std::vector<float> x = make_rows(kind, dims[0] * dims[1], dims[2], 3);
      // Keep products finite and meaningful: values near 1.
      std::vector<float> xp(x);
      for (float& v : xp)
        if (std::isfinite(v)) v = 1.0f + v / 4096.0f;
      for (const Reduction& red : kReductions)
        for (const auto& axes : axis_sets)
          for (bool keepdims : {false, true}) {
            const std::vector<float>& in = std::string(red.name) == "prod" ? xp : x;
            SCOPED_TRACE(std::string(red.name) + " over " + ::testing::PrintToString(axes) + " of [" +
                         std::to_string(dims[0]) + ", " + std::to_string(dims[1]) + ", " + std::to_string(dims[2]) +
                         "], " + kind_name(kind) + (keepdims ? ", keepdims" : ""));
            Tensor t = wok::from_vector(in, {dims[0], dims[1], dims[2]});
            Tensor y = red.fn(t, axes, keepdims);
            wok::reset_stats();
            std::vector<float> got = y.to_vector<float>();
            EXPECT_LE(wok::stats().kernel_launches, 2);
            std::vector<double> want = ref_reduce(red, in, dims, axes);
            int64_t count = 1;
            for (int64_t a : axes) count *= dims[a];
            // Blocked float32 sums stay within 1e-6 of the sum of
            // magnitudes (at most 2 * count here).
            double atol = red.step == add ? 2.0 * double(count) * 1e-6 / (red.average ? double(count) : 1.0) : 0.0;
            // A float32 product rounds once per factor.
            EXPECT_EQ(compare(got, want, atol, red.step == mul ? 1.2e-7 * double(count) : 2e-7), "");
            std::vector<int64_t> kept = y.shape();
            EXPECT_EQ(kept.size(), keepdims ? 3u : 3u - axes.size());
          }
    }
}

// Sums of 2^24 float32 values: the documented bound (docs/numerics.md) is a
// relative error of 1e-6 against the exact sum for same-sign data; here for
// data of mixed sign, relative to the sum of magnitudes.
TEST_F(JitReductionEdges, LongFloat32SumOfMixedSignsStaysWithinTheBound) {
  const int64_t n = int64_t{1} << 24;
  Tensor x = wok::randn({n}, 5);
  std::vector<float> v = x.to_vector<float>();
  long double exact = 0, magnitude = 0;
  for (float f : v) {
    exact += f;
    magnitude += std::fabs(f);
  }
  wok::reset_stats();
  const float got = wok::sum(x).item<float>();
  EXPECT_LE(std::fabs(static_cast<long double>(got) - exact) / magnitude, 1e-7L)
      << "got " << got << ", exact " << static_cast<double>(exact);
}

// Normalizations of normalizations: the inner one's output row held a value
// the outer one's later phases read back (Note [Spilled values] in
// jit/x86/row_schedule.h), which gave wrong results by up to 80%.
TEST_F(JitReductionEdges, NormalizationOfANormalizationMatchesThePrecompiledKernels) {
  for (int64_t n : {2, 4, 9, 64, 1000, 4099}) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = 3.0f * std::sin(1.3f * static_cast<float>(i));
    Tensor x = n % 2 ? wok::from_vector(v, {1, n}) : wok::from_vector(v, {2, n / 2});
    const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> programs = {
        {"softmax(softmax)", [](const Tensor& t) { return wok::softmax(wok::softmax(t)); }},
        {"rms_norm(softmax)", [](const Tensor& t) { return wok::rms_norm(wok::softmax(t)); }},
        {"layer_norm(softmax)", [](const Tensor& t) { return wok::layer_norm(wok::softmax(t)); }},
        {"log_softmax(softmax)", [](const Tensor& t) { return wok::log_softmax(wok::softmax(t)); }},
        {"softmax(layer_norm)", [](const Tensor& t) { return wok::softmax(wok::layer_norm(t)); }},
    };
    for (const auto& [name, f] : programs) {
      wok::set_backend(wok::Backend::kJit);
      wok::reset_stats();
      std::vector<float> jit = f(x).to_vector<float>();
      EXPECT_EQ(wok::stats().kernel_launches, 1) << name << ": one fused kernel";
      wok::set_backend(wok::Backend::kPrecompiled);
      std::vector<float> pre = f(x).to_vector<float>();
      wok::set_backend(wok::Backend::kJit);
      ASSERT_EQ(jit.size(), pre.size());
      for (size_t i = 0; i < jit.size(); ++i)
        ASSERT_NEAR(jit[i], pre[i], 1e-5 * (std::fabs(pre[i]) + 1e-3)) << name << " n=" << n << " at " << i;
    }
  }
}

}  // namespace

// A reduced value without its reduced dims ([2] from [2, 1, 2]) broadcasts
// with the epilogue's other inputs in its own frame: w lines up with the kept
// dim, not with the row, which right-aligning it to the kernel's space
// would have put it on (random program 2002482: a row kernel storing a
// register it never computed, SIGILL on AVX-512).
TEST_F(JitReductionEdges, EpilogueInputsLineUpWithTheReducedValue) {
  wok::Tensor x = wok::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 1, 2});
  wok::Tensor w = wok::from_vector(std::vector<float>{10, 20});
  wok::Tensor y = wok::sum(x, {1, 2}, false) * w;  // [3, 7] * [10, 20]
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{30, 140}));
  wok::Tensor b = wok::from_vector(std::vector<bool>{true, false});
  wok::Tensor z = wok::where(b, wok::max(x, {1, 2}, false), wok::min(x, {1, 2}, false));
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{2, 3}));
  // The same when the input is not constant along the reduced dims by
  // luck but only misaligned: [2, 4, 1] beside a mean of [2, 4, 1, 1] over
  // its last dim would read as [1, 2, 4, 1] (random program 3001905).
  wok::Tensor x4 = wok::from_vector(std::vector<float>{-1.5f, -0.1f, -1.9f, 2.5f, -0.9f, 1.6f, -1.8f, -1.1f}, {2, 4, 1, 1});
  wok::Tensor v = wok::from_vector(std::vector<float>{1.5f, 0, -1, -0.5f, 1.5f, -2, 0, 1}, {2, 4, 1});
  wok::Tensor m = wok::maximum(wok::mean(x4, {3}, false), v);
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{1.5f, 0, -1, 2.5f, 1.5f, 1.6f, 0, 1}));
  // A reduced value without its reduced dims in a full-size consumer
  // broadcasts along the row there, not one per row (random program 1001989).
  wok::Tensor sq = wok::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  wok::Tensor means = wok::mean(sq, {1}, false);  // [2, 5, 8]
  wok::Tensor picked = wok::where(means < sq, means, sq);
  EXPECT_EQ(picked.to_vector<float>(), (std::vector<float>{1, 2, 3, 2, 5, 6, 2, 5, 8}));
}
