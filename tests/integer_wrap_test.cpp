// Integer reductions wrap around (two's complement) on every path: row,
// column and split all-axis kernels under the JIT, the precompiled kernels,
// and the combining of a split row's partial results (which was a signed,
// undefined overflow in C++ before: UBSan found it).
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cstdint>
#include <vector>

#include "test_util.h"

namespace {

using wok::Tensor;

class IntegerWrap : public wt::BothBackends {};

constexpr int64_t kLongRow = int64_t{1} << 17;  // long enough to be split into chunks

uint64_t wrapped_sum(uint64_t value, int64_t n) { return value * static_cast<uint64_t>(n); }

TEST_P(IntegerWrap, SumOfALongInt64RowWraps) {
  const int64_t v = (int64_t{1} << 62) + 3;
  Tensor x = wok::full({kLongRow}, wok::Scalar(v));
  Tensor s = wok::sum(wok::abs(x));  // fused prologue: a generated, split row kernel
  const auto want = static_cast<int64_t>(wrapped_sum(static_cast<uint64_t>(v), kLongRow));
  EXPECT_TRUE(wt::exact<int64_t>("sum(abs(int64))", s, {want}));
  Tensor plain = wok::sum(x);
  EXPECT_TRUE(wt::exact<int64_t>("sum(int64)", plain, {want}));
}

TEST_P(IntegerWrap, ProdOfALongInt64RowWraps) {
  Tensor x = wok::full({kLongRow}, wok::Scalar(int64_t{3}));
  Tensor p = wok::prod(wok::abs(x));
  uint64_t want = 1;
  for (int64_t i = 0; i < kLongRow; ++i) want *= 3;
  EXPECT_TRUE(wt::exact<int64_t>("prod(abs(int64))", p, {static_cast<int64_t>(want)}));
}

TEST_P(IntegerWrap, RowAndColumnSumsWrap) {
  const int64_t big = INT64_MAX - 1;
  Tensor x = wok::full({64, 3}, wok::Scalar(big));
  const auto col = static_cast<int64_t>(wrapped_sum(static_cast<uint64_t>(big), 64));
  const auto row = static_cast<int64_t>(wrapped_sum(static_cast<uint64_t>(big), 3));
  EXPECT_TRUE(wt::exact<int64_t>("column sum", wok::sum(x * int64_t{1}, {0}), std::vector<int64_t>(3, col)));
  EXPECT_TRUE(wt::exact<int64_t>("row sum", wok::sum(x * int64_t{1}, {1}), std::vector<int64_t>(64, row)));
}

INSTANTIATE_TEST_SUITE_P(Backends, IntegerWrap, wt::kBothBackends, wt::backend_param_name);

}  // namespace
