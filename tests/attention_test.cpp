// scaled_dot_product_attention against a float64 loop of PyTorch's
// reference formula, on both CPU backends: batch dims that broadcast,
// default and given scales, bool and additive masks that broadcast, causal
// masks with L = S, L < S and L > S, a fully masked row (0s, as PyTorch),
// float64; three kernels under the JIT whatever the mask; a causal call under
// wok::compile at several lengths; and the errors.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

// Row-major index of `idx` (of `shape`'s rank) in a tensor of shape `of`,
// right-aligned and broadcast (size-1 dims read index 0).
int64_t broadcast_index(const Shape& idx_shape, const std::vector<int64_t>& idx, const Shape& of) {
  int64_t flat = 0;
  const size_t pad = idx_shape.size() - of.size();
  for (size_t d = 0; d < of.size(); ++d) flat = flat * of[d] + (of[d] == 1 ? 0 : idx[pad + d]);
  return flat;
}

struct Inputs {
  Shape q_shape, k_shape, v_shape;
  std::vector<double> q, k, v;
};

Inputs make_inputs(Shape qs, Shape ks, Shape vs, uint32_t seed) {
  Inputs in{qs, ks, vs, {}, {}, {}};
  // Values exact in float32, so that both dtypes see the same inputs.
  auto fill = [&](const Shape& s, uint32_t sd) {
    std::vector<double> v = wt::random_values<double>(static_cast<size_t>(wok::numel(s)), -1, 1, sd);
    for (double& x : v) x = static_cast<float>(x);
    return v;
  };
  in.q = fill(qs, seed);
  in.k = fill(ks, seed + 1);
  in.v = fill(vs, seed + 2);
  return in;
}

// The mask, as what the reference adds to each score: 0 / -inf from a bool
// mask (or the causal one), the values of a float mask.
struct Bias {
  Shape shape;               // broadcast to [..., L, S]
  std::vector<double> add;
};

// softmax(q k^T scale + bias) v in float64, with the batch dims broadcast.
std::vector<double> reference(const Inputs& in, const std::optional<Bias>& bias, double scale, Shape* out_shape) {
  const int64_t l = in.q_shape.end()[-2], e = in.q_shape.back(), s = in.k_shape.end()[-2], ev = in.v_shape.back();
  Shape batch = *wok::broadcast_shapes(Shape(in.q_shape.begin(), in.q_shape.end() - 2),
                                       Shape(in.k_shape.begin(), in.k_shape.end() - 2));
  batch = *wok::broadcast_shapes(batch, Shape(in.v_shape.begin(), in.v_shape.end() - 2));
  Shape scores_shape = batch;
  scores_shape.push_back(l);
  scores_shape.push_back(s);
  *out_shape = batch;
  out_shape->push_back(l);
  out_shape->push_back(ev);
  const int64_t nb = wok::numel(batch);
  std::vector<double> out;
  for (int64_t b = 0; b < nb; ++b) {
    std::vector<int64_t> bidx(batch.size());
    for (int64_t r = b, d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
      bidx[d] = r % batch[d];
      r /= batch[d];
    }
    auto at = [&](const Shape& shape, const std::vector<double>& data, int64_t i, int64_t j) {
      std::vector<int64_t> idx = bidx;
      idx.push_back(i);
      idx.push_back(j);
      Shape full = batch;
      full.push_back(shape.end()[-2]);
      full.push_back(shape.back());
      return data[broadcast_index(full, idx, shape)];
    };
    for (int64_t i = 0; i < l; ++i) {
      std::vector<double> row(s);
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < s; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < e; ++c) dot += at(in.q_shape, in.q, i, c) * at(in.k_shape, in.k, j, c);
        row[j] = dot * scale;
        if (bias) {
          std::vector<int64_t> idx = bidx;
          idx.push_back(i);
          idx.push_back(j);
          row[j] += bias->add[broadcast_index(scores_shape, idx, bias->shape)];
        }
        mx = std::max(mx, row[j]);
      }
      // A row of all -inf gives 0s, as PyTorch's _safe_softmax.
      double total = 0;
      for (double& x : row) total += (x = mx == -std::numeric_limits<double>::infinity() ? 0 : std::exp(x - mx));
      if (total == 0) total = 1;
      for (int64_t c = 0; c < ev; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < s; ++j) acc += row[j] / total * at(in.v_shape, in.v, j, c);
        out.push_back(acc);
      }
    }
  }
  return out;
}

