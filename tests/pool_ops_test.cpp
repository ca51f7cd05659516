// max_pool2d, avg_pool2d, adaptive_avg_pool2d and global_avg_pool2d
// against float64 reference loops, under both backends: seeded random
// shapes and windows (stride, dilation, asymmetric padding, ceil mode with
// and without count_include_pad, batch 1, odd sizes), hand-computed
// windows for the ceil-mode and divisor rules, dtypes, and the errors.
// Max is exact; an average is within a bound proportional to its window.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

using Ints = std::vector<int64_t>;

// One pooling call: input shape [N, C, H, W] and the window attributes,
// padding as {top, left, bottom, right}.
struct Window {
  Shape x;
  Ints k, s, p, d = {1, 1};
  bool ceil_mode = false, include_pad = false;
  std::string str() const {
    std::ostringstream out;
    out << "x" << wok::shape_str(x) << " kernel" << wok::shape_str(k) << " stride" << wok::shape_str(s)
        << " padding" << wok::shape_str(p) << " dilation" << wok::shape_str(d) << (ceil_mode ? " ceil" : "")
        << (include_pad ? " count_include_pad" : "");
    return out.str();
  }
};

// PyTorch's output size along one dim.
int64_t ref_out_size(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pa, int64_t d, bool ceil_mode) {
  const int64_t num = in + pb + pa - d * (k - 1) - 1;
  if (num < 0) return 0;  // the padded input is shorter than one window
  int64_t out = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pb) --out;
  return out;
}

Shape ref_out_shape(const Window& w) {
  return {w.x[0], w.x[1], ref_out_size(w.x[2], w.k[0], w.s[0], w.p[0], w.p[2], w.d[0], w.ceil_mode),
          ref_out_size(w.x[3], w.k[1], w.s[1], w.p[1], w.p[3], w.d[1], w.ceil_mode)};
}

// A reference result and, per element, the error a correct result may have.
struct Ref {
  Shape shape;
  std::vector<double> v, bound;
};

// max (average false) or average of every window, in float64; `eps` is the
// unit roundoff of the dtype under test.
Ref ref_pool(const std::vector<double>& x, const Window& w, bool average, double eps) {
  Ref r{ref_out_shape(w), {}, {}};
  const int64_t H = w.x[2], W = w.x[3], OH = r.shape[2], OW = r.shape[3];
  for (int64_t plane = 0; plane < w.x[0] * w.x[1]; ++plane)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t h0 = oh * w.s[0] - w.p[0], w0 = ow * w.s[1] - w.p[1];
        double best = -INFINITY, sum = 0, abs_sum = 0;
        int64_t valid = 0;
        for (int64_t i = 0; i < w.k[0]; ++i)
          for (int64_t j = 0; j < w.k[1]; ++j) {
            const int64_t h = h0 + i * w.d[0], c = w0 + j * w.d[1];
            if (h < 0 || h >= H || c < 0 || c >= W) continue;
            const double v = x[static_cast<size_t>((plane * H + h) * W + c)];
            best = std::isnan(v) || v > best ? v : best;
            sum += v;
            abs_sum += std::fabs(v);
            ++valid;
          }
        if (!average) {
          r.v.push_back(best);
          r.bound.push_back(0);
          continue;
        }
        int64_t count = valid;
        if (w.include_pad)
          count = (std::min(h0 + w.k[0], H + w.p[2]) - h0) * (std::min(w0 + w.k[1], W + w.p[3]) - w0);
        r.v.push_back(sum / static_cast<double>(count));
        r.bound.push_back(4.0 * static_cast<double>(valid + 1) * eps * abs_sum / static_cast<double>(count));
      }
  return r;
}

::testing::AssertionResult within(const std::string& what, const Tensor& t, const Ref& ref) {
  if (t.shape() != ref.shape)
    return ::testing::AssertionFailure() << what << ": shape " << wok::shape_str(t.shape()) << ", want "
                                         << wok::shape_str(ref.shape);
  const std::vector<double> got = t.to_vector<double>();
  auto fail = ::testing::AssertionFailure() << what;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::fabs(got[i] - ref.v[i]) <= ref.bound[i]) continue;
    if (++bad <= 8) fail << "\n  index " << i << " got=" << got[i] << " want=" << ref.v[i] << " bound=" << ref.bound[i];
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return fail << "\n  " << bad << " of " << got.size() << " elements off";
}

