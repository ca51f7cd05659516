// Empty and zero-size tensors through every fused kernel kind (elementwise,
// row, column, split all-axis, argmax) and the precompiled kernels, with the
// result held in a variable before it is read: a plan whose intermediates
// are all empty has no arena, and its steps must still run.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

class EmptyTensors : public wt::BothBackends {};

// The program from the architecture issue: under the JIT it crashed in
// placement_address (no arena for the empty abs(x)).
TEST_P(EmptyTensors, ReductionOfAnEmptyFusedIntermediateHeldInAVariable) {
  Tensor x = wok::zeros({2, 0, 4});
  Tensor r = wok::sum(wok::abs(x), {1}, true);
  EXPECT_EQ(r.shape(), (Shape{2, 1, 4}));
  EXPECT_TRUE(wt::exact<float>("sum(abs)", r, std::vector<float>(8, 0.0f)));
}

TEST_P(EmptyTensors, ElementwiseChains) {
  Tensor x = wok::zeros({3, 0});
  Tensor y = wok::exp(x) * 2.0f + wok::abs(x);
  EXPECT_EQ(y.shape(), (Shape{3, 0}));
  EXPECT_TRUE(y.to_vector<float>().empty());
  Tensor z = wok::where(x > 0.0f, x, y).astype(DType::kInt32);
  EXPECT_EQ(z.shape(), (Shape{3, 0}));
  EXPECT_TRUE(z.to_vector<int32_t>().empty());
}

TEST_P(EmptyTensors, RowReductionsOverAnEmptyAxis) {
  Tensor x = wok::zeros({3, 0});
  Tensor s = wok::sum(wok::exp(x), {1});
  Tensor p = wok::prod(x + 1.0f, {1}, true);
  Tensor m = wok::mean(wok::abs(x), {1});
  EXPECT_TRUE(wt::exact<float>("sum", s, {0, 0, 0}));
  EXPECT_TRUE(wt::exact<float>("prod", p, {1, 1, 1}));
  std::vector<float> mv = m.to_vector<float>();
  ASSERT_EQ(mv.size(), 3u);
  for (float v : mv) EXPECT_TRUE(std::isnan(v));
  // max and min of an empty axis give their identity (ONNX): -inf, +inf.
  EXPECT_TRUE(wt::exact<float>("max", wok::max(wok::abs(x), {1}), {-INFINITY, -INFINITY, -INFINITY}));
  EXPECT_TRUE(wt::exact<float>("min", wok::min(x * 2.0f, {1}, true), {INFINITY, INFINITY, INFINITY}));
  // argmax has no index to give: an error naming the op.
  EXPECT_THROW(wok::argmax(wok::abs(x), {1}).to_vector<int64_t>(), wok::Error);
}

TEST_P(EmptyTensors, ReductionsOfEmptyRowsKeepTheirShape) {
  Tensor x = wok::zeros({0, 5});
  Tensor rows = wok::sum(wok::exp(x), {1});  // zero rows
  Tensor rows_max = wok::max(wok::abs(x), {1}, true);
  Tensor rows_arg = wok::argmax(x * 2.0f, {1});
  Tensor soft = wok::softmax(x * 3.0f);
  Tensor norm = wok::layer_norm(x + 1.0f);
  EXPECT_EQ(rows.shape(), (Shape{0}));
  EXPECT_EQ(rows_max.shape(), (Shape{0, 1}));
  EXPECT_EQ(rows_arg.shape(), (Shape{0}));
  EXPECT_EQ(soft.shape(), (Shape{0, 5}));
  EXPECT_EQ(norm.shape(), (Shape{0, 5}));
  wok::eval({rows, rows_max, rows_arg, soft, norm});
  EXPECT_TRUE(rows.to_vector<float>().empty());
  EXPECT_TRUE(rows_arg.to_vector<int64_t>().empty());
  EXPECT_TRUE(soft.to_vector<float>().empty());
}

TEST_P(EmptyTensors, ColumnReductionsOverAnEmptyAxis) {
  Tensor x = wok::zeros({0, 5});
  Tensor cols = wok::sum(wok::exp(x), {0});
  Tensor cols_keep = wok::sum(x * 2.0f, {0}, true);
  EXPECT_TRUE(wt::exact<float>("sum over axis 0", cols, std::vector<float>(5, 0.0f)));
  EXPECT_EQ(cols_keep.shape(), (Shape{1, 5}));
  EXPECT_TRUE(wt::exact<float>("sum over axis 0, keepdims", cols_keep, std::vector<float>(5, 0.0f)));
  Tensor xi = wok::zeros({4, 0, 3}, DType::kInt64);
  Tensor mid = wok::sum(xi * int64_t{3}, {1});
  EXPECT_TRUE(wt::exact<int64_t>("int64 sum over a middle axis", mid, std::vector<int64_t>(12, 0)));
}

TEST_P(EmptyTensors, AllAxisReductions) {
  Tensor x = wok::zeros({0});
  Tensor s = wok::sum(wok::exp(x));
  Tensor p = wok::prod(x * 2.0f);
  EXPECT_TRUE(wt::exact<float>("sum of nothing", s, {0}));
  EXPECT_TRUE(wt::exact<float>("prod of nothing", p, {1}));
  Tensor big_empty = wok::zeros({1 << 17, 0});
  Tensor t = wok::sum(wok::abs(big_empty));
  EXPECT_TRUE(wt::exact<float>("sum of a long empty tensor", t, {0}));
}

TEST_P(EmptyTensors, MovementAndMatmul) {
  Tensor a = wok::zeros({2, 0});
  Tensor b = wok::ones({0, 3});
  Tensor c = wok::matmul(a, b);  // K = 0: zeros
  EXPECT_TRUE(wt::exact<float>("matmul with K = 0", c, std::vector<float>(6, 0.0f)));
  Tensor d = wok::concat({a, wok::zeros({2, 0})}, 1);
  EXPECT_EQ(d.shape(), (Shape{2, 0}));
  Tensor e = wok::exp(wok::slice(wok::ones({4, 3}), 0, 2, 2));
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
  EXPECT_TRUE(e.to_vector<float>().empty());
  Tensor f = wok::sum(e.transpose(), {1});
  EXPECT_TRUE(wt::exact<float>("sum of an empty transposed slice", f, {0, 0, 0}));
}

INSTANTIATE_TEST_SUITE_P(Backends, EmptyTensors, wt::kBothBackends, wt::backend_param_name);

}  // namespace
