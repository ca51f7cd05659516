// The precompiled reduction kernels (sum, mean, max, min, prod, argmax)
// against references computed here with plain loops: exact for integers,
// max/min and argmax, long double for floating sums, means and products.
#include <gtest/gtest.h>

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
using LD = long double;

enum class Red { kSum, kMean, kMax, kMin, kProd, kArgmax };
constexpr Red kAllReds[] = {Red::kSum, Red::kMean, Red::kMax, Red::kMin, Red::kProd, Red::kArgmax};

const char* red_name(Red r) {
  switch (r) {
    case Red::kSum: return "sum";
    case Red::kMean: return "mean";
    case Red::kMax: return "max";
    case Red::kMin: return "min";
    case Red::kProd: return "prod";
    case Red::kArgmax: return "argmax";
  }
  return "?";
}

Tensor apply(Red r, const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  switch (r) {
    case Red::kSum: return wok::sum(x, axes, keepdims);
    case Red::kMean: return wok::mean(x, axes, keepdims);
    case Red::kMax: return wok::max(x, axes, keepdims);
    case Red::kMin: return wok::min(x, axes, keepdims);
    case Red::kProd: return wok::prod(x, axes, keepdims);
    case Red::kArgmax: return wok::argmax(x, axes, keepdims);
  }
  return x;
}

template <typename T>
DType result_dtype(Red r) {
  DType t = wok::dtype_of<T>();
  switch (r) {
    case Red::kSum:
    case Red::kProd: return wok::is_floating(t) ? t : DType::kInt64;
    case Red::kMean: return wok::float_result_type(t);
    case Red::kMax:
    case Red::kMin: return t;
    case Red::kArgmax: return DType::kInt64;
  }
  return t;
}

template <typename T>
bool isnan_(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

// Reference reduction: each output's elements in row-major order of the
// reduced axes.
template <typename T>
struct Reference {
  Shape out_shape;
  std::vector<std::vector<T>> groups;  // per output, its elements in reduced row-major order
};

template <typename T>
Reference<T> group_elements(const std::vector<T>& data, const Shape& shape, const std::vector<int64_t>& axes,
                            bool keepdims) {
  std::vector<bool> red(shape.size(), false);
  for (int64_t a : axes) red[static_cast<size_t>(a)] = true;
  Reference<T> ref;
  int64_t nout = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!red[d]) {
      ref.out_shape.push_back(shape[d]);
      nout *= shape[d];
    } else if (keepdims) {
      ref.out_shape.push_back(1);
    }
  }
  ref.groups.assign(static_cast<size_t>(nout), {});
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t i = 0; i < data.size(); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!red[d]) o = o * shape[d] + idx[d];
    ref.groups[static_cast<size_t>(o)].push_back(data[i]);  // row-major order of the reduced axes
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return ref;
}

