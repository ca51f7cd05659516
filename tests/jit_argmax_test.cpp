// Generated argmax (Note [Generated argmax] in jit/x86/argmax_emitter.h):
// the JIT's row, column and split-row kernels against the precompiled
// kernel and a plain loop, for every dtype, row length and awkward value
// (ties, nan, infinities, rows of the identity), and the fusion of argmax
// with its producers, seen through the launch counters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"
#include "wok/runtime/cpu_features.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

// The precompiled kernel's rule: x beats the best so far when greater, or
// when it is the first nan.
template <typename T>
bool beats(T x, T best) {
  if constexpr (std::is_floating_point_v<T>) return x > best || (std::isnan(x) && !std::isnan(best));
  else return x > best;
}

// argmax of x (row-major, `shape`) over `axes` (sorted; empty: all), as a
// plain loop: the row-major index within the reduced axes.
template <typename T>
std::vector<int64_t> reference(const std::vector<T>& x, const Shape& shape, std::vector<int64_t> axes) {
  const int nd = static_cast<int>(shape.size());
  if (axes.empty())
    for (int d = 0; d < nd; ++d) axes.push_back(d);
  std::vector<bool> red(nd, false);
  for (int64_t a : axes) red[a] = true;
  std::vector<int64_t> strides(nd, 1);
  for (int d = nd - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  std::vector<int> kept_dims, red_dims;
  for (int d = 0; d < nd; ++d) (red[d] ? red_dims : kept_dims).push_back(d);
  int64_t outs = 1, count = 1;
  for (int d : kept_dims) outs *= shape[d];
  for (int d : red_dims) count *= shape[d];
  std::vector<int64_t> result(outs);
  for (int64_t o = 0; o < outs; ++o) {
    int64_t base = 0, rest = o;
    for (int i = static_cast<int>(kept_dims.size()) - 1; i >= 0; --i) {
      int d = kept_dims[i];
      base += (rest % shape[d]) * strides[d];
      rest /= shape[d];
    }
    int64_t best_i = 0;
    T best{};
    for (int64_t r = 0; r < count; ++r) {
      int64_t off = base, q = r;
      for (int i = static_cast<int>(red_dims.size()) - 1; i >= 0; --i) {
        int d = red_dims[i];
        off += (q % shape[d]) * strides[d];
        q /= shape[d];
      }
      T v = x[off];
      if (r == 0 || beats(v, best)) {
        best = v;
        best_i = r;
      }
    }
    result[o] = best_i;
  }
  return result;
}

// Row patterns: each fills one row of n elements (seeded per row).
enum class Pattern { kRandom, kSmallInts, kAllEqual, kNan, kFirstNan, kPosInf, kNegInfs, kAllNegInf, kZeros, kLowest, kMaxTwice, kLast };
constexpr Pattern kPatterns[] = {Pattern::kRandom,  Pattern::kSmallInts, Pattern::kAllEqual, Pattern::kNan,
                                 Pattern::kFirstNan, Pattern::kPosInf,   Pattern::kNegInfs,  Pattern::kAllNegInf,
                                 Pattern::kZeros,   Pattern::kLowest,    Pattern::kMaxTwice, Pattern::kLast};

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::kRandom: return "random";
    case Pattern::kSmallInts: return "small ints (ties)";
    case Pattern::kAllEqual: return "all equal";
    case Pattern::kNan: return "nans";
    case Pattern::kFirstNan: return "nan first";
    case Pattern::kPosInf: return "+inf twice";
    case Pattern::kNegInfs: return "-inf sprinkled";
    case Pattern::kAllNegInf: return "all -inf (or lowest)";
    case Pattern::kZeros: return "signed zeros on top";
    case Pattern::kLowest: return "all lowest";
    case Pattern::kMaxTwice: return "max twice";
    case Pattern::kLast: return "max last";
  }
  return "?";
}

