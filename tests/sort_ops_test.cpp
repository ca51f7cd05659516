// topk, sort, argsort (frontend/scans.h) and argmax / argmin with
// select_last_index (frontend/ops.h): ONNX's examples, ties, nan, and
// random inputs against std::stable_sort, on both CPU backends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

class SortOps : public wt::BothBackends {};
INSTANTIATE_TEST_SUITE_P(Backends, SortOps, wt::kBothBackends, wt::backend_param_name);

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

template <typename T>
Tensor t(const std::vector<T>& v, Shape shape) {
  return wok::from_vector(v, std::move(shape));
}

TEST_P(SortOps, TopkMatchesOnnxExamples) {
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i);
  auto [v, i] = wok::topk(t(x, {3, 4}), 3);
  EXPECT_EQ(v.shape(), (Shape{3, 3}));
  EXPECT_TRUE(wt::exact<float>("topk", v, {3, 2, 1, 7, 6, 5, 11, 10, 9}));
  EXPECT_TRUE(wt::exact<int64_t>("topk", i, {3, 2, 1, 3, 2, 1, 3, 2, 1}));
  // Smallest, along a negative axis.
  Tensor y = t<float>({0, 1, 2, 3, 4, 5, 6, 7, 11, 10, 9, 8}, {3, 4});
  auto s = wok::topk(y, 3, -1, /*largest=*/false);
  EXPECT_TRUE(wt::exact<float>("topk smallest", s.values, {0, 1, 2, 4, 5, 6, 8, 9, 10}));
  EXPECT_TRUE(wt::exact<int64_t>("topk smallest", s.indices, {0, 1, 2, 0, 1, 2, 3, 2, 1}));
  // Along axis 0.
  auto c = wok::topk(y, 2, 0);
  EXPECT_TRUE(wt::exact<float>("topk axis 0", c.values, {11, 10, 9, 8, 4, 5, 6, 7}));
  EXPECT_TRUE(wt::exact<int64_t>("topk axis 0", c.indices, {2, 2, 2, 2, 1, 1, 1, 1}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::topk(y, 5); }, {"wok::topk", "k = 5"}));
}

TEST_P(SortOps, TiesGoToTheLowerIndexAndNanIsTheLargest) {
  auto a = wok::topk(t<int32_t>({1, 3, 3, 2, 3}, {5}), 2);
  EXPECT_TRUE(wt::exact<int32_t>("topk ties", a.values, {3, 3}));
  EXPECT_TRUE(wt::exact<int64_t>("topk ties", a.indices, {1, 2}));
  auto b = wok::topk(t<int64_t>({2, 1, 2, 1}, {4}), 2, 0, false);
  EXPECT_TRUE(wt::exact<int64_t>("topk smallest ties", b.indices, {1, 3}));
  Tensor n = t<float>({1, kNan, 3, kNan, -0.0f, 0.0f}, {6});
  auto c = wok::topk(n, 4);
  EXPECT_TRUE(wt::exact<float>("topk nan", c.values, {kNan, kNan, 3, 1}));
  EXPECT_TRUE(wt::exact<int64_t>("topk nan", c.indices, {1, 3, 2, 0}));
  auto d = wok::topk(n, 3, 0, false);
  EXPECT_TRUE(wt::exact<float>("topk smallest nan", d.values, {-0.0f, 0.0f, 1}));
  EXPECT_TRUE(wt::exact<int64_t>("topk smallest nan", d.indices, {4, 5, 0}));
  auto s = wok::sort(n);
  EXPECT_TRUE(wt::exact<float>("sort nan", s.values, {-0.0f, 0.0f, 1, 3, kNan, kNan}));
  EXPECT_TRUE(wt::exact<int64_t>("sort nan", s.indices, {4, 5, 0, 2, 1, 3}));
  auto sd = wok::sort(n, 0, true);
  EXPECT_TRUE(wt::exact<float>("sort descending nan", sd.values, {kNan, kNan, 3, 1, -0.0f, 0.0f}));
  EXPECT_TRUE(wt::exact<int64_t>("sort descending nan", sd.indices, {1, 3, 2, 0, 4, 5}));
  // bool sorts false before true; stable.
  EXPECT_TRUE(wt::exact<int64_t>("argsort bool", wok::argsort(t<bool>({true, false, true, false}, {4})), {1, 3, 0, 2}));
  // k = 0 and 0-d.
  EXPECT_EQ(wok::topk(n, 0).values.shape(), (Shape{0}));
  EXPECT_EQ(wok::sort(wok::scalar_tensor(2.0f)).indices.item<int64_t>(), 0);
}

