// batch_norm (inference), group_norm and instance_norm against float64
// reference loops: seeded random shapes of rank 3, 4 and 5, with and
// without weight and bias, float32 and float64, integer inputs promoted,
// both backends; batch_norm fusing into a matmul's epilogue under the JIT;
// and the errors, with the shapes they name.
//
// The bounds are per element. batch_norm is a multiply-add per element
// after folding the statistics per channel, so its bound is a few roundings
// of the terms it adds (see bn_bound). group_norm and instance_norm reduce
// over each group, so their bound grows with the group's size (see
// group_bound).
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

constexpr DType kF32 = DType::kFloat32;
constexpr DType kF64 = DType::kFloat64;

using wt::eps_of;

// Values uniform in [lo, hi], rounded to `t` so that the tensor holds them
// exactly, kept as float64 for the reference.
std::vector<double> random_in(DType t, size_t n, double lo, double hi, uint32_t seed) {
  std::vector<double> v = wt::random_values<double>(n, lo, hi, seed);
  if (t == kF32)
    for (double& x : v) x = static_cast<float>(x);
  return v;
}

Tensor tensor_of(DType t, const std::vector<double>& v, Shape shape) {
  if (t == kF32) return wok::from_vector(std::vector<float>(v.begin(), v.end()), std::move(shape));
  return wok::from_vector(v, std::move(shape));
}

// |got - want| <= bound per element, and the dtype.
::testing::AssertionResult within(const std::string& what, const Tensor& t, DType dtype,
                                  const std::vector<double>& want, const std::vector<double>& bound) {
  if (t.dtype() != dtype)
    return ::testing::AssertionFailure() << what << ": dtype " << wt::dname(t.dtype()) << ", want " << wt::dname(dtype);
  if (t.numel() != static_cast<int64_t>(want.size()))
    return ::testing::AssertionFailure() << what << ": " << t.numel() << " elements, want " << want.size();
  const std::vector<double> got = t.to_vector<double>();
  auto fail = ::testing::AssertionFailure() << what;
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double err = std::fabs(got[i] - want[i]);
    if (err <= bound[i]) continue;  // also false for nan
    if (++bad <= 8)
      fail << "\n  index " << i << " got=" << wt::fmt(got[i]) << " want=" << wt::fmt(want[i]) << " (|diff|=" << err
           << " > " << bound[i] << ")";
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return fail << "\n  " << bad << " of " << want.size() << " elements out of bounds";
}

// ---- cases -------------------------------------------------------------------------

// x [N, C, spatial...] with C a multiple of `groups`, and its per-channel
// vectors (the statistics for batch_norm, the affine for all three).
struct Case {
  Shape shape;
  int64_t groups = 1;
  double eps = 1e-5;
  std::vector<double> x, mean, var, weight, bias;
  int64_t n() const { return shape[0]; }
  int64_t c() const { return shape[1]; }
  int64_t spatial() const { return wok::numel(Shape(shape.begin() + 2, shape.end())); }
  std::string str() const {
    return wok::shape_str(shape) + " groups=" + std::to_string(groups) + " eps=" + wt::fmt(eps);
  }
};

// x of `shape`, offset from 0 so that centering matters, and its vectors.
Case make_case(DType t, Shape shape, int64_t groups, double eps, uint32_t seed) {
  Case k;
  k.shape = std::move(shape);
  k.groups = groups;
  k.eps = eps;
  const auto c = static_cast<size_t>(k.c());
  k.x = random_in(t, static_cast<size_t>(wok::numel(k.shape)), -3, 5, seed + 1);
  k.mean = random_in(t, c, -1, 2, seed + 2);
  k.var = random_in(t, c, 0.25, 2, seed + 3);
  k.weight = random_in(t, c, -1.5, 1.5, seed + 4);
  k.bias = random_in(t, c, -1, 1, seed + 5);
  return k;
}

