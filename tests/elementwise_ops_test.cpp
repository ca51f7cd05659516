// Every elementwise op, for every dtype it accepts, against a reference
// computed here: exact (integer arithmetic, + - * / min max, comparisons,
// casts) or in long double for the transcendentals, compared in ulps.
//
// Set WOK_TEST_ULP=1 to print the worst ulp error seen per op and dtype.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Tensor;
using LD = long double;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void report_ulp(const std::string& op, DType dt, const wt::UlpReport& r) {
  if (std::getenv("WOK_TEST_ULP"))
    std::printf("[ulp] %-11s %-10s %-8s max %.3f ulp (index %zu)\n",
                std::string(wok::backend_name(wok::backend())).c_str(), op.c_str(), wt::dname(dt).c_str(), r.max_ulp,
                r.worst_index);
}

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

TEST(UnaryOps, IntegerEdgesWrap) {
  wt::for_each_backend([&] {
    std::vector<int32_t> x = {std::numeric_limits<int32_t>::min(), -5, 0, 5, std::numeric_limits<int32_t>::max()};
    EXPECT_TRUE(
        wt::exact<int32_t>("neg", wok::neg(wt::tensor(x)),
                           {std::numeric_limits<int32_t>::min(), 5, 0, -5, -std::numeric_limits<int32_t>::max()}));
    EXPECT_TRUE(
        wt::exact<int32_t>("abs", wok::abs(wt::tensor(x)),
                           {std::numeric_limits<int32_t>::min(), 5, 0, 5, std::numeric_limits<int32_t>::max()}));
    EXPECT_TRUE(wt::exact<int32_t>("square", wok::square(wt::tensor(std::vector<int32_t>{65536, 46341, -3})),
                                   {0, static_cast<int32_t>(46341u * 46341u), 9}));
    // Integer inputs to float ops give float64 and are exact where float64 is.
    EXPECT_TRUE(wt::exact<double>("reciprocal", wok::reciprocal(wt::tensor(std::vector<int32_t>{0, 2, -4})),
                                  {kInf, 0.5, -0.25}));
    EXPECT_TRUE(wt::exact<double>("sqrt", wok::sqrt(wt::tensor(std::vector<int64_t>{0, 4, -1})), {0, 2, kNaN}));
    EXPECT_TRUE(wt::exact<float>("exp", wok::exp(wt::tensor(std::vector<bool>{false})), {1.0f}));
  });
}

TEST(UnaryOps, LogicalNotEveryDType) {
  wt::for_each_backend([&] {
    EXPECT_TRUE(
        wt::exact<bool>("logical_not", wok::logical_not(wt::tensor(std::vector<bool>{true, false})), {false, true}));
    EXPECT_TRUE(wt::exact<bool>("logical_not",
                                !wt::tensor(std::vector<int32_t>{0, 1, -7, std::numeric_limits<int32_t>::min()}),
                                {true, false, false, false}));
    EXPECT_TRUE(wt::exact<bool>("logical_not", wok::logical_not(wt::tensor(std::vector<int64_t>{0, int64_t{1} << 40})),
                                {true, false}));
    // nan is true (non-zero), as in NumPy; -0 is false.
    EXPECT_TRUE(wt::exact<bool>(
        "logical_not", wok::logical_not(wt::tensor(std::vector<float>{0.0f, -0.0f, 0.5f, NAN, -INFINITY, 1e-45f})),
        {true, true, false, false, false, false}));
    EXPECT_TRUE(wt::exact<bool>("logical_not",
                                wok::logical_not(wt::tensor(std::vector<double>{0.0, -0.0, 1e-320, kNaN})),
                                {true, true, false, false}));
  });
}

TEST(UnaryOps, ReadingBoolResults) {
  Tensor b = wt::tensor(std::vector<float>{0.0f, 2.0f, -1.0f}) > 0.0f;
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(b.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 0}));
  EXPECT_EQ(b.data<bool>()[1], true);
  EXPECT_EQ(wt::tensor(std::vector<int32_t>{0, 3}).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_TRUE((wok::scalar_tensor(1.0) == 1.0).item<bool>());
  EXPECT_THROW(b.data<float>(), wok::DTypeError);
}

// ---- cast -------------------------------------------------------------------------------