template <typename T>
std::vector<T> random_input(const Shape& s, uint32_t seed) {
  return wt::random_values<T>(static_cast<size_t>(wok::numel(s)), std::is_integral_v<T> ? -1000 : -1,
                              std::is_integral_v<T> ? 1000 : 1, seed);
}

// A random valid window over a small random input.
Window random_window(std::mt19937& rng, bool dilated) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (;;) {
    Window w;
    w.x = {pick(1, 2), pick(1, 3), pick(1, 13), pick(1, 13)};
    w.k = {pick(1, 4), pick(1, 4)};
    w.s = {pick(1, 3), pick(1, 3)};
    if (dilated) w.d = {pick(1, 2), pick(1, 2)};
    w.p = {0, 0, 0, 0};
    for (int i = 0; i < 4; ++i) w.p[i] = pick(0, std::min<int64_t>(2, w.d[i % 2] * (w.k[i % 2] - 1)));
    w.ceil_mode = pick(0, 1) == 1;
    w.include_pad = pick(0, 1) == 1;
    Shape out = ref_out_shape(w);
    if (out[2] > 0 && out[3] > 0) return w;
  }
}

class PoolOps : public wt::BothBackends {};

// The reference maxima as T: a window wholly outside the input (dilation)
// is -inf, the lowest value for integers.
template <typename T>
std::vector<T> as_typed(const std::vector<double>& v) {
  std::vector<T> out;
  for (double x : v) {
    if constexpr (std::is_integral_v<T>) out.push_back(x == -INFINITY ? std::numeric_limits<T>::lowest() : T(x));
    else out.push_back(static_cast<T>(x));
  }
  return out;
}

template <typename T>
void check_random_max(uint32_t seed, int cases) {
  std::mt19937 rng(seed);
  for (int c = 0; c < cases; ++c) {
    const Window w = random_window(rng, /*dilated=*/true);
    SCOPED_TRACE(std::string(wok::dtype_name(wok::dtype_of<T>())) + " " + w.str());
    const std::vector<T> xv = random_input<T>(w.x, seed + c);
    const Ref ref = ref_pool(std::vector<double>(xv.begin(), xv.end()), w, false, 0);
    Tensor y = wok::max_pool2d(wt::tensor(xv, w.x), w.k, w.s, w.p, w.d, w.ceil_mode);
    ASSERT_EQ(y.shape(), ref.shape);
    EXPECT_TRUE(wt::exact<T>("max_pool2d", y, as_typed<T>(ref.v)));
  }
}

TEST_P(PoolOps, MaxPoolRandomWindowsExact) {
  check_random_max<float>(11, 30);
  check_random_max<double>(12, 15);
  check_random_max<int32_t>(13, 15);
  check_random_max<int64_t>(14, 10);
}

// max_pool2d_with_indices: the values are max_pool2d's, the index of each
// is h * W + w of the first maximum in the window's row-major scan (ties
// are common among the integers drawn from [-1000, 1000]).
template <typename T>
void check_random_max_indices(uint32_t seed, int cases) {
  std::mt19937 rng(seed);
  for (int c = 0; c < cases; ++c) {
    const Window w = random_window(rng, /*dilated=*/c % 2 == 1);
    SCOPED_TRACE(std::string(wok::dtype_name(wok::dtype_of<T>())) + " " + w.str());
    const std::vector<T> xv = random_input<T>(w.x, seed + c);
    const Tensor x = wt::tensor(xv, w.x);
    auto [values, where] = wok::max_pool2d_with_indices(x, w.k, w.s, w.p, w.d, w.ceil_mode);
    EXPECT_EQ(values.to_vector<T>(), wok::max_pool2d(x, w.k, w.s, w.p, w.d, w.ceil_mode).to_vector<T>());
    ASSERT_EQ(where.dtype(), DType::kInt64);
    ASSERT_EQ(where.shape(), values.shape());
    const std::vector<int64_t> got = where.to_vector<int64_t>();
    const Shape out = values.shape();
    const int64_t H = w.x[2], W = w.x[3];
    size_t at = 0;
    for (int64_t plane = 0; plane < w.x[0] * w.x[1]; ++plane)
      for (int64_t oh = 0; oh < out[2]; ++oh)
        for (int64_t ow = 0; ow < out[3]; ++ow, ++at) {
          int64_t want = -1;
          for (int64_t i = 0; i < w.k[0]; ++i)
            for (int64_t j = 0; j < w.k[1]; ++j) {
              const int64_t h = oh * w.s[0] - w.p[0] + i * w.d[0], col = ow * w.s[1] - w.p[1] + j * w.d[1];
              if (h < 0 || h >= H || col < 0 || col >= W) continue;
              const T v = xv[static_cast<size_t>((plane * H + h) * W + col)];
              if (want < 0 || v > xv[static_cast<size_t>(plane * H * W + want)]) want = h * W + col;
            }
          if (want < 0) continue;  // a dilated window with no input position
          EXPECT_EQ(got[at], want) << "output " << at;
        }
  }
}

