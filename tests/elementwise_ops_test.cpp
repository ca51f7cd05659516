// The unary ops, for every dtype they accept, against a reference computed
// here: exact for the integer ones, in long double for the transcendentals,
// compared in ulps; their special values, overflow thresholds and extreme
// arguments against libm. The other elementwise tests: elementwise_dtypes_test.cpp,
// binary_ops_test.cpp, pow_op_test.cpp.
//
// Set WOK_TEST_ULP=1 to print the worst ulp error seen per op and dtype.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "elementwise_test_util.h"
#include "test_util.h"

namespace {

using wok::DType;
using wok::Tensor;
using wt::kInf;
using wt::kNaN;
using LD = long double;
using wt::report_ulp;

// ---- unary ops --------------------------------------------------------------------

enum class Rule { kSame, kFloat, kBool, kArith };

DType result_dtype(Rule r, DType in) {
  switch (r) {
    case Rule::kSame:
      return in;
    case Rule::kFloat:
      return wok::float_result_type(in);
    case Rule::kBool:
      return DType::kBool;
    case Rule::kArith:
      return in == DType::kBool ? DType::kInt32 : in;
  }
  return in;
}

struct UnaryCase {
  const char* name;
  Tensor (*fn)(const Tensor&);
  LD (*ref)(LD);  // exact math, in long double
  Rule rule;
  bool allow_bool;
  double lo, hi;           // where random inputs are drawn
  double ulp32, ulp64;     // tolerances for floating results
  double special_max_abs;  // special inputs larger than this are left to their own tests
  // Also accept an absolute error of abs_eps_x * eps * |x|: for gelu, whose
  // 1 + tanh(...) cancels for x < -2 (an ulp of tanh becomes many of gelu).
  double abs_eps_x = 0;
};

const LD kSqrt2OverPi = std::sqrt(2.0L / 3.14159265358979323846264338327950288L);

const UnaryCase kUnary[] = {
    {"neg", wok::neg, [](LD x) { return -x; }, Rule::kSame, false, -100, 100, 0, 0, kInf},
    {"abs", wok::abs, [](LD x) { return std::fabs(x); }, Rule::kSame, false, -100, 100, 0, 0, kInf},
    {"exp", wok::exp, [](LD x) { return std::exp(x); }, Rule::kFloat, true, -80, 80, 1.5, 1, kInf},
    {"log", wok::log, [](LD x) { return std::log(x); }, Rule::kFloat, true, 1e-6, 1e6, 1, 1, kInf},
    {"sqrt", wok::sqrt, [](LD x) { return std::sqrt(x); }, Rule::kFloat, true, 0, 1e6, 0.5, 0.5, kInf},
    {"rsqrt", wok::rsqrt, [](LD x) { return 1 / std::sqrt(x); }, Rule::kFloat, true, 1e-6, 1e6, 1.5, 1.5, kInf},
    {"sin", wok::sin, [](LD x) { return std::sin(x); }, Rule::kFloat, true, -100, 100, 1, 1.5, 1e4},
    {"cos", wok::cos, [](LD x) { return std::cos(x); }, Rule::kFloat, true, -100, 100, 1, 1.5, 1e4},
    {"tanh", wok::tanh, [](LD x) { return std::tanh(x); }, Rule::kFloat, true, -20, 20, 2, 2, kInf},
    {"erf", wok::erf, [](LD x) { return std::erf(x); }, Rule::kFloat, true, -6, 6, 2, 2, kInf},
    {"sigmoid", wok::sigmoid, [](LD x) { return 1 / (1 + std::exp(-x)); }, Rule::kFloat, true, -80, 80, 2.5, 2.5, kInf},
    {"relu", wok::relu, [](LD x) { return x > 0 ? x : (x != x ? x : 0.0L); }, Rule::kSame, false, -100, 100, 0, 0,
     kInf},
    {"gelu", wok::gelu, [](LD x) { return 0.5L * x * (1 + std::tanh(kSqrt2OverPi * (x + 0.044715L * x * x * x))); },
     Rule::kFloat, true, -3, 20, 4, 4, kInf, 1},
    {"silu", wok::silu, [](LD x) { return x / (1 + std::exp(-x)); }, Rule::kFloat, true, -80, 80, 2.5, 2.5, kInf},
    {"floor", wok::floor, [](LD x) { return std::floor(x); }, Rule::kSame, false, -100, 100, 0, 0, kInf},
    {"ceil", wok::ceil, [](LD x) { return std::ceil(x); }, Rule::kSame, false, -100, 100, 0, 0, kInf},
    {"round", wok::round, [](LD x) { return std::nearbyint(x); }, Rule::kSame, false, -100, 100, 0, 0, kInf},
    {"reciprocal", wok::reciprocal, [](LD x) { return 1 / x; }, Rule::kFloat, true, -100, 100, 0.5, 0.5, kInf},
    {"square", wok::square, [](LD x) { return x * x; }, Rule::kArith, true, -1e4, 1e4, 0.5, 0.5, kInf},
};

// Exact integer reference of the kSame / kArith unary ops (wrapping).
template <typename T>
T int_unary_ref(const std::string& op, T x) {
  using U = std::make_unsigned_t<T>;
  if (op == "neg") return static_cast<T>(U(0) - static_cast<U>(x));
  if (op == "abs") return x < 0 ? static_cast<T>(U(0) - static_cast<U>(x)) : x;
  if (op == "relu") return x > 0 ? x : T(0);
  if (op == "square") return static_cast<T>(static_cast<U>(x) * static_cast<U>(x));
  return x;  // floor, ceil, round
}

template <typename In>
std::vector<In> unary_inputs(const UnaryCase& c) {
  if constexpr (std::is_same_v<In, bool>) {
    return {false, true, true, false};
  } else if constexpr (std::is_integral_v<In>) {
    std::vector<In> v = wt::random_values<In>(256, std::ceil(c.lo), std::floor(c.hi), 11);
    for (In e : wt::integer_edges<In>())
      if (std::fabs(static_cast<double>(e)) <= c.special_max_abs) v.push_back(e);
    return v;
  } else {
    std::vector<In> v = wt::random_values<In>(1024, c.lo, c.hi, 7);
    for (In s : wt::special_values<In>())
      if (!(std::fabs(static_cast<double>(s)) > c.special_max_abs)) v.push_back(s);
    // Values near the ends of the domain and, for log-like ops, many magnitudes.
    for (In s : wt::log_spread<In>(128, -6, std::log10(std::max(std::fabs(c.lo), std::fabs(c.hi))), 3))
      if (s >= c.lo && s <= c.hi) v.push_back(s);
    return v;
  }
}

template <typename In>
void check_unary(const UnaryCase& c) {
  constexpr DType in_dt = wok::dtype_of<In>();
  SCOPED_TRACE(std::string(c.name) + " on " + wt::dname(in_dt));
  std::vector<In> x = unary_inputs<In>(c);
  Tensor tx = wt::tensor(x);
  auto describe = [&](size_t i) { return "x=" + wt::fmt(x[i]); };

  if (in_dt == DType::kBool && !c.allow_bool) {
    try {
      c.fn(tx);
      ADD_FAILURE() << c.name << "(bool) should throw wok::DTypeError";
    } catch (const wok::DTypeError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("wok::") + c.name), std::string::npos) << e.what();
    }
    return;
  }
  Tensor y = c.fn(tx);
  DType out_dt = result_dtype(c.rule, in_dt);
  ASSERT_EQ(y.dtype(), out_dt) << c.name << "(" << wt::dname(in_dt) << ")";
  ASSERT_EQ(y.shape(), tx.shape());

  wok::visit_dtype(out_dt, [&](auto out_tag) {
    using Out = decltype(out_tag);
    if constexpr (std::is_floating_point_v<Out>) {
      if (std::is_floating_point_v<In> && c.rule != Rule::kFloat && c.rule != Rule::kArith) {
        // neg, abs, relu, floor, ceil, round: exact, computed in Out.
        std::vector<Out> want;
        for (In v : x) want.push_back(static_cast<Out>(c.ref(static_cast<LD>(v))));
        bool sign = std::string(c.name) != "relu";  // relu(-0) may give either zero
        EXPECT_TRUE(wt::exact<Out>(c.name, y, want, describe, sign));
        return;
      }
      std::vector<LD> want;
      for (In v : x) want.push_back(c.ref(static_cast<LD>(static_cast<Out>(v))));
      double tol = std::is_same_v<Out, float> ? c.ulp32 : c.ulp64;
      std::function<double(size_t)> abs_tol;
      if (c.abs_eps_x > 0)
        abs_tol = [&](size_t i) {
          return c.abs_eps_x * std::numeric_limits<Out>::epsilon() * std::fabs(static_cast<double>(x[i]));
        };
      wt::UlpReport r;
      EXPECT_TRUE(wt::within_ulp<Out>(c.name, y, want, tol, describe, &r, abs_tol));
      report_ulp(c.name, in_dt, r);
    } else if constexpr (std::is_integral_v<Out> && !std::is_same_v<Out, bool>) {
      std::vector<Out> want;
      for (In v : x) want.push_back(int_unary_ref<Out>(c.name, static_cast<Out>(v)));
      EXPECT_TRUE(wt::exact<Out>(c.name, y, want, describe));
    } else {
      ADD_FAILURE() << "unexpected bool result for " << c.name;
    }
  });
}