template <typename T>
std::vector<T> make_row(Pattern p, int64_t n, uint32_t seed) {
  using L = std::numeric_limits<T>;
  constexpr bool kFloat = std::is_floating_point_v<T>;
  const size_t sn = static_cast<size_t>(n);
  std::vector<T> v = wt::random_values<T>(sn, -1000, 1000, seed);
  auto at = [&](uint64_t k) -> decltype(auto) { return v[static_cast<size_t>(k % static_cast<uint64_t>(n))]; };
  const T low = kFloat ? -L::infinity() : L::lowest();
  switch (p) {
    case Pattern::kRandom: break;
    case Pattern::kSmallInts: v = wt::random_values<T>(sn, -3, 3, seed); break;
    case Pattern::kAllEqual: v.assign(sn, T(5)); break;
    case Pattern::kNan:
      if constexpr (kFloat) {
        at(seed * 7 + n / 2) = L::quiet_NaN();
        at(seed * 7 + n / 2 + 3) = L::quiet_NaN();
        at(n - 1) = L::infinity();
      }
      break;
    case Pattern::kFirstNan:
      if constexpr (kFloat) {
        v[0] = L::quiet_NaN();
        at(n - 1) = L::quiet_NaN();
      }
      break;
    case Pattern::kPosInf:
      at(seed * 13 + n / 3) = kFloat ? L::infinity() : L::max();
      at(seed * 13 + 2 * n / 3) = kFloat ? L::infinity() : L::max();
      break;
    case Pattern::kNegInfs:
      for (size_t i = 0; i < sn; i += 3) v[i] = low;
      break;
    case Pattern::kAllNegInf: v.assign(sn, low); break;
    case Pattern::kZeros:
      if constexpr (kFloat) {
        for (auto& x : v) x = -std::abs(x) - T(1);
        at(seed * 5 + n / 4) = -T(0);
        at(seed * 5 + n / 2) = T(0);
      }
      break;
    case Pattern::kLowest: v.assign(sn, L::lowest()); break;
    case Pattern::kMaxTwice:
      at(seed * 11 + 1) = T(2000);
      at(seed * 11 + n / 2 + 1) = T(2000);
      break;
    case Pattern::kLast: at(n - 1) = T(2000); break;
  }
  if constexpr (std::is_same_v<T, bool>) {
    if (p == Pattern::kAllEqual || p == Pattern::kLowest || p == Pattern::kAllNegInf) v.assign(sn, p == Pattern::kAllEqual);
  }
  return v;
}

// Runs argmax under both backends and checks each against the reference.
template <typename T>
void check(const std::vector<T>& x, const Shape& shape, const std::vector<int64_t>& axes, bool keepdims,
           const std::string& what) {
  SCOPED_TRACE(what + " dtype=" + wt::dname(wok::dtype_of<T>()));
  const std::vector<int64_t> want = reference(x, shape, axes);
  Shape want_shape;
  {
    std::vector<bool> red(shape.size(), axes.empty());
    for (int64_t a : axes) red[a] = true;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!red[d]) want_shape.push_back(shape[d]);
      else if (keepdims) want_shape.push_back(1);
  }
  wt::for_each_backend([&] {
    Tensor t = wok::from_vector(x, shape);
    Tensor y = wok::argmax(t, axes, keepdims);
    EXPECT_EQ(y.shape(), want_shape);
    EXPECT_TRUE(wt::exact<int64_t>("argmax", y, want));
  });
}