TEST_P(PoolOps, MaxPoolWithIndicesFindsTheFirstMaximum) {
  check_random_max_indices<float>(41, 20);
  check_random_max_indices<int32_t>(42, 20);
}

// max_unpool2d puts each maximum back where max_pool2d_with_indices found
// it (zeros elsewhere); an index outside its plane is an error.
TEST_P(PoolOps, MaxUnpoolInvertsThePooling) {
  const Shape shape{2, 3, 6, 8};
  const std::vector<float> xv = random_input<float>(shape, 51);
  auto [values, where] = wok::max_pool2d_with_indices(wt::tensor(xv, shape), {2, 2});
  const std::vector<float> y = wok::max_unpool2d(values, where, {6, 8}).to_vector<float>();
  ASSERT_EQ(y.size(), xv.size());
  const std::vector<int64_t> w = where.to_vector<int64_t>();
  const std::vector<float> v = values.to_vector<float>();
  std::vector<float> want(xv.size(), 0.0f);
  for (size_t i = 0; i < w.size(); ++i) want[(i / 12) * 48 + static_cast<size_t>(w[i])] = v[i];
  EXPECT_EQ(y, want);
  const Tensor bad = wok::from_vector<int64_t>({0, 1, 2, 48}, {1, 1, 2, 2});
  EXPECT_THROW(wok::max_unpool2d(wok::ones({1, 1, 2, 2}), bad, {6, 8}).to_vector<float>(), wok::Error);
  EXPECT_THROW(wok::max_unpool2d(wok::ones({1, 1, 2, 2}), bad, {6}), wok::ShapeError);
}

template <typename T>
void check_random_avg(uint32_t seed, int cases) {
  std::mt19937 rng(seed);
  for (int c = 0; c < cases; ++c) {
    const Window w = random_window(rng, /*dilated=*/false);
    SCOPED_TRACE(std::string(wok::dtype_name(wok::dtype_of<T>())) + " " + w.str());
    const std::vector<T> xv = random_input<T>(w.x, seed + c);
    const Ref ref = ref_pool(std::vector<double>(xv.begin(), xv.end()), w, true, std::numeric_limits<T>::epsilon());
    Tensor y = wok::avg_pool2d(wt::tensor(xv, w.x), w.k, w.s, w.p, w.ceil_mode, w.include_pad);
    EXPECT_EQ(y.dtype(), wok::dtype_of<T>());
    EXPECT_TRUE(within("avg_pool2d", y, ref));
  }
}

TEST_P(PoolOps, AvgPoolRandomWindowsWithinBound) {
  check_random_avg<float>(21, 40);
  check_random_avg<double>(22, 20);
}