template <typename In>
std::vector<In> cast_inputs() {
  if constexpr (std::is_same_v<In, bool>) {
    return {false, true};
  } else if constexpr (std::is_integral_v<In>) {
    // Includes values that do not fit int32 or float32 exactly.
    std::vector<In> v = wt::integer_edges<In>();
    v.push_back(static_cast<In>(16777217));
    v.push_back(static_cast<In>(-16777219));
    return v;
  } else {
    // Only values every integer type can hold (C++ leaves the rest undefined).
    return {In(0),    -In(0),  In(0.5),  In(-0.5), In(1.9),   In(-1.9),       In(2.5),
            In(-2.5), In(1e9), In(-2e9), In(0.1),  In(1e-30), In(16777217.0), In(1.0000000000000002)};
  }
}

template <typename In, typename Out>
void check_cast() {
  std::vector<In> x = cast_inputs<In>();
  std::vector<Out> want;
  for (In v : x) want.push_back(static_cast<Out>(v));
  Tensor y = wok::cast(wt::tensor(x), wok::dtype_of<Out>());
  EXPECT_TRUE(wt::exact<Out>("cast " + wt::dname(wok::dtype_of<In>()) + "->" + wt::dname(wok::dtype_of<Out>()), y, want,
                             [&](size_t i) { return "x=" + wt::fmt(x[i]); }));
}

template <typename In>
void check_cast_from() {
  check_cast<In, bool>();
  check_cast<In, int32_t>();
  check_cast<In, int64_t>();
  check_cast<In, float>();
  check_cast<In, double>();
}

TEST(CastOp, EveryPairOfDTypes) {
  wt::for_each_backend([&] {
    check_cast_from<bool>();
    check_cast_from<int32_t>();
    check_cast_from<int64_t>();
    check_cast_from<float>();
    check_cast_from<double>();
  });
}

TEST(CastOp, FloatSpecialsToFloatAndBool) {
  wt::for_each_backend([&] {
    std::vector<double> x = {kNaN, kInf, -kInf, -0.0, 1e300, -1e300, 1e-300, 3.4028235677973366e38};
    std::vector<float> want;
    for (double v : x) want.push_back(static_cast<float>(v));
    EXPECT_TRUE(wt::exact<float>("cast float64->float32", wok::cast(wt::tensor(x), DType::kFloat32), want));
    EXPECT_TRUE(wt::exact<bool>("cast float64->bool", wok::cast(wt::tensor(x), DType::kBool),
                                {true, true, true, false, true, true, true, true}));
    EXPECT_TRUE(wt::exact<double>("cast float32->float64", wok::cast(wt::tensor(want), DType::kFloat64),
                                  std::vector<double>(want.begin(), want.end())));
  });
}

// ---- binary ops ---------------------------------------------------------------------------

template <typename T>
struct Pairs {
  std::vector<T> a, b;
  wt::Describe describe() const {
    return [this](size_t i) { return "a=" + wt::fmt(a[i]) + ", b=" + wt::fmt(b[i]); };
  }
};

// Every pair of special / edge values, then random pairs in [lo, hi].
template <typename T>
Pairs<T> binary_inputs(double lo, double hi, uint32_t seed = 5) {
  Pairs<T> p;
  std::vector<T> edges;
  if constexpr (std::is_same_v<T, bool>)
    edges = {false, true};
  else if constexpr (std::is_integral_v<T>)
    edges = wt::integer_edges<T>();
  else
    edges = wt::special_values<T>();
  for (T x : edges)
    for (T y : edges) {
      p.a.push_back(x);
      p.b.push_back(y);
    }
  std::vector<T> ra = wt::random_values<T>(512, lo, hi, seed), rb = wt::random_values<T>(512, lo, hi, seed + 1);
  p.a.insert(p.a.end(), ra.begin(), ra.end());
  p.b.insert(p.b.end(), rb.begin(), rb.end());
  return p;
}