Tensor tensor_of(DType t, const std::vector<double>& v, const Shape& shape) {
  return wok::from_vector(v, shape).astype(t);
}

// Values in [-1, 1] and small shapes: the float32 error is a few roundings
// of sums of at most 16 products.
double tol_of(DType t) { return t == DType::kFloat32 ? 2e-6 : 1e-14; }

// Runs one case for float32 and float64 against the reference.
void check(const Inputs& in, const Tensor& mask, const std::optional<Bias>& bias, bool causal,
           std::optional<double> scale) {
  const double sc = scale.value_or(1 / std::sqrt(static_cast<double>(in.q_shape.back())));
  Shape out_shape;
  const std::vector<double> want = reference(in, bias, sc, &out_shape);
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(wt::dname(t));
    Tensor y = wok::scaled_dot_product_attention(tensor_of(t, in.q, in.q_shape), tensor_of(t, in.k, in.k_shape),
                                                 tensor_of(t, in.v, in.v_shape), mask, causal, scale);
    EXPECT_EQ(y.shape(), out_shape);
    EXPECT_EQ(y.dtype(), t);
    if (t == DType::kFloat32) EXPECT_TRUE(wt::close<float>("sdpa", y, want, 0, tol_of(t)));
    else EXPECT_TRUE(wt::close<double>("sdpa", y, want, 0, tol_of(t)));
  }
}

// The causal bias of [L, S]: 0 where j <= i, -inf above.
Bias causal_bias(int64_t l, int64_t s) {
  Bias b{{l, s}, {}};
  for (int64_t i = 0; i < l; ++i)
    for (int64_t j = 0; j < s; ++j) b.add.push_back(j <= i ? 0 : -std::numeric_limits<double>::infinity());
  return b;
}

// A random bool mask of `shape` (true = attend) with at least one true per
// row, and its bias.
std::pair<Tensor, Bias> bool_mask(const Shape& shape, uint32_t seed) {
  std::vector<bool> keep = wt::random_values<bool>(static_cast<size_t>(wok::numel(shape)), 0, 1, seed);
  for (size_t r = 0; r < keep.size(); r += static_cast<size_t>(shape.back())) keep[r + seed % shape.back()] = true;
  Bias b{shape, {}};
  for (bool k : keep) b.add.push_back(k ? 0 : -std::numeric_limits<double>::infinity());
  return {wok::from_vector(keep, shape), b};
}

class Attention : public wt::BothBackends {};

TEST_P(Attention, NoMask) {
  check(make_inputs({2, 3, 5, 8}, {2, 3, 7, 8}, {2, 3, 7, 4}, 1), {}, std::nullopt, false, std::nullopt);
  check(make_inputs({4, 6}, {9, 6}, {9, 3}, 2), {}, std::nullopt, false, 0.3);  // no batch dims, a given scale
}

TEST_P(Attention, BatchDimsBroadcast) {
  // q's heads dim against k's and v's batch: [2, 1] with [3] -> [2, 3].
  check(make_inputs({2, 1, 5, 8}, {3, 7, 8}, {1, 7, 4}, 3), {}, std::nullopt, false, std::nullopt);
}

TEST_P(Attention, BoolMasks) {
  const Inputs in = make_inputs({2, 3, 5, 8}, {2, 3, 7, 8}, {2, 3, 7, 4}, 4);
  for (Shape ms : {Shape{5, 7}, Shape{2, 3, 5, 7}, Shape{3, 1, 7}, Shape{7}}) {
    SCOPED_TRACE(wok::shape_str(ms));
    auto [mask, bias] = bool_mask(ms, 5);
    check(in, mask, bias, false, std::nullopt);
  }
}