TEST_P(PoolOps, StrideDilationAsymmetricPaddingOnLargerPlanes) {
  // Enough output rows for several parallel chunks, odd sizes.
  Window w{{2, 8, 41, 63}, {3, 2}, {2, 2}, {1, 0, 2, 1}, {2, 3}};
  const std::vector<float> xv = random_input<float>(w.x, 31);
  const std::vector<double> xd(xv.begin(), xv.end());
  Ref mx = ref_pool(xd, w, false, 0);
  EXPECT_TRUE(wt::exact<float>("max_pool2d", wok::max_pool2d(wt::tensor(xv, w.x), w.k, w.s, w.p, w.d),
                               std::vector<float>(mx.v.begin(), mx.v.end())));
  w.d = {1, 1};
  w.k = {3, 3};
  w.p = {1, 2, 2, 1};
  for (bool ceil_mode : {false, true})
    for (bool include_pad : {false, true}) {
      w.ceil_mode = ceil_mode;
      w.include_pad = include_pad;
      SCOPED_TRACE(w.str());
      EXPECT_TRUE(within("avg_pool2d", wok::avg_pool2d(wt::tensor(xv, w.x), w.k, w.s, w.p, ceil_mode, include_pad),
                         ref_pool(xd, w, true, 0x1p-24)));
    }
}

TEST_P(PoolOps, DefaultsStrideIsKernelAndPaddingIsSymmetric) {
  Tensor x = wok::arange(0, 16, 1, DType::kFloat32).reshape({1, 1, 4, 4});
  EXPECT_TRUE(wt::exact<float>("max_pool2d", wok::max_pool2d(x, {2, 2}), {5, 7, 13, 15}));
  EXPECT_TRUE(wt::exact<float>("avg_pool2d", wok::avg_pool2d(x, {2, 2}), {2.5f, 4.5f, 10.5f, 12.5f}));
  // padding {1, 0}: one row before and after, no column padding.
  Tensor y = wok::max_pool2d(x, {2, 1}, {2, 1}, {1, 0});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3, 4}));
  EXPECT_TRUE(wt::exact<float>("max_pool2d", y, {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15}));
}

TEST_P(PoolOps, CeilModeDropsAWindowStartingInTrailingPadding) {
  // H = 5, k = 2, s = 2, padding 1: ceil((5 + 2 - 2) / 2) + 1 = 4, but the
  // 4th window would start at 5 = H (in the padding after), so 3.
  Tensor x = wok::arange(0, 5, 1, DType::kFloat32).reshape({1, 1, 5, 1});
  Tensor y = wok::max_pool2d(x, {2, 1}, {2, 1}, {1, 0}, {1, 1}, /*ceil_mode=*/true);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3, 1}));
  EXPECT_TRUE(wt::exact<float>("max_pool2d", y, {0, 2, 4}));
  EXPECT_EQ(wok::max_pool2d(x, {2, 1}, {2, 1}, {1, 0}).shape(), (Shape{1, 1, 3, 1}));
  EXPECT_EQ(wok::max_pool2d(x, {2, 1}, {2, 1}, {0, 0}, {1, 1}, true).shape(), (Shape{1, 1, 3, 1}));
  EXPECT_EQ(wok::max_pool2d(x, {2, 1}, {2, 1}).shape(), (Shape{1, 1, 2, 1}));
}

TEST_P(PoolOps, AvgDivisorCountsPaddingButNotTheCeilOverhang) {
  // W = 6, k = 3, s = 2, padding left 1 / right 1, ceil: windows start at
  // -1, 1, 3, 5; the last covers 5 (input), 6 (padding), 7 (overhang).
  Tensor x = wok::arange(1, 7, 1, DType::kFloat64).reshape({1, 1, 1, 6});
  Tensor inc = wok::avg_pool2d(x, {1, 3}, {1, 2}, {0, 1}, true, true);
  EXPECT_EQ(inc.shape(), (Shape{1, 1, 1, 4}));
  EXPECT_TRUE(wt::exact<double>("avg_pool2d", inc, {3.0 / 3, 9.0 / 3, 15.0 / 3, 6.0 / 2}));
  Tensor exc = wok::avg_pool2d(x, {1, 3}, {1, 2}, {0, 1}, true, false);
  EXPECT_TRUE(wt::exact<double>("avg_pool2d", exc, {3.0 / 2, 9.0 / 3, 15.0 / 3, 6.0 / 1}));
}