template <typename T>
T wrap(const std::string& op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  if (op == "add") return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  if (op == "sub") return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

template <typename T>
void check_add_sub_mul() {
  constexpr DType dt = wok::dtype_of<T>();
  Pairs<T> p = binary_inputs<T>(-1e6, 1e6);
  Tensor a = wt::tensor(p.a), b = wt::tensor(p.b);
  for (auto [fn, name] : {std::pair{static_cast<Tensor (*)(const Tensor&, const Tensor&)>(wok::add), "add"},
                          std::pair{static_cast<Tensor (*)(const Tensor&, const Tensor&)>(wok::sub), "sub"},
                          std::pair{static_cast<Tensor (*)(const Tensor&, const Tensor&)>(wok::mul), "mul"}}) {
    std::string op = name;
    if constexpr (std::is_same_v<T, bool>) {
      if (op == "sub") {
        EXPECT_THROW(fn(a, b), wok::DTypeError) << "sub of bools";
        continue;
      }
      std::vector<int32_t> want;
      for (size_t i = 0; i < p.a.size(); ++i)
        want.push_back(op == "add" ? int32_t{p.a[i]} + int32_t{p.b[i]} : int32_t{p.a[i]} * int32_t{p.b[i]});
      EXPECT_TRUE(wt::exact<int32_t>(op, fn(a, b), want, p.describe()));
    } else {
      std::vector<T> want;
      for (size_t i = 0; i < p.a.size(); ++i) {
        if constexpr (std::is_integral_v<T>)
          want.push_back(wrap(op, p.a[i], p.b[i]));
        else
          want.push_back(op == "add" ? p.a[i] + p.b[i] : op == "sub" ? p.a[i] - p.b[i] : p.a[i] * p.b[i]);
      }
      EXPECT_TRUE(wt::exact<T>(op + " " + wt::dname(dt), fn(a, b), want, p.describe()));
    }
  }
}

TEST(BinaryOps, AddSubMulExactWithWrapping) {
  wt::for_each_backend([&] {
    check_add_sub_mul<bool>();
    check_add_sub_mul<int32_t>();
    check_add_sub_mul<int64_t>();
    check_add_sub_mul<float>();
    check_add_sub_mul<double>();
  });
}

TEST(BinaryOps, IntegerOverflowWraps) {
  wt::for_each_backend([&] {
    const int32_t mx = std::numeric_limits<int32_t>::max(), mn = std::numeric_limits<int32_t>::min();
    Tensor a = wt::tensor(std::vector<int32_t>{mx, mn, mx, 1 << 16});
    Tensor b = wt::tensor(std::vector<int32_t>{1, -1, 2, 1 << 16});
    EXPECT_TRUE(wt::exact<int32_t>("add", a + b, {mn, mx, -mx - 1 + 1, (1 << 16) + (1 << 16)}));
    EXPECT_TRUE(wt::exact<int32_t>("sub", a - b, {mx - 1, mn + 1, mx - 2, 0}));
    EXPECT_TRUE(wt::exact<int32_t>("mul", a * b, {mx, mn, -2, 0}));
    const int64_t MX = std::numeric_limits<int64_t>::max(), MN = std::numeric_limits<int64_t>::min();
    Tensor c = wt::tensor(std::vector<int64_t>{MX, MN, int64_t{1} << 32});
    Tensor d = wt::tensor(std::vector<int64_t>{1, 1, int64_t{1} << 32});
    EXPECT_TRUE(wt::exact<int64_t>("add", c + d, {MN, MN + 1, int64_t{1} << 33}));
    EXPECT_TRUE(wt::exact<int64_t>("mul", c * d, {MX, MN, 0}));
  });
}

template <typename T>
void check_div() {
  Pairs<T> p = binary_inputs<T>(-1e3, 1e3);
  using Out =
      std::conditional_t<std::is_floating_point_v<T>, T, std::conditional_t<std::is_same_v<T, bool>, float, double>>;
  std::vector<Out> want;
  for (size_t i = 0; i < p.a.size(); ++i) want.push_back(static_cast<Out>(p.a[i]) / static_cast<Out>(p.b[i]));
  EXPECT_TRUE(
      wt::exact<Out>("div " + wt::dname(wok::dtype_of<T>()), wt::tensor(p.a) / wt::tensor(p.b), want, p.describe()));
}

TEST(BinaryOps, TrueDivisionExact) {
  wt::for_each_backend([&] {
    check_div<bool>();
    check_div<int32_t>();
    check_div<int64_t>();
    check_div<float>();
    check_div<double>();
  });
}

template <typename T>
void check_max_min() {
  Pairs<T> p = binary_inputs<T>(-1e3, 1e3);
  std::vector<T> want_max, want_min;
  for (size_t i = 0; i < p.a.size(); ++i) {
    T a = p.a[i], b = p.b[i];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) {
        want_max.push_back(std::numeric_limits<T>::quiet_NaN());
        want_min.push_back(std::numeric_limits<T>::quiet_NaN());
        continue;
      }
    }
    want_max.push_back(a > b ? a : b);
    want_min.push_back(a < b ? a : b);
  }
  Tensor a = wt::tensor(p.a), b = wt::tensor(p.b);
  // max(-0, +0) may be either zero.
  EXPECT_TRUE(wt::exact<T>("maximum", wok::maximum(a, b), want_max, p.describe(), false));
  EXPECT_TRUE(wt::exact<T>("minimum", wok::minimum(a, b), want_min, p.describe(), false));
}