class UnaryOpsEveryDType : public ::testing::TestWithParam<size_t> {};

TEST_P(UnaryOpsEveryDType, AgainstReference) {
  wt::for_each_backend([&] {
    const UnaryCase& c = kUnary[GetParam()];
    check_unary<bool>(c);
    check_unary<int32_t>(c);
    check_unary<int64_t>(c);
    check_unary<float>(c);
    check_unary<double>(c);
  });
}

INSTANTIATE_TEST_SUITE_P(UnaryOps, UnaryOpsEveryDType, ::testing::Range<size_t>(0, std::size(kUnary)),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return std::string(kUnary[info.param].name);
                         });

TEST(UnaryOps, SpecialValuesExactly) {
  wt::for_each_backend([&] {
    // name, input, expected (float64); also checked in float32.
    struct Case {
      Tensor (*fn)(const Tensor&);
      const char* name;
      double x, want;
    };
    const Case cases[] = {
        {wok::exp, "exp", -kInf, 0},
        {wok::exp, "exp", kInf, kInf},
        {wok::exp, "exp", kNaN, kNaN},
        {wok::exp, "exp", 0.0, 1},
        {wok::exp, "exp", -0.0, 1},
        {wok::exp, "exp", 1000, kInf},
        {wok::exp, "exp", -1000, 0},
        {wok::log, "log", 0.0, -kInf},
        {wok::log, "log", -0.0, -kInf},
        {wok::log, "log", -1, kNaN},
        {wok::log, "log", -kInf, kNaN},
        {wok::log, "log", kInf, kInf},
        {wok::log, "log", 1, 0},
        {wok::log, "log", kNaN, kNaN},
        {wok::sqrt, "sqrt", -0.0, -0.0},
        {wok::sqrt, "sqrt", -1, kNaN},
        {wok::sqrt, "sqrt", kInf, kInf},
        {wok::rsqrt, "rsqrt", 0.0, kInf},
        {wok::rsqrt, "rsqrt", -0.0, -kInf},
        {wok::rsqrt, "rsqrt", kInf, 0},
        {wok::rsqrt, "rsqrt", -1, kNaN},
        {wok::sin, "sin", kInf, kNaN},
        {wok::sin, "sin", -kInf, kNaN},
        {wok::sin, "sin", -0.0, -0.0},
        {wok::cos, "cos", kInf, kNaN},
        {wok::cos, "cos", kNaN, kNaN},
        {wok::cos, "cos", 0.0, 1},
        {wok::tanh, "tanh", kInf, 1},
        {wok::tanh, "tanh", -kInf, -1},
        {wok::tanh, "tanh", -0.0, -0.0},
        {wok::tanh, "tanh", 1e30, 1},
        {wok::tanh, "tanh", kNaN, kNaN},
        {wok::erf, "erf", kInf, 1},
        {wok::erf, "erf", -kInf, -1},
        {wok::erf, "erf", -0.0, -0.0},
        {wok::erf, "erf", kNaN, kNaN},
        {wok::erf, "erf", 30, 1},
        {wok::sigmoid, "sigmoid", kInf, 1},
        {wok::sigmoid, "sigmoid", -kInf, 0},
        {wok::sigmoid, "sigmoid", kNaN, kNaN},
        {wok::sigmoid, "sigmoid", 0, 0.5},
        {wok::sigmoid, "sigmoid", -1000, 0},
        {wok::relu, "relu", kNaN, kNaN},
        {wok::relu, "relu", -kInf, 0},
        {wok::relu, "relu", kInf, kInf},
        {wok::gelu, "gelu", kInf, kInf},
        {wok::gelu, "gelu", 0, 0},
        {wok::gelu, "gelu", kNaN, kNaN},
        {wok::silu, "silu", kInf, kInf},
        {wok::silu, "silu", kNaN, kNaN},
        {wok::silu, "silu", 0, 0},
        {wok::floor, "floor", -0.5, -1},
        {wok::floor, "floor", -0.0, -0.0},
        {wok::floor, "floor", kInf, kInf},
        {wok::floor, "floor", kNaN, kNaN},
        {wok::ceil, "ceil", -0.5, -0.0},
        {wok::ceil, "ceil", 0.5, 1},
        {wok::ceil, "ceil", -kInf, -kInf},
        {wok::round, "round", 0.5, 0},
        {wok::round, "round", 1.5, 2},
        {wok::round, "round", 2.5, 2},
        {wok::round, "round", -0.5, -0.0},
        {wok::round, "round", -1.5, -2},
        {wok::round, "round", -2.5, -2},
        {wok::round, "round", 3.5, 4},
        {wok::round, "round", 2.4999, 2},
        {wok::round, "round", kNaN, kNaN},
        {wok::round, "round", -kInf, -kInf},
        {wok::reciprocal, "reciprocal", 0.0, kInf},
        {wok::reciprocal, "reciprocal", -0.0, -kInf},
        {wok::reciprocal, "reciprocal", kInf, 0},
        {wok::reciprocal, "reciprocal", -kInf, -0.0},
        {wok::square, "square", -kInf, kInf},
        {wok::square, "square", kNaN, kNaN},
        {wok::square, "square", -0.0, 0.0},
        {wok::neg, "neg", 0.0, -0.0},
        {wok::neg, "neg", kNaN, kNaN},
        {wok::abs, "abs", -0.0, 0.0},
        {wok::abs, "abs", -kInf, kInf},
    };
    for (const Case& c : cases) {
      EXPECT_TRUE(wt::exact<double>(c.name, c.fn(wt::tensor(std::vector<double>{c.x})), {c.want},
                                    [&](size_t) { return "x=" + wt::fmt(c.x); }));
      EXPECT_TRUE(wt::exact<float>(c.name, c.fn(wt::tensor(std::vector<float>{static_cast<float>(c.x)})),
                                   {static_cast<float>(c.want)}, [&](size_t) { return "x=" + wt::fmt(c.x); }));
    }
  });
}