TEST_P(PoolOps, MaxPropagatesNanAndAllPaddingWindowsAreMinusInf) {
  std::vector<float> v = {1, 2, NAN, 4};
  Tensor y = wok::max_pool2d(wt::tensor(v, {1, 1, 2, 2}), {1, 2});
  EXPECT_TRUE(wt::exact<float>("max_pool2d", y, {2, NAN}));
  // H = 3, k = 2, dilation 4, padding 1: the one window reads rows -1 and
  // 3, both outside the input.
  Tensor z = wok::max_pool2d(wok::ones({1, 1, 3, 2}), {2, 1}, {1, 1}, {1, 0}, {4, 1});
  EXPECT_EQ(z.shape(), (Shape{1, 1, 1, 2}));
  EXPECT_TRUE(wt::exact<float>("max_pool2d", z, {-INFINITY, -INFINITY}));
}

TEST_P(PoolOps, IntegerAveragesAreFloat64AndComposeWithElementwise) {
  const std::vector<int32_t> xv = random_input<int32_t>({2, 3, 5, 7}, 41);
  Window w{{2, 3, 5, 7}, {2, 3}, {2, 2}, {1, 1, 1, 1}};
  w.include_pad = true;
  Tensor y = wok::avg_pool2d(wt::tensor(xv, w.x), w.k, w.s, {1, 1});
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_TRUE(within("avg_pool2d", y, ref_pool(std::vector<double>(xv.begin(), xv.end()), w, true, 0x1p-53)));
  // An opaque pool between elementwise ops (fused groups under the JIT).
  Tensor x = wt::tensor(random_input<float>({1, 2, 6, 6}, 42), {1, 2, 6, 6});
  Tensor m = wok::max_pool2d(wok::relu(x) * 2.0f, {2, 2}) + 1.0f;
  std::vector<float> xr = x.to_vector<float>(), want;
  for (float& v : xr) v = std::max(v, 0.0f) * 2.0f;
  Window mw{{1, 2, 6, 6}, {2, 2}, {2, 2}, {0, 0, 0, 0}};
  for (double v : ref_pool(std::vector<double>(xr.begin(), xr.end()), mw, false, 0).v)
    want.push_back(static_cast<float>(v) + 1.0f);
  EXPECT_TRUE(wt::exact<float>("max_pool2d", m, want));
}

// Output i of n over `in`: [floor(i * in / n), ceil((i + 1) * in / n)).
Ref ref_adaptive(const std::vector<double>& x, const Shape& s, int64_t oh, int64_t ow, double eps) {
  Ref r{{s[0], s[1], oh, ow}, {}, {}};
  for (int64_t plane = 0; plane < s[0] * s[1]; ++plane)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t h0 = i * s[2] / oh, h1 = ((i + 1) * s[2] + oh - 1) / oh;
        const int64_t w0 = j * s[3] / ow, w1 = ((j + 1) * s[3] + ow - 1) / ow;
        double sum = 0, abs_sum = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t c = w0; c < w1; ++c) {
            sum += x[static_cast<size_t>((plane * s[2] + h) * s[3] + c)];
            abs_sum += std::fabs(x[static_cast<size_t>((plane * s[2] + h) * s[3] + c)]);
          }
        const double n = static_cast<double>((h1 - h0) * (w1 - w0));
        r.v.push_back(sum / n);
        r.bound.push_back(4.0 * (n + 1) * eps * abs_sum / n);
      }
  return r;
}