TEST_P(Attention, AdditiveMasks) {
  const Inputs in = make_inputs({2, 3, 5, 8}, {2, 3, 7, 8}, {2, 3, 7, 4}, 6);
  for (Shape ms : {Shape{5, 7}, Shape{3, 1, 7}}) {
    SCOPED_TRACE(wok::shape_str(ms));
    Bias b{ms, wt::random_values<double>(static_cast<size_t>(wok::numel(ms)), -3, 3, 7)};
    for (double& x : b.add) x = static_cast<float>(x);
    b.add[1] = -std::numeric_limits<double>::infinity();  // -inf works as in a bool mask
    check(in, wok::from_vector(b.add, ms), b, false, std::nullopt);
    // A float64 mask on float32 scores is cast to them.
    check(in, wok::from_vector(b.add, ms).astype(DType::kFloat32), b, false, std::nullopt);
  }
}

TEST_P(Attention, Causal) {
  for (auto [l, s] : std::vector<std::pair<int64_t, int64_t>>{{6, 6}, {4, 9}, {9, 4}}) {
    SCOPED_TRACE("L=" + std::to_string(l) + " S=" + std::to_string(s));
    check(make_inputs({2, l, 8}, {2, s, 8}, {2, s, 5}, 8), {}, causal_bias(l, s), true, std::nullopt);
  }
}

// A query whose keys are all masked out, by a bool mask or an additive
// one, gets 0s, as PyTorch's kernels give (its _safe_softmax); the other
// rows are unaffected. A nan score still gives nan.
TEST_P(Attention, AFullyMaskedRowIsZero) {
  const Inputs in = make_inputs({3, 4}, {5, 4}, {5, 2}, 9);
  std::vector<bool> keep(15, true);
  for (int j = 0; j < 5; ++j) keep[5 + j] = false;  // row 1
  Bias b{{3, 5}, {}};
  for (bool k : keep) b.add.push_back(k ? 0 : -std::numeric_limits<double>::infinity());
  check(in, wok::from_vector(keep, {3, 5}), b, false, std::nullopt);
  check(in, wok::from_vector(b.add, {3, 5}), b, false, std::nullopt);
  Tensor q = tensor_of(DType::kFloat32, in.q, in.q_shape), k = tensor_of(DType::kFloat32, in.k, in.k_shape);
  Tensor v = tensor_of(DType::kFloat32, in.v, in.v_shape);
  const std::vector<float> got =
      wok::scaled_dot_product_attention(q, k, v, wok::from_vector(keep, {3, 5})).to_vector<float>();
  EXPECT_EQ(got[2], 0.0f);
  EXPECT_EQ(got[3], 0.0f);
  std::vector<double> qn = in.q;
  qn[0] = std::numeric_limits<double>::quiet_NaN();  // query 0
  const std::vector<float> nan_row =
      wok::scaled_dot_product_attention(tensor_of(DType::kFloat32, qn, in.q_shape), k, v).to_vector<float>();
  EXPECT_TRUE(std::isnan(nan_row[0]) && std::isnan(nan_row[1]));
  EXPECT_FALSE(std::isnan(nan_row[2]));
}

INSTANTIATE_TEST_SUITE_P(Backends, Attention, wt::kBothBackends, wt::backend_param_name);

// ---- under the JIT -----------------------------------------------------------------------

class AttentionFusion : public wt::JitLaunchCounts {};

// q k^T with its scaling and a float mask in the GEMM's epilogue (or the
// mask in the softmax kernel), the softmax row kernel, and the GEMM with v.
TEST_F(AttentionFusion, ThreeKernelsWhateverTheMask) {
  Tensor q = wok::rand({2, 3, 8, 16}, 1), k = wok::rand({2, 3, 10, 16}, 2), v = wok::rand({2, 3, 10, 16}, 3);
  Tensor mb = wok::rand({8, 10}, 4) > 0.3f, mf = wok::rand({3, 1, 10}, 5);
  wok::eval({q, k, v, mb, mf});
  EXPECT_EQ(launches_of({wok::scaled_dot_product_attention(q, k, v)}), 3);
  EXPECT_EQ(launches_of({wok::scaled_dot_product_attention(q, k, v, mb)}), 3);
  EXPECT_EQ(launches_of({wok::scaled_dot_product_attention(q, k, v, mf)}), 3);
  EXPECT_EQ(launches_of({wok::scaled_dot_product_attention(q, k, v, {}, true)}), 3);
}

