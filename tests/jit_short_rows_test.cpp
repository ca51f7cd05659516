// Row kernels on rows shorter than a vector, or a few vectors (Note [Masked
// row tails] in jit/x86/row_tail.h, Note [Argmax across lanes] in
// jit/x86/argmax_emitter.cpp): every length 1..40, several outer shapes, the
// JIT against the precompiled kernels. Run the suite with WOK_CPU_ISA=avx2
// for the AVX2 code paths (the ISA is chosen once, at start).
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "wok/runtime/cpu_features.h"

namespace {

using wok::Tensor;

class JitShortRows : public ::testing::Test {
 protected:
  void SetUp() override {
    if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
  }
  void TearDown() override { wok::set_backend(wok::Backend::kJit); }
};

// Deterministic values in [-3, 3); `special` plants a nan, an inf, -0 and
// repeated maxima in some rows so ties and nans reach the tails.
template <typename T>
std::vector<T> make(int64_t rows, int64_t n, uint32_t seed, bool special) {
  std::vector<T> v(static_cast<size_t>(rows * n));
  uint32_t s = seed * 2654435761u + 7;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<T>(static_cast<double>(s >> 8) / 16777216.0 * 6.0 - 3.0);
  }
  if (!special) return v;
  for (int64_t r = 0; r < rows; ++r) {
    T* row = &v[static_cast<size_t>(r * n)];
    const int64_t c = (r * 7 + 3) % n;
    switch (r % 6) {
      case 1: row[c] = std::numeric_limits<T>::quiet_NaN(); break;
      case 2: row[c] = std::numeric_limits<T>::infinity(); break;
      case 3: row[c] = static_cast<T>(-0.0); break;
      case 4:
        for (int64_t i = 0; i < n; ++i) row[i] = static_cast<T>(i % 3 == 1 ? 2.5 : -1.0);  // tied maxima
        break;
      case 5: row[0] = row[n - 1] = std::numeric_limits<T>::quiet_NaN(); break;
      default: break;
    }
  }
  return v;
}

// Same nan positions, and values within rtol (relative to the larger of
// |want| and 1) of each other.
template <typename T>
::testing::AssertionResult close(const std::vector<T>& got, const std::vector<T>& want, double rtol) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes " << got.size() << " vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    if (std::isnan(w) != std::isnan(g) || (!std::isnan(w) && std::isinf(w) && g != w) ||
        (std::isfinite(w) && !(std::fabs(g - w) <= rtol * std::max(1.0, std::fabs(w)))))
      return ::testing::AssertionFailure() << "element " << i << ": jit " << g << ", precompiled " << w;
  }
  return ::testing::AssertionSuccess();
}

using Op = std::function<Tensor(const Tensor&)>;

template <typename T>
void check_op(const std::string& name, const Op& op, bool exact, bool special) {
  const double rtol = exact ? 0.0 : (std::is_same_v<T, float> ? 2e-5 : 1e-12);
  for (int64_t n = 1; n <= 40; ++n) {
    for (const wok::Shape& outer : {wok::Shape{1}, wok::Shape{5}, wok::Shape{3, 7}, wok::Shape{67}}) {
      int64_t rows = 1;
      for (int64_t d : outer) rows *= d;
      wok::Shape shape = outer;
      shape.push_back(n);
      const std::vector<T> x = make<T>(rows, n, static_cast<uint32_t>(n * 131 + rows), special);
      auto run = [&](wok::Backend b) {
        wok::set_backend(b);
        Tensor y = op(wok::from_vector(x, shape));
        wok::eval({y});
        return y;
      };
      Tensor want = run(wok::Backend::kPrecompiled), got = run(wok::Backend::kJit);
      SCOPED_TRACE(name + " row length " + std::to_string(n) + ", " + std::to_string(rows) + " rows");
      ASSERT_EQ(got.shape(), want.shape());
      if (want.dtype() == wok::DType::kInt64) {
        ASSERT_EQ(got.to_vector<int64_t>(), want.to_vector<int64_t>());
      } else {
        ASSERT_TRUE(close<T>(got.to_vector<T>(), want.to_vector<T>(), rtol));
      }
    }
  }
}

template <typename T>
void check_all() {
  check_op<T>("softmax", [](const Tensor& x) { return wok::softmax(x); }, false, true);
  check_op<T>("log_softmax", [](const Tensor& x) { return wok::log_softmax(x); }, false, true);
  check_op<T>("layer_norm", [](const Tensor& x) { return wok::layer_norm(x, {}, {}, 1e-5); }, false, false);
  check_op<T>("layer_norm with weight and bias", [](const Tensor& x) {
    const int64_t n = x.shape().back();
    std::vector<T> w(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      w[static_cast<size_t>(i)] = static_cast<T>(0.5 + 0.25 * static_cast<double>(i % 5));
      b[static_cast<size_t>(i)] = static_cast<T>(0.125 * static_cast<double>(i % 3) - 0.1);
    }
    return wok::layer_norm(x, wok::from_vector(w, {n}), wok::from_vector(b, {n}), 1e-5);
  }, false, false);
  check_op<T>("argmax", [](const Tensor& x) { return wok::argmax(x, {-1}); }, true, true);
  check_op<T>("max", [](const Tensor& x) { return wok::max(x, {-1}); }, true, true);
  check_op<T>("sum", [](const Tensor& x) { return wok::sum(x, {-1}); }, false, false);
}

TEST_F(JitShortRows, Float32) { check_all<float>(); }
TEST_F(JitShortRows, Float64) { check_all<double>(); }

// Integer argmax and max: the lane reductions without the nan path.
TEST_F(JitShortRows, Int32ArgmaxAndMax) {
  for (int64_t n = 1; n <= 40; ++n) {
    std::vector<int32_t> x(static_cast<size_t>(9 * n));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>((i * 2654435761u) % 7) - 3;
    for (auto op : {0, 1}) {
      auto run = [&](wok::Backend b) {
        wok::set_backend(b);
        Tensor t = wok::from_vector(x, {9, n});
        Tensor y = op == 0 ? wok::argmax(t, {-1}) : wok::max(t, {-1});
        wok::eval({y});
        return y;
      };
      Tensor want = run(wok::Backend::kPrecompiled), got = run(wok::Backend::kJit);
      SCOPED_TRACE("row length " + std::to_string(n));
      if (op == 0) {
        EXPECT_EQ(got.to_vector<int64_t>(), want.to_vector<int64_t>());
      } else {
        EXPECT_EQ(got.to_vector<int32_t>(), want.to_vector<int32_t>());
      }
    }
  }
}

}  // namespace