TEST(BinaryOps, MaximumMinimumPropagateNaN) {
  wt::for_each_backend([&] {
    check_max_min<bool>();
    check_max_min<int32_t>();
    check_max_min<int64_t>();
    check_max_min<float>();
    check_max_min<double>();
    // nan in either position.
    Tensor a = wt::tensor(std::vector<float>{NAN, 1.0f, NAN});
    Tensor b = wt::tensor(std::vector<float>{1.0f, NAN, NAN});
    for (float v : wok::maximum(a, b).to_vector<float>()) EXPECT_TRUE(std::isnan(v));
    for (float v : wok::minimum(a, b).to_vector<float>()) EXPECT_TRUE(std::isnan(v));
  });
}

template <typename T>
void check_comparisons() {
  Pairs<T> p = binary_inputs<T>(-5, 5);  // small range: many ties
  Tensor a = wt::tensor(p.a), b = wt::tensor(p.b);
  using BinFn = Tensor (*)(const Tensor&, const Tensor&);
  struct Cmp {
    const char* name;
    BinFn fn;
    bool (*ref)(T, T);
  };
  const Cmp cmps[] = {
      {"eq", wok::eq, [](T x, T y) { return x == y; }}, {"ne", wok::ne, [](T x, T y) { return x != y; }},
      {"lt", wok::lt, [](T x, T y) { return x < y; }},  {"le", wok::le, [](T x, T y) { return x <= y; }},
      {"gt", wok::gt, [](T x, T y) { return x > y; }},  {"ge", wok::ge, [](T x, T y) { return x >= y; }},
  };
  for (const Cmp& c : cmps) {
    std::vector<bool> want;
    for (size_t i = 0; i < p.a.size(); ++i) want.push_back(c.ref(p.a[i], p.b[i]));
    EXPECT_TRUE(
        wt::exact<bool>(std::string(c.name) + " " + wt::dname(wok::dtype_of<T>()), c.fn(a, b), want, p.describe()));
  }
}

TEST(BinaryOps, ComparisonsGiveBool) {
  wt::for_each_backend([&] {
    check_comparisons<bool>();
    check_comparisons<int32_t>();
    check_comparisons<int64_t>();
    check_comparisons<float>();
    check_comparisons<double>();
    // Operators, and -0 == +0.
    Tensor z = wt::tensor(std::vector<float>{0.0f, NAN});
    Tensor nz = wt::tensor(std::vector<float>{-0.0f, NAN});
    EXPECT_TRUE(wt::exact<bool>("eq", z == nz, {true, false}));
    EXPECT_TRUE(wt::exact<bool>("ne", z != nz, {false, true}));
    EXPECT_TRUE(wt::exact<bool>("lt", z < nz, {false, false}));
    EXPECT_TRUE(wt::exact<bool>("ge", z >= nz, {true, false}));
  });
}

template <typename T>
void check_logical() {
  Pairs<T> p = binary_inputs<T>(-2, 2);
  Tensor a = wt::tensor(p.a), b = wt::tensor(p.b);
  std::vector<bool> want_and, want_or;
  for (size_t i = 0; i < p.a.size(); ++i) {
    bool x = p.a[i] != T(0) || (std::is_floating_point_v<T> && p.a[i] != p.a[i]);
    bool y = p.b[i] != T(0) || (std::is_floating_point_v<T> && p.b[i] != p.b[i]);
    want_and.push_back(x && y);
    want_or.push_back(x || y);
  }
  std::string dt = wt::dname(wok::dtype_of<T>());
  EXPECT_TRUE(wt::exact<bool>("logical_and " + dt, wok::logical_and(a, b), want_and, p.describe()));
  EXPECT_TRUE(wt::exact<bool>("logical_or " + dt, wok::logical_or(a, b), want_or, p.describe()));
}