// The causal mask is data made for the call's sizes: a compiled function
// traces again for new lengths (rather than reusing another length's mask)
// and agrees with the eager call at each.
TEST(AttentionCompiled, CausalAtSeveralLengths) {
  auto f = wok::compile([](const Tensor& q, const Tensor& k, const Tensor& v) {
    return wok::scaled_dot_product_attention(q, k, v, {}, true);
  });
  for (int64_t l : {4, 6, 9, 1, 7}) {
    SCOPED_TRACE("L=" + std::to_string(l));
    Tensor q = wok::rand({2, l, 8}, 10 + l), k = wok::rand({2, l + 1, 8}, 20 + l), v = wok::rand({2, l + 1, 5}, 30 + l);
    const std::vector<double> eager = wok::scaled_dot_product_attention(q, k, v, {}, true).to_vector<double>();
    EXPECT_TRUE(wt::close<float>("compiled sdpa", f(q, k, v), eager, 0, 0));
  }
}

// ---- on a GPU -------------------------------------------------------------------------------

// CUDA inputs, with the causal mask made on their device, against the CPU.
TEST(AttentionOnCuda, MatchesTheCpu) {
  if (!wok::cuda_available()) GTEST_SKIP() << "no CUDA device: " << wok::cuda_unavailable_reason();
  const wok::Device gpu = wok::Device::cuda();
  Tensor q = wok::rand({2, 3, 8, 16}, 1), k = wok::rand({2, 3, 10, 16}, 2), v = wok::rand({2, 3, 10, 16}, 3);
  Tensor mb = wok::rand({8, 10}, 4) > 0.3f;
  for (int m = 0; m < 3; ++m) {
    SCOPED_TRACE(m);
    Tensor mask = m == 1 ? mb : Tensor();
    Tensor y =
        wok::scaled_dot_product_attention(q.to(gpu), k.to(gpu), v.to(gpu), m == 1 ? mb.to(gpu) : Tensor(), m == 2);
    EXPECT_EQ(y.device(), gpu);
    EXPECT_TRUE(wt::close<float>(
        "sdpa cuda", y, wok::scaled_dot_product_attention(q, k, v, mask, m == 2).to_vector<double>(), 0, 1e-5));
  }
}

// ---- errors ------------------------------------------------------------------------------

using wt::throws_naming;

TEST(AttentionErrors, NameTheShapes) {
  const char* op = "wok::scaled_dot_product_attention";
  Tensor q = wok::zeros({2, 5, 8}), k = wok::zeros({2, 7, 8}), v = wok::zeros({2, 7, 4});
  auto sdpa = [](const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& m = {}, bool causal = false) {
    return wok::scaled_dot_product_attention(a, b, c, m, causal);
  };
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { sdpa(q, wok::zeros({2, 7, 6}), v); },
                                             {op, "E: 8 vs 6", "q float32[2, 5, 8]", "k float32[2, 7, 6]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { sdpa(q, k, wok::zeros({2, 6, 4})); },
                                             {op, "S: 7 vs 6", "v float32[2, 6, 4]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { sdpa(wok::zeros({8}), k, v); }, {op, "rank 2", "q float32[8]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { sdpa(wok::zeros({3, 5, 8}), k, v); },
                                             {op, "batch dims", "q float32[3, 5, 8]"}));
  // The mask may not widen the scores [2, 5, 7].
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { sdpa(q, k, v, wok::zeros({3, 5, 7})); },
                                             {op, "mask float32[3, 5, 7]", "[2, 5, 7]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { sdpa(q, k, v, wok::zeros({5, 6})); }, {op, "mask float32[5, 6]"}));
  EXPECT_TRUE(throws_naming<wok::DTypeError>([&] { sdpa(q, k, v, wok::zeros({5, 7}, DType::kInt32)); },
                                             {op, "bool", "floating", "mask int32[5, 7]"}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { sdpa(q, k, v, wok::zeros({5, 7}), true); },
                                                {op, "is_causal", "not both"}));
  EXPECT_TRUE(throws_naming<wok::Error>([&] { sdpa(q, Tensor(), v); }, {op, "undefined"}));
}

}  // namespace