// Rows of n elements, `rows` of them, laid out for each kind of kernel.
template <typename T>
void check_layouts(int64_t n, Pattern p) {
  const std::string name = std::string(pattern_name(p)) + " n=" + std::to_string(n);
  const int64_t rows = n >= 100000 ? 2 : n >= 1000 ? 5 : 19;
  std::vector<T> m;  // [rows, n]
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<T> row = make_row<T>(p, n, static_cast<uint32_t>(r + 1));
    m.insert(m.end(), row.begin(), row.end());
  }
  // Innermost axis: a row kernel.
  for (bool keep : {false, true}) check<T>(m, {rows, n}, {1}, keep, "rows " + name);
  // Outer axis: a column kernel over [n, rows] (column r is row r).
  std::vector<T> t(m.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i) t[static_cast<size_t>(i * rows + r)] = m[static_cast<size_t>(r * n + i)];
  for (bool keep : {false, true}) check<T>(t, {n, rows}, {0}, keep, "columns " + name);
  // The middle of three: P = 2 blocks of columns.
  if (n <= 1000) check<T>(wt::concat_vec(t, t), {2, n, rows}, {1}, false, "middle axis " + name);
  // Every axis: one row (split into chunks when long).
  std::vector<T> one(m.begin(), m.begin() + n);
  for (bool keep : {false, true}) check<T>(one, {n}, {}, keep, "all axes " + name);
  check<T>(m, {rows, n}, {}, false, "all axes of a matrix " + name);
}

class JitArgmax : public ::testing::Test {
 protected:
  void SetUp() override {
    if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
    wok::set_backend(wok::Backend::kJit);
  }
  void TearDown() override { wok::set_backend(wok::Backend::kJit); }
};

template <typename T>
void check_all_lengths() {
  for (int64_t n : {1, 7, 33, 1000, 100003})
    for (Pattern p : kPatterns) check_layouts<T>(n, p);
}

TEST_F(JitArgmax, Float32) { check_all_lengths<float>(); }
TEST_F(JitArgmax, Float64) { check_all_lengths<double>(); }
TEST_F(JitArgmax, Int32) { check_all_lengths<int32_t>(); }
TEST_F(JitArgmax, Int64) { check_all_lengths<int64_t>(); }

TEST_F(JitArgmax, Bool) {
  for (int64_t n : {1, 7, 33, 1000})
    for (Pattern p : {Pattern::kRandom, Pattern::kAllEqual, Pattern::kLowest, Pattern::kLast}) check_layouts<bool>(n, p);
}

// Rows that a split-row kernel cuts into chunks: the winner in several
// chunks (the first chunk's wins), a nan in a late chunk, all -inf.
TEST_F(JitArgmax, SplitRowsCombineByValueThenIndex) {
  const int64_t n = (int64_t{1} << 21) + 5;
  std::vector<float> v = wt::random_values<float>(static_cast<size_t>(n), -1, 1, 9);
  v[1500000] = 3;
  v[900000] = 3;
  v[2000000] = 3;
  check<float>(v, {n}, {}, false, "ties across chunks");
  v[1800000] = std::numeric_limits<float>::quiet_NaN();
  v[2000001] = std::numeric_limits<float>::quiet_NaN();
  check<float>(v, {n}, {}, false, "nan in a late chunk");
  check<float>(std::vector<float>(static_cast<size_t>(n), -std::numeric_limits<float>::infinity()), {n}, {}, false,
               "all -inf");
  std::vector<double> d(static_cast<size_t>(n), 1.0);
  d[static_cast<size_t>(n - 1)] = 2.0;
  check<double>(d, {n}, {}, false, "float64 max at the end");
  std::vector<int64_t> w(static_cast<size_t>(n), std::numeric_limits<int64_t>::min());
  check<int64_t>(w, {n}, {}, false, "all int64 min");
  w[1234567] = 0;
  w[1234568] = 0;
  check<int64_t>(w, {n}, {}, false, "int64 tie");
}

