// Note [Rows in flight] (jit/x86/row_codegen.cpp): a row kernel of several
// phases, given at least as many rows as phases, of a length whose rows in
// flight fit in L1, works on that many rows at once, each in a different
// phase. Each row must get the bits it gets alone: every row of a kernel
// over several rows is compared, bit for bit, with the same row computed
// by a kernel over that row only (one row takes the one-row path). Rows of
// lengths around the path's bounds and its step and block boundaries, rank
// 3 (the outer index carries between rows in flight), rows with -inf and
// nan, the three float types, and kernels whose phases step differently.
// The capped AVX2 entry of tests/CMakeLists.txt runs these again.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "jit_x86_test_util.h"
#include "wok/jit/plan.h"
#include "wok/jit/x86/row_schedule.h"

namespace {

using wok::DType;
using wok::Tensor;

// The bits of each element of t, as float64 (exact for the float types).
std::vector<uint64_t> bits_of(const Tensor& t) {
  wok::eval({t});
  const std::vector<double> v = wok::cast(t, DType::kFloat64).to_vector<double>();
  std::vector<uint64_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    // A nan is a nan (the cast may canonicalise its payload).
    const double d = std::isnan(v[i]) ? std::numeric_limits<double>::quiet_NaN() : v[i];
    std::memcpy(&b[i], &d, sizeof(double));
  }
  return b;
}

// f over all of x (rows along axis 0 of a [rows, cols] or [2, rows/2,
// cols] tensor) against f over each row alone.
::testing::AssertionResult rows_agree(const Tensor& x, const std::function<Tensor(const Tensor&)>& f) {
  const std::vector<uint64_t> all = bits_of(f(x));
  const int64_t cols = x.shape().back();
  const Tensor flat = wok::reshape(x, {-1, cols});
  const int64_t rows = flat.shape()[0];
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<uint64_t> alone = bits_of(f(wok::slice(flat, 0, r, r + 1)));
    for (int64_t c = 0; c < cols; ++c)
      if (alone[c] != all[r * cols + c])
        return ::testing::AssertionFailure() << "row " << r << " of " << rows << ", column " << c << " of " << cols
                                             << ": alone " << std::bit_cast<double>(alone[c]) << ", in flight "
                                             << std::bit_cast<double>(all[r * cols + c]);
  }
  return ::testing::AssertionSuccess();
}

TEST(JitRowsInFlight, EachRowGetsTheBitsItGetsAlone) {
  wok::set_backend(wok::Backend::kJit);
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(std::string(wok::dtype_name(t)));
    // Below the path's least length, at it, a step past, a 1024-column
    // block and a partial vector past it, and about the longest it takes
    // for the half types' softmax (kInFlightBytes).
    for (int64_t cols : {255, 256, 257, 300, 1000, 1024, 1041, 2000}) {
      SCOPED_TRACE("row length " + std::to_string(cols));
      for (int64_t rows : {3, 4, 7}) {
        SCOPED_TRACE(std::to_string(rows) + " rows");
        std::vector<float> v = (wok::rand({rows, cols}, 3 + rows) * 12.0 - 6.0).to_vector<float>();
        if (rows > 3) {
          v[cols + 5] = -std::numeric_limits<float>::infinity();  // row 1: one -inf
          v[2 * cols + 7] = std::numeric_limits<float>::quiet_NaN();  // row 2: a nan
        }
        const Tensor x = wok::cast(wok::from_vector(v, {rows, cols}), t);
        const Tensor w = wok::cast(wok::rand({cols}, 21) + 0.5, t), b = wok::cast(wok::rand({cols}, 22), t);
        wok::eval({x, w, b});
        EXPECT_TRUE(rows_agree(x, [](const Tensor& a) { return wok::softmax(a, -1); }));
        EXPECT_TRUE(rows_agree(x, [](const Tensor& a) { return wok::log_softmax(a, -1); }));
        EXPECT_TRUE(rows_agree(x, [&](const Tensor& a) { return wok::layer_norm(a, w, b); }));
        EXPECT_TRUE(rows_agree(x, [&](const Tensor& a) { return wok::rms_norm(a, w); }));
        // Two phases whose steps differ (a sum of four vectors a step, an
        // exp's sum of two): the walk's leftovers as each phase's own.
        EXPECT_TRUE(rows_agree(x, [](const Tensor& a) {
          return wok::exp(a - wok::mean(a, {-1}, true)) / wok::sum(wok::exp(a), {-1}, true);
        }));
      }
    }
  }
}