// A small random shape of the given rank (spatial dims 1..5, 1..4 at rank
// 5 to keep the test fast), sometimes with a large eps.
Case random_case(DType t, int rank, uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int64_t groups = pick(1, 4);
  Shape shape = {pick(1, 3), groups * pick(1, 3)};
  for (int d = 2; d < rank; ++d) shape.push_back(pick(1, rank == 5 ? 4 : 5));
  return make_case(t, std::move(shape), groups, pick(0, 3) == 0 ? 0.1 : 1e-5, seed);
}

// Which of weight and bias a call passes.
struct Affine {
  bool weight, bias;
  std::string str() const { return std::string(weight ? "+weight" : "") + (bias ? "+bias" : ""); }
};
constexpr Affine kAffines[] = {{false, false}, {true, false}, {false, true}, {true, true}};

// A reference result and its per-element bound.
struct Want {
  std::vector<double> v, bound;
};

// Allowed error of batch_norm's x * scale + shift: the folded scale is a
// few roundings off (rsqrt, times weight), shift = bias - mean * scale two
// more, and the multiply-add two more, each relative to the terms it adds
// (which may cancel, hence the sum of their magnitudes).
double bn_bound(DType t, double x_scale, double mean_scale, double bias) {
  return 8 * eps_of(t) * (std::fabs(x_scale) + std::fabs(mean_scale) + std::fabs(bias)) + 1e-300;
}

Want ref_batch_norm(DType t, const Case& k, Affine a) {
  Want w;
  const int64_t s = k.spatial();
  for (int64_t n = 0; n < k.n(); ++n)
    for (int64_t c = 0; c < k.c(); ++c) {
      const double inv = 1 / std::sqrt(k.var[c] + k.eps);
      const double scale = a.weight ? k.weight[c] * inv : inv, b = a.bias ? k.bias[c] : 0;
      for (int64_t i = 0; i < s; ++i) {
        const double x = k.x[(n * k.c() + c) * s + i];
        w.v.push_back((x - k.mean[c]) * scale + b);
        w.bound.push_back(bn_bound(t, x * scale, k.mean[c] * scale, b));
      }
    }
  return w;
}

// Allowed error of a normalization over a group of m values with standard
// deviation sigma (eps included) and largest |x| max_abs, giving z before
// the affine. The mean and the variance are sums of m terms, each rounding
// at most eps times a partial sum, in whatever order the kernel adds them;
// so the mean is off by about m eps max_abs, which moves z by that over
// sigma, and sigma is off relatively by about m eps, which moves z by that
// times |z|. The factor 4 covers the remaining roundings (the centering,
// the square, rsqrt, the products) and `weight` scales it all.
double group_bound(DType t, int64_t m, double max_abs, double sigma, double z, double weight, double bias) {
  const double e = eps_of(t);
  return 4 * static_cast<double>(m + 8) * e * (max_abs / sigma + std::fabs(z)) * std::max(1.0, std::fabs(weight)) +
         4 * e * (std::fabs(z * weight) + std::fabs(bias)) + 1e-300;
}

Want ref_group_norm(DType t, const Case& k, int64_t groups, Affine a) {
  Want w;
  const int64_t per = k.c() / groups * k.spatial();  // values per group, contiguous
  const int64_t s = k.spatial();
  for (int64_t n = 0; n < k.n(); ++n)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t base = (n * groups + g) * per;
      long double sum = 0, max_abs = 0;
      for (int64_t i = 0; i < per; ++i) {
        sum += k.x[base + i];
        max_abs = std::max<long double>(max_abs, std::fabs(k.x[base + i]));
      }
      const long double mean = sum / per;
      long double sq = 0;
      for (int64_t i = 0; i < per; ++i) sq += (k.x[base + i] - mean) * (k.x[base + i] - mean);
      const long double sigma = std::sqrt(sq / per + k.eps);
      for (int64_t i = 0; i < per; ++i) {
        const int64_t c = g * (k.c() / groups) + i / s;
        const double z = static_cast<double>((k.x[base + i] - mean) / sigma);
        const double wc = a.weight ? k.weight[c] : 1, bc = a.bias ? k.bias[c] : 0;
        w.v.push_back(z * wc + bc);
        w.bound.push_back(group_bound(t, per, static_cast<double>(max_abs), static_cast<double>(sigma), z, wc, bc));
      }
    }
  return w;
}

