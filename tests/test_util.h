// Shared helpers for the wok test suite: float64 / long double references,
// ulp distances, comparisons whose failures name the op, dtype, index, the
// value we got and the value we wanted, and random inputs per dtype.
#pragma once

#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "wok/runtime/cpu_features.h"

// gtest prints dtypes by name.
namespace wok {
inline void PrintTo(DType t, std::ostream* os) { *os << dtype_name(t); }
}  // namespace wok

namespace wt {

// ---- printing -------------------------------------------------------------------

template <typename T>
std::string fmt(T v) {
  std::ostringstream out;
  if constexpr (std::is_same_v<T, bool>) {
    out << (v ? "true" : "false");
  } else if constexpr (std::is_floating_point_v<T>) {
    out.precision(std::numeric_limits<T>::max_digits10);
    if (v == 0 && std::signbit(v))
      out << "-0";
    else
      out << v;
  } else {
    out << static_cast<long long>(v);
  }
  return out.str();
}

inline std::string dname(wok::DType t) { return std::string(wok::dtype_name(t)); }

// ---- ulp ------------------------------------------------------------------------

// The spacing of T's values at the magnitude of `want` (the ulp of the
// correctly rounded result), as long double.
template <typename T>
long double ulp_at(long double want) {
  static_assert(std::is_floating_point_v<T>);
  long double a = std::fabs(want);
  constexpr long double kMinNormal = std::numeric_limits<T>::min();
  constexpr int kDigits = std::numeric_limits<T>::digits;
  if (a < kMinNormal) return std::numeric_limits<T>::denorm_min();
  int e;
  std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  // Clamp to T's largest exponent so that values past T's max still get
  // T's largest ulp.
  e = std::min(e, std::numeric_limits<T>::max_exponent);
  return std::ldexp(1.0L, e - kDigits);
}

// Distance of `got` from the exact value `want` in ulps of T. Non-finite
// values must match exactly (nan matches nan; inf matches the same inf),
// otherwise the distance is +inf.
template <typename T>
double ulp_error(T got, long double want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0.0 : INFINITY;
  // An exact value past T's range rounds to infinity.
  constexpr long double kMax = std::numeric_limits<T>::max();
  if (std::fabs(want) >= kMax + ulp_at<T>(kMax) / 2) want = std::copysign(static_cast<long double>(INFINITY), want);
  if (std::isinf(want) || std::isinf(got)) return static_cast<long double>(got) == want ? 0.0 : INFINITY;
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / ulp_at<T>(want));
}

// Machine epsilon (the spacing of the values just above 1) and the smallest
// normal value: float32's for kFloat32, float64's otherwise.
inline double eps_of(wok::DType t) { return t == wok::DType::kFloat32 ? 0x1p-23 : 0x1p-52; }
inline double tiny_of(wok::DType t) {
  return t == wok::DType::kFloat32 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
}

// ---- reading tensors ---------------------------------------------------------------

template <typename T>
std::vector<T> values(const wok::Tensor& t) {
  return t.to_vector<T>();
}

// `describe(i)` names input i for failure messages ("x=0.5" or "a=1, b=2").
using Describe = std::function<std::string(size_t)>;

inline std::string where_str(const std::string& op, wok::DType dt, size_t i, const Describe& describe) {
  std::string s = "op=" + op + " dtype=" + dname(dt) + " index=" + std::to_string(i);
  if (describe) s += " input(" + describe(i) + ")";
  return s;
}

// Equal values of T: nan equals nan; unless `zero_sign_matters` is false,
// -0 and +0 differ.
template <typename T>
bool same_value(T got, T want, bool zero_sign_matters = true) {
  if constexpr (std::is_same_v<T, wok::half> || std::is_same_v<T, wok::bfloat16>) {
    return same_value(static_cast<float>(got), static_cast<float>(want), zero_sign_matters);  // exact
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
    if (got != want) return false;
    if (zero_sign_matters && got == 0) return std::signbit(got) == std::signbit(want);
    return true;
  } else {
    return got == want;
  }
}

// The tensor holds exactly `want` (dtype checked first). Up to 8 mismatches
// are listed.
template <typename T>
::testing::AssertionResult exact(const std::string& op, const wok::Tensor& t, const std::vector<T>& want,
                                 const Describe& describe = {}, bool zero_sign_matters = true) {
  if (t.dtype() != wok::dtype_of<T>())
    return ::testing::AssertionFailure() << "op=" << op << ": result dtype " << dname(t.dtype()) << ", want "
                                         << dname(wok::dtype_of<T>());
  if (t.numel() != static_cast<int64_t>(want.size()))
    return ::testing::AssertionFailure() << "op=" << op << ": " << t.numel() << " elements, want " << want.size();
  std::vector<T> got = values<T>(t);
  auto fail = ::testing::AssertionFailure();
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (same_value<T>(got[i], want[i], zero_sign_matters)) continue;
    if (++bad <= 8)
      fail << "\n  " << where_str(op, t.dtype(), i, describe) << " got=" << fmt<T>(got[i])
           << " want=" << fmt<T>(want[i]);
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return fail << "\n  " << bad << " of " << want.size() << " elements differ";
}

