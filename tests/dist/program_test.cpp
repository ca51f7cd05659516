// Collectives inside bigger programs: fused with elementwise work and beside
// an independent matmul, under the JIT and the precompiled backend; several
// collectives in one plan; plans replayed; memory flat over 1,000 steps.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "dist_test_util.h"

namespace {

using namespace dt;
namespace dist = wok::dist;

// Sets the backend for one test and restores the previous one.
class BackendScope {
 public:
  explicit BackendScope(wok::Backend b) : saved_(wok::backend()) { wok::set_backend(b); }
  ~BackendScope() { wok::set_backend(saved_); }

 private:
  wok::Backend saved_;
};

// a [m, k] @ b [k, n] in float64 (the inputs are small integers: exact).
std::vector<float> matmul_ref(const std::vector<float>& a, const std::vector<float>& b, int m, int k, int n) {
  std::vector<float> c(static_cast<size_t>(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) acc += static_cast<double>(a[i * k + p]) * b[p * n + j];
      c[static_cast<size_t>(i) * n + j] = static_cast<float>(acc);
    }
  return c;
}

class FusedProgram : public ::testing::TestWithParam<wok::Backend> {};

// y = relu(all_reduce(x * 2) + 1) beside z = a @ b, in one eval, run three
// times with new inputs (the second and third replay the plan).
TEST_P(FusedProgram, CollectiveBesideMatmul) {
  BackendScope scope(GetParam());
  const int rank = dist::rank(), size = dist::size();
  constexpr int kM = 24, kK = 32, kN = 16, kLen = 300;
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const uint64_t salt = 3000 + step;
    Tensor x = input<float>(rank, {kLen}, salt);
    Tensor a = input<float>(rank, {kM, kK}, salt + 10), b = input<float>(rank, {kK, kN}, salt + 20);
    Tensor y = wok::relu(dist::all_reduce(x * 2.0f) + 1.0f);
    Tensor z = wok::matmul(a * 0.5f, b);
    wok::eval({y, z});

    std::vector<float> want_y(kLen, 0.0f);
    for (int r = 0; r < size; ++r) {
      std::vector<float> v = values<float>(r, kLen, salt);
      for (int i = 0; i < kLen; ++i) want_y[i] += v[i] * 2.0f;
    }
    for (float& w : want_y) w = std::max(w + 1.0f, 0.0f);
    EXPECT_TRUE(matches<float>(y, {kLen}, want_y));
    std::vector<float> av = values<float>(rank, kM * kK, salt + 10);
    for (float& v : av) v *= 0.5f;
    EXPECT_TRUE(matches<float>(z, {kM, kN}, matmul_ref(av, values<float>(rank, kK * kN, salt + 20), kM, kK, kN)));
  }
}

// The collective's result consumed by a reduction and a second collective,
// and a collective over a matmul's result.
TEST_P(FusedProgram, ChainsThroughCollectives) {
  BackendScope scope(GetParam());
  const int rank = dist::rank(), size = dist::size();
  constexpr int kRows = 6, kCols = 10;
  Tensor x = input<float>(rank, {kRows, kCols}, 3100);
  Tensor g = dist::all_gather(wok::relu(x) * 3.0f);              // [size * rows, cols]
  Tensor s = wok::sum(g, {0});                                   // [cols]
  Tensor m = dist::all_reduce(wok::sum(x, {1}), ReduceOp::kMax);  // [rows]
  Tensor a = input<float>(rank, {4, 5}, 3200), b = input<float>(rank, {5, 3}, 3300);
  Tensor p = dist::all_reduce(wok::matmul(a, b), ReduceOp::kSum);
  wok::eval({s, m, p});

  std::vector<float> want_s(kCols, 0.0f), want_m(kRows, -1e30f), want_p(12, 0.0f);
  for (int r = 0; r < size; ++r) {
    std::vector<float> v = values<float>(r, kRows * kCols, 3100);
    for (int i = 0; i < kRows; ++i) {
      float row = 0;
      for (int j = 0; j < kCols; ++j) {
        want_s[j] += std::max(v[i * kCols + j], 0.0f) * 3.0f;
        row += v[i * kCols + j];
      }
      want_m[i] = std::max(want_m[i], row);
    }
    std::vector<float> pr = matmul_ref(values<float>(r, 20, 3200), values<float>(r, 15, 3300), 4, 5, 3);
    for (int i = 0; i < 12; ++i) want_p[i] += pr[i];
  }
  EXPECT_TRUE(matches<float>(s, {kCols}, want_s));
  EXPECT_TRUE(matches<float>(m, {kRows}, want_m));
  EXPECT_TRUE(matches<float>(p, {4, 3}, want_p));
}

INSTANTIATE_TEST_SUITE_P(Backends, FusedProgram, ::testing::Values(wok::Backend::kJit, wok::Backend::kPrecompiled),
                         [](const auto& info) { return std::string(wok::backend_name(info.param)); });