TEST(BinaryOps, LogicalAndOr) {
  wt::for_each_backend([&] {
    check_logical<bool>();
    check_logical<int32_t>();
    check_logical<int64_t>();
    check_logical<float>();
    check_logical<double>();
  });
}

// ---- pow ------------------------------------------------------------------------------------

template <typename T>
void check_pow_random(double ulp_tol) {
  // Positive bases over many magnitudes, exponents such that results stay
  // finite, and negative bases with integer exponents.
  Pairs<T> p;
  std::vector<T> base = wt::random_values<T>(1024, 1e-3, 1e3, 21);
  std::vector<T> expo = wt::random_values<T>(1024, -10, 10, 22);
  for (size_t i = 0; i < base.size(); ++i) {
    p.a.push_back(base[i]);
    p.b.push_back(expo[i]);
    p.a.push_back(-base[i]);
    p.b.push_back(std::round(expo[i]));
  }
  std::vector<LD> want;
  for (size_t i = 0; i < p.a.size(); ++i) want.push_back(std::pow(static_cast<LD>(p.a[i]), static_cast<LD>(p.b[i])));
  wt::UlpReport r;
  EXPECT_TRUE(wt::within_ulp<T>("pow", wok::pow(wt::tensor(p.a), wt::tensor(p.b)), want, ulp_tol, p.describe(), &r));
  report_ulp("pow", wok::dtype_of<T>(), r);
}

TEST(PowOp, Float32Accuracy) {
  wt::for_each_backend([] { check_pow_random<float>(1); });
}
TEST(PowOp, Float64Accuracy) {
  wt::for_each_backend([] { check_pow_random<double>(2); });
}

// Large results: the error of exp(b log a) grows with |b log a| unless the
// log is carried in extra precision. wok carries it to about 2^-60, which
// keeps the documented bound (docs/numerics.md): 2 ulp, 4 ulp when
// |b log a| > 500.
TEST(PowOp, Float64LargeResultsAccuracy) {
  wt::for_each_backend([&] {
    std::vector<double> a = {2.0, 10.0, 1.5, 0.5, 7.0, 1.0000001, 3.0};
    std::vector<double> b = {1000.5, 300.25, 1700.0, -1020.0, 360.0, 7e9, -600.5};
    std::vector<LD> want;
    for (size_t i = 0; i < a.size(); ++i) want.push_back(std::pow(static_cast<LD>(a[i]), static_cast<LD>(b[i])));
    wt::UlpReport r;
    EXPECT_TRUE(wt::within_ulp<double>(
        "pow", wok::pow(wt::tensor(a), wt::tensor(b)), want, 4,
        [&](size_t i) { return "a=" + wt::fmt(a[i]) + ", b=" + wt::fmt(b[i]); }, &r));
    report_ulp("pow(large)", DType::kFloat64, r);
  });
}

