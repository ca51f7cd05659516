// cumsum and cumprod (frontend/scans.h): ONNX CumSum's examples, every
// combination of exclusive and reverse against a plain loop, on both CPU
// backends.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "test_util.h"
#include "wok/runtime/wrapping.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

class ScanOps : public wt::BothBackends {};
INSTANTIATE_TEST_SUITE_P(Backends, ScanOps, wt::kBothBackends, wt::backend_param_name);

TEST_P(ScanOps, CumsumMatchesOnnxExamples) {
  Tensor x = wok::from_vector(std::vector<double>{1, 2, 3, 4, 5}, {5});
  EXPECT_TRUE(wt::exact<double>("cumsum", wok::cumsum(x, 0), {1, 3, 6, 10, 15}));
  EXPECT_TRUE(wt::exact<double>("cumsum exclusive", wok::cumsum(x, 0, true), {0, 1, 3, 6, 10}));
  EXPECT_TRUE(wt::exact<double>("cumsum reverse", wok::cumsum(x, 0, false, true), {15, 14, 12, 9, 5}));
  EXPECT_TRUE(wt::exact<double>("cumsum reverse exclusive", wok::cumsum(x, 0, true, true), {14, 12, 9, 5, 0}));
  Tensor m = wok::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(wt::exact<float>("cumsum axis 0", wok::cumsum(m, 0), {1, 2, 3, 5, 7, 9}));
  EXPECT_TRUE(wt::exact<float>("cumsum axis -1", wok::cumsum(m, -1), {1, 3, 6, 4, 9, 15}));
  EXPECT_TRUE(wt::exact<float>("cumprod", wok::cumprod(m, 1), {1, 2, 6, 4, 20, 120}));
  EXPECT_TRUE(wt::exact<float>("cumprod exclusive reverse", wok::cumprod(m, 1, true, true), {6, 3, 1, 30, 6, 1}));
  // Integers and bool accumulate in int64, as wok::sum does.
  Tensor i = wok::from_vector(std::vector<int32_t>{2147483647, 1, 1}, {3});
  EXPECT_TRUE(wt::exact<int64_t>("cumsum int32", wok::cumsum(i, 0), {2147483647, 2147483648LL, 2147483649LL}));
  Tensor b = wok::from_vector(std::vector<bool>{true, false, true}, {3});
  EXPECT_TRUE(wt::exact<int64_t>("cumsum bool", wok::cumsum(b, 0), {1, 1, 2}));
  // A 0-d tensor is one element.
  Tensor s = wok::cumsum(wok::scalar_tensor(4.0f), 0, true);
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.item<float>(), 0.0f);
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::cumsum(m, 2); }, {"wok::cumsum", "axis 2"}));
}

// out along the axis of x (row-major [A, n, B]) accumulated one element at
// a time in P, as the kernel promises.
template <typename T, typename P>
std::vector<P> reference(const std::vector<T>& x, const Shape& s, int64_t axis, bool prod, bool exclusive,
                         bool reverse) {
  int64_t A = 1, B = 1;
  for (int64_t d = 0; d < axis; ++d) A *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d) B *= s[d];
  const int64_t n = s[axis];
  std::vector<P> out(x.size());
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b) {
      P acc = prod ? P(1) : P(0);
      for (int64_t k = 0; k < n; ++k) {
        const int64_t i = reverse ? n - 1 - k : k;
        const size_t p = static_cast<size_t>((a * n + i) * B + b);
        const P v = static_cast<P>(x[p]);
        if (exclusive) out[p] = acc;
        acc = prod ? wok::wrap_mul(acc, v) : wok::wrap_add(acc, v);  // integers wrap
        if (!exclusive) out[p] = acc;
      }
    }
  return out;
}

template <typename T, typename P>
void check_random(const Shape& s, uint32_t seed, double lo, double hi) {
  const std::vector<T> x = wt::random_values<T>(static_cast<size_t>(wok::numel(s)), lo, hi, seed);
  for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis)
    for (bool prod : {false, true})
      for (bool exclusive : {false, true})
        for (bool reverse : {false, true}) {
          Tensor xt = wok::from_vector(x, s);
          Tensor y = prod ? wok::cumprod(xt, axis, exclusive, reverse) : wok::cumsum(xt, axis, exclusive, reverse);
          EXPECT_TRUE(wt::exact<P>(std::string(prod ? "cumprod" : "cumsum") + wok::shape_str(s) + " axis " +
                                       std::to_string(axis) + (exclusive ? " exclusive" : "") +
                                       (reverse ? " reverse" : ""),
                                   y, reference<T, P>(x, s, axis, prod, exclusive, reverse)));
        }
}

TEST_P(ScanOps, MatchALoopForEveryAxisAndFlag) {
  check_random<float, float>({3, 5, 300}, 1, 0.5, 1.5);  // columns split into blocks
  check_random<double, double>({40, 7}, 2, 0.9, 1.1);
  check_random<int32_t, int64_t>({6, 9, 2}, 3, -3, 3);
  check_random<int64_t, int64_t>({1000}, 4, -100, 100);
  check_random<bool, int64_t>({4, 33}, 5, 0, 1);
  check_random<float, float>({0, 4}, 6, 0, 1);
}

TEST_P(ScanOps, ComposeWithElementwiseOps) {
  Tensor x = wok::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  Tensor y = wok::cumsum(x * 2.0f, 1) + 1.0f;
  EXPECT_TRUE(wt::exact<float>("cumsum", y, {3, 7, 7, 15}));
}

}  // namespace
