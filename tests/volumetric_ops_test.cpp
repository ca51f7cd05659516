// The 3-D convolutions and pools (conv3d, conv_transpose3d, max_pool3d,
// avg_pool3d), which are lowered onto the 2-D ops (Note [3-D convolution
// as 2-D], Note [Separable 3-D pooling]), against float64 direct loops
// written here, under both backends: strides, dilations, asymmetric
// padding, groups, bias, output_padding, ceil mode and count_include_pad,
// float32 and float64, and the errors, which name the 3-D call.
#include <gtest/gtest.h>
#include <wok/wok.h>

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

std::vector<double> random_doubles(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& e : v) e = u(rng);
  return v;
}

// The values as the dtype under test holds them, for the references.
std::vector<double> held_as(DType t, std::vector<double> v) {
  if (t == DType::kFloat32)
    for (double& e : v) e = static_cast<float>(e);
  return v;
}

// A float64 reference and, per element, the sum of the magnitudes of its
// terms (the scale of a correct result's rounding error).
struct Ref {
  Shape shape;
  std::vector<double> v, scale;
};

void expect_close(const Tensor& got, const Ref& want, DType t, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape) << what;
  const std::vector<double> g = got.astype(DType::kFloat64).to_vector<double>();
  const double eps = t == DType::kFloat32 ? 0x1p-23 : 0x1p-52;
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 5; ++i) {
    const double bound = 64 * eps * want.scale[i] + 1e-300;
    if (!(std::abs(g[i] - want.v[i]) <= bound)) {
      ADD_FAILURE() << what << ": element " << i << " is " << g[i] << ", want " << want.v[i];
      ++bad;
    }
  }
}

int64_t idx5(const Shape& s, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
  return (((a * s[1] + b) * s[2] + c) * s[3] + d) * s[4] + e;
}

// ---- convolutions ------------------------------------------------------------------------

struct Conv3dCase {
  Shape x, w;     // conv3d: w [O, C/g, KD, KH, KW]; transpose: w [C, O/g, KD, KH, KW]
  Ints s, p, d;   // p: {front, top, left, back, bottom, right}
  int64_t groups = 1;
  Ints op = {0, 0, 0};  // conv_transpose3d's output_padding
  bool bias = true;
};

Ref ref_conv3d(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b,
               const Conv3dCase& c) {
  const int64_t O = c.w[0], cpg = c.w[1], opg = O / c.groups;
  Shape out{c.x[0], O, 0, 0, 0};
  for (int i = 0; i < 3; ++i)
    out[2 + i] = (c.x[2 + i] + c.p[i] + c.p[i + 3] - c.d[i] * (c.w[2 + i] - 1) - 1) / c.s[i] + 1;
  Ref r{out, std::vector<double>(static_cast<size_t>(wok::numel(out))), std::vector<double>(static_cast<size_t>(wok::numel(out)))};
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t z = 0; z < out[2]; ++z)
        for (int64_t y = 0; y < out[3]; ++y)
          for (int64_t xo = 0; xo < out[4]; ++xo) {
            double sum = b.empty() ? 0 : b[static_cast<size_t>(o)], mag = std::abs(sum);
            const int64_t g = o / opg;
            for (int64_t ci = 0; ci < cpg; ++ci)
              for (int64_t kd = 0; kd < c.w[2]; ++kd)
                for (int64_t kh = 0; kh < c.w[3]; ++kh)
                  for (int64_t kw = 0; kw < c.w[4]; ++kw) {
                    const int64_t iz = z * c.s[0] - c.p[0] + kd * c.d[0], iy = y * c.s[1] - c.p[1] + kh * c.d[1],
                                  ix = xo * c.s[2] - c.p[2] + kw * c.d[2];
                    if (iz < 0 || iz >= c.x[2] || iy < 0 || iy >= c.x[3] || ix < 0 || ix >= c.x[4]) continue;
                    const double term = x[static_cast<size_t>(idx5(c.x, n, g * cpg + ci, iz, iy, ix))] *
                                        w[static_cast<size_t>(idx5(c.w, o, ci, kd, kh, kw))];
                    sum += term;
                    mag += std::abs(term);
                  }
            const auto at = static_cast<size_t>(idx5(out, n, o, z, y, xo));
            r.v[at] = sum;
            r.scale[at] = mag;
          }
  return r;
}