TEST(PowOp, IEEESpecialCases) {
  wt::for_each_backend([&] {
    struct Case {
      double a, b, want;
    };
    const Case cases[] = {
        {2, 0, 1},
        {kNaN, 0, 1},
        {kInf, 0, 1},
        {0, 0, 1},
        {-0.0, -0.0, 1},
        {1, kNaN, 1},
        {1, kInf, 1},
        {1, -kInf, 1},
        {-1, kInf, 1},
        {-1, -kInf, 1},
        {kNaN, 1, kNaN},
        {2, kNaN, kNaN},
        {1, -7, 1},
        {-1, 0.5, kNaN},
        {-1, -2, 1},
        {-2, 0.5, kNaN},
        {-8, 1.0 / 3, kNaN},
        {-0.0, -1, -kInf},
        {0.0, -1, kInf},
        {-0.0, -2, kInf},
        {-0.0, 1, -0.0},
        {-0.0, 2, 0.0},
        {0.0, 3, 0.0},
        {-0.0, -0.5, kInf},
        {-0.0, 0.5, 0.0},
        {0.5, kInf, 0},
        {2, kInf, kInf},
        {0.5, -kInf, kInf},
        {2, -kInf, 0},
        {-2, kInf, kInf},
        {-0.5, kInf, 0},
        {kInf, -1, 0},
        {kInf, 0.5, kInf},
        {-kInf, 3, -kInf},
        {-kInf, 2, kInf},
        {-kInf, -3, -0.0},
        {-kInf, -2, 0.0},
        {-kInf, 0.5, kInf},
        {-1, 3, -1},
        {-1, 1e300, 1},
        // Overflow and underflow.
        {2, 1024, kInf},
        {2, -1075, 0},
        {-2, 1025, -kInf},
        {10, 400, kInf},
        {10, -400, 0},
    };
    std::vector<double> a, b, want;
    for (const Case& c : cases) {
      a.push_back(c.a);
      b.push_back(c.b);
      want.push_back(c.want);
    }
    auto describe = [&](size_t i) { return "a=" + wt::fmt(a[i]) + ", b=" + wt::fmt(b[i]); };
    std::vector<LD> want_ld;
    for (size_t i = 0; i < a.size(); ++i)
      want_ld.push_back(std::isfinite(want[i]) && want[i] != 0 ? std::pow(static_cast<LD>(a[i]), static_cast<LD>(b[i]))
                                                               : static_cast<LD>(want[i]));
    Tensor y = wok::pow(wt::tensor(a), wt::tensor(b));
    EXPECT_TRUE(wt::within_ulp<double>("pow", y, want_ld, 0.5, describe));
    // Signs of zero results.
    std::vector<double> got = y.to_vector<double>();
    for (size_t i = 0; i < a.size(); ++i)
      if (want[i] == 0) {
        EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << "pow(" << describe(i) << ")";
      }

    std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
    std::vector<float> wantf;
    for (size_t i = 0; i < a.size(); ++i) wantf.push_back(static_cast<float>(std::pow(af[i], bf[i])));
    EXPECT_TRUE(wt::exact<float>("pow", wok::pow(wt::tensor(af), wt::tensor(bf)), wantf,
                                 [&](size_t i) { return "a=" + wt::fmt(af[i]) + ", b=" + wt::fmt(bf[i]); }));
  });
}

// Small integer powers: exactly representable results must be exact, and
// the rest correctly rounded, as from libm's pow.
// Exponents 1, 2, -1 and 0.5 take exact paths (correctly rounded); other
// small integer powers stay within the general float64 bound of 2 ulp.
TEST(PowOp, SmallIntegerPowers) {
  wt::for_each_backend([&] {
    std::vector<double> xs = {-3.0, -2.0, -1.5, 0.5, 2.0, 3.0, 10.0, 0.1};
    std::vector<double> a, b, a2, b2;
    for (double x : xs)
      for (double y : {-3.0, -2.0, 3.0, 4.0, 10.0}) {
        a2.push_back(x);
        b2.push_back(y);
      }
    std::vector<LD> want2;
    for (size_t i = 0; i < a2.size(); ++i) want2.push_back(std::pow(static_cast<LD>(a2[i]), static_cast<LD>(b2[i])));
    EXPECT_TRUE(wt::within_ulp<double>("pow", wok::pow(wt::tensor(a2), wt::tensor(b2)), want2, 2,
                                       [&](size_t i) { return "a=" + wt::fmt(a2[i]) + ", b=" + wt::fmt(b2[i]); }));
    for (double x : xs)
      for (double y : {-1.0, 1.0, 2.0, 0.5}) {
        a.push_back(x);
        b.push_back(y);
      }
    std::vector<LD> want;
    for (size_t i = 0; i < a.size(); ++i) want.push_back(std::pow(static_cast<LD>(a[i]), static_cast<LD>(b[i])));
    auto describe = [&](size_t i) { return "a=" + wt::fmt(a[i]) + ", b=" + wt::fmt(b[i]); };
    wt::UlpReport r;
    EXPECT_TRUE(wt::within_ulp<double>("pow", wok::pow(wt::tensor(a), wt::tensor(b)), want, 0.5, describe, &r));
    report_ulp("pow(small)", DType::kFloat64, r);
    std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
    std::vector<LD> wantf;
    for (size_t i = 0; i < a.size(); ++i) wantf.push_back(std::pow(static_cast<LD>(af[i]), static_cast<LD>(bf[i])));
    EXPECT_TRUE(wt::within_ulp<float>("pow", wok::pow(wt::tensor(af), wt::tensor(bf)), wantf, 0.5, describe));
  });
}

template <typename T>
T int_pow_ref(T a, T b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b % 2 == 0) ? 1 : -1;
    return 0;  // 1 / a^|b| truncated toward zero (and 0 for a == 0)
  }
  using U = std::make_unsigned_t<T>;
  U r = 1;
  for (T i = 0; i < b; ++i) r = r * static_cast<U>(a);
  return static_cast<T>(r);
}

