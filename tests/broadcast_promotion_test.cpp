// NumPy broadcasting and dtype promotion at the frontend: result shapes and
// values, errors that name the op and both shapes, the promotion lattice
// and weakly typed plain numbers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

// out[i] = a[bcast(i)] + b[bcast(i)], computed by index arithmetic.
std::vector<double> broadcast_add_ref(const std::vector<double>& a, const Shape& sa, const std::vector<double>& b,
                                      const Shape& sb, const Shape& out) {
  std::vector<double> r(static_cast<size_t>(wok::numel(out)));
  const size_t nd = out.size();
  for (size_t flat = 0; flat < r.size(); ++flat) {
    std::vector<int64_t> idx(nd);
    size_t rem = flat;
    for (size_t d = nd; d-- > 0;) {
      idx[d] = static_cast<int64_t>(rem % out[d]);
      rem /= out[d];
    }
    auto offset = [&](const Shape& s) {
      int64_t off = 0;
      for (size_t d = 0; d < s.size(); ++d) {
        int64_t i = idx[nd - s.size() + d];
        off = off * s[d] + (s[d] == 1 ? 0 : i);
      }
      return static_cast<size_t>(off);
    };
    r[flat] = a[offset(sa)] + b[offset(sb)];
  }
  return r;
}

std::vector<double> iota(int64_t n, double start) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<double>(i);
  return v;
}

TEST(Broadcasting, ShapesAndValues) {
  struct Case {
    Shape a, b, out;
  };
  const Case cases[] = {
      {{2, 3}, {3}, {2, 3}},
      {{2, 1}, {1, 3}, {2, 3}},
      {{4, 1, 3}, {2, 1}, {4, 2, 3}},
      {{}, {2, 3}, {2, 3}},
      {{2, 3}, {}, {2, 3}},
      {{}, {}, {}},
      {{1}, {}, {1}},
      {{1, 1, 1}, {5}, {1, 1, 5}},
      {{3, 1, 5, 1}, {1, 4, 1, 2}, {3, 4, 5, 2}},
      {{0, 3}, {3}, {0, 3}},
      {{0}, {1}, {0}},
      {{2, 0}, {2, 1}, {2, 0}},
      {{1, 0, 2}, {3, 1, 1}, {3, 0, 2}},
      {{0}, {}, {0}},
      {{6}, {6}, {6}},
      {{2, 1, 1, 1, 1}, {1, 1, 1, 1, 3}, {2, 1, 1, 1, 3}},
  };
  for (const Case& c : cases)
    wt::for_each_backend([&] {
      SCOPED_TRACE(wok::shape_str(c.a) + " + " + wok::shape_str(c.b));
      std::vector<double> va = iota(wok::numel(c.a), 1), vb = iota(wok::numel(c.b), 100);
      Tensor a = wok::from_vector(va, c.a), b = wok::from_vector(vb, c.b);
      for (bool swap : {false, true}) {
        Tensor y = swap ? b + a : a + b;
        ASSERT_EQ(y.shape(), c.out);
        std::vector<double> want =
            swap ? broadcast_add_ref(vb, c.b, va, c.a, c.out) : broadcast_add_ref(va, c.a, vb, c.b, c.out);
        EXPECT_TRUE(wt::exact<double>("add", y, want));
      }
    });
}