TEST(UnaryOps, ExpOverflowAndUnderflowThresholds) {
  wt::for_each_backend([&] {
    // float32: e^88.72 is the last finite value; below about -103.97 the
    // result rounds to 0; in between, results are subnormal.
    std::vector<float> x = {88.0f, 88.7f, 88.73f, 89.0f, -87.3f, -88.0f, -100.0f, -103.0f, -104.0f, -200.0f};
    std::vector<LD> want;
    for (float v : x) want.push_back(std::exp(static_cast<LD>(v)));
    wt::UlpReport r;
    EXPECT_TRUE(wt::within_ulp<float>("exp", wok::exp(wt::tensor(x)), want, 1, {}, &r));
    std::vector<double> xd = {709.0, 709.78, 709.79, 710.0, -708.0, -740.0, -745.0, -745.2, -746.0, -1e4};
    std::vector<LD> wantd;
    for (double v : xd) wantd.push_back(std::exp(static_cast<LD>(v)));
    EXPECT_TRUE(wt::within_ulp<double>("exp", wok::exp(wt::tensor(xd)), wantd, 1, {}, &r));
  });
}

TEST(UnaryOps, LogOfSubnormalsAndExtremes) {
  wt::for_each_backend([&] {
    for (float v : {std::numeric_limits<float>::denorm_min(), 1e-40f, std::numeric_limits<float>::min(),
                    std::numeric_limits<float>::max(), 1.0000001f, 0.99999994f}) {
      EXPECT_TRUE(wt::within_ulp<float>("log", wok::log(wt::tensor(std::vector<float>{v})),
                                        {std::log(static_cast<LD>(v))}, 1, [&](size_t) { return wt::fmt(v); }));
    }
    for (double v : {std::numeric_limits<double>::denorm_min(), 1e-310, std::numeric_limits<double>::min(),
                     std::numeric_limits<double>::max(), 1.0000000000000002, 0.99999999999999989}) {
      EXPECT_TRUE(wt::within_ulp<double>("log", wok::log(wt::tensor(std::vector<double>{v})),
                                         {std::log(static_cast<LD>(v))}, 1, [&](size_t) { return wt::fmt(v); }));
    }
  });
}