// Observed worst error of an ulp comparison, for reporting.
struct UlpReport {
  double max_ulp = 0;
  size_t worst_index = 0;
};

// Every element within `max_ulp` ulps of the exact `want` (long double).
// Non-finite results must match exactly. `abs_tol(i)`, when given, also
// accepts an absolute error up to that much (for formulas that cancel).
template <typename T>
::testing::AssertionResult within_ulp(const std::string& op, const wok::Tensor& t, const std::vector<long double>& want,
                                      double max_ulp, const Describe& describe = {}, UlpReport* report = nullptr,
                                      const std::function<double(size_t)>& abs_tol = {}) {
  static_assert(std::is_floating_point_v<T>);
  if (t.dtype() != wok::dtype_of<T>())
    return ::testing::AssertionFailure() << "op=" << op << ": result dtype " << dname(t.dtype()) << ", want "
                                         << dname(wok::dtype_of<T>());
  if (t.numel() != static_cast<int64_t>(want.size()))
    return ::testing::AssertionFailure() << "op=" << op << ": " << t.numel() << " elements, want " << want.size();
  std::vector<T> got = values<T>(t);
  auto fail = ::testing::AssertionFailure();
  int bad = 0;
  UlpReport r;
  for (size_t i = 0; i < want.size(); ++i) {
    double e = ulp_error<T>(got[i], want[i]);
    if (e > r.max_ulp || (std::isnan(e))) r = {e, i};
    if (e <= max_ulp) continue;
    if (abs_tol && std::isfinite(want[i]) && std::isfinite(got[i]) &&
        std::fabs(static_cast<long double>(got[i]) - want[i]) <= abs_tol(i))
      continue;
    if (++bad <= 8)
      fail << "\n  " << where_str(op, t.dtype(), i, describe) << " got=" << fmt(got[i])
           << " want=" << fmt(static_cast<double>(want[i])) << " (" << e << " ulp > " << max_ulp << ")";
  }
  if (report) *report = r;
  if (bad == 0) return ::testing::AssertionSuccess();
  return fail << "\n  " << bad << " of " << want.size() << " elements off by more than " << max_ulp << " ulp";
}

// |got - want| <= atol + rtol |want| for every element (nan must match nan,
// infinities exactly).
template <typename T>
::testing::AssertionResult close(const std::string& op, const wok::Tensor& t, const std::vector<double>& want,
                                 double rtol, double atol, const Describe& describe = {}) {
  if (t.dtype() != wok::dtype_of<T>())
    return ::testing::AssertionFailure() << "op=" << op << ": result dtype " << dname(t.dtype()) << ", want "
                                         << dname(wok::dtype_of<T>());
  if (t.numel() != static_cast<int64_t>(want.size()))
    return ::testing::AssertionFailure() << "op=" << op << ": " << t.numel() << " elements, want " << want.size();
  std::vector<T> got = values<T>(t);
  auto fail = ::testing::AssertionFailure();
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = static_cast<double>(got[i]), w = want[i];
    bool ok;
    if (std::isnan(w) || std::isnan(g))
      ok = std::isnan(w) && std::isnan(g);
    else if (std::isinf(w) || std::isinf(g))
      ok = g == w;
    else
      ok = std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (ok) continue;
    if (++bad <= 8)
      fail << "\n  " << where_str(op, t.dtype(), i, describe) << " got=" << fmt(got[i]) << " want=" << fmt(w)
           << " (|diff|=" << std::fabs(g - w) << ")";
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return fail << "\n  " << bad << " of " << want.size() << " elements not close (rtol=" << rtol << ", atol=" << atol
              << ")";
}

// ---- errors -------------------------------------------------------------------------

// `fn` throws E whose message contains every one of `parts`.
template <typename E, typename Fn>
::testing::AssertionResult throws_naming(Fn&& fn, const std::vector<std::string>& parts) {
  try {
    fn();
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts)
      if (msg.find(p) == std::string::npos)
        return ::testing::AssertionFailure() << "message \"" << msg << "\" does not name \"" << p << "\"";
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another error: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

// ---- inputs ---------------------------------------------------------------------------

// Random values of T: uniform in [lo, hi] for floats; uniform integers in
// [lo, hi] for integers (clamped to T's range); fair coins for bool.
template <typename T>
std::vector<T> random_values(size_t n, double lo, double hi, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  if constexpr (std::is_same_v<T, bool>) {
    std::bernoulli_distribution d(0.5);
    for (auto&& x : v) x = d(rng);
  } else if constexpr (std::is_integral_v<T>) {
    long double l = std::max<long double>(lo, std::numeric_limits<T>::min());
    long double h = std::min<long double>(hi, std::numeric_limits<T>::max());
    std::uniform_int_distribution<T> d(static_cast<T>(l), static_cast<T>(h));
    for (auto& x : v) x = d(rng);
  } else {
    std::uniform_real_distribution<double> d(lo, hi);
    for (auto& x : v) x = static_cast<T>(d(rng));
  }
  return v;
}

// Floats spread over many magnitudes: sign * 10^u, u uniform in [lo_exp, hi_exp].
template <typename T>
std::vector<T> log_spread(size_t n, double lo_exp, double hi_exp, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> e(lo_exp, hi_exp);
  std::bernoulli_distribution neg(0.5);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>((neg(rng) ? -1 : 1) * std::pow(10.0, e(rng)));
  return v;
}

// IEEE special values of T: infinities, nan, signed zeros, extremes,
// subnormals.
template <typename T>
std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  return {T(0),           -T(0),        T(1),      T(-1),           L::infinity(),    -L::infinity(),
          L::quiet_NaN(), L::min(),     -L::min(), L::denorm_min(), -L::denorm_min(), L::max(),
          L::lowest(),    L::epsilon(), T(0.5),    T(-0.5),         T(1e-30),         T(-1e-30)};
}