// Random lines with many ties against std::stable_sort.
template <typename T>
void check_random(const Shape& s, int64_t axis, int64_t k, bool largest, uint32_t seed) {
  const std::vector<T> x = wt::random_values<T>(static_cast<size_t>(wok::numel(s)), -4, 4, seed);
  int64_t A = 1, B = 1;
  for (int64_t d = 0; d < axis; ++d) A *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d) B *= s[d];
  const int64_t n = s[axis];
  Shape os = s;
  os[axis] = k;
  std::vector<T> want_v(static_cast<size_t>(wok::numel(os)));
  std::vector<int64_t> want_i(want_v.size());
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b) {
      std::vector<int64_t> order(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) order[i] = i;
      auto at = [&](int64_t i) { return x[static_cast<size_t>((a * n + i) * B + b)]; };
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t p, int64_t q) { return largest ? at(p) > at(q) : at(p) < at(q); });
      for (int64_t j = 0; j < k; ++j) {
        const size_t o = static_cast<size_t>((a * k + j) * B + b);
        want_v[o] = at(order[j]);
        want_i[o] = order[j];
      }
    }
  const std::string what = wok::shape_str(s) + " axis " + std::to_string(axis) + " k " + std::to_string(k);
  auto r = wok::topk(t(x, s), k, axis, largest);
  EXPECT_TRUE(wt::exact<T>("topk " + what, r.values, want_v));
  EXPECT_TRUE(wt::exact<int64_t>("topk " + what, r.indices, want_i));
  if (k == n) {
    auto q = wok::sort(t(x, s), axis, largest);
    EXPECT_TRUE(wt::exact<T>("sort " + what, q.values, want_v));
    EXPECT_TRUE(wt::exact<int64_t>("argsort " + what, wok::argsort(t(x, s), axis, largest), want_i));
  }
}

TEST_P(SortOps, MatchStableSortOnRandomInputs) {
  for (bool largest : {true, false}) {
    check_random<float>({4, 50, 3}, 1, 7, largest, 1);
    check_random<float>({4, 50, 3}, 1, 50, largest, 2);
    check_random<double>({300, 40}, 1, 40, largest, 3);  // lines split across threads
    check_random<int32_t>({30, 6}, 0, 30, largest, 4);
    check_random<int64_t>({5, 6, 7}, 2, 1, largest, 5);
  }
}

// ---- argmax / argmin ----------------------------------------------------------------------

TEST_P(SortOps, ArgmaxAndArgminWithSelectLastIndex) {
  Tensor x = t<float>({1, 3, 3, 0, 0, 2, 2, 2, 2, 2}, {2, 5});
  EXPECT_TRUE(wt::exact<int64_t>("argmax", wok::argmax(x, {1}), {1, 0}));
  EXPECT_TRUE(wt::exact<int64_t>("argmax last", wok::argmax(x, {1}, false, true), {2, 4}));
  EXPECT_TRUE(wt::exact<int64_t>("argmin", wok::argmin(x, {1}), {3, 0}));
  EXPECT_TRUE(wt::exact<int64_t>("argmin last", wok::argmin(x, {-1}, false, true), {4, 4}));
  Tensor k = wok::argmin(x, {1}, true, true);
  EXPECT_EQ(k.shape(), (Shape{2, 1}));
  EXPECT_TRUE(wt::exact<int64_t>("argmin axis 0 last", wok::argmin(x, {0}, false, true), {0, 1, 1, 0, 0}));
  // Over every axis: the row-major index of the whole tensor.
  EXPECT_EQ(wok::argmax(x, {}, false, true).item<int64_t>(), 2);
  EXPECT_EQ(wok::argmin(x).item<int64_t>(), 3);
  EXPECT_EQ(wok::argmin(x, {}, false, true).item<int64_t>(), 4);
  // nan counts as the maximum for argmax and as the minimum for argmin.
  Tensor n = t<float>({1, kNan, -5, kNan}, {4});
  EXPECT_EQ(wok::argmax(n).item<int64_t>(), 1);
  EXPECT_EQ(wok::argmax(n, {}, false, true).item<int64_t>(), 3);
  EXPECT_EQ(wok::argmin(n).item<int64_t>(), 1);
  EXPECT_EQ(wok::argmin(n, {}, false, true).item<int64_t>(), 3);
  // Integer extremes (no overflow in the order reversal) and bool.
  const int32_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  Tensor i = t<int32_t>({hi, lo, 0, lo, hi}, {5});
  EXPECT_EQ(wok::argmin(i).item<int64_t>(), 1);
  EXPECT_EQ(wok::argmin(i, {}, false, true).item<int64_t>(), 3);
  EXPECT_EQ(wok::argmax(i, {}, false, true).item<int64_t>(), 4);
  const int64_t lo64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(wok::argmin(t<int64_t>({0, lo64, 7}, {3})).item<int64_t>(), 1);
  Tensor b = t<bool>({true, false, true, false}, {4});
  EXPECT_EQ(wok::argmin(b).item<int64_t>(), 1);
  EXPECT_EQ(wok::argmin(b, {}, false, true).item<int64_t>(), 3);
  EXPECT_EQ(wok::argmax(b, {}, false, true).item<int64_t>(), 2);
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::argmin(wok::zeros({2, 0}), {1}); },
                                                 {"wok::argmin", "axis 1 of size 0"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::argmin(x, {2}); }, {"wok::argmin", "axis 2"}));
  // The three-argument form is still a plain function (code takes its address).
  using Reduction = Tensor (*)(const Tensor&, std::vector<int64_t>, bool);
  Reduction f = wok::argmax, g = wok::argmin;
  EXPECT_EQ(f(x, {1}, false).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(g(x, {1}, false).to_vector<int64_t>(), (std::vector<int64_t>{3, 0}));
}