TEST_P(PoolOps, AdaptiveAvgPoolNonDivisibleSizes) {
  const struct {
    Shape x;
    int64_t oh, ow;
  } cases[] = {{{1, 3, 7, 10}, 3, 4}, {{2, 2, 5, 5}, 7, 3}, {{1, 1, 13, 1}, 5, 1}, {{2, 3, 9, 11}, 2, 1},
               {{1, 4, 6, 8}, 1, 1}, {{1, 2, 4, 4}, 4, 4}, {{2, 8, 40, 63}, 7, 9}};
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << "x" << wok::shape_str(c.x) << " -> " << c.oh << "x" << c.ow);
    const std::vector<float> xf = random_input<float>(c.x, 51);
    EXPECT_TRUE(within("adaptive_avg_pool2d", wok::adaptive_avg_pool2d(wt::tensor(xf, c.x), {c.oh, c.ow}),
                       ref_adaptive(std::vector<double>(xf.begin(), xf.end()), c.x, c.oh, c.ow, 0x1p-24)));
    const std::vector<double> xd = random_input<double>(c.x, 52);
    EXPECT_TRUE(within("adaptive_avg_pool2d", wok::adaptive_avg_pool2d(wt::tensor(xd, c.x), {c.oh, c.ow}),
                       ref_adaptive(xd, c.x, c.oh, c.ow, 0x1p-53)));
  }
  const std::vector<int64_t> xi = random_input<int64_t>({1, 2, 5, 3}, 53);
  Tensor yi = wok::adaptive_avg_pool2d(wt::tensor(xi, {1, 2, 5, 3}), {2, 2});
  EXPECT_EQ(yi.dtype(), DType::kFloat64);
  EXPECT_TRUE(within("adaptive_avg_pool2d", yi,
                     ref_adaptive(std::vector<double>(xi.begin(), xi.end()), {1, 2, 5, 3}, 2, 2, 0x1p-53)));
}

TEST_P(PoolOps, GlobalAvgPoolIsAMeanOverTheSpatialDims) {
  const Shape s = {3, 5, 7, 9};
  const std::vector<float> xf = random_input<float>(s, 61);
  Tensor x = wt::tensor(xf, s);
  Ref want = ref_adaptive(std::vector<double>(xf.begin(), xf.end()), s, 1, 1, 0x1p-24);
  EXPECT_TRUE(within("global_avg_pool2d", wok::global_avg_pool2d(x), want));
  EXPECT_TRUE(within("adaptive_avg_pool2d", wok::adaptive_avg_pool2d(x, {1, 1}), want));
  EXPECT_TRUE(within("avg_pool2d", wok::avg_pool2d(x, {7, 9}), want));
  Tensor yi = wok::global_avg_pool2d(wok::ones({1, 2, 3, 3}, DType::kInt32));
  EXPECT_EQ(yi.dtype(), DType::kFloat64);
  EXPECT_TRUE(wt::exact<double>("global_avg_pool2d", yi, {1.0, 1.0}));
}

INSTANTIATE_TEST_SUITE_P(Backends, PoolOps, wt::kBothBackends, wt::backend_param_name);

// The message of the error `fn` throws, which must be of type E.
template <typename E, typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

#define EXPECT_MESSAGE_HAS(msg, part) EXPECT_NE((msg).find(part), std::string::npos) << "message: " << (msg)