// Integers worth trying in every integer op.
template <typename T>
std::vector<T> integer_edges() {
  using L = std::numeric_limits<T>;
  return {T(0), T(1), T(-1), T(2), T(-2), T(7), T(-7), T(100), L::max(), L::min(), T(L::max() - 1), T(L::min() + 1)};
}

template <typename T>
std::vector<T> concat_vec(std::vector<T> a, const std::vector<T>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A 1-D tensor.
template <typename T>
wok::Tensor tensor(const std::vector<T>& v, wok::Shape shape = {-1}) {
  return wok::from_vector(v, std::move(shape));
}

// Runs `fn` once per backend (JIT, then precompiled kernels), restoring the
// backend in effect afterwards. Where the host has no JIT, both runs use
// the precompiled kernels.
template <typename Fn>
void for_each_backend(Fn&& fn) {
  const wok::Backend saved = wok::backend();
  for (wok::Backend b : {wok::Backend::kJit, wok::Backend::kPrecompiled}) {
    SCOPED_TRACE("backend " + std::string(wok::backend_name(b)));
    wok::set_backend(b);
    fn();
  }
  wok::set_backend(saved);
}

// Restores the pending limits on scope exit.
struct PendingLimitsGuard {
  wok::PendingLimits saved = wok::pending_limits();
  ~PendingLimitsGuard() { wok::set_pending_limits(saved); }
};

// ---- both backends ----------------------------------------------------------------

// A suite whose tests run under the JIT and the precompiled kernels:
// TEST_P(MySuite, ...) with `class MySuite : public wt::BothBackends {};` and
// INSTANTIATE_TEST_SUITE_P(Backends, MySuite, wt::kBothBackends, wt::backend_param_name).
class BothBackends : public ::testing::TestWithParam<wok::Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == wok::Backend::kJit && wok::host_cpu_isa() == wok::CpuIsa::kBaseline)
      GTEST_SKIP() << "host has no AVX2: the JIT is off";
    wok::set_backend(GetParam());
  }
  void TearDown() override { wok::set_backend(wok::Backend::kJit); }
};

inline const auto kBothBackends = ::testing::Values(wok::Backend::kJit, wok::Backend::kPrecompiled);

inline std::string backend_param_name(const ::testing::TestParamInfo<wok::Backend>& info) {
  return info.param == wok::Backend::kJit ? "Jit" : "Precompiled";
}

// ---- the op catalog ----------------------------------------------------------------

// The built-in elementwise ops a sweep can call with inputs alone (no
// variadic inputs, no required attribute), as the catalog describes them.
// Built-in only: other tests register ops whose kernels differ from their
// formulas on purpose.
inline std::vector<wok::OpInfo> builtin_elementwise_ops() {
  std::vector<wok::OpInfo> out;
  for (const std::string& name : wok::op_names()) {
    wok::OpInfo info = wok::op_info(name);
    if (!info.builtin || info.kind != wok::OpKind::kElementwise || info.variadic_inputs) continue;
    bool required_attr = false;
    for (const wok::AttrSpec& a : info.attrs) required_attr = required_attr || !a.default_value;
    if (!required_attr) out.push_back(std::move(info));
  }
  return out;
}

// ---- launch counts under the JIT --------------------------------------------------

// A suite that counts the kernel launches of fused programs: they are the
// JIT's, so it skips where the JIT is off or the precompiled backend is
// selected (set_backend or WOK_BACKEND=precompiled), and runs under the JIT
// otherwise. TEST_F(MySuite, ...) with `class MySuite : public wt::JitLaunchCounts {};`.
class JitLaunchCounts : public ::testing::Test {
 protected:
  void SetUp() override {
    if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
    const char* env = std::getenv("WOK_BACKEND");
    if (wok::backend() == wok::Backend::kPrecompiled || (env && std::string(env) == "precompiled"))
      GTEST_SKIP() << "backend is precompiled: launch counts are the JIT's";
    wok::set_backend(wok::Backend::kJit);
  }
  void TearDown() override { wok::set_backend(wok::Backend::kJit); }

 public:
  // Launches that evaluating `ys` takes (their inputs are ready).
  static int64_t launches_of(const std::vector<wok::Tensor>& ys) {
    wok::reset_stats();
    wok::eval(ys);
    return wok::stats().kernel_launches;
  }
};

}  // namespace wt