// Chains of broadcasting ops with dtype changes inside: what the JIT fuses
// into one kernel must equal the per-op precompiled result and a scalar
// reference.
TEST(Broadcasting, FusedChainsWithMixedDTypes) {
  std::vector<float> xv = wt::random_values<float>(4 * 5, -3, 3, 1);
  std::vector<double> yv = wt::random_values<double>(5, -2, 2, 2);
  std::vector<int32_t> iv = wt::random_values<int32_t>(4, -5, 5, 3);
  std::vector<bool> cv = wt::random_values<bool>(4 * 5, 0, 1, 4);
  // y: [5] float64; i: [4, 1] int32; c: [4, 5] bool; x: [4, 5] float32.
  std::vector<double> want(20);
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 5; ++k) {
      double x = xv[r * 5 + k], y = yv[k];
      double i = iv[r];
      double t = x > 0 ? std::exp(x) * y : -y;          // float64 (x promoted)
      double u = t + i / 2.0;                           // int32 / int -> float64
      double v = cv[r * 5 + k] ? u : std::max(u, 0.0);  // where over maximum
      want[r * 5 + k] = v * static_cast<float>(0.5f);
    }
  std::vector<std::vector<double>> results;
  wt::for_each_backend([&] {
    Tensor x = wok::from_vector(xv, {4, 5});
    Tensor y = wok::from_vector(yv, {5});
    Tensor i = wok::from_vector(iv, {4, 1});
    Tensor c = wok::from_vector(cv, {4, 5});
    Tensor t = wok::where(x > 0, wok::exp(x) * y, -y);
    Tensor u = t + i / 2;
    Tensor v = wok::where(c, u, wok::maximum(u, 0.0)) * 0.5f;
    ASSERT_EQ(v.dtype(), DType::kFloat64);
    ASSERT_EQ(v.shape(), (Shape{4, 5}));
    // exp in float32 vs double: compare with a float32-sized tolerance.
    EXPECT_TRUE(wt::close<double>("chain", v, want, 1e-6, 1e-6));
    // Without transcendentals the two backends agree bitwise (Note [One
    // formula per op]).
    Tensor w = wok::minimum((x * y - i) / 3.0f + wok::maximum(x, -y), wok::where(c, y, i)) - 1;
    results.push_back(w.to_vector<double>());
  });
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], results[1]) << "JIT and precompiled kernels disagree bitwise on - * / + maximum minimum where";
  std::vector<double> want_w(20);
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 5; ++k) {
      double x = xv[r * 5 + k], y = yv[k], i = iv[r];
      want_w[r * 5 + k] = std::min((x * y - i) / 3.0 + std::max(x, -y), cv[r * 5 + k] ? y : i) - 1;
    }
  EXPECT_EQ(results[1], want_w);
}

TEST(Broadcasting, ScalarsAndZeroDimOnBothSides) {
  Tensor s = wok::scalar_tensor(3.0f);
  Tensor m = wok::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  EXPECT_TRUE(wt::exact<float>("sub", s - m, {2, 1, 0, -1}));
  EXPECT_TRUE(wt::exact<float>("sub", m - s, {-2, -1, 0, 1}));
  EXPECT_TRUE(wt::exact<float>("sub", 10.0f - m, {9, 8, 7, 6}));
  Tensor z = s * s;
  EXPECT_EQ(z.shape(), Shape{});
  EXPECT_EQ(z.item<float>(), 9.0f);
  // where broadcasts all three operands.
  Tensor cond = wok::from_vector(std::vector<bool>{true, false}, {2, 1});
  Tensor y = wok::where(cond, wok::from_vector(std::vector<float>{1, 2, 3}, {3}), s);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_TRUE(wt::exact<float>("where", y, {1, 2, 3, 3, 3, 3}));
}