// ---- the three ops on random shapes ----------------------------------------------------

class NormOps : public wt::BothBackends {};

// Runs `check` on cases of rank 3, 4 and 5 (three each), float32 and
// float64, with every combination of weight and bias.
void for_each_case(const std::function<void(DType, const Case&, Affine)>& check) {
  uint32_t seed = 1000;
  for (DType t : {kF32, kF64})
    for (int rank : {3, 4, 5})
      for (int rep = 0; rep < 3; ++rep) {
        const Case k = random_case(t, rank, seed += 10);
        for (Affine a : kAffines) {
          SCOPED_TRACE(wt::dname(t) + " " + k.str() + " " + a.str());
          check(t, k, a);
        }
      }
}

TEST_P(NormOps, BatchNorm) {
  for_each_case([](DType t, const Case& k, Affine a) {
    const Shape cs{k.c()};
    Tensor y = wok::batch_norm(tensor_of(t, k.x, k.shape), tensor_of(t, k.mean, cs), tensor_of(t, k.var, cs),
                               a.weight ? tensor_of(t, k.weight, cs) : Tensor(),
                               a.bias ? tensor_of(t, k.bias, cs) : Tensor(), k.eps);
    EXPECT_EQ(y.shape(), k.shape);
    const Want w = ref_batch_norm(t, k, a);
    EXPECT_TRUE(within("batch_norm", y, t, w.v, w.bound));
  });
}

TEST_P(NormOps, GroupNorm) {
  for_each_case([](DType t, const Case& k, Affine a) {
    const Shape cs{k.c()};
    Tensor y = wok::group_norm(tensor_of(t, k.x, k.shape), k.groups, a.weight ? tensor_of(t, k.weight, cs) : Tensor(),
                               a.bias ? tensor_of(t, k.bias, cs) : Tensor(), k.eps);
    EXPECT_EQ(y.shape(), k.shape);
    const Want w = ref_group_norm(t, k, k.groups, a);
    EXPECT_TRUE(within("group_norm", y, t, w.v, w.bound));
  });
}

TEST_P(NormOps, InstanceNorm) {
  for_each_case([](DType t, const Case& k, Affine a) {
    const Shape cs{k.c()};
    Tensor y = wok::instance_norm(tensor_of(t, k.x, k.shape), a.weight ? tensor_of(t, k.weight, cs) : Tensor(),
                                  a.bias ? tensor_of(t, k.bias, cs) : Tensor(), k.eps);
    EXPECT_EQ(y.shape(), k.shape);
    const Want w = ref_group_norm(t, k, k.c(), a);
    EXPECT_TRUE(within("instance_norm", y, t, w.v, w.bound));
  });
}

// ---- edges ------------------------------------------------------------------------------

// [N, C] (no spatial dims): batch_norm is per column; group_norm reduces
// over the channels of a group; instance_norm's groups are single values,
// whose variance is 0, so only eps and the bias remain.
TEST_P(NormOps, RankTwo) {
  const Case k = make_case(kF64, {3, 4}, 2, 1e-5, 77);
  const Shape cs{4};
  const Affine both{true, true};
  Tensor x = tensor_of(kF64, k.x, k.shape), w = tensor_of(kF64, k.weight, cs), b = tensor_of(kF64, k.bias, cs);
  Want bn = ref_batch_norm(kF64, k, both), gn = ref_group_norm(kF64, k, 2, both), in = ref_group_norm(kF64, k, 4, both);
  EXPECT_TRUE(within("batch_norm",
                     wok::batch_norm(x, tensor_of(kF64, k.mean, cs), tensor_of(kF64, k.var, cs), w, b, k.eps), kF64,
                     bn.v, bn.bound));
  EXPECT_TRUE(within("group_norm", wok::group_norm(x, 2, w, b, k.eps), kF64, gn.v, gn.bound));
  EXPECT_TRUE(within("instance_norm", wok::instance_norm(x, w, b, k.eps), kF64, in.v, in.bound));
  EXPECT_TRUE(within("instance_norm == bias", wok::instance_norm(x, w, b, k.eps), kF64,
                     {k.bias[0], k.bias[1], k.bias[2], k.bias[3], k.bias[0], k.bias[1], k.bias[2], k.bias[3],
                      k.bias[0], k.bias[1], k.bias[2], k.bias[3]},
                     std::vector<double>(12, 1e-15)));
}