TEST(PoolOpsErrors, ShapesAndAttributesAreNamed) {
  Tensor x = wok::zeros({1, 2, 5, 5});
  std::string m = error_of<wok::ShapeError>([] { wok::max_pool2d(wok::zeros({2, 5, 5}), {2, 2}); });
  EXPECT_MESSAGE_HAS(m, "wok::max_pool2d: ");
  EXPECT_MESSAGE_HAS(m, "rank 3");
  EXPECT_MESSAGE_HAS(m, "float32[2, 5, 5]");
  m = error_of<wok::ShapeError>([&] { wok::max_pool2d(x, {2, 2, 2}); });
  EXPECT_MESSAGE_HAS(m, "wok::max_pool2d: kernel [2, 2, 2]");
  EXPECT_MESSAGE_HAS(m, "float32[1, 2, 5, 5]");
  m = error_of<wok::ShapeError>([&] { wok::avg_pool2d(x, {2, 2}, {1, 1}, {1, 1, 1}); });
  EXPECT_MESSAGE_HAS(m, "wok::avg_pool2d: padding [1, 1, 1]");
  m = error_of<wok::ShapeError>([&] { wok::avg_pool2d(x, {2, 2}, {1}); });
  EXPECT_MESSAGE_HAS(m, "wok::avg_pool2d: stride [1]");
  m = error_of<wok::ShapeError>([&] { wok::max_pool2d(x, {0, 2}); });
  EXPECT_MESSAGE_HAS(m, "wok::max_pool2d: kernel values must be positive, got [0, 2]");
  EXPECT_MESSAGE_HAS(m, "float32[1, 2, 5, 5]");
  m = error_of<wok::ShapeError>([&] { wok::max_pool2d(x, {2, 2}, {-1, 1}); });
  EXPECT_MESSAGE_HAS(m, "stride values must be positive, got [-1, 1]");
  m = error_of<wok::ShapeError>([&] { wok::max_pool2d(x, {2, 2}, {1, 1}, {0, 0}, {0, 1}); });
  EXPECT_MESSAGE_HAS(m, "dilation values must be positive, got [0, 1]");
  m = error_of<wok::ShapeError>([&] { wok::avg_pool2d(x, {2, 2}, {1, 1}, {0, -1}); });
  EXPECT_MESSAGE_HAS(m, "padding values must be non-negative, got [0, -1, 0, -1]");
  m = error_of<wok::ShapeError>([&] { wok::avg_pool2d(x, {3, 3}, {1, 1}, {0, 0, 3, 0}); });
  EXPECT_MESSAGE_HAS(m, "wok::avg_pool2d: padding [0, 0, 3, 0] is not smaller than the effective kernel 3");
  EXPECT_MESSAGE_HAS(m, "entirely in padding");
  m = error_of<wok::ShapeError>([&] { wok::max_pool2d(x, {3, 3}, {1, 1}, {2, 2}, {2, 2}); });
  EXPECT_EQ(m, "no exception");  // effective kernel 5: padding 2 is fine
  m = error_of<wok::ShapeError>([] { wok::max_pool2d(wok::zeros({1, 1, 2, 6}), {3, 3}); });
  EXPECT_MESSAGE_HAS(m, "wok::max_pool2d: input 2x6");
  EXPECT_MESSAGE_HAS(m, "the output would be 0x2");
  m = error_of<wok::ShapeError>([&] { wok::adaptive_avg_pool2d(x, {0, 2}); });
  EXPECT_MESSAGE_HAS(m, "wok::adaptive_avg_pool2d: output_size values must be positive, got [0, 2]");
  m = error_of<wok::ShapeError>([&] { wok::adaptive_avg_pool2d(x, {2}); });
  EXPECT_MESSAGE_HAS(m, "wok::adaptive_avg_pool2d: output_size [2] must have 2 values");
  m = error_of<wok::ShapeError>([] { wok::adaptive_avg_pool2d(wok::zeros({1, 1, 0, 3}), {1, 1}); });
  EXPECT_MESSAGE_HAS(m, "wok::adaptive_avg_pool2d: input spatial size 0x3 is empty");
  m = error_of<wok::ShapeError>([] { wok::global_avg_pool2d(wok::zeros({4, 4})); });
  EXPECT_MESSAGE_HAS(m, "wok::global_avg_pool2d: needs a 4-D input");
  EXPECT_MESSAGE_HAS(m, "float32[4, 4]");
}

TEST(PoolOpsErrors, DTypes) {
  Tensor b = wok::zeros({1, 1, 4, 4}, DType::kBool);
  std::string m = error_of<wok::DTypeError>([&] { wok::max_pool2d(b, {2, 2}); });
  EXPECT_MESSAGE_HAS(m, "wok::max_pool2d: ");
  EXPECT_MESSAGE_HAS(m, "bool");
  m = error_of<wok::DTypeError>([&] { wok::avg_pool2d(b, {2, 2}); });
  EXPECT_MESSAGE_HAS(m, "wok::avg_pool2d: ");
  m = error_of<wok::DTypeError>([&] { wok::adaptive_avg_pool2d(b, {1, 1}); });
  EXPECT_MESSAGE_HAS(m, "wok::adaptive_avg_pool2d: ");
  m = error_of<wok::DTypeError>([&] { wok::global_avg_pool2d(b); });
  EXPECT_MESSAGE_HAS(m, "wok::global_avg_pool2d: not defined for bool tensors");
  // Called by name, the average takes floats only (the frontend casts).
  m = error_of<wok::DTypeError>(
      [] { wok::call1("avg_pool2d", {wok::zeros({1, 1, 2, 2}, DType::kInt32)}, {{"kernel", Ints{2, 2}}}); });
  EXPECT_MESSAGE_HAS(m, "takes float32 or float64, got int32");
}

}  // namespace