// Every op family reports a broadcast failure as a ShapeError naming the op
// and the shapes, at the call (before anything runs).
TEST(Broadcasting, IncompatibleShapesNameOpAndShapes) {
  Tensor a = wok::zeros({2, 3});
  Tensor b = wok::zeros({4});
  using BinFn = Tensor (*)(const Tensor&, const Tensor&);
  const std::pair<const char*, BinFn> ops[] = {
      {"add", wok::add}, {"sub", wok::sub}, {"mul", wok::mul},
      {"div", wok::div}, {"pow", wok::pow}, {"maximum", wok::maximum},
      {"eq", wok::eq},   {"lt", wok::lt},   {"logical_and", wok::logical_and},
  };
  for (auto [name, fn] : ops) {
    try {
      fn(a, b);
      ADD_FAILURE() << name << " of [2, 3] and [4] did not throw";
    } catch (const wok::ShapeError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(std::string("wok::") + name), std::string::npos) << msg;
      EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
      EXPECT_NE(msg.find("[4]"), std::string::npos) << msg;
    }
  }
  const std::pair<Shape, Shape> bad[] = {
      {{3, 2}, {2, 3}}, {{0}, {2}}, {{2, 0}, {2, 3}}, {{5, 4, 3}, {4, 2}}, {{1, 2}, {3, 1, 3}}};
  for (const auto& [sa, sb] : bad) {
    try {
      wok::zeros(sa) * wok::ones(sb);
      ADD_FAILURE() << wok::shape_str(sa) << " * " << wok::shape_str(sb) << " did not throw";
    } catch (const wok::ShapeError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("wok::mul"), std::string::npos) << msg;
      EXPECT_NE(msg.find(wok::shape_str(sa)), std::string::npos) << msg;
      EXPECT_NE(msg.find(wok::shape_str(sb)), std::string::npos) << msg;
    }
  }
  try {
    wok::where(wok::zeros({2}, DType::kBool), wok::zeros({3}), wok::zeros({2}));
    ADD_FAILURE() << "where of [2], [3], [2] did not throw";
  } catch (const wok::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("wok::where"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[3]"), std::string::npos) << e.what();
  }
  // Scalars mixed in do not hide the tensor shapes.
  EXPECT_THROW(wok::zeros({2, 3}) + 1.0f + wok::zeros({3, 2}), wok::ShapeError);
}

// ---- promotion -----------------------------------------------------------------------------

TEST(Promotion, LatticeBetweenTensors) {
  const DType B = DType::kBool, I = DType::kInt32, L = DType::kInt64, F = DType::kFloat32, D = DType::kFloat64;
  const DType all[] = {B, I, L, F, D};
  // NumPy's table, with int32/int64 meeting float32 giving float64.
  const DType want[5][5] = {
      {B, I, L, F, D}, {I, I, L, D, D}, {L, L, L, D, D}, {F, D, D, F, D}, {D, D, D, D, D},
  };
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      SCOPED_TRACE(wt::dname(all[i]) + " with " + wt::dname(all[j]));
      EXPECT_EQ(wok::promote_types(all[i], all[j]), want[i][j]);
      Tensor a = wok::ones({2}, all[i]), b = wok::ones({2}, all[j]);
      EXPECT_EQ(wok::maximum(a, b).dtype(), want[i][j]);
      DType arith = want[i][j] == B ? I : want[i][j];
      EXPECT_EQ((a + b).dtype(), arith);
      EXPECT_EQ((a * b).dtype(), arith);
      EXPECT_EQ(wok::pow(a, b).dtype(), arith);
      EXPECT_EQ((a / b).dtype(), wok::float_result_type(want[i][j]));
      EXPECT_EQ((a < b).dtype(), B);
      EXPECT_EQ((a == b).dtype(), B);
      EXPECT_EQ(wok::logical_or(a, b).dtype(), B);
      if (want[i][j] != B) {
        EXPECT_EQ((a - b).dtype(), arith);
      }
    }
}

TEST(Promotion, ValuesComputedInThePromotedType) {
  // 2^24 + 1 is not a float32: int32 with float32 must compute in float64.
  Tensor i = wt::tensor(std::vector<int32_t>{16777217, 7});
  Tensor f = wt::tensor(std::vector<float>{0.0f, 0.5f});
  EXPECT_TRUE(wt::exact<double>("add", i + f, {16777217.0, 7.5}));
  EXPECT_TRUE(wt::exact<bool>("gt", i > wt::tensor(std::vector<float>{16777216.0f, 7.0f}), {true, false}));
  // int64 with float64 converts the integer once.
  Tensor l = wt::tensor(std::vector<int64_t>{(int64_t{1} << 53) + 1});
  EXPECT_TRUE(wt::exact<double>("add", l + wt::tensor(std::vector<double>{0.0}),
                                {static_cast<double>((int64_t{1} << 53) + 1)}));
  // int32 with int64 does not wrap at 32 bits.
  EXPECT_TRUE(wt::exact<int64_t>(
      "add", wt::tensor(std::vector<int32_t>{2147483647}) + wt::tensor(std::vector<int64_t>{1}), {2147483648LL}));
  // bool with int: true is 1.
  EXPECT_TRUE(wt::exact<int32_t>(
      "add", wt::tensor(std::vector<bool>{true, false}) + wt::tensor(std::vector<int32_t>{5, 5}), {6, 5}));
}