Ref ref_conv_transpose3d(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b,
                         const Conv3dCase& c) {
  const int64_t C = c.x[1], cpg = C / c.groups, opg = c.w[1], O = opg * c.groups;
  Shape out{c.x[0], O, 0, 0, 0};
  for (int i = 0; i < 3; ++i)
    out[2 + i] = (c.x[2 + i] - 1) * c.s[i] - c.p[i] - c.p[i + 3] + c.d[i] * (c.w[2 + i] - 1) + c.op[i] + 1;
  const auto total = static_cast<size_t>(wok::numel(out));
  Ref r{out, std::vector<double>(total, 0), std::vector<double>(total, 0)};
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t z = 0; z < out[2]; ++z)
        for (int64_t y = 0; y < out[3]; ++y)
          for (int64_t xo = 0; xo < out[4]; ++xo) {
            const auto at = static_cast<size_t>(idx5(out, n, o, z, y, xo));
            r.v[at] = b.empty() ? 0 : b[static_cast<size_t>(o)];
            r.scale[at] = std::abs(r.v[at]);
          }
  for (int64_t n = 0; n < c.x[0]; ++n)
    for (int64_t ci = 0; ci < C; ++ci)
      for (int64_t iz = 0; iz < c.x[2]; ++iz)
        for (int64_t iy = 0; iy < c.x[3]; ++iy)
          for (int64_t ix = 0; ix < c.x[4]; ++ix) {
            const double xv = x[static_cast<size_t>(idx5(c.x, n, ci, iz, iy, ix))];
            const int64_t g = ci / cpg;
            for (int64_t oo = 0; oo < opg; ++oo)
              for (int64_t kd = 0; kd < c.w[2]; ++kd)
                for (int64_t kh = 0; kh < c.w[3]; ++kh)
                  for (int64_t kw = 0; kw < c.w[4]; ++kw) {
                    const int64_t z = iz * c.s[0] - c.p[0] + kd * c.d[0], y = iy * c.s[1] - c.p[1] + kh * c.d[1],
                                  xo = ix * c.s[2] - c.p[2] + kw * c.d[2];
                    if (z < 0 || z >= out[2] || y < 0 || y >= out[3] || xo < 0 || xo >= out[4]) continue;
                    const double term = xv * w[static_cast<size_t>(idx5(c.w, ci, oo, kd, kh, kw))];
                    const auto at = static_cast<size_t>(idx5(out, n, g * opg + oo, z, y, xo));
                    r.v[at] += term;
                    r.scale[at] += std::abs(term);
                  }
          }
  return r;
}