// Random shapes, blocks of axes and producers (with broadcast operands):
// the JIT against the precompiled kernels and the plain loop, on the
// producer's value as the precompiled kernels compute it.
template <typename T>
void random_case(std::mt19937& rng, int seed) {
  const int64_t kDims[] = {1, 2, 3, 5, 7, 16, 17, 33, 64, 100};
  std::uniform_int_distribution<int> pick_dim(0, 9), pick_rank(1, 4), coin(0, 1), pick_producer(0, 3);
  const int nd = pick_rank(rng);
  Shape shape;
  for (int d = 0; d < nd; ++d) shape.push_back(kDims[pick_dim(rng)]);
  std::vector<int64_t> axes;
  if (coin(rng)) {
    std::uniform_int_distribution<int> pick_axis(0, nd - 1);
    int a = pick_axis(rng), b = pick_axis(rng);
    for (int d = std::min(a, b); d <= std::max(a, b); ++d) axes.push_back(d);
  } else if (nd > 2 && coin(rng)) {
    axes = {0, nd - 1};  // not one block: left to the precompiled kernel
  }
  const bool keep = coin(rng);
  const int producer = pick_producer(rng);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<T> xv = wt::random_values<T>(static_cast<size_t>(n), -4, 4, static_cast<uint32_t>(seed));
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_int_distribution<int64_t> at(0, n - 1);
    std::uniform_int_distribution<int> special(0, 5);
    for (int i = 0; i < 3; ++i) {
      int s = special(rng);
      T v = s == 0 ? std::numeric_limits<T>::quiet_NaN() : s == 1 ? std::numeric_limits<T>::infinity()
          : s == 2 ? -std::numeric_limits<T>::infinity() : T(std::round(xv[static_cast<size_t>(at(rng))]));
      xv[static_cast<size_t>(at(rng))] = v;
    }
    for (auto& v : xv)
      if (coin(rng)) v = std::round(v);  // ties
  }
  Shape last{shape.back()};
  std::vector<T> wv = wt::random_values<T>(static_cast<size_t>(shape.back()), -4, 4, static_cast<uint32_t>(seed + 1));
  auto produce = [&](const Tensor& x, const Tensor& w) {
    switch (producer) {
      case 0: return x;
      case 1: return x * T(2) + T(1);
      case 2: return wok::maximum(x, w) - w;
      default: return x - wok::max(x, axes, true);
    }
  };
  std::string what = "seed " + std::to_string(seed) + " shape [";
  for (int64_t d : shape) what += std::to_string(d) + " ";
  what += "] axes {";
  for (int64_t a : axes) what += std::to_string(a) + " ";
  what += "} keepdims " + std::to_string(keep) + " producer " + std::to_string(producer);
  SCOPED_TRACE(what + " dtype " + wt::dname(wok::dtype_of<T>()));
  wok::set_backend(wok::Backend::kPrecompiled);
  Tensor x = wok::from_vector(xv, shape), w = wok::from_vector(wv, last);
  std::vector<T> yv = produce(x, w).template to_vector<T>();
  const std::vector<int64_t> want = reference(yv, shape, axes);
  std::vector<int64_t> pre = wok::argmax(produce(x, w), axes, keep).template to_vector<int64_t>();
  wok::set_backend(wok::Backend::kJit);
  wok::reset_stats();
  std::vector<int64_t> jit = wok::argmax(produce(x, w), axes, keep).template to_vector<int64_t>();
  EXPECT_EQ(pre, want);
  EXPECT_EQ(jit, want);
  // Over one block of axes (not all of size 1) followed by few columns (a
  // wide column reduction is left to the precompiled kernel), x or
  // x * 2 + 1 and the argmax are one generated kernel.
  int64_t reduced = 1, columns = 1;
  for (int64_t a : axes) reduced *= shape[static_cast<size_t>(a)];
  if (!axes.empty())
    for (size_t d = static_cast<size_t>(axes.back()) + 1; d < shape.size(); ++d) columns *= shape[d];
  bool block = !axes.empty() && axes.back() - axes.front() + 1 == static_cast<int64_t>(axes.size());
  if ((block || axes.empty()) && (axes.empty() ? n : reduced) > 1 && columns <= 64 && producer <= 1) {
    EXPECT_EQ(wok::stats().kernel_launches, 1);
  }
}

TEST_F(JitArgmax, RandomShapesAxesAndProducers) {
  std::mt19937 rng(2024);
  for (int seed = 0; seed < 150; ++seed) {
    switch (seed % 4) {
      case 0: random_case<float>(rng, seed); break;
      case 1: random_case<double>(rng, seed); break;
      case 2: random_case<int32_t>(rng, seed); break;
      default: random_case<int64_t>(rng, seed); break;
    }
  }
}