TEST(Promotion, TrueDivisionAndFloatOpsOfIntegers) {
  Tensor a = wt::tensor(std::vector<int32_t>{7, -7, 1});
  Tensor b = wt::tensor(std::vector<int32_t>{2, 2, 3});
  EXPECT_TRUE(wt::exact<double>("div", a / b, {3.5, -3.5, 1.0 / 3.0}));
  EXPECT_EQ((wt::tensor(std::vector<int64_t>{1}) / 2).dtype(), DType::kFloat64);
  EXPECT_EQ((wt::tensor(std::vector<bool>{true}) / wt::tensor(std::vector<bool>{true})).dtype(), DType::kFloat32);
  EXPECT_EQ(wok::exp(wt::tensor(std::vector<int32_t>{1})).dtype(), DType::kFloat64);
  EXPECT_EQ(wok::exp(wt::tensor(std::vector<int64_t>{1})).dtype(), DType::kFloat64);
  EXPECT_EQ(wok::exp(wt::tensor(std::vector<bool>{true})).dtype(), DType::kFloat32);
  EXPECT_EQ(wok::sin(wt::tensor(std::vector<bool>{true})).dtype(), DType::kFloat32);
  EXPECT_EQ(wok::exp(wt::tensor(std::vector<float>{1})).dtype(), DType::kFloat32);
  EXPECT_EQ(wok::sigmoid(wt::tensor(std::vector<int32_t>{1})).dtype(), DType::kFloat64);
  EXPECT_EQ(wok::neg(wt::tensor(std::vector<int32_t>{1})).dtype(), DType::kInt32);
  EXPECT_EQ(wok::floor(wt::tensor(std::vector<int64_t>{1})).dtype(), DType::kInt64);
  EXPECT_EQ(wok::square(wt::tensor(std::vector<int32_t>{1})).dtype(), DType::kInt32);
  EXPECT_EQ(wok::logical_not(wt::tensor(std::vector<float>{1})).dtype(), DType::kBool);
  EXPECT_DOUBLE_EQ(wok::exp(wt::tensor(std::vector<int32_t>{1})).item<double>(), std::exp(1.0));
}