const Conv3dCase kConvCases[] = {
    {{1, 2, 4, 5, 6}, {3, 2, 3, 3, 3}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, {1, 1, 1}},
    {{2, 3, 7, 6, 5}, {4, 3, 3, 2, 3}, {2, 1, 2}, {1, 0, 2, 0, 1, 1}, {1, 2, 1}},
    {{1, 4, 6, 5, 5}, {6, 2, 2, 3, 1}, {1, 2, 1}, {0, 1, 0, 1, 1, 0}, {2, 1, 1}, 2},
    {{1, 3, 5, 4, 4}, {2, 3, 1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, {1, 1, 1}, 1, {0, 0, 0}, false},
};

// conv_transpose3d cases: w [C, O/g, ...]; output_padding below stride or dilation.
const Conv3dCase kTransposeCases[] = {
    {{1, 1, 3, 4, 5}, {1, 2, 3, 3, 3}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, {1, 1, 1}},
    {{2, 3, 3, 4, 3}, {3, 2, 3, 2, 3}, {2, 1, 3}, {1, 0, 1, 1, 0, 1}, {1, 2, 1}, 1, {1, 0, 2}},
    {{1, 4, 4, 3, 3}, {4, 1, 2, 3, 2}, {3, 2, 1}, {0, 1, 0, 0, 1, 0}, {2, 1, 1}, 2, {0, 1, 0}},
    {{1, 2, 2, 2, 2}, {2, 3, 1, 1, 1}, {2, 2, 2}, {0, 0, 0, 0, 0, 0}, {1, 1, 1}, 1, {1, 1, 1}, false},
};

// A stream, not operator+ chains: GCC 12 reports a false -Wrestrict on "x" + std::string.
std::string case_str(const Conv3dCase& c) {
  std::ostringstream out;
  out << "x" << wok::shape_str(c.x) << " w" << wok::shape_str(c.w) << " stride" << wok::shape_str(c.s) << " pad"
      << wok::shape_str(c.p) << " dilation" << wok::shape_str(c.d) << " groups " << c.groups << " output_padding"
      << wok::shape_str(c.op);
  return out.str();
}

class ConvOps3d : public wt::BothBackends {};

// Runs `op` on random operands of every case (float32 and float64, bias of
// `out_channels(c)` values when the case has one) against `ref`.
template <typename Op, typename RefFn, size_t kCount>
void check_cases(const char* name, const Conv3dCase (&cases)[kCount], uint32_t seed, int64_t (*out_channels)(const Conv3dCase&),
                 Op op, RefFn ref) {
  for (const Conv3dCase& c : cases)
    for (DType t : {DType::kFloat32, DType::kFloat64}) {
      const auto x = held_as(t, random_doubles(wok::numel(c.x), seed++));
      const auto w = held_as(t, random_doubles(wok::numel(c.w), seed++));
      const int64_t o = out_channels(c);
      const auto b = c.bias ? held_as(t, random_doubles(o, seed++)) : std::vector<double>{};
      const Tensor bias = c.bias ? wok::from_vector(b, {o}).astype(t) : Tensor();
      const Tensor y = op(wok::from_vector(x, c.x).astype(t), wok::from_vector(w, c.w).astype(t), bias, c);
      expect_close(y, ref(x, w, b, c), t, std::string(name) + " " + wt::dname(t) + " " + case_str(c));
    }
}

TEST_P(ConvOps3d, Conv3dMatchesDirectLoops) {
  check_cases(
      "conv3d", kConvCases, 1, [](const Conv3dCase& c) { return c.w[0]; },
      [](const Tensor& x, const Tensor& w, const Tensor& b, const Conv3dCase& c) {
        return wok::conv3d(x, w, b, c.s, c.p, c.d, c.groups);
      },
      ref_conv3d);
}

TEST_P(ConvOps3d, ConvTranspose3dMatchesDirectLoops) {
  check_cases(
      "conv_transpose3d", kTransposeCases, 100, [](const Conv3dCase& c) { return c.w[1] * c.groups; },
      [](const Tensor& x, const Tensor& w, const Tensor& b, const Conv3dCase& c) {
        return wok::conv_transpose3d(x, w, b, c.s, c.p, c.op, c.groups, c.d);
      },
      ref_conv_transpose3d);
}

// Symmetric padding as three values, and integer operands promoted to float64.
TEST_P(ConvOps3d, ThreeValuePaddingAndIntegerOperands) {
  const Conv3dCase c{{1, 2, 3, 3, 3}, {2, 2, 2, 2, 2}, {1, 1, 1}, {1, 0, 1, 1, 0, 1}, {1, 1, 1}, 1, {0, 0, 0}, false};
  std::vector<double> x(static_cast<size_t>(wok::numel(c.x))), w(static_cast<size_t>(wok::numel(c.w)));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(static_cast<int>(i % 7) - 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(static_cast<int>(i % 5) - 2);
  const Tensor y = wok::conv3d(wok::from_vector(x, c.x).astype(DType::kInt32), wok::from_vector(w, c.w).astype(DType::kInt64),
                               {}, {1, 1, 1}, {1, 0, 1});
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  expect_close(y, ref_conv3d(x, w, {}, c), DType::kFloat64, "conv3d int32 x int64");
}

INSTANTIATE_TEST_SUITE_P(Backends, ConvOps3d, wt::kBothBackends, wt::backend_param_name);

// ---- pools -------------------------------------------------------------------------------

struct Pool3dCase {
  Shape x;
  Ints k, s, p, d = {1, 1, 1};  // p: {front, top, left, back, bottom, right}
  bool ceil_mode = false, include_pad = false;
};

int64_t pooled(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pa, int64_t d, bool ceil_mode) {
  const int64_t num = in + pb + pa - d * (k - 1) - 1;
  int64_t out = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pb) --out;
  return out;
}

// PyTorch's windows: positions inside the input count; with include_pad the
// divisor is the window clipped to the padded input.
Ref ref_pool3d(const std::vector<double>& x, const Pool3dCase& c, bool average) {
  Shape out{c.x[0], c.x[1], 0, 0, 0};
  for (int i = 0; i < 3; ++i) out[2 + i] = pooled(c.x[2 + i], c.k[i], c.s[i], c.p[i], c.p[i + 3], c.d[i], c.ceil_mode);
  const auto total = static_cast<size_t>(wok::numel(out));
  Ref r{out, std::vector<double>(total), std::vector<double>(total)};
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t ch = 0; ch < out[1]; ++ch)
      for (int64_t z = 0; z < out[2]; ++z)
        for (int64_t y = 0; y < out[3]; ++y)
          for (int64_t xo = 0; xo < out[4]; ++xo) {
            const int64_t o[3] = {z, y, xo};
            double best = -INFINITY, sum = 0, mag = 0;
            int64_t valid = 0, padded = 1;
            for (int i = 0; i < 3; ++i) {
              const int64_t start = o[i] * c.s[i] - c.p[i];
              const int64_t end = std::min(start + c.k[i], c.x[2 + i] + c.p[i + 3]);
              padded *= end - start;
            }
            for (int64_t a = 0; a < c.k[0]; ++a)
              for (int64_t b2 = 0; b2 < c.k[1]; ++b2)
                for (int64_t e = 0; e < c.k[2]; ++e) {
                  const int64_t iz = z * c.s[0] - c.p[0] + a * c.d[0], iy = y * c.s[1] - c.p[1] + b2 * c.d[1],
                                ix = xo * c.s[2] - c.p[2] + e * c.d[2];
                  if (iz < 0 || iz >= c.x[2] || iy < 0 || iy >= c.x[3] || ix < 0 || ix >= c.x[4]) continue;
                  const double v = x[static_cast<size_t>(idx5(c.x, n, ch, iz, iy, ix))];
                  best = std::max(best, v);
                  sum += v;
                  mag += std::abs(v);
                  ++valid;
                }
            const auto at = static_cast<size_t>(idx5(out, n, ch, z, y, xo));
            const double div = static_cast<double>(c.include_pad ? padded : valid);
            r.v[at] = average ? sum / div : best;
            r.scale[at] = average ? 2 * mag / div : 0;  // two roundings of the average: planes, then depth
          }
  return r;
}