// Several reduced axes, many ties, computed inputs: against a loop over the
// reduced block in row-major order.
TEST_P(SortOps, ArgExtremesOverSeveralAxesMatchALoop) {
  const Shape s{3, 4, 5};
  const std::vector<float> x = wt::random_values<float>(60, -2, 2, 9);
  std::vector<float> xr(x.size());
  for (size_t i = 0; i < x.size(); ++i) xr[i] = std::round(x[i]);
  for (bool minimum : {false, true})
    for (bool last : {false, true}) {
      std::vector<int64_t> want;
      for (int64_t j = 0; j < 4; ++j) {  // kept axis 1; reduced block [3, 5] row-major
        int64_t best = -1;
        float bv = 0;
        for (int64_t a = 0; a < 3; ++a)
          for (int64_t c = 0; c < 5; ++c) {
            const float v = xr[static_cast<size_t>((a * 4 + j) * 5 + c)] * 2.0f;
            const bool better = best < 0 || (minimum ? (last ? v <= bv : v < bv) : (last ? v >= bv : v > bv));
            if (better) {
              best = a * 5 + c;
              bv = v;
            }
          }
        want.push_back(best);
      }
      Tensor y = wok::from_vector(xr, s) * 2.0f;
      Tensor r = minimum ? wok::argmin(y, {0, 2}, false, last) : wok::argmax(y, {2, 0}, false, last);
      EXPECT_TRUE(wt::exact<int64_t>(std::string(minimum ? "argmin" : "argmax") + (last ? " last" : ""), r, want));
    }
}

class SortOpsJit : public wt::JitLaunchCounts {};

// argmin is argmax of the negated input: one generated kernel with its producer.
TEST_F(SortOpsJit, ArgminFusesWithItsProducer) {
  Tensor x = t<float>({1, 5, -2, 4, 0, 9}, {2, 3});
  Tensor y = wok::argmin(x * 2.0f, {1});
  EXPECT_EQ(launches_of({y}), 1);
  EXPECT_TRUE(wt::exact<int64_t>("argmin", y, {2, 1}));
}

}  // namespace