// A constant group has variance 0: eps keeps the result finite, at bias.
TEST_P(NormOps, ConstantGroupsGiveTheBias) {
  Tensor x = wok::full({2, 4, 3, 3}, 7.0f);
  Tensor b = wok::from_vector(std::vector<float>{1, -2, 0.5f, 3});
  std::vector<double> want;
  for (int n = 0; n < 2; ++n)
    for (float bc : {1.0f, -2.0f, 0.5f, 3.0f}) want.insert(want.end(), 9, bc);
  const std::vector<double> tol(want.size(), 1e-5);
  EXPECT_TRUE(within("group_norm", wok::group_norm(x, 2, {}, b), kF32, want, tol));
  EXPECT_TRUE(within("instance_norm", wok::instance_norm(x, {}, b), kF32, want, tol));
}

// Integer and bool inputs compute in floating point as layer_norm does:
// int32 in float64, bool in float32; the vectors promote with them.
TEST_P(NormOps, IntegerInputsPromote) {
  Case k = random_case(kF64, 4, 91);
  for (double& v : k.x) v = std::round(v);
  std::vector<int32_t> xi(k.x.begin(), k.x.end());
  Tensor x = wok::from_vector(xi, k.shape);
  const Shape cs{k.c()};
  const Affine both{true, true};
  Tensor w = tensor_of(kF64, k.weight, cs), b = tensor_of(kF64, k.bias, cs);
  Want bn = ref_batch_norm(kF64, k, both), gn = ref_group_norm(kF64, k, k.groups, both),
       in = ref_group_norm(kF64, k, k.c(), both);
  EXPECT_TRUE(within("batch_norm int32",
                     wok::batch_norm(x, tensor_of(kF64, k.mean, cs), tensor_of(kF64, k.var, cs), w, b, k.eps), kF64,
                     bn.v, bn.bound));
  EXPECT_TRUE(within("group_norm int32", wok::group_norm(x, k.groups, w, b, k.eps), kF64, gn.v, gn.bound));
  EXPECT_TRUE(within("instance_norm int32", wok::instance_norm(x, w, b, k.eps), kF64, in.v, in.bound));
  // Statistics given as integers too: int32 running_var + eps is float64.
  Tensor ones_i = wok::ones({k.c()}, DType::kInt32), zeros_i = wok::zeros({k.c()}, DType::kInt32);
  Tensor y = wok::batch_norm(x, zeros_i, ones_i, {}, {}, 0.0);
  EXPECT_TRUE(within("batch_norm int32 stats", y, kF64, k.x, std::vector<double>(k.x.size(), 0.0)));
  Tensor xb = wok::from_vector(std::vector<bool>{true, false, true, true}, {1, 1, 4});
  EXPECT_EQ(wok::instance_norm(xb).dtype(), kF32);
  EXPECT_EQ(wok::group_norm(xb, 1).dtype(), kF32);
}

// Empty tensors keep their shapes.
TEST_P(NormOps, EmptyShapes) {
  for (Shape s : {Shape{0, 4, 3}, Shape{2, 4, 0}, Shape{2, 0, 3}}) {
    SCOPED_TRACE(wok::shape_str(s));
    Tensor x = wok::zeros(s), v = wok::ones({s[1]});
    EXPECT_EQ(wok::batch_norm(x, v, v, v, v).to_vector<float>().size(), 0u);
    EXPECT_EQ(wok::batch_norm(x, v, v).shape(), s);
    EXPECT_EQ(wok::group_norm(x, s[1] == 0 ? 3 : 2, v, v).shape(), s);
    EXPECT_EQ(wok::instance_norm(x, v, v).to_vector<float>().size(), 0u);
  }
}