const Pool3dCase kPoolCases[] = {
    {{1, 3, 8, 8, 8}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0, 0, 0, 0}},
    {{2, 2, 7, 6, 9}, {3, 2, 3}, {2, 1, 2}, {1, 0, 1, 1, 1, 0}},
    {{1, 2, 7, 7, 6}, {3, 3, 2}, {2, 2, 2}, {1, 1, 0, 0, 1, 1}, {1, 1, 1}, true, false},
    {{1, 2, 7, 7, 6}, {3, 3, 2}, {2, 2, 2}, {1, 1, 0, 0, 1, 1}, {1, 1, 1}, true, true},
    {{1, 1, 5, 6, 7}, {2, 3, 2}, {1, 2, 3}, {1, 1, 1, 1, 1, 1}, {1, 1, 1}, false, true},
};

std::string pool_str(const Pool3dCase& c) {
  std::ostringstream out;
  out << "x" << wok::shape_str(c.x) << " kernel" << wok::shape_str(c.k) << " stride" << wok::shape_str(c.s) << " pad"
      << wok::shape_str(c.p) << " dilation" << wok::shape_str(c.d) << (c.ceil_mode ? " ceil" : "")
      << (c.include_pad ? " count_include_pad" : "");
  return out.str();
}

class PoolOps3d : public wt::BothBackends {};

TEST_P(PoolOps3d, MaxAndAverageMatchDirectLoops) {
  uint32_t seed = 7;
  for (const Pool3dCase& c : kPoolCases)
    for (DType t : {DType::kFloat32, DType::kFloat64}) {
      const auto x = held_as(t, random_doubles(wok::numel(c.x), seed++));
      const Tensor xt = wok::from_vector(x, c.x).astype(t);
      expect_close(wok::max_pool3d(xt, c.k, c.s, c.p, c.d, c.ceil_mode), ref_pool3d(x, c, false), t,
                   "max_pool3d " + wt::dname(t) + " " + pool_str(c));
      expect_close(wok::avg_pool3d(xt, c.k, c.s, c.p, c.ceil_mode, c.include_pad), ref_pool3d(x, c, true), t,
                   "avg_pool3d " + wt::dname(t) + " " + pool_str(c));
    }
}

