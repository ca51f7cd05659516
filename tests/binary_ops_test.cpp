// The binary ops against exact references for every dtype: + - * with
// wrapping, true division, maximum/minimum with nan, comparisons, logical
// ops; and the ternary where and clamp.
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
using wt::Pairs;
using wt::binary_inputs;

// ---- binary ops ---------------------------------------------------------------------------

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

}  // namespace