TEST(JitRowsInFlight, RowsOfARank3TensorCarryTheirIndex) {
  wok::set_backend(wok::Backend::kJit);
  for (int64_t cols : {256, 700}) {
    const Tensor x = wok::rand({2, 5, cols}, 9) * 10.0 - 5.0;
    wok::eval({x});
    EXPECT_TRUE(rows_agree(x, [](const Tensor& a) { return wok::softmax(a, -1); }));
    // Strided rows: the transpose's rows are not contiguous.
    const Tensor xt = wok::transpose(wok::rand({cols, 6, 2}, 10), 0, 2);
    wok::eval({xt});
    EXPECT_TRUE(rows_agree(xt, [](const Tensor& a) { return wok::layer_norm(a); }));
  }
}

TEST(JitRowsInFlight, WhichKernelsTakeThePath) {
  const Tensor x = wok::rand({64, 1000}, 1);
  const Tensor h = wok::cast(x, DType::kFloat16);
  wok::eval({x, h});
  auto flight = [](const Tensor& out) {
    std::vector<wok::jit::FusedKernelSpec> specs = wt::compute_row_kernel_specs(out);
    EXPECT_EQ(specs.size(), 1u);
    return specs.empty() ? 0 : wok::jit::x86::RowSchedule(specs[0]).rows_in_flight();
  };
  auto longest = [](const Tensor& out) {
    std::vector<wok::jit::FusedKernelSpec> specs = wt::compute_row_kernel_specs(out);
    return specs.empty() ? 0 : wok::jit::x86::RowSchedule(specs[0]).in_flight_max_columns();
  };
  // Three phases each: max, exp and sum, division; mean, variance, output.
  EXPECT_EQ(flight(wok::softmax(x, 1)), 3);
  EXPECT_EQ(flight(wok::layer_norm(h)), 3);
  // float32 softmax keeps exp(x - max) in its output's row: 8 bytes a
  // column of a row; float16's in a scratch row, with its widened input:
  // 2 + 2 and the scratch rows' bytes.
  EXPECT_EQ(longest(wok::softmax(x, 1)), wok::jit::x86::RowSchedule::kInFlightBytes / (3 * 8));
  const std::vector<wok::jit::FusedKernelSpec> half = wt::compute_row_kernel_specs(wok::softmax(h, 1));
  ASSERT_EQ(half.size(), 1u);
  const wok::jit::x86::RowSchedule s(half[0]);
  EXPECT_EQ(s.scratch_bytes_per_column(), 4 + 4);
  EXPECT_EQ(s.row_bytes_per_column(), 2 + 2 + 4 + 4);
  EXPECT_EQ(s.in_flight_max_columns(), wok::jit::x86::RowSchedule::kInFlightBytes / (3 * 12));
  const Tensor w = wok::cast(wok::rand({1000}, 2), DType::kFloat16), b = wok::cast(wok::rand({1000}, 3), DType::kFloat16);
  wok::eval({w, b});
  EXPECT_EQ(flight(wok::layer_norm(h, w, b)), 3);
  // A long program: its walks' code would take long to compile.
  Tensor chain = x;
  for (int k = 0; k < 12; ++k) chain = chain * 1.01 + 0.1;
  EXPECT_EQ(flight(wok::softmax(chain, 1)), 1);
  // One phase: nothing to overlap. An argmax keeps its own.
  EXPECT_EQ(flight(wok::sum(wok::exp(x), {1})), 1);
  EXPECT_EQ(flight(wok::argmax(x - wok::max(x, {1}, true), {1})), 1);
}

}  // namespace