namespace {

using I64 = std::vector<int64_t>;

// unique against hand-computed results: sorted and in order of first
// appearance, flattened and along an axis (negative too), nan, bool, and
// the errors. Host-computed, so one backend suffices.
TEST(UniqueOp, FlattenedSortedAndUnsorted) {
  const wok::Tensor x = wok::from_vector<float>({2, 1, 1, 3, 4, 3}, {2, 3});
  const wok::UniqueResult s = wok::unique(x);
  EXPECT_EQ(s.values.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(s.indices.to_vector<int64_t>(), (I64{1, 0, 3, 4}));
  EXPECT_EQ(s.inverse.to_vector<int64_t>(), (I64{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(s.counts.to_vector<int64_t>(), (I64{2, 1, 2, 1}));
  const wok::UniqueResult u = wok::unique(x, /*sorted=*/false);
  EXPECT_EQ(u.values.to_vector<float>(), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(u.indices.to_vector<int64_t>(), (I64{0, 1, 3, 4}));
  EXPECT_EQ(u.inverse.to_vector<int64_t>(), (I64{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(u.counts.to_vector<int64_t>(), (I64{1, 2, 2, 1}));
}

TEST(UniqueOp, SlicesAlongAnAxis) {
  // Columns of [[1, 0, 1], [2, 5, 2]]: (1, 2), (0, 5), (1, 2).
  const wok::Tensor x = wok::from_vector<int32_t>({1, 0, 1, 2, 5, 2}, {2, 3});
  const wok::UniqueResult r = wok::unique(x, true, -1);
  EXPECT_EQ(r.values.shape(), Shape({2, 2}));
  EXPECT_EQ(r.values.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 5, 2}));
  EXPECT_EQ(r.indices.to_vector<int64_t>(), (I64{1, 0}));
  EXPECT_EQ(r.inverse.to_vector<int64_t>(), (I64{1, 0, 1}));
  EXPECT_EQ(r.counts.to_vector<int64_t>(), (I64{1, 2}));
  const wok::UniqueResult rows = wok::unique(wok::from_vector<int64_t>({3, 4, 1, 2, 3, 4}, {3, 2}), false, 0);
  EXPECT_EQ(rows.values.to_vector<int64_t>(), (I64{3, 4, 1, 2}));
  EXPECT_EQ(rows.inverse.to_vector<int64_t>(), (I64{0, 1, 0}));
}

TEST(UniqueOp, NanIsOneValueAboveInfinityAndBoolWorks) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> v = wok::unique(wok::from_vector<float>({nan, 1, inf, nan})).values.to_vector<float>();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[1], inf);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(wok::unique(wok::from_vector<bool>({true, false, true})).counts.to_vector<int64_t>(), (I64{1, 2}));
  EXPECT_THROW(wok::unique(wok::zeros({2, 2}), true, 2), wok::ShapeError);
  EXPECT_EQ(wok::unique(wok::zeros({0})).values.numel(), 0);
}

}  // namespace

namespace {

// det against cofactor expansion in float64 (batched, pivoting needed,
// singular, 0x0 and 1x1, integers promoted), under both backends.
double cofactor_det(const std::vector<double>& a, int64_t n) {
  if (n == 0) return 1;
  if (n == 1) return a[0];
  double d = 0;
  for (int64_t j = 0; j < n; ++j) {
    std::vector<double> minor;
    for (int64_t r = 1; r < n; ++r)
      for (int64_t c = 0; c < n; ++c)
        if (c != j) minor.push_back(a[static_cast<size_t>(r * n + c)]);
    d += (j % 2 ? -1 : 1) * a[static_cast<size_t>(j)] * cofactor_det(minor, n - 1);
  }
  return d;
}

class DetOp : public wt::BothBackends {};

TEST_P(DetOp, MatchesCofactorExpansion) {
  for (int64_t n : {0, 1, 2, 3, 5}) {
    const int64_t batch = 3;
    std::vector<double> x = wt::random_values<double>(static_cast<size_t>(batch * n * n), -2, 2, static_cast<uint32_t>(n + 1));
    if (n >= 2) x[0] = 0;  // the first matrix needs a row exchange
    const std::vector<double> got = wok::det(wok::from_vector(x, {batch, n, n})).to_vector<double>();
    ASSERT_EQ(got.size(), static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) {
      const std::vector<double> m(x.begin() + b * n * n, x.begin() + (b + 1) * n * n);
      EXPECT_NEAR(got[static_cast<size_t>(b)], cofactor_det(m, n), 1e-12) << "n " << n << " matrix " << b;
    }
  }
  EXPECT_EQ(wok::det(wok::from_vector<float>({1, 2, 2, 4}, {2, 2})).item<float>(), 0.0f);  // singular
  const wok::Tensor ints = wok::det(wok::from_vector<int32_t>({2, 1, 1, 3}, {2, 2}));
  EXPECT_EQ(ints.dtype(), DType::kFloat64);
  EXPECT_DOUBLE_EQ(ints.item<double>(), 5.0);
  EXPECT_THROW(wok::det(wok::zeros({2, 3})), wok::ShapeError);
}

INSTANTIATE_TEST_SUITE_P(Backends, DetOp, wt::kBothBackends, wt::backend_param_name);

}  // namespace