TEST_P(PoolOps3d, DilatedMaxAndDefaultStride) {
  const Pool3dCase c{{1, 2, 9, 8, 7}, {2, 3, 2}, {2, 3, 2}, {1, 1, 0, 0, 2, 1}, {3, 2, 2}};
  const auto x = held_as(DType::kFloat32, random_doubles(wok::numel(c.x), 42));
  const Tensor xt = wok::from_vector(x, c.x).astype(DType::kFloat32);
  expect_close(wok::max_pool3d(xt, c.k, c.s, c.p, c.d), ref_pool3d(x, c, false), DType::kFloat32, "dilated max_pool3d");
  const Pool3dCase by_kernel{{1, 2, 6, 6, 6}, {3, 2, 3}, {3, 2, 3}, {0, 0, 0, 0, 0, 0}};
  const auto x2 = random_doubles(wok::numel(by_kernel.x), 43);
  expect_close(wok::avg_pool3d(wok::from_vector(x2, by_kernel.x), {3, 2, 3}), ref_pool3d(x2, by_kernel, true),
               DType::kFloat64, "avg_pool3d, stride defaulting to the kernel");
}

TEST_P(PoolOps3d, NanWinsTheMaximum) {
  std::vector<double> x(2 * 2 * 2, 1.0);
  x[5] = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> y = wok::max_pool3d(wok::from_vector(x, {1, 1, 2, 2, 2}), {2, 2, 2}).to_vector<double>();
  ASSERT_EQ(y.size(), 1u);
  EXPECT_TRUE(std::isnan(y[0]));
}

INSTANTIATE_TEST_SUITE_P(Backends, PoolOps3d, wt::kBothBackends, wt::backend_param_name);

// ---- errors name the 3-D call ---------------------------------------------------------------

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const wok::Error& e) {
    return e.what();
  }
  return "";
}

TEST(VolumetricErrors, NameTheCallAndItsOperands) {
  const Tensor x = wok::zeros({1, 2, 4, 4, 4});
  const std::string rank = error_of([&] { wok::conv3d(wok::zeros({1, 2, 4, 4}), wok::zeros({3, 2, 1, 1, 1})); });
  EXPECT_NE(rank.find("wok::conv3d: x must be 5-D"), std::string::npos) << rank;
  const std::string channels = error_of([&] { wok::conv3d(x, wok::zeros({3, 3, 1, 1, 1})); });
  EXPECT_NE(channels.find("wok::conv3d"), std::string::npos) << channels;
  EXPECT_NE(channels.find("float32[1, 2, 4, 4, 4]"), std::string::npos) << channels;
  const std::string big = error_of([&] { wok::conv3d(x, wok::zeros({3, 2, 5, 1, 1})); });
  EXPECT_NE(big.find("smaller than the kernel"), std::string::npos) << big;
  const std::string opad = error_of([&] {
    wok::conv_transpose3d(x, wok::zeros({2, 1, 2, 2, 2}), {}, {1, 1, 1}, {0, 0, 0}, {1, 0, 0});
  });
  EXPECT_NE(opad.find("wok::conv_transpose3d: output_padding"), std::string::npos) << opad;
  const std::string pad = error_of([&] { wok::max_pool3d(x, {2, 2, 2}, {}, {2, 0, 0}); });
  EXPECT_NE(pad.find("wok::max_pool3d: padding"), std::string::npos) << pad;
  EXPECT_NE(pad.find("[1, 2, 4, 4, 4]"), std::string::npos) << pad;
  const std::string kernel = error_of([&] { wok::avg_pool3d(x, {2, 2}); });
  EXPECT_NE(kernel.find("wok::avg_pool3d: kernel"), std::string::npos) << kernel;
  const std::string window = error_of([&] { wok::avg_pool3d(x, {5, 1, 1}); });
  EXPECT_NE(window.find("smaller than the window"), std::string::npos) << window;
}

}  // namespace
