// The indexing ops (frontend/indexing.h): gather and its PyTorch-named
// forms, gather_elements, gather_nd, the scatters with each reduction,
// one_hot and nonzero. Values against ONNX's worked examples and plain
// loops, on both CPU backends; index errors raised when the kernel runs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::ScatterReduction;
using wok::Shape;
using wok::Tensor;

class IndexingOps : public wt::BothBackends {};
INSTANTIATE_TEST_SUITE_P(Backends, IndexingOps, wt::kBothBackends, wt::backend_param_name);

template <typename T>
Tensor t(const std::vector<T>& v, Shape shape) {
  return wok::from_vector(v, std::move(shape));
}

using I64 = std::vector<int64_t>;
using F32 = std::vector<float>;

std::vector<float> iota(int64_t n, float scale = 1) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i) * scale;
  return v;
}

// Row-major helpers for the references.
I64 unravel(int64_t p, const Shape& s) {
  I64 c(s.size());
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    c[d] = p % s[d];
    p /= s[d];
  }
  return c;
}
int64_t ravel(const I64& c, const Shape& s) {
  int64_t p = 0;
  for (size_t d = 0; d < s.size(); ++d) p = p * s[d] + c[d];
  return p;
}

// ---- gather ---------------------------------------------------------------------------

TEST_P(IndexingOps, GatherMatchesOnnxExamples) {
  // ONNX Gather, axis 0 and axis 1.
  Tensor data = t<float>({1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f}, {3, 2});
  Tensor y = wok::gather(data, 0, t<int64_t>({0, 1, 1, 2}, {2, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  EXPECT_TRUE(wt::exact<float>("gather", y, {1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f}));
  Tensor d3 = t<float>({1.0f, 1.2f, 1.9f, 2.3f, 3.4f, 3.9f, 4.5f, 5.7f, 5.9f}, {3, 3});
  Tensor z = wok::gather(d3, 1, t<int32_t>({0, 2}, {1, 2}));
  EXPECT_EQ(z.shape(), (Shape{3, 1, 2}));
  EXPECT_TRUE(wt::exact<float>("gather", z, {1.0f, 1.9f, 2.3f, 3.9f, 4.5f, 5.9f}));
  // Negative indices count from the end; a negative axis too.
  EXPECT_TRUE(wt::exact<float>("gather", wok::gather(d3, -1, t<int64_t>({-1, -3}, {2})),
                               {1.9f, 1.0f, 3.9f, 2.3f, 5.9f, 4.5f}));
  // A 0-d index drops the axis.
  Tensor row = wok::gather(d3, 0, wok::scalar_tensor(int64_t{1}));
  EXPECT_EQ(row.shape(), (Shape{3}));
  EXPECT_TRUE(wt::exact<float>("gather", row, {2.3f, 3.4f, 3.9f}));
}

// Every dtype (items of 1, 4 and 8 bytes), inner runs of 1 and more, and a
// size that splits across threads, against a plain loop.
template <typename T>
void check_gather_random(const Shape& xs, int64_t axis, const Shape& is, uint32_t seed) {
  const std::vector<T> xv = wt::random_values<T>(static_cast<size_t>(wok::numel(xs)), -100, 100, seed);
  const int64_t n = xs[axis];
  I64 iv = wt::random_values<int64_t>(static_cast<size_t>(wok::numel(is)), -n, n - 1, seed + 1);
  Tensor y = wok::gather(t(xv, xs), axis, t(iv, is));
  Shape os(xs.begin(), xs.begin() + axis);
  os.insert(os.end(), is.begin(), is.end());
  os.insert(os.end(), xs.begin() + axis + 1, xs.end());
  ASSERT_EQ(y.shape(), os);
  std::vector<T> want(static_cast<size_t>(wok::numel(os)));
  const int ir = static_cast<int>(is.size());
  for (int64_t p = 0; p < wok::numel(os); ++p) {
    I64 c = unravel(p, os), xc;
    for (int64_t d = 0; d < axis; ++d) xc.push_back(c[d]);
    I64 ic(c.begin() + axis, c.begin() + axis + ir);
    int64_t v = iv[static_cast<size_t>(ravel(ic, is))];
    xc.push_back(v < 0 ? v + n : v);
    for (size_t d = axis + ir; d < c.size(); ++d) xc.push_back(c[d]);
    want[static_cast<size_t>(p)] = xv[static_cast<size_t>(ravel(xc, xs))];
  }
  EXPECT_TRUE(wt::exact<T>("gather " + wok::shape_str(xs) + " axis " + std::to_string(axis), y, want));
}

TEST_P(IndexingOps, GatherMatchesALoop) {
  check_gather_random<float>({4, 5, 6}, 1, {3, 2}, 1);
  check_gather_random<double>({4, 5, 6}, 2, {7}, 2);
  check_gather_random<int32_t>({4, 5, 6}, 0, {2, 2, 2}, 3);
  check_gather_random<int64_t>({9}, 0, {20}, 4);
  check_gather_random<bool>({3, 70}, 1, {5}, 5);
  check_gather_random<float>({300, 130}, 0, {500}, 6);   // rows of 130, split across threads
  check_gather_random<int32_t>({4000, 3}, 1, {40}, 7);   // single elements, split across threads
  check_gather_random<float>({0, 4}, 1, {3}, 8);         // empty
  check_gather_random<float>({4, 3}, 0, {0}, 9);         // no indices
}

TEST_P(IndexingOps, GatherFusesIntoJitProgramsAndReadsComputedIndices) {
  // The gather runs on its precompiled kernel between generated ones.
  Tensor x = t<float>(iota(12), {3, 4});
  Tensor i = t<int64_t>({2, 0}, {2}) + int64_t{0};  // computed indices
  Tensor y = wok::exp(wok::gather(x * 2.0f, 1, i)) + 1.0f;
  std::vector<float> want;
  for (int r = 0; r < 3; ++r)
    for (int c : {2, 0}) want.push_back(std::exp(static_cast<float>(r * 4 + c) * 2.0f) + 1.0f);
  EXPECT_TRUE(wt::close<float>("gather", y, std::vector<double>(want.begin(), want.end()), 1e-6, 0));
}

TEST_P(IndexingOps, OutOfRangeIndexIsAnErrorWhenTheKernelRuns) {
  Tensor x = t<float>(iota(6), {2, 3});
  // Recording succeeds: the indices' values are data.
  Tensor y = wok::gather(x, 1, t<int64_t>({0, 3}, {2}));
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>([&] { y.to_vector<float>(); },
                                                    {"wok::gather", "index 3", "axis 1", "size 3"}));
  // Still pending, and it fails again; other work is unaffected.
  EXPECT_THROW(wok::eval({y}), wok::ArgumentError);
  EXPECT_TRUE(wt::exact<float>("gather", wok::gather(x, 1, t<int32_t>({-3}, {1})), {0, 3}));
  // Inside a larger program, and below the lower bound, with int32 indices.
  Tensor z = wok::gather(x + 1.0f, 0, t<int32_t>({1, -3}, {2})) * 2.0f;
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>([&] { z.to_vector<float>(); },
                                                    {"wok::gather", "index -3", "axis 0", "size 2"}));
  // Every indexing op checks its indices.
  auto i2 = t<int64_t>({0, 5, 0, 0, 0, 0}, {2, 3});
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>([&] { wok::gather_elements(x, 1, i2).to_vector<float>(); },
                                                    {"wok::gather_elements", "index 5", "size 3"}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>(
      [&] { wok::scatter_elements(x, 1, i2, wok::zeros({2, 3})).to_vector<float>(); },
      {"wok::scatter_elements", "index 5", "size 3"}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>(
      [&] { wok::gather_nd(x, t<int64_t>({1, 2, 1, 3}, {2, 2})).to_vector<float>(); },
      {"wok::gather_nd", "index 3", "dim 1", "size 3"}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>(
      [&] { wok::scatter_nd(x, t<int64_t>({2}, {1, 1}), wok::zeros({1, 3})).to_vector<float>(); },
      {"wok::scatter_nd", "index 2", "dim 0", "size 2"}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>([&] { wok::take(x, t<int64_t>({6}, {1})).to_vector<float>(); },
                                                    {"wok::gather", "index 6", "size 6"}));
  // And after an asynchronous start, at the read.
  Tensor w = wok::gather(x, 0, t<int64_t>({7}, {1}));
  wok::eval_async({w});
  EXPECT_THROW(w.to_vector<float>(), wok::ArgumentError);
}

TEST_P(IndexingOps, RecordingErrorsNameTheOpAndShapes) {
  Tensor x = t<float>(iota(6), {2, 3});
  EXPECT_TRUE(wt::throws_naming<wok::DTypeError>([&] { wok::gather(x, 0, t<float>({0}, {1})); },
                                                 {"wok::gather", "int32 or int64", "float32"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::gather(x, 2, t<int64_t>({0}, {1})); },
                                                 {"wok::gather", "axis 2", "float32[2, 3]"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::gather_elements(x, 0, t<int64_t>({0}, {1})); },
                                                 {"wok::gather_elements", "rank"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::gather_elements(x, 0, wok::zeros({1, 4}, DType::kInt64)); },
                                                 {"wok::gather_elements", "dim 1"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::gather_nd(x, t<int64_t>({0, 0, 0}, {1, 3})); },
                                                 {"wok::gather_nd", "3 values"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>(
      [&] { wok::scatter_elements(x, 0, wok::zeros({1, 3}, DType::kInt64), wok::zeros({1, 2})); },
      {"wok::scatter_elements", "updates [1, 2]", "indices [1, 3]"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>(
      [&] { wok::scatter_nd(x, wok::zeros({1, 1}, DType::kInt64), wok::zeros({1, 2})); },
      {"wok::scatter_nd", "updates [1, 2]", "[1, 3]"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::index_select(x, 0, wok::zeros({1, 1}, DType::kInt64)); },
                                                 {"wok::index_select", "1-D"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::embedding(t<float>(iota(4), {4}), t<int64_t>({0}, {1})); },
                                                 {"wok::embedding", "2-D"}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>(
      [&] { wok::call1("scatter_nd", {x, wok::zeros({1, 2}, DType::kInt64), wok::zeros({1})}, {{"reduction", std::string("sum")}}); },
      {"scatter_nd", "reduction 'sum'"}));
}

TEST_P(IndexingOps, IndexSelectTakeAndEmbedding) {
  Tensor x = t<float>(iota(12), {3, 4});
  EXPECT_TRUE(wt::exact<float>("index_select", wok::index_select(x, 1, t<int64_t>({3, 0}, {2})),
                               {3, 0, 7, 4, 11, 8}));
  EXPECT_EQ(wok::index_select(x, 0, wok::scalar_tensor(int64_t{2})).shape(), (Shape{1, 4}));
  Tensor tk = wok::take(x, t<int32_t>({0, 11, -1, 5}, {2, 2}));
  EXPECT_EQ(tk.shape(), (Shape{2, 2}));
  EXPECT_TRUE(wt::exact<float>("take", tk, {0, 11, 11, 5}));
  Tensor e = wok::embedding(x, t<int64_t>({2, 0, 1, 2}, {2, 2}));
  EXPECT_EQ(e.shape(), (Shape{2, 2, 4}));
  EXPECT_TRUE(wt::exact<float>("embedding", e, {8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
}

// ---- gather_elements / gather_nd ------------------------------------------------------------

TEST_P(IndexingOps, GatherElementsMatchesOnnxExamplesAndALoop) {
  Tensor d = t<int32_t>({1, 2, 3, 4}, {2, 2});
  EXPECT_TRUE(wt::exact<int32_t>("gather_elements", wok::gather_elements(d, 1, t<int64_t>({0, 0, 1, 0}, {2, 2})),
                                 {1, 1, 4, 3}));
  Tensor d2 = t<int32_t>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  Tensor y = wok::gather_elements(d2, 0, t<int32_t>({1, 2, 0, 2, 0, 0}, {2, 3}));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_TRUE(wt::exact<int32_t>("gather_elements", y, {4, 8, 3, 7, 2, 3}));
  // Random, every axis, indices smaller than x off the axis, negative ones.
  const Shape xs{5, 6, 7}, is{4, 3, 5};
  const std::vector<double> xv = wt::random_values<double>(static_cast<size_t>(wok::numel(xs)), -1, 1, 3);
  for (int64_t axis = 0; axis < 3; ++axis) {
    const int64_t n = xs[axis];
    I64 iv = wt::random_values<int64_t>(static_cast<size_t>(wok::numel(is)), -n, n - 1, 10 + axis);
    std::vector<double> want;
    for (int64_t p = 0; p < wok::numel(is); ++p) {
      I64 c = unravel(p, is);
      int64_t v = iv[static_cast<size_t>(p)];
      c[axis] = v < 0 ? v + n : v;
      want.push_back(xv[static_cast<size_t>(ravel(c, xs))]);
    }
    EXPECT_TRUE(wt::exact<double>("gather_elements axis " + std::to_string(axis),
                                  wok::gather_elements(t(xv, xs), axis - 3, t(iv, is)), want));
  }
}

TEST_P(IndexingOps, GatherNdMatchesOnnxExamples) {
  Tensor d = t<int32_t>({0, 1, 2, 3}, {2, 2});
  EXPECT_TRUE(wt::exact<int32_t>("gather_nd", wok::gather_nd(d, t<int64_t>({0, 0, 1, 1}, {2, 2})), {0, 3}));
  Tensor r = wok::gather_nd(d, t<int64_t>({1, 0}, {2, 1}));
  EXPECT_EQ(r.shape(), (Shape{2, 2}));
  EXPECT_TRUE(wt::exact<int32_t>("gather_nd", r, {2, 3, 0, 1}));
  Tensor d3 = t<int32_t>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  Tensor a = wok::gather_nd(d3, t<int64_t>({0, 1, 1, 0}, {2, 2}));
  EXPECT_EQ(a.shape(), (Shape{2, 2}));
  EXPECT_TRUE(wt::exact<int32_t>("gather_nd", a, {2, 3, 4, 5}));
  Tensor b = wok::gather_nd(d3, t<int64_t>({0, 1, 1, 0}, {2, 1, 2}));
  EXPECT_EQ(b.shape(), (Shape{2, 1, 2}));
  EXPECT_TRUE(wt::exact<int32_t>("gather_nd", b, {2, 3, 4, 5}));
  // batch_dims = 1.
  Tensor c = wok::gather_nd(d3, t<int64_t>({1, 0}, {2, 1}), 1);
  EXPECT_EQ(c.shape(), (Shape{2, 2}));
  EXPECT_TRUE(wt::exact<int32_t>("gather_nd", c, {2, 3, 4, 5}));
  // Full tuples pick elements; negative indices wrap; an empty tuple the whole batch entry.
  EXPECT_TRUE(wt::exact<int32_t>("gather_nd", wok::gather_nd(d3, t<int64_t>({-1, 0, -1, 0, 0, 0}, {2, 3})), {5, 0}));
  Tensor e = wok::gather_nd(d3, wok::zeros({2, 0}, DType::kInt64), 1);
  EXPECT_EQ(e.shape(), (Shape{2, 2, 2}));
  EXPECT_TRUE(wt::exact<int32_t>("gather_nd", e, {0, 1, 2, 3, 4, 5, 6, 7}));
}

// ---- scatters --------------------------------------------------------------------------------

TEST_P(IndexingOps, ScatterElementsMatchesOnnxExamples) {
  Tensor data = wok::zeros({3, 3});
  Tensor idx = t<int64_t>({1, 0, 2, 0, 2, 1}, {2, 3});
  Tensor upd = t<float>({1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f}, {2, 3});
  EXPECT_TRUE(wt::exact<float>("scatter_elements", wok::scatter_elements(data, 0, idx, upd),
                               {2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f}));
  Tensor d1 = t<float>({1, 2, 3, 4, 5}, {1, 5});
  Tensor i1 = t<int32_t>({1, 3}, {1, 2});
  Tensor u1 = t<float>({1.1f, 2.1f}, {1, 2});
  EXPECT_TRUE(wt::exact<float>("scatter_elements", wok::scatter_elements(d1, 1, i1, u1), {1, 1.1f, 3, 2.1f, 5}));
  // Duplicates: none keeps the last, the reductions fold them in order (ONNX opset 18 examples).
  Tensor dup = t<int64_t>({1, 1}, {1, 2});
  EXPECT_TRUE(wt::exact<float>("scatter_elements add", wok::scatter_elements(d1, 1, dup, u1, ScatterReduction::kAdd),
                               {1, 2.0f + 1.1f + 2.1f, 3, 4, 5}));
  EXPECT_TRUE(wt::exact<float>("scatter_elements none", wok::scatter_elements(d1, 1, dup, u1), {1, 2.1f, 3, 4, 5}));
  EXPECT_TRUE(wt::exact<float>("scatter_elements mul", wok::scatter_elements(d1, 1, dup, u1, ScatterReduction::kMul),
                               {1, 2.0f * 1.1f * 2.1f, 3, 4, 5}));
  EXPECT_TRUE(wt::exact<float>("scatter_elements max", wok::scatter_elements(d1, 1, dup, u1, ScatterReduction::kMax),
                               {1, 2.1f, 3, 4, 5}));
  EXPECT_TRUE(wt::exact<float>("scatter_elements min", wok::scatter_elements(d1, 1, dup, u1, ScatterReduction::kMin),
                               {1, 1.1f, 3, 4, 5}));
  // Updates are cast to x's dtype; x itself is unchanged (functional).
  Tensor xi = t<int32_t>({1, 2, 3}, {3});
  EXPECT_TRUE(wt::exact<int32_t>("scatter_elements", wok::scatter_elements(xi, 0, t<int64_t>({2}, {1}), t<double>({7.9}, {1})),
                                 {1, 2, 7}));
  EXPECT_TRUE(wt::exact<int32_t>("x", xi, {1, 2, 3}));
}

// Random scatters with many duplicates, every reduction and several
// dtypes, large enough to split across threads, against a row-major loop.
template <typename T>
void check_scatter_elements(const Shape& xs, const Shape& is, int64_t axis, ScatterReduction r, uint32_t seed) {
  std::vector<T> xv = wt::random_values<T>(static_cast<size_t>(wok::numel(xs)), -5, 5, seed);
  const int64_t n = xs[axis];
  I64 iv = wt::random_values<int64_t>(static_cast<size_t>(wok::numel(is)), -n, n - 1, seed + 1);
  std::vector<T> uv = wt::random_values<T>(static_cast<size_t>(wok::numel(is)), -5, 5, seed + 2);
  std::vector<T> want = xv;
  for (int64_t p = 0; p < wok::numel(is); ++p) {
    I64 c = unravel(p, is);
    int64_t v = iv[static_cast<size_t>(p)];
    c[axis] = v < 0 ? v + n : v;
    const size_t q = static_cast<size_t>(ravel(c, xs));
    const T u = uv[static_cast<size_t>(p)];
    T w = want[q];
    switch (r) {
      case ScatterReduction::kNone: w = u; break;
      case ScatterReduction::kAdd: w = std::is_same_v<T, bool> ? T(w || u) : T(w + u); break;
      case ScatterReduction::kMul: w = std::is_same_v<T, bool> ? T(w && u) : T(w * u); break;
      case ScatterReduction::kMax: w = std::max(w, u); break;
      case ScatterReduction::kMin: w = std::min(w, u); break;
    }
    want[q] = w;
  }
  EXPECT_TRUE(wt::exact<T>("scatter_elements " + wok::shape_str(is) + " axis " + std::to_string(axis) + " reduction " +
                               std::to_string(static_cast<int>(r)),
                           wok::scatter_elements(t(xv, xs), axis, t(iv, is), t(uv, is), r), want));
}

TEST_P(IndexingOps, ScatterElementsMatchesALoop) {
  for (ScatterReduction r : {ScatterReduction::kNone, ScatterReduction::kAdd, ScatterReduction::kMul,
                             ScatterReduction::kMax, ScatterReduction::kMin}) {
    check_scatter_elements<double>({6, 7, 8}, {5, 7, 3}, 1, r, 20);
    check_scatter_elements<int64_t>({6, 7, 8}, {9, 2, 8}, 0, r, 21);
    check_scatter_elements<int32_t>({6, 7, 8}, {6, 7, 30}, 2, r, 22);
    check_scatter_elements<bool>({4, 9}, {4, 20}, 1, r, 23);
    check_scatter_elements<double>({3, 2000}, {20, 1000}, 0, r, 24);  // columns split into blocks
  }
}

TEST_P(IndexingOps, ScatterNdMatchesOnnxExamples) {
  Tensor data = t<float>({1, 2, 3, 4, 5, 6, 7, 8}, {8});
  Tensor idx = t<int64_t>({4, 3, 1, 7}, {4, 1});
  Tensor upd = t<float>({9, 10, 11, 12}, {4});
  EXPECT_TRUE(wt::exact<float>("scatter_nd", wok::scatter_nd(data, idx, upd), {1, 11, 3, 10, 9, 6, 7, 12}));
  // The 4x4x4 example: two slices replaced.
  std::vector<float> d3;
  const std::vector<float> block = {1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1,
                                    1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1};
  d3.insert(d3.end(), block.begin(), block.end());
  std::vector<float> block2 = {8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8,
                               8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8};
  d3.insert(d3.end(), block2.begin(), block2.end());
  std::vector<float> u3 = {5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4};
  std::vector<float> want(u3.begin(), u3.begin() + 16);
  want.insert(want.end(), d3.begin() + 16, d3.begin() + 32);
  want.insert(want.end(), u3.begin() + 16, u3.end());
  want.insert(want.end(), d3.begin() + 48, d3.end());
  EXPECT_TRUE(wt::exact<float>("scatter_nd", wok::scatter_nd(t(d3, {4, 4, 4}), t<int64_t>({0, 2}, {2, 1}), t(u3, {2, 4, 4})),
                               want));
  // Reductions with duplicates (ONNX opset 16 examples use add and mul).
  Tensor dup = t<int64_t>({0, 0}, {2, 1});
  Tensor u2 = t<float>({5, 5, 5, 5, 6, 6, 6, 6}, {2, 4});
  Tensor x2 = t<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  EXPECT_TRUE(wt::exact<float>("scatter_nd add", wok::scatter_nd(x2, dup, u2, ScatterReduction::kAdd),
                               {12, 13, 14, 15, 5, 6, 7, 8}));
  EXPECT_TRUE(wt::exact<float>("scatter_nd mul", wok::scatter_nd(x2, dup, u2, ScatterReduction::kMul),
                               {30, 60, 90, 120, 5, 6, 7, 8}));
  EXPECT_TRUE(wt::exact<float>("scatter_nd none", wok::scatter_nd(x2, dup, u2), {6, 6, 6, 6, 5, 6, 7, 8}));
  EXPECT_TRUE(wt::exact<float>("scatter_nd max", wok::scatter_nd(x2, t<int64_t>({1, -1}, {2, 1}), u2, ScatterReduction::kMax),
                               {1, 2, 3, 4, 6, 6, 7, 8}));
  EXPECT_TRUE(wt::exact<float>("scatter_nd min", wok::scatter_nd(x2, t<int64_t>({1, -1}, {2, 1}), u2, ScatterReduction::kMin),
                               {1, 2, 3, 4, 5, 5, 5, 5}));
  // Full tuples update single elements; nan propagates through max.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(wt::exact<float>("scatter_nd max nan",
                               wok::scatter_nd(x2, t<int32_t>({0, 1, 1, 2}, {2, 2}), t<float>({nan, -1}, {2}),
                                               ScatterReduction::kMax),
                               {1, nan, 3, 4, 5, 6, 7, 8}));
}

TEST_P(IndexingOps, ScatterNdLargeMatchesALoop) {
  // 300 tuples into a [50, 700] tensor, many landing on one row.
  const Shape xs{50, 700};
  std::vector<double> xv = wt::random_values<double>(static_cast<size_t>(wok::numel(xs)), -1, 1, 30);
  I64 iv = wt::random_values<int64_t>(300, -50, 49, 31);
  std::vector<double> uv = wt::random_values<double>(300 * 700, -1, 1, 32);
  std::vector<double> want = xv;
  for (size_t r = 0; r < 300; ++r) {
    const int64_t row = iv[r] < 0 ? iv[r] + 50 : iv[r];
    for (size_t c = 0; c < 700; ++c) want[static_cast<size_t>(row) * 700 + c] += uv[r * 700 + c];
  }
  EXPECT_TRUE(wt::exact<double>("scatter_nd add",
                                wok::scatter_nd(t(xv, xs), t(iv, {300, 1}), t(uv, {300, 700}), ScatterReduction::kAdd),
                                want));
}

// ---- one_hot / nonzero ----------------------------------------------------------------------

TEST_P(IndexingOps, OneHotMatchesOnnx) {
  // ONNX OneHot, axis 1 of a [3] index gives [3, 10]; here a negative, an
  // out-of-range and float values.
  Tensor idx = t<int64_t>({0, 7, 8}, {3});
  Tensor y = wok::one_hot(idx, 10, {wok::Scalar(0.0f), wok::Scalar(1.0f)}, 1);
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  std::vector<float> want(30, 0.0f);
  want[0] = want[17] = want[28] = 1;
  EXPECT_TRUE(wt::exact<float>("one_hot", y, want));
  // Axis 0, negative indices wrap, out of range gives all off, int32 indices, default int64 values.
  Tensor z = wok::one_hot(t<int32_t>({1, -1, 5, -4}, {2, 2}), 3, {wok::Scalar(int64_t{0}), wok::Scalar(int64_t{1})}, 0);
  EXPECT_EQ(z.shape(), (Shape{3, 2, 2}));
  EXPECT_TRUE(wt::exact<int64_t>("one_hot", z, {0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0}));
  Tensor d = wok::one_hot(t<int64_t>({2, 0}, {2}), 3);
  EXPECT_EQ(d.dtype(), DType::kInt64);
  EXPECT_EQ(d.shape(), (Shape{2, 3}));
  EXPECT_TRUE(wt::exact<int64_t>("one_hot", d, {0, 0, 1, 1, 0, 0}));
  // on/off values of ONNX's example: off 1, on 3, float64 by promotion.
  Tensor v = wok::one_hot(t<int64_t>({1, 9}, {2}), 3, {wok::Scalar(int32_t{1}), wok::Scalar(3.0)});
  EXPECT_EQ(v.dtype(), DType::kFloat64);
  EXPECT_TRUE(wt::exact<double>("one_hot", v, {1, 3, 1, 1, 1, 1}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::one_hot(idx, 4, {wok::Scalar(0), wok::Scalar(1)}, 2); },
                                                 {"wok::one_hot", "axis 2"}));
}

TEST_P(IndexingOps, NonzeroMatchesOnnx) {
  Tensor x = t<int32_t>({1, 0, 1, 1}, {2, 2});
  Tensor y = wok::nonzero(x * 3);  // evaluates its input
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_TRUE(wt::exact<int64_t>("nonzero", y, {0, 1, 1, 0, 0, 1}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor f = wok::nonzero(t<float>({0.0f, -0.0f, nan, 2.0f, 0.0f}, {5}));
  EXPECT_TRUE(wt::exact<int64_t>("nonzero", f, {2, 3}));
  Tensor b = wok::nonzero(t<bool>({false, false, true, false, true, true}, {1, 2, 3}));
  EXPECT_EQ(b.shape(), (Shape{3, 3}));
  EXPECT_TRUE(wt::exact<int64_t>("nonzero", b, {0, 0, 0, 0, 1, 1, 2, 1, 2}));
  EXPECT_EQ(wok::nonzero(wok::zeros({3, 4})).shape(), (Shape{2, 0}));
  EXPECT_EQ(wok::nonzero(wok::scalar_tensor(5.0f)).shape(), (Shape{0, 1}));
  // Its result feeds other indexing ops (gather_nd takes tuples in the last dim).
  Tensor m = t<float>({5, 0, 7, 0, 0, 9}, {2, 3});
  Tensor picked = wok::gather_nd(m, wok::nonzero(m).transpose());
  EXPECT_TRUE(wt::exact<float>("gather_nd(nonzero)", picked, {5, 7, 9}));
}

TEST(IndexingCapture, NonzeroReadsDataSoACaptureRefusesIt) {
  auto fn = wok::compile([](const Tensor& x) { return wok::nonzero(x); });
  EXPECT_THROW(fn(t<float>({1, 0}, {2})), wok::CaptureError);
  // The gathers record like any op and replay.
  auto g = wok::compile([](const Tensor& x, const Tensor& i) { return wok::gather(x, 0, i) * 2.0f; });
  EXPECT_TRUE(wt::exact<float>("compiled gather", g(t<float>({1, 2, 3}, {3}), t<int64_t>({2, 0}, {2})), {6, 2}));
  EXPECT_TRUE(wt::exact<float>("compiled gather", g(t<float>({4, 5, 6}, {3}), t<int64_t>({1, 1}, {2})), {10, 10}));
  EXPECT_THROW(g(t<float>({4, 5, 6}, {3}), t<int64_t>({3, 1}, {2})).to_vector<float>(), wok::ArgumentError);
  // New sizes: the shape rules run again.
  Tensor r = g(t<float>({1, 2, 3, 4, 5}, {5}), t<int64_t>({4, -1, 0}, {3}));
  EXPECT_EQ(r.shape(), (Shape{3}));
  EXPECT_TRUE(wt::exact<float>("compiled gather", r, {10, 10, 2}));
  auto s = wok::compile([](const Tensor& x) { return wok::topk(wok::cumsum(x, 1), 2).indices; });
  EXPECT_TRUE(wt::exact<int64_t>("compiled topk", s(t<float>({1, -2, 3, -1}, {2, 2})), {0, 1, 0, 1}));
  EXPECT_TRUE(wt::exact<int64_t>("compiled topk", s(t<float>({1, -2, 3, 0, 0, 1}, {2, 3})), {2, 0, 2, 0}));
}

}  // namespace

namespace {

class IndexingOpsJit : public wt::JitLaunchCounts {};

// Under the JIT an indexing op is a step of the plan that calls its
// precompiled kernel; the elementwise work on either side is generated
// (x * 2 before it, exp(.) + 1 after it: two kernels, and the gather).
TEST_F(IndexingOpsJit, RunsItsPrecompiledKernelBetweenGeneratedOnes) {
  Tensor x = t<float>(iota(12), {3, 4});
  Tensor i = t<int64_t>({2, 0}, {2});
  Tensor y = wok::exp(wok::gather(x * 2.0f, 1, i)) + 1.0f;
  EXPECT_EQ(launches_of({y}), 3);
  auto [v, k] = wok::topk(x * 2.0f, 2);
  Tensor s = v + 1.0f, j = k * int64_t{2};
  EXPECT_EQ(launches_of({s, j}), 4);
  EXPECT_TRUE(wt::exact<float>("topk values", s, {7, 5, 15, 13, 23, 21}));
  EXPECT_TRUE(wt::exact<int64_t>("topk indices", j, {6, 4, 6, 4, 6, 4}));
}

}  // namespace