// Several collectives of different kinds in one plan, some depending on
// others; the plan must issue them in the same order on every rank. The
// tensors are passed to eval in a different order than they were made.
TEST(OnePlan, SeveralCollectives) {
  const int rank = dist::rank(), size = dist::size();
  const std::vector<int> all = iota_ranks(size);
  for (int step = 0; step < 2; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const uint64_t salt = 4000 + 10 * step;
    Tensor x = input<float>(rank, {8}, salt);
    Tensor a = dist::all_reduce(x);                                    // sum
    Tensor b = dist::all_gather(input<int32_t>(rank, {2, 2}, salt + 1));
    Tensor c = dist::broadcast(input<double>(rank, {3}, salt + 2), size - 1);
    Tensor d = dist::reduce_scatter(input<int64_t>(rank, {size * 2}, salt + 3), ReduceOp::kMax);
    Tensor e = dist::all_reduce(a * 0.5f, ReduceOp::kMin);             // after a
    Tensor f = dist::all_to_all(input<float>(rank, {size}, salt + 4) + 1.0f);
    wok::eval({f, e, d, c, b, a});

    std::vector<float> want_a = reduce_ref<float>(ReduceOp::kSum, all, 8, salt);
    EXPECT_TRUE(matches<float>(a, {8}, want_a));
    std::vector<int32_t> want_b;
    for (int r = 0; r < size; ++r) {
      std::vector<int32_t> v = values<int32_t>(r, 4, salt + 1);
      want_b.insert(want_b.end(), v.begin(), v.end());
    }
    EXPECT_TRUE(matches<int32_t>(b, {2 * size, 2}, want_b));
    EXPECT_TRUE(matches<double>(c, {3}, values<double>(size - 1, 3, salt + 2)));
    std::vector<int64_t> full = reduce_ref<int64_t>(ReduceOp::kMax, all, size * 2, salt + 3);
    EXPECT_TRUE(matches<int64_t>(d, {2}, std::vector<int64_t>(full.begin() + 2 * rank, full.begin() + 2 * rank + 2)));
    std::vector<float> want_e = want_a;
    for (float& v : want_e) v *= 0.5f;  // every rank holds the same a: the min is a * 0.5
    EXPECT_TRUE(matches<float>(e, {8}, want_e));
    std::vector<float> want_f;
    for (int j = 0; j < size; ++j) want_f.push_back(values<float>(j, size, salt + 4)[rank] + 1.0f);
    EXPECT_TRUE(matches<float>(f, {size}, want_f));
  }
}

// The same collective kind twice on one input, and the same tensor reduced
// by every op, in one plan.
TEST(OnePlan, SameInputManyReductions) {
  const int rank = dist::rank(), size = dist::size();
  const std::vector<int> all = iota_ranks(size);
  Tensor x = input<double>(rank, {5}, 4500, Values::kFactors);
  std::vector<Tensor> ys;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kMean, ReduceOp::kSum})
    ys.push_back(dist::all_reduce(x, op));
  wok::eval(ys);
  // reduce_ref draws kFactors values for kProd only: compare each op on
  // the values x really holds.
  std::vector<std::vector<double>> v;
  for (int r = 0; r < size; ++r) v.push_back(values<double>(r, 5, 4500, Values::kFactors));
  int k = 0;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kMean, ReduceOp::kSum}) {
    std::vector<double> want = v[0];
    for (int r = 1; r < size; ++r)
      for (int i = 0; i < 5; ++i) want[i] = combine(op, want[i], v[r][i]);
    if (op == ReduceOp::kMean)
      for (double& w : want) w /= size;
    EXPECT_TRUE(matches<double>(ys[k++], {5}, want)) << opname(op);
  }
}

// ---- memory ---------------------------------------------------------------------------

// 1,000 steps of all_reduce + compute: the bytes in live buffers after step
// 100 and after step 1,000 are the same (nothing accumulates per step).
TEST(Memory, FlatOverThousandSteps) {
  const int rank = dist::rank(), size = dist::size();
  constexpr int kSteps = 1000, kLen = 256;
  std::vector<float> base = values<float>(rank, kLen, 5000);
  std::vector<float> sums(kLen, 0.0f);
  for (int r = 0; r < size; ++r) {
    std::vector<float> v = values<float>(r, kLen, 5000);
    for (int i = 0; i < kLen; ++i) sums[i] += v[i];
  }
  int64_t at100 = -1, at1000 = -1;
  int wrong = 0;
  for (int step = 1; step <= kSteps; ++step) {
    const float scale = static_cast<float>(step % 7 + 1);
    Tensor x = wok::from_vector(base, {kLen});
    Tensor y = wok::relu(dist::all_reduce(x * scale) + 1.0f);
    const float got = wok::sum(y).item<float>();
    float want = 0;
    for (int i = 0; i < kLen; ++i) want += std::max(sums[i] * scale + 1.0f, 0.0f);
    if (std::fabs(got - want) > 1e-3f * std::max(1.0f, std::fabs(want)) && wrong++ < 3)
      ADD_FAILURE() << "step " << step << ": sum " << got << ", want " << want;
    if (step == 100) at100 = wok::memory_stats().current_bytes;
    if (step == kSteps) at1000 = wok::memory_stats().current_bytes;
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_LE(std::llabs(at1000 - at100), 4096) << "bytes in live buffers: " << at100 << " after step 100, " << at1000
                                              << " after step 1000";
}

}  // namespace