// Under the JIT, batch_norm of a matmul's result costs no launch beyond
// batch_norm of a ready tensor: its multiply-add runs in the GEMM's
// epilogue, and only the per-channel folding runs apart.
TEST_P(NormOps, BatchNormFusesIntoAMatmulEpilogue) {
  if (GetParam() != wok::Backend::kJit) GTEST_SKIP() << "fusion is the JIT's";
  const int64_t m = 24, kd = 16, c = 12;
  std::vector<double> av = random_in(kF32, m * kd, -1, 1, 5), bv = random_in(kF32, kd * c, -1, 1, 6);
  Tensor a = tensor_of(kF32, av, {m, kd}), b = tensor_of(kF32, bv, {kd, c});
  Tensor mean = wok::rand({c}, 7), var = wok::rand({c}, 8) + 0.5f, w = wok::rand({c}, 9), bias = wok::rand({c}, 10);
  Tensor ready = wok::matmul(a, b);
  wok::eval({ready, mean, var, w, bias});

  wok::reset_stats();
  Tensor y_ready = wok::batch_norm(ready, mean, var, w, bias);
  wok::eval({y_ready});
  const int64_t ready_launches = wok::stats().kernel_launches;

  wok::reset_stats();
  Tensor y = wok::batch_norm(wok::matmul(a, b), mean, var, w, bias);
  wok::eval({y});
  EXPECT_EQ(wok::stats().kernel_launches, ready_launches) << "matmul + batch_norm, against batch_norm alone";
  EXPECT_TRUE(within("batch_norm(matmul)", y, kF32, y_ready.to_vector<double>(),
                     std::vector<double>(static_cast<size_t>(m * c), 1e-5)));
}

INSTANTIATE_TEST_SUITE_P(Backends, NormOps, wt::kBothBackends, wt::backend_param_name);

// ---- errors -----------------------------------------------------------------------------

using wt::throws_naming;

TEST(NormOpsErrors, BatchNorm) {
  Tensor x = wok::zeros({2, 3, 4}), v3 = wok::ones({3}), v4 = wok::ones({4});
  using wok::ShapeError;
  EXPECT_TRUE(throws_naming<ShapeError>([&] { wok::batch_norm(wok::zeros({3}), v3, v3); },
                                        {"wok::batch_norm: ", "rank >= 2", "[3]"}));
  EXPECT_TRUE(throws_naming<ShapeError>([&] { wok::batch_norm(wok::zeros({}), v3, v3); }, {"wok::batch_norm: ", "[]"}));
  EXPECT_TRUE(throws_naming<ShapeError>([&] { wok::batch_norm(x, v4, v3); },
                                        {"wok::batch_norm: ", "running_mean", "[2, 3, 4]", "[4]"}));
  EXPECT_TRUE(throws_naming<ShapeError>([&] { wok::batch_norm(x, v3, v4); },
                                        {"wok::batch_norm: ", "running_var", "[2, 3, 4]", "[4]"}));
  EXPECT_TRUE(throws_naming<ShapeError>([&] { wok::batch_norm(x, v3, v3, v4); },
                                        {"wok::batch_norm: ", "weight", "[2, 3, 4]", "[4]"}));
  EXPECT_TRUE(throws_naming<ShapeError>([&] { wok::batch_norm(x, v3, v3, v3, wok::ones({1, 3})); },
                                        {"wok::batch_norm: ", "bias", "[2, 3, 4]", "[1, 3]"}));
  // A scalar does not stand in for a vector: the channel count must match.
  EXPECT_TRUE(throws_naming<ShapeError>([&] { wok::batch_norm(x, wok::ones({}), v3); },
                                        {"wok::batch_norm: ", "running_mean", "[2, 3, 4]", "[]"}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { wok::batch_norm(x, Tensor(), v3); },
                                                {"wok::batch_norm: ", "running_mean", "undefined"}));
  EXPECT_THROW(wok::batch_norm(Tensor(), v3, v3), wok::Error);
}