template <typename T>
void check_reduction(Red r, const std::vector<T>& data, const Shape& shape, std::vector<int64_t> axes, bool keepdims) {
  std::string what = std::string(red_name(r)) + " dtype=" + wt::dname(wok::dtype_of<T>()) + " shape=" +
                     wok::shape_str(shape) + " axes=" + wok::shape_str(axes) + (keepdims ? " keepdims" : "");
  SCOPED_TRACE(what);
  Tensor x = wok::from_vector(data, shape);
  Tensor y = apply(r, x, axes, keepdims);
  if (axes.empty())
    for (size_t d = 0; d < shape.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  Reference<T> ref = group_elements(data, shape, axes, keepdims);
  ASSERT_EQ(y.shape(), ref.out_shape);
  ASSERT_EQ(y.dtype(), result_dtype<T>(r));
  const size_t n = ref.groups.size();

  if (r == Red::kArgmax) {
    std::vector<int64_t> want(n);
    for (size_t o = 0; o < n; ++o) {
      const auto& g = ref.groups[o];
      size_t best = 0;
      for (size_t i = 1; i < g.size(); ++i) {
        if (isnan_(g[best])) break;
        if (isnan_(g[i]) || g[i] > g[best]) best = i;
      }
      want[o] = static_cast<int64_t>(best);
    }
    EXPECT_TRUE(wt::exact<int64_t>("argmax", y, want));
    return;
  }
  if (r == Red::kMax || r == Red::kMin) {
    std::vector<T> want(n);
    for (size_t o = 0; o < n; ++o) {
      const auto& g = ref.groups[o];
      T m = g[0];
      for (size_t i = 1; i < g.size(); ++i) {
        if (isnan_(m)) break;
        if (isnan_(g[i]) || (r == Red::kMax ? g[i] > m : g[i] < m)) m = g[i];
      }
      want[o] = m;
    }
    EXPECT_TRUE(wt::exact<T>(red_name(r), y, want, {}, /*zero_sign_matters=*/false));
    return;
  }
  if constexpr (!std::is_floating_point_v<T>) {
    if (r == Red::kSum || r == Red::kProd) {  // exact, wrapping in 64 bits
      std::vector<int64_t> want(n);
      for (size_t o = 0; o < n; ++o) {
        uint64_t acc = r == Red::kSum ? 0 : 1;
        for (T v : ref.groups[o]) {
          uint64_t u = static_cast<uint64_t>(static_cast<int64_t>(v));
          acc = r == Red::kSum ? acc + u : acc * u;
        }
        want[o] = static_cast<int64_t>(acc);
      }
      EXPECT_TRUE(wt::exact<int64_t>(red_name(r), y, want));
      return;
    }
  }
  // Floating results: sums and products in long double; the tolerance
  // scales with the sum of magnitudes.
  std::vector<double> want(n);
  double worst = 0;
  std::vector<double> got = y.to_vector<double>();
  const bool f32 = y.dtype() == DType::kFloat32;
  for (size_t o = 0; o < n; ++o) {
    const auto& g = ref.groups[o];
    LD acc = r == Red::kProd ? 1 : 0, mag = 0;
    bool nan = false;
    for (T v : g) {
      if (isnan_(v)) nan = true;
      if (r == Red::kProd) acc *= static_cast<LD>(v);
      else acc += static_cast<LD>(v);
      mag += std::fabs(static_cast<LD>(v));
    }
    if (r == Red::kMean) {
      acc = g.empty() ? static_cast<LD>(NAN) : acc / static_cast<LD>(g.size());
      mag = g.empty() ? 0 : mag / static_cast<LD>(g.size());
    }
    double w = static_cast<double>(acc);
    if (nan || std::isnan(w)) {
      EXPECT_TRUE(std::isnan(got[o])) << "output " << o << " got " << got[o] << " want nan";
      continue;
    }
    double tol;
    if (r == Red::kProd) tol = (f32 ? 2e-5 : 1e-12) * std::fabs(w) * std::sqrt(static_cast<double>(g.size()) + 1) +
                                (f32 ? 1e-37 : 1e-300);  // products may underflow
    else tol = (f32 ? 2e-6 : 1e-14) * static_cast<double>(mag) + (f32 ? 1e-30 : 1e-300);
    double err = std::fabs(got[o] - w);
    worst = std::max(worst, err / tol);
    EXPECT_LE(err, tol) << "output " << o << " got " << got[o] << " want " << w;
    if (err > tol) break;
  }
}

template <typename T>
std::vector<T> sample(size_t n, uint32_t seed, Red r) {
  if constexpr (std::is_same_v<T, bool>) {
    return wt::random_values<bool>(n, 0, 1, seed);
  } else if constexpr (std::is_integral_v<T>) {
    if (r == Red::kProd) return wt::random_values<T>(n, -3, 3, seed);  // wraps for long rows
    if (r == Red::kArgmax) return wt::random_values<T>(n, -5, 5, seed);  // many ties
    return wt::random_values<T>(n, std::numeric_limits<T>::min() / 2, std::numeric_limits<T>::max() / 2, seed);
  } else {
    if (r == Red::kProd) return wt::random_values<T>(n, 0.9, 1.1, seed);
    std::vector<T> v = wt::random_values<T>(n, -1, 1, seed);
    if (r == Red::kArgmax || r == Red::kMax || r == Red::kMin)  // ties
      for (T& x : v) x = std::round(x * 8) / 8;
    return v;
  }
}

struct Case {
  Shape shape;
  std::vector<int64_t> axes;  // empty: all
};

// Shapes and axis lists that reach every layout of the kernels: inner runs,
// outer rows, small inner rows, mixed groups, size-0 and size-1 dims, 0-d.
const std::vector<Case>& small_cases() {
  static const std::vector<Case> cases = {
      {{}, {}},
      {{1}, {}},
      {{17}, {}},
      {{1001}, {0}},
      {{3, 4}, {0}},
      {{3, 4}, {1}},
      {{3, 4}, {}},
      {{5, 7, 9}, {0, 2}},
      {{5, 7, 9}, {1}},
      {{5, 7, 9}, {0, 1}},
      {{5, 7, 9}, {1, 2}},
      {{2, 3, 4, 5}, {0, 2}},
      {{2, 3, 4, 5}, {1, 3}},
      {{2, 3, 4, 5}, {0, 1, 3}},
      {{2, 3, 4, 5}, {3}},
      {{2, 3, 4, 5}, {0}},
      {{3, 1, 5}, {1}},
      {{3, 1, 5}, {0, 1}},
      {{1, 1}, {0}},
      {{300, 3}, {0}},
      {{200, 40}, {0}},
      {{7, 300, 2}, {1}},
      {{3, 2000}, {1}},
      {{5, 2}, {1}},
      {{1001, 2}, {1}},
      {{333, 3}, {1}},
      {{6, 2, 3}, {0, 2}},
      {{40, 3, 7}, {0, 2}},
  };
  return cases;
}

template <typename T>
void run_small_cases() {
  uint32_t seed = 1;
  for (Red r : kAllReds)
    for (const Case& c : small_cases())
      for (bool keepdims : {false, true}) {
        check_reduction<T>(r, sample<T>(static_cast<size_t>(wok::numel(c.shape)), seed++, r), c.shape, c.axes, keepdims);
        if (::testing::Test::HasFatalFailure()) return;
      }
}

TEST(ReductionKernels, SmallShapesBool) { run_small_cases<bool>(); }
TEST(ReductionKernels, SmallShapesInt32) { run_small_cases<int32_t>(); }
TEST(ReductionKernels, SmallShapesInt64) { run_small_cases<int64_t>(); }
TEST(ReductionKernels, SmallShapesFloat32) { run_small_cases<float>(); }
TEST(ReductionKernels, SmallShapesFloat64) { run_small_cases<double>(); }

// Large enough to be split over threads and into several units per output.
const std::vector<Case>& large_cases() {
  static const std::vector<Case> cases = {
      {{1 << 20}, {}},
      {{1024, 1024}, {0}},
      {{1024, 1024}, {1}},
      {{4, 1 << 18}, {0}},
      {{1 << 18, 4}, {0}},
      {{1 << 18, 3}, {1}},
      {{64, 2, 4096, 2}, {0, 2}},
      {{3, 100003, 2}, {1}},
      {{2, 70001, 3, 5}, {1, 3}},
      {{5, 3, 70001}, {0, 2}},
  };
  return cases;
}

template <typename T>
void run_large_cases(std::initializer_list<Red> reds) {
  uint32_t seed = 100;
  for (Red r : reds)
    for (const Case& c : large_cases()) {
      check_reduction<T>(r, sample<T>(static_cast<size_t>(wok::numel(c.shape)), seed++, r), c.shape, c.axes, false);
      if (::testing::Test::HasFatalFailure()) return;
    }
}

TEST(ReductionKernels, LargeFloat32) { run_large_cases<float>({Red::kSum, Red::kMean, Red::kMax, Red::kArgmax, Red::kProd}); }
TEST(ReductionKernels, LargeFloat64) { run_large_cases<double>({Red::kSum, Red::kMin, Red::kArgmax}); }
TEST(ReductionKernels, LargeInt32) { run_large_cases<int32_t>({Red::kSum, Red::kMean, Red::kProd, Red::kArgmax}); }
TEST(ReductionKernels, LargeInt64) { run_large_cases<int64_t>({Red::kSum, Red::kMean, Red::kMax}); }
TEST(ReductionKernels, LargeBool) { run_large_cases<bool>({Red::kSum, Red::kMean, Red::kMin, Red::kArgmax}); }

TEST(ReductionKernels, EmptyReductions) {
  Tensor x = wok::from_vector(std::vector<float>{}, {2, 0, 3});
  EXPECT_TRUE(wt::exact<float>("sum", wok::sum(x, {1}), std::vector<float>(6, 0.0f)));
  EXPECT_TRUE(wt::exact<float>("prod", wok::prod(x, {1}), std::vector<float>(6, 1.0f)));
  std::vector<float> m = wok::mean(x, {1}).to_vector<float>();
  ASSERT_EQ(m.size(), 6u);
  for (float v : m) EXPECT_TRUE(std::isnan(v));
  Tensor xi = wok::from_vector(std::vector<int32_t>{}, {0, 4});
  EXPECT_TRUE(wt::exact<int64_t>("sum", wok::sum(xi, {0}, true), std::vector<int64_t>(4, 0)));
  EXPECT_TRUE(wt::exact<int64_t>("prod", wok::prod(xi), std::vector<int64_t>{1}));
  std::vector<double> mi = wok::mean(xi, {0}).to_vector<double>();
  for (double v : mi) EXPECT_TRUE(std::isnan(v));
  EXPECT_EQ(wok::sum(xi, {1}).shape(), (Shape{0}));
  EXPECT_EQ(wok::max(xi, {1}).numel(), 0);
  // max and min of nothing: an integer dtype's lowest and highest value.
  EXPECT_TRUE(wt::exact<int32_t>("max", wok::max(xi, {0}), std::vector<int32_t>(4, INT32_MIN)));
  EXPECT_TRUE(wt::exact<int32_t>("min", wok::min(xi, {0}), std::vector<int32_t>(4, INT32_MAX)));
  EXPECT_TRUE(wt::exact<float>("max", wok::max(x, {1}), std::vector<float>(6, -INFINITY)));
}

TEST(ReductionKernels, ZeroDimCopiesConverted) {
  Tensor b = wok::scalar_tensor(wok::Scalar(true));
  EXPECT_TRUE(wt::exact<int64_t>("sum", wok::sum(b), {1}));
  EXPECT_TRUE(wt::exact<float>("mean", wok::mean(b), {1.0f}));
  EXPECT_TRUE(wt::exact<int64_t>("argmax", wok::argmax(b), {0}));
  Tensor i = wok::from_vector(std::vector<int32_t>{-7}, Shape{});
  EXPECT_TRUE(wt::exact<int64_t>("prod", wok::prod(i), {-7}));
  EXPECT_TRUE(wt::exact<double>("mean", wok::mean(i), {-7.0}));
  EXPECT_TRUE(wt::exact<int32_t>("max", wok::max(i), {-7}));
  Tensor f = wok::from_vector(std::vector<float>{-0.0f}, Shape{});
  EXPECT_TRUE(wt::exact<float>("sum", wok::sum(f), {-0.0f}));
}

// A nan anywhere in a row: max and min give nan, argmax the first nan.
TEST(ReductionKernels, NanPropagates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t n : {1, 5, 31, 64, 200, 5000, 70000, 300000}) {
    for (int64_t pos : {int64_t{0}, n / 2, n - 1}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " nan at " + std::to_string(pos));
      std::vector<float> v = wt::random_values<float>(static_cast<size_t>(n), -1, 1, 3);
      v[static_cast<size_t>(pos)] = nan;
      if (pos + 3 < n) v[static_cast<size_t>(pos + 3)] = nan;
      Tensor x = wok::from_vector(v);
      EXPECT_TRUE(std::isnan(wok::max(x).item<float>()));
      EXPECT_TRUE(std::isnan(wok::min(x).item<float>()));
      EXPECT_EQ(wok::argmax(x).item<int64_t>(), pos);
      // The same along the outer axis of a [n, 2] tensor (column 1 has no nan).
      std::vector<double> w(static_cast<size_t>(2 * n));
      for (int64_t i = 0; i < n; ++i) {
        w[static_cast<size_t>(2 * i)] = v[static_cast<size_t>(i)];
        w[static_cast<size_t>(2 * i + 1)] = static_cast<double>(i % 7);
      }
      Tensor x2 = wok::from_vector(w, {n, 2});
      std::vector<double> mx = wok::max(x2, {0}).to_vector<double>();
      EXPECT_TRUE(std::isnan(mx[0]));
      EXPECT_EQ(mx[1], n > 6 ? 6.0 : static_cast<double>(n - 1));
      std::vector<int64_t> am = wok::argmax(x2, {0}).to_vector<int64_t>();
      EXPECT_EQ(am[0], pos);
      EXPECT_EQ(am[1], n > 6 ? 6 : n - 1);
    }
  }
}