template <typename T>
void check_int_pow() {
  std::vector<T> a, b;
  for (T x : {T(0), T(1), T(-1), T(2), T(-2), T(3), T(-3), T(10), T(-7), T(1000)})
    for (T y : {T(0), T(1), T(2), T(3), T(7), T(31), T(40), T(63), T(-1), T(-2), T(-3)}) {
      a.push_back(x);
      b.push_back(y);
    }
  std::vector<T> want;
  for (size_t i = 0; i < a.size(); ++i) want.push_back(int_pow_ref(a[i], b[i]));
  EXPECT_TRUE(wt::exact<T>("pow", wok::pow(wt::tensor(a), wt::tensor(b)), want,
                           [&](size_t i) { return "a=" + wt::fmt(a[i]) + ", b=" + wt::fmt(b[i]); }));
}

TEST(PowOp, IntegerPow) {
  wt::for_each_backend([&] {
    check_int_pow<int32_t>();
    check_int_pow<int64_t>();
    // bool ** bool computes in int32.
    EXPECT_TRUE(wt::exact<int32_t>("pow",
                                   wok::pow(wt::tensor(std::vector<bool>{false, false, true, true}),
                                            wt::tensor(std::vector<bool>{false, true, false, true})),
                                   {1, 0, 1, 1}));
    // Scalar exponents keep the integer dtype.
    EXPECT_TRUE(wt::exact<int32_t>("pow", wok::pow(wt::tensor(std::vector<int32_t>{3, -2}), 3), {27, -8}));
    EXPECT_TRUE(wt::exact<int64_t>("pow", wok::pow(wt::tensor(std::vector<int64_t>{2, 5}), -1), {0, 0}));
  });
}

// ---- where / clamp ---------------------------------------------------------------------------------

template <typename T>
void check_where() {
  std::vector<bool> cond = wt::random_values<bool>(300, 0, 1, 31);
  Pairs<T> p = binary_inputs<T>(-50, 50, 40);
  p.a.resize(cond.size());
  p.b.resize(cond.size());
  std::vector<T> want;
  for (size_t i = 0; i < cond.size(); ++i) want.push_back(cond[i] ? p.a[i] : p.b[i]);
  EXPECT_TRUE(wt::exact<T>("where " + wt::dname(wok::dtype_of<T>()),
                           wok::where(wt::tensor(cond), wt::tensor(p.a), wt::tensor(p.b)), want, p.describe()));
}

TEST(WhereOp, EveryDType) {
  wt::for_each_backend([&] {
    check_where<bool>();
    check_where<int32_t>();
    check_where<int64_t>();
    check_where<float>();
    check_where<double>();
    // A nan or inf in the branch not taken does not leak.
    Tensor c = wt::tensor(std::vector<bool>{true, false});
    EXPECT_TRUE(wt::exact<float>(
        "where", wok::where(c, wt::tensor(std::vector<float>{1, NAN}), wt::tensor(std::vector<float>{INFINITY, 2})),
        {1, 2}));
    // A non-bool condition is read as a truth value.
    EXPECT_TRUE(wt::exact<int32_t>(
        "where",
        wok::where(wt::tensor(std::vector<float>{0.0f, 2.0f, NAN}), wt::tensor(std::vector<int32_t>{1, 1, 1}), 0),
        {0, 1, 1}));
    // Scalar branches.
    EXPECT_TRUE(wt::exact<float>("where", wok::where(c, 5.0f, wt::tensor(std::vector<float>{7, 8})), {5, 8}));
    EXPECT_TRUE(wt::exact<double>("where", wok::where(c, wt::tensor(std::vector<double>{7, 8}), -1.5), {7, -1.5}));
  });
}