TEST(NormOpsErrors, GroupNorm) {
  Tensor x = wok::zeros({2, 6, 4, 4});
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::group_norm(x, 4); },
                                             {"wok::group_norm: ", "[2, 6, 4, 4]", "6 channels", "4 groups"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::group_norm(x, 3, wok::ones({3})); },
                                             {"wok::group_norm: ", "weight", "[2, 6, 4, 4]", "[3]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::group_norm(x, 3, {}, wok::ones({12})); },
                                             {"wok::group_norm: ", "bias", "[2, 6, 4, 4]", "[12]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::group_norm(wok::zeros({6}), 3); },
                                             {"wok::group_norm: ", "rank >= 2", "[6]"}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { wok::group_norm(x, 0); }, {"wok::group_norm: ", "0"}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { wok::group_norm(x, -2); }, {"wok::group_norm: ", "-2"}));
}

TEST(NormOpsErrors, InstanceNorm) {
  Tensor x = wok::zeros({2, 5, 7});
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::instance_norm(wok::zeros({5})); },
                                             {"wok::instance_norm: ", "rank >= 2", "[5]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::instance_norm(x, wok::ones({7})); },
                                             {"wok::instance_norm: ", "weight", "[2, 5, 7]", "[7]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::instance_norm(x, wok::ones({5}), wok::ones({2, 5})); },
                                             {"wok::instance_norm: ", "bias", "[2, 5, 7]", "[2, 5]"}));
}

}  // namespace

namespace {

// local_response_norm against its definition in float64: ONNX's window
// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)], odd and even sizes,
// a window wider than the channels, rank 3 and 4.
class LocalResponseNorm : public wt::BothBackends {};

TEST_P(LocalResponseNorm, MatchesTheDefinition) {
  struct Case {
    Shape x;
    int64_t size;
    double alpha, beta, k;
  };
  const Case cases[] = {{{2, 5, 3, 4}, 3, 1e-4, 0.75, 1.0}, {{1, 6, 7}, 4, 0.02, 0.5, 2.0}, {{1, 3, 2, 2}, 7, 0.1, 1.5, 0.5}};
  uint32_t seed = 3;
  for (const Case& c : cases) {
    std::mt19937 rng(seed++);
    std::uniform_real_distribution<double> u(-3, 3);
    std::vector<float> x(static_cast<size_t>(wok::numel(c.x)));
    for (float& e : x) e = static_cast<float>(u(rng));
    const std::vector<float> got =
        wok::local_response_norm(wok::from_vector(x, c.x), c.size, c.alpha, c.beta, c.k).to_vector<float>();
    const int64_t channels = c.x[1], inner = wok::numel(c.x) / (c.x[0] * channels);
    for (int64_t n = 0; n < c.x[0]; ++n)
      for (int64_t ch = 0; ch < channels; ++ch)
        for (int64_t i = 0; i < inner; ++i) {
          double sum = 0;
          for (int64_t j = std::max<int64_t>(0, ch - (c.size - 1) / 2); j <= std::min(channels - 1, ch + c.size / 2); ++j) {
            const double v = x[static_cast<size_t>((n * channels + j) * inner + i)];
            sum += v * v;
          }
          const auto at = static_cast<size_t>((n * channels + ch) * inner + i);
          const double want = x[at] / std::pow(c.k + c.alpha / static_cast<double>(c.size) * sum, c.beta);
          EXPECT_NEAR(got[at], want, 1e-5 * std::abs(want) + 1e-30) << "x" << wok::shape_str(c.x) << " size " << c.size << " at " << at;
        }
  }
  EXPECT_THROW(wok::local_response_norm(wok::zeros({2, 3}), 0), wok::ArgumentError);
  EXPECT_THROW(wok::local_response_norm(wok::zeros({3}), 3), wok::ShapeError);
}

INSTANTIATE_TEST_SUITE_P(Backends, LocalResponseNorm, wt::kBothBackends, wt::backend_param_name);

}  // namespace