TEST(ReductionKernels, ArgmaxInfinitiesAndTies) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = wok::from_vector(std::vector<double>{-inf, -inf, -inf}, {3});
  EXPECT_EQ(wok::argmax(x).item<int64_t>(), 0);
  std::vector<int64_t> v(100000, 3);
  v[77777] = 4;
  v[88888] = 4;
  EXPECT_EQ(wok::argmax(wok::from_vector(v)).item<int64_t>(), 77777);
  std::vector<int32_t> lows(1000, std::numeric_limits<int32_t>::min());
  EXPECT_EQ(wok::argmax(wok::from_vector(lows)).item<int64_t>(), 0);
}

// 2^24 uniform [0, 1) float32 values: blocked summation keeps the float32
// sum within 1e-6 relative of the exact one.
TEST(ReductionKernels, Float32SumIsAccurate) {
  const int64_t n = int64_t{1} << 24;
  Tensor x = wok::rand({n}, 42);
  std::vector<float> v = x.to_vector<float>();
  LD exact = 0;
  for (float f : v) exact += f;
  float got = wok::sum(x).item<float>();
  EXPECT_LE(std::fabs(static_cast<LD>(got) - exact) / exact, 1e-6L) << "got " << got << " want " << static_cast<double>(exact);
  float m = wok::mean(x).item<float>();
  EXPECT_LE(std::fabs(static_cast<LD>(m) - exact / n) / (exact / n), 1e-6L);
  // The same values as 4096 rows summed down the outer axis, and as rows.
  Tensor x2 = x.reshape({4096, 4096});
  std::vector<float> cols = wok::sum(x2, {0}).to_vector<float>();
  std::vector<float> rows = wok::sum(x2, {1}).to_vector<float>();
  for (int64_t j = 0; j < 4096; j += 511) {
    LD c = 0, r = 0;
    for (int64_t i = 0; i < 4096; ++i) {
      c += v[static_cast<size_t>(i * 4096 + j)];
      r += v[static_cast<size_t>(j * 4096 + i)];
    }
    EXPECT_LE(std::fabs(cols[static_cast<size_t>(j)] - c) / c, 1e-6L);
    EXPECT_LE(std::fabs(rows[static_cast<size_t>(j)] - r) / r, 1e-6L);
  }
  // Outer-axis sum of a tall, narrow tensor.
  Tensor x3 = x.reshape({n / 4, 4});
  std::vector<float> narrow = wok::sum(x3, {0}).to_vector<float>();
  for (int64_t j = 0; j < 4; ++j) {
    LD c = 0;
    for (int64_t i = 0; i < n / 4; ++i) c += v[static_cast<size_t>(i * 4 + j)];
    EXPECT_LE(std::fabs(narrow[static_cast<size_t>(j)] - c) / c, 1e-6L);
  }
}

TEST(ReductionKernels, IntegerWrapAndExactness) {
  std::vector<int64_t> big(1000, std::numeric_limits<int64_t>::max());
  uint64_t acc = 0;
  for (int64_t v : big) acc += static_cast<uint64_t>(v);
  EXPECT_EQ(wok::sum(wok::from_vector(big)).item<int64_t>(), static_cast<int64_t>(acc));
  std::vector<int32_t> i32(3000, std::numeric_limits<int32_t>::max());
  EXPECT_EQ(wok::sum(wok::from_vector(i32)).item<int64_t>(), int64_t{3000} * std::numeric_limits<int32_t>::max());
  std::vector<int32_t> twos(70, 2);
  EXPECT_EQ(wok::prod(wok::from_vector(twos)).item<int64_t>(), 0);  // 2^70 wraps to 0 in 64 bits
  EXPECT_DOUBLE_EQ(wok::mean(wok::from_vector(i32)).item<double>(), std::numeric_limits<int32_t>::max());
}

}  // namespace