template <typename T>
void check_clamp() {
  std::vector<T> x;
  if constexpr (std::is_floating_point_v<T>)
    x = wt::concat_vec(wt::random_values<T>(256, -10, 10, 51), wt::special_values<T>());
  else
    x = wt::concat_vec(wt::random_values<T>(256, -10, 10, 51), wt::integer_edges<T>());
  Tensor t = wt::tensor(x);
  auto describe = [&](size_t i) { return "x=" + wt::fmt(x[i]); };
  std::string dt = wt::dname(wok::dtype_of<T>());
  for (auto [lo, hi] : {std::pair<std::optional<double>, std::optional<double>>{-3.0, 4.0},
                        {std::nullopt, 2.0},
                        {-1.0, std::nullopt},
                        {5.0, 5.0},
                        {std::nullopt, std::nullopt}}) {
    std::vector<T> want;
    for (T v : x) {
      T r = v;
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(v)) {
          want.push_back(v);
          continue;
        }
      }
      if (lo && r < static_cast<T>(*lo)) r = static_cast<T>(*lo);
      if (hi && r > static_cast<T>(*hi)) r = static_cast<T>(*hi);
      want.push_back(r);
    }
    EXPECT_TRUE(wt::exact<T>(
        "clamp " + dt + " [" + (lo ? std::to_string(*lo) : "none") + ", " + (hi ? std::to_string(*hi) : "none") + "]",
        wok::clamp(t, lo, hi), want, describe, false));
  }
}

TEST(ClampOp, EveryDType) {
  wt::for_each_backend([&] {
    check_clamp<int32_t>();
    check_clamp<int64_t>();
    check_clamp<float>();
    check_clamp<double>();
    EXPECT_THROW(wok::clamp(wt::tensor(std::vector<bool>{true}), 0.0, 1.0), wok::DTypeError);
    // Bounds past an integer type's range saturate instead of wrapping.
    EXPECT_TRUE(wt::exact<int32_t>("clamp", wok::clamp(wt::tensor(std::vector<int32_t>{-5, 5}), -1e20, 1e20), {-5, 5}));
    // lo > hi gives hi, as in NumPy's clip.
    EXPECT_TRUE(wt::exact<float>("clamp", wok::clamp(wt::tensor(std::vector<float>{0, 10}), 5.0, 1.0), {1, 1}));
  });
}

// ---- dtype rules of the ops -------------------------------------------------------------------

TEST(ElementwiseDTypes, BoolRejectedWhereUndefined) {
  Tensor b = wt::tensor(std::vector<bool>{true, false});
  for (auto fn : {wok::neg, wok::abs, wok::relu, wok::floor, wok::ceil, wok::round})
    EXPECT_THROW(fn(b), wok::DTypeError);
  EXPECT_THROW(wok::sub(b, b), wok::DTypeError);
  EXPECT_EQ(wok::square(b).dtype(), DType::kInt32);
  EXPECT_EQ(wok::maximum(b, b).dtype(), DType::kBool);
  EXPECT_EQ(wok::pow(b, b).dtype(), DType::kInt32);
  EXPECT_EQ(wok::sqrt(b).dtype(), DType::kFloat32);
  EXPECT_EQ(wok::reciprocal(b).dtype(), DType::kFloat32);
  EXPECT_EQ((b / b).dtype(), DType::kFloat32);
}

TEST(ElementwiseShapes, EmptyAndZeroDim) {
  wt::for_each_backend([&] {
    Tensor e = wok::zeros({0, 3});
    Tensor y = wok::exp(e) + 1.0f;
    EXPECT_EQ(y.shape(), (wok::Shape{0, 3}));
    EXPECT_TRUE(y.to_vector<float>().empty());
    Tensor s = wok::scalar_tensor(2.0);
    Tensor z = wok::sqrt(s) * s;
    EXPECT_EQ(z.shape(), wok::Shape{});
    EXPECT_DOUBLE_EQ(z.item<double>(), 2.0 * std::sqrt(2.0));
  });
}

// A large input crosses the thread pool's grain: every chunk must be right.
TEST(ElementwiseShapes, LargeInputSplitAcrossThreads) {
  wt::for_each_backend([&] {
    const int64_t n = (1 << 18) + 7;
    Tensor x = wok::rand({n}, 1, DType::kFloat32);
    std::vector<float> xv = x.to_vector<float>();
    std::vector<float> got = (wok::exp(x) * 2.0f - x).to_vector<float>();
    ASSERT_EQ(got.size(), xv.size());
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; ++i) {
      LD want = std::exp(static_cast<LD>(xv[i]));
      float e = got[i] - (static_cast<float>(want) * 2.0f - xv[i]);
      if (std::fabs(e) > 4e-7f * 3) {
        ++bad;
        ADD_FAILURE() << "index " << i << " x=" << xv[i] << " got=" << got[i];
      }
    }
  });
}

}  // namespace