// Plain C++ numbers are weakly typed: they take the tensor's dtype unless
// they are of a higher category (bool < integer < floating).
TEST(Promotion, WeakScalars) {
  Tensor f32 = wt::tensor(std::vector<float>{1.5f, 2.0f});
  Tensor f64 = wt::tensor(std::vector<double>{1.5, 2.0});
  Tensor i32 = wt::tensor(std::vector<int32_t>{1, 2});
  Tensor i64 = wt::tensor(std::vector<int64_t>{1, 2});
  Tensor b = wt::tensor(std::vector<bool>{true, false});

  EXPECT_EQ((f32 * 2.0).dtype(), DType::kFloat32);
  EXPECT_EQ((2.0 * f32).dtype(), DType::kFloat32);
  EXPECT_EQ((f32 + 1).dtype(), DType::kFloat32);
  EXPECT_EQ((f32 + int64_t{1}).dtype(), DType::kFloat32);
  EXPECT_EQ((f32 + true).dtype(), DType::kFloat32);
  EXPECT_EQ((f64 * 2.0f).dtype(), DType::kFloat64);
  EXPECT_EQ((i32 * 2).dtype(), DType::kInt32);
  EXPECT_EQ((i32 * int64_t{2}).dtype(), DType::kInt32);
  EXPECT_EQ((i64 * 2).dtype(), DType::kInt64);
  EXPECT_EQ((i32 + true).dtype(), DType::kInt32);
  EXPECT_EQ((i32 * 2.5).dtype(), DType::kFloat64);
  EXPECT_EQ((2.5 - i32).dtype(), DType::kFloat64);
  EXPECT_EQ((i64 * 2.5).dtype(), DType::kFloat64);
  EXPECT_EQ((b + 1).dtype(), DType::kInt32);
  EXPECT_EQ((b + int64_t{1}).dtype(), DType::kInt64);
  EXPECT_EQ((b * 2.5f).dtype(), DType::kFloat32);
  EXPECT_EQ((b * 2.5).dtype(), DType::kFloat64);

  // The number's own type wins when its category is higher (ops.h: "an int32
  // tensor times 2.5f becomes float32").
  EXPECT_EQ((i32 * 2.5f).dtype(), DType::kFloat32) << "int32 tensor * 2.5f";
  EXPECT_EQ((2.5f + i64).dtype(), DType::kFloat32) << "2.5f + int64 tensor";

  // Values.
  EXPECT_TRUE(wt::exact<float>("mul", f32 * 2.0, {3.0f, 4.0f}));
  EXPECT_TRUE(wt::exact<double>("mul", i32 * 2.5, {2.5, 5.0}));
  EXPECT_TRUE(wt::exact<int32_t>("add", b + 1, {2, 1}));
  EXPECT_TRUE(wt::exact<int32_t>("sub", 10 - i32, {9, 8}));
  // A float32 tensor compared with 0.1 compares against 0.1f, as in NumPy 2.
  EXPECT_TRUE(wt::exact<bool>("eq", wt::tensor(std::vector<float>{0.1f}) == 0.1, {true}));
  // An integer tensor compared with 2.5 does not truncate the number.
  EXPECT_TRUE(wt::exact<bool>("lt", i32 < 2.5, {true, true}));
  EXPECT_TRUE(wt::exact<bool>("gt", wt::tensor(std::vector<int32_t>{2, 3}) > 2.5, {false, true}));
  EXPECT_TRUE(wt::exact<bool>("eq", i32 == 2.0, {false, true}));
}

TEST(Promotion, WhereWithMixedDTypes) {
  Tensor c = wt::tensor(std::vector<bool>{true, false});
  Tensor i32 = wt::tensor(std::vector<int32_t>{1, 2});
  Tensor f32 = wt::tensor(std::vector<float>{0.5f, 0.25f});
  Tensor i64 = wt::tensor(std::vector<int64_t>{10, 20});
  Tensor b = wt::tensor(std::vector<bool>{true, true});
  EXPECT_TRUE(wt::exact<double>("where", wok::where(c, i32, f32), {1.0, 0.25}));
  EXPECT_TRUE(wt::exact<int64_t>("where", wok::where(c, b, i64), {1, 20}));
  EXPECT_TRUE(wt::exact<float>("where", wok::where(c, f32, 2.0), {0.5f, 2.0f}));
  EXPECT_TRUE(wt::exact<double>("where", wok::where(c, i32, 2.5), {1.0, 2.5}));
  EXPECT_TRUE(wt::exact<int32_t>("where", wok::where(c, 7, i32), {7, 2}));
  EXPECT_EQ(wok::where(c, f32, wt::tensor(std::vector<double>{1, 2})).dtype(), DType::kFloat64);
}

TEST(Promotion, ErrorsHappenAtTheCall) {
  // A bool-only failure (sub of bools) is a DTypeError naming the op and dtypes.
  try {
    wt::tensor(std::vector<bool>{true}) - wt::tensor(std::vector<bool>{false});
    ADD_FAILURE() << "bool - bool did not throw";
  } catch (const wok::DTypeError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("wok::sub"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bool"), std::string::npos) << msg;
  }
  // An undefined tensor is an error, not a crash.
  EXPECT_THROW(wok::Tensor() + wok::ones({1}), wok::Error);
  EXPECT_THROW(wok::ones({1}) * wok::Tensor(), wok::Error);
  EXPECT_THROW(wok::exp(wok::Tensor()), wok::Error);
}

}  // namespace