// Trig of large arguments. Up to |x| = 2^20 pi/2 the reduction is exact
// (vec_math_coeffs.h) and results must be as accurate as for small x;
// beyond, accuracy may degrade but results must stay finite, in [-1, 1].
TEST(UnaryOps, SinCosLargeArguments) {
  wt::for_each_backend([&] {
    using Fn = Tensor (*)(const Tensor&);
    using Ref = LD (*)(LD);
    // Accurate up to |x| = 2.1e8 (docs/numerics.md); beyond, the Cody-Waite
    // reduction would be wrong and wok answers nan instead of a wrong number.
    const std::vector<double> mid = {1e3, 12345.678, 1e5, 123456.789, 1e6, 1.6e6, -1.3e6, 3.3e7, -2.0e8};
    const std::vector<double> huge = {2.2e8, 1e10, 1e15, 1e22, 1e300, std::numeric_limits<double>::max()};
    for (auto [fn, name, ref] : {std::tuple<Fn, const char*, Ref>{wok::sin, "sin", [](LD v) { return std::sin(v); }},
                                 std::tuple<Fn, const char*, Ref>{wok::cos, "cos", [](LD v) { return std::cos(v); }}}) {
      std::vector<LD> want;
      for (double v : mid) want.push_back(ref(v));
      EXPECT_TRUE(wt::within_ulp<double>(name, fn(wt::tensor(mid)), want, 1.5,
                                         [&](size_t i) { return "x=" + wt::fmt(mid[i]); }));
      std::vector<float> midf(mid.begin(), mid.end());
      std::vector<LD> wantf;
      for (float v : midf) wantf.push_back(ref(v));
      EXPECT_TRUE(wt::within_ulp<float>(name, fn(wt::tensor(midf)), wantf, 1,
                                        [&](size_t i) { return "x=" + wt::fmt(midf[i]); }));

      std::vector<double> got = fn(wt::tensor(huge)).to_vector<double>();
      std::vector<float> hugef = {2.2e8f, 1e10f, 1e15f, 1e22f, 1e30f, std::numeric_limits<float>::max()};
      std::vector<float> gotf = fn(wt::tensor(hugef)).to_vector<float>();
      for (size_t i = 0; i < huge.size(); ++i) {
        EXPECT_TRUE(std::isnan(got[i])) << name << "(float64 " << huge[i] << ") = " << got[i];
        EXPECT_TRUE(std::isnan(gotf[i])) << name << "(float32 " << hugef[i] << ") = " << gotf[i];
        EXPECT_TRUE(std::isnan(fn(wt::tensor(std::vector<double>{-huge[i]})).item<double>())) << "-" << huge[i];
      }
    }
  });
}

}  // namespace