// argmax of a computed value: one generated kernel under the JIT.
TEST_F(JitArgmax, FusesWithProducers) {
  std::vector<float> v = wt::random_values<float>(64 * 1000, -3, 3, 4);
  for (size_t i = 0; i < v.size(); i += 7) v[i] = std::round(v[i]);  // some ties
  struct Case {
    std::string name;
    Shape shape;
    std::vector<int64_t> axes;
  };
  // Column kernels are generated for narrow outputs only (wide ones stream
  // better through the precompiled kernel): 64 and 20 columns here.
  for (const Case& c : {Case{"rows", {64, 1000}, {1}}, Case{"columns", {1000, 64}, {0}},
                        Case{"all", {64, 1000}, {}}, Case{"middle", {4, 800, 20}, {1}}}) {
    SCOPED_TRACE(c.name);
    std::vector<float> y(v.size());
    for (size_t i = 0; i < v.size(); ++i) y[i] = v[i] * 2.0f + 1.0f;
    std::vector<int64_t> want = reference(y, c.shape, c.axes);
    Tensor x = wok::from_vector(v, c.shape);
    Tensor r = wok::argmax(x * 2.0f + 1.0f, c.axes);
    wok::reset_stats();
    std::vector<int64_t> got = r.to_vector<int64_t>();
    EXPECT_EQ(wok::stats().kernel_launches, 1);
    EXPECT_EQ(wok::stats().kernels_compiled + wok::stats().cache_hits, 1);
    EXPECT_EQ(got, want);
    wok::set_backend(wok::Backend::kPrecompiled);
    EXPECT_EQ(wok::argmax(x * 2.0f + 1.0f, c.axes).to_vector<int64_t>(), want);
    wok::set_backend(wok::Backend::kJit);
  }
}

// max and argmax of one value share a row kernel; an argmax after a max
// (a second phase) too.
TEST_F(JitArgmax, SharesRowKernelsWithOtherReductions) {
  std::vector<double> v = wt::random_values<double>(37 * 333, -5, 5, 8);
  Tensor x = wok::from_vector(v, {37, 333});
  Tensor h = wok::exp(x) - 1.0;
  Tensor m = wok::max(h, {1});
  Tensor a = wok::argmax(h, {1});
  Tensor b = wok::argmax(x - wok::max(x, {1}, true), {1});
  wok::reset_stats();
  wok::eval({m, a});
  EXPECT_EQ(wok::stats().kernel_launches, 1);
  std::vector<int64_t> got_b = b.to_vector<int64_t>();
  EXPECT_EQ(wok::stats().kernel_launches, 2);
  const std::vector<int64_t> want = reference(v, {37, 333}, {1});  // exp is increasing
  EXPECT_EQ(a.to_vector<int64_t>(), want);
  EXPECT_EQ(got_b, want);
  std::vector<double> mv = m.to_vector<double>();
  for (int r = 0; r < 37; ++r) {
    double at_argmax = std::exp(v[static_cast<size_t>(r * 333 + want[r])]) - 1.0;
    EXPECT_NEAR(mv[r], at_argmax, 1e-12 * std::abs(at_argmax));
  }
}

// The index is not computed with inside the argmax's kernel: its
// consumers run in a kernel of their own, and the result is right.
TEST_F(JitArgmax, ConsumersRunAfterTheKernel) {
  std::vector<float> v = wt::random_values<float>(20 * 50, -1, 1, 5);
  Tensor x = wok::from_vector(v, {20, 50});
  Tensor y = wok::argmax(x * 3.0f, {1}) * int64_t{10} + int64_t{1};
  wok::reset_stats();
  std::vector<int64_t> got = y.to_vector<int64_t>();
  EXPECT_EQ(wok::stats().kernel_launches, 2);
  std::vector<int64_t> want = reference(v, {20, 50}, {1});
  for (auto& w : want) w = w * 10 + 1;
  EXPECT_EQ(got, want);
}

}  // namespace
