// The shape functions of frontend/shape_ops.h (squeeze, unsqueeze, flatten,
// expand, split, tile, flip, tril/triu, pad, range, depth_to_space,
// space_to_depth, resize) and its reductions (logsumexp, vector_norm, the
// reduce_* family): shapes, errors that name the op, and values against
// element-by-element references written from the ONNX and NumPy
// definitions, on both backends. pad is also checked composed (its path on
// devices without a pad kernel) against its kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;
using LD = long double;

// ---- references ---------------------------------------------------------------------------

std::vector<int64_t> unflat(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}

int64_t flat(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); ++d) f = f * s[d] + idx[d];
  return f;
}

// out[i] = in[source(i)] for every output index, or `fill` where source
// gives no index.
using Source = std::function<std::optional<std::vector<int64_t>>(const std::vector<int64_t>&)>;
template <typename T>
std::vector<T> gather_ref(const std::vector<T>& in, const Shape& in_shape, const Shape& out_shape, const Source& source,
                          T fill = T{}) {
  std::vector<T> out(static_cast<size_t>(wok::numel(out_shape)));
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
    std::optional<std::vector<int64_t>> s = source(unflat(i, out_shape));
    out[static_cast<size_t>(i)] = s ? in[static_cast<size_t>(flat(*s, in_shape))] : fill;
  }
  return out;
}

template <typename T>
std::vector<T> iota(int64_t n, T start = T(0)) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<T>(start + static_cast<T>(i));
  return v;
}

std::vector<float> floats(int64_t n, uint32_t seed) { return wt::random_values<float>(static_cast<size_t>(n), -4, 4, seed); }

template <typename T>
std::vector<double> as_doubles(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

class ShapeOpsExtra : public wt::BothBackends {};

// ---- squeeze / unsqueeze / flatten -------------------------------------------------------------

TEST_P(ShapeOpsExtra, SqueezeUnsqueezeFlatten) {
  Tensor x = wok::from_vector(iota<float>(6), {1, 2, 1, 3, 1});
  EXPECT_EQ(wok::squeeze(x).shape(), (Shape{2, 3}));
  EXPECT_EQ(wok::squeeze(x, {0}).shape(), (Shape{2, 1, 3, 1}));
  EXPECT_EQ(wok::squeeze(x, {-1, 2}).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(wok::squeeze(wok::zeros({1})).shape(), Shape{});
  EXPECT_TRUE(wt::exact<float>("squeeze", wok::squeeze(x) * 1.0f, iota<float>(6)));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::squeeze(x, {1}); }, {"wok::squeeze", "axis 1", "size 2"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::squeeze(x, {5}); }, {"wok::squeeze", "axis 5"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::squeeze(x, {0, -5}); }, {"wok::squeeze", "repeated"}));

  Tensor y = wok::from_vector(iota<float>(6), {2, 3});
  EXPECT_EQ(wok::unsqueeze(y, {0}).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(wok::unsqueeze(y, {0, -1}).shape(), (Shape{1, 2, 3, 1}));
  EXPECT_EQ(wok::unsqueeze(y, {1, 3}).shape(), (Shape{2, 1, 3, 1}));
  EXPECT_EQ(wok::unsqueeze(y, {3, 0}).shape(), (Shape{1, 2, 3, 1}));
  EXPECT_EQ(wok::unsqueeze(wok::scalar_tensor(1.0f), {0}).shape(), (Shape{1}));
  EXPECT_TRUE(wt::exact<float>("unsqueeze", wok::unsqueeze(y, {1}) + 0.0f, iota<float>(6)));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::unsqueeze(y, {4}); }, {"wok::unsqueeze", "axis 4"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::unsqueeze(y, {1, 1}); }, {"wok::unsqueeze", "repeated"}));

  Tensor z = wok::zeros({2, 3, 4, 5});
  EXPECT_EQ(wok::flatten(z).shape(), (Shape{2, 60}));
  EXPECT_EQ(wok::flatten(z, 0).shape(), (Shape{1, 120}));
  EXPECT_EQ(wok::flatten(z, 4).shape(), (Shape{120, 1}));
  EXPECT_EQ(wok::flatten(z, -1).shape(), (Shape{24, 5}));
  EXPECT_EQ(wok::flatten(z, -4).shape(), (Shape{1, 120}));
  EXPECT_EQ(wok::flatten(wok::scalar_tensor(2.0f), 0).shape(), (Shape{1, 1}));
  EXPECT_EQ(wok::flatten(wok::zeros({3, 0, 2}), 2).shape(), (Shape{0, 2}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::flatten(z, 5); }, {"wok::flatten", "axis 5"}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>([&] { wok::flatten(Tensor(), 1); }, {"wok::flatten", "undefined"}));
}

// ---- expand -----------------------------------------------------------------------------------

TEST_P(ShapeOpsExtra, ExpandBroadcastsBothWays) {
  Tensor x = wok::from_vector(std::vector<int32_t>{1, 2, 3}, {3, 1});
  Tensor e = wok::expand(x, {2, 1, 4});  // [3, 1] with [2, 1, 4]: [2, 3, 4]
  EXPECT_EQ(e.shape(), (Shape{2, 3, 4}));
  std::vector<int32_t> want;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) want.push_back(i + 1);
  EXPECT_TRUE(wt::exact<int32_t>("expand", e, want));
  // A shape smaller than x's, or with 1s, keeps x's dims.
  EXPECT_EQ(wok::expand(x, {1}).shape(), (Shape{3, 1}));
  EXPECT_EQ(wok::expand(x, {1, 5}).shape(), (Shape{3, 5}));
  EXPECT_EQ(wok::expand(wok::zeros({1, 4}), {0, 1}).shape(), (Shape{0, 4}));
  EXPECT_TRUE(wt::exact<int32_t>("expand to 1s", wok::expand(x, {1, 1}), {1, 2, 3}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::expand(x, {2, 2}); }, {"wok::expand", "[3, 1]", "[2, 2]"}));
}

// ---- split ------------------------------------------------------------------------------------

TEST_P(ShapeOpsExtra, SplitBySizes) {
  Tensor x = wok::from_vector(iota<float>(2 * 7), {2, 7});
  std::vector<Tensor> parts = wok::split(x, {2, 0, 5}, 1);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(parts[1].shape(), (Shape{2, 0}));
  EXPECT_EQ(parts[2].shape(), (Shape{2, 5}));
  EXPECT_TRUE(wt::exact<float>("split 0", parts[0], {0, 1, 7, 8}));
  EXPECT_TRUE(wt::exact<float>("split 2", parts[2], {2, 3, 4, 5, 6, 9, 10, 11, 12, 13}));
  // A braced single size is a list of sizes, not a count.
  std::vector<Tensor> whole = wok::split(x, {7}, -1);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].shape(), (Shape{2, 7}));
  std::vector<Tensor> rows = wok::split(x, std::vector<int64_t>{1, 1});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(wt::exact<float>("split rows", rows[1], {7, 8, 9, 10, 11, 12, 13}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::split(x, {3, 3}, 1); }, {"wok::split", "sum to 6", "7"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::split(x, {8, -1}, 1); }, {"wok::split", "negative"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::split(x, {2}, 2); }, {"wok::split", "axis 2"}));
}

TEST_P(ShapeOpsExtra, SplitIntoNumOutputs) {
  auto sizes_of = [](int64_t n, int64_t k) {
    std::vector<int64_t> s;
    for (const Tensor& t : wok::split(wok::zeros({3, n}), k, 1)) s.push_back(t.shape()[1]);
    return s;
  };
  EXPECT_EQ(sizes_of(6, 3), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(sizes_of(7, 4), (std::vector<int64_t>{2, 2, 2, 1}));  // ONNX test_split_1d_uneven_split
  EXPECT_EQ(sizes_of(8, 3), (std::vector<int64_t>{3, 3, 2}));     // ONNX test_split_2d_uneven_split
  EXPECT_EQ(sizes_of(5, 1), (std::vector<int64_t>{5}));
  EXPECT_EQ(sizes_of(6, 4), (std::vector<int64_t>{2, 2, 2, 0}));
  EXPECT_EQ(sizes_of(0, 2), (std::vector<int64_t>{0, 0}));
  Tensor x = wok::from_vector(iota<int64_t>(7), {7});
  std::vector<Tensor> p = wok::split(x, 4);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_TRUE(wt::exact<int64_t>("split 1", p[1] * int64_t{1}, {2, 3}));
  EXPECT_TRUE(wt::exact<int64_t>("split 3", p[3], {6}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::split(wok::slice(x.reshape({1, 7}), 1, 0, 5), 4, 1); },
                                                  {"wok::split", "5 elements", "4 pieces"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::split(x, 0); }, {"wok::split", "num_outputs"}));
}

// ---- tile -----------------------------------------------------------------------------------

template <typename T>
void check_tile(const Shape& shape, const std::vector<int64_t>& repeats, uint32_t seed) {
  std::vector<T> v = wt::random_values<T>(static_cast<size_t>(wok::numel(shape)), -50, 50, seed);
  Tensor x = wok::from_vector(v, shape);
  Tensor y = wok::tile(x, repeats);
  // NumPy: both padded with leading 1s to one rank.
  Shape s = shape;
  std::vector<int64_t> r = repeats;
  while (s.size() < r.size()) s.insert(s.begin(), 1);
  while (r.size() < s.size()) r.insert(r.begin(), 1);
  Shape out;
  for (size_t i = 0; i < s.size(); ++i) out.push_back(s[i] * r[i]);
  ASSERT_EQ(y.shape(), out) << "tile of " << wok::shape_str(shape) << " by " << wok::shape_str(repeats);
  std::vector<T> want = gather_ref<T>(v, s, out, [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> i(o.size());
    for (size_t d = 0; d < o.size(); ++d) i[d] = o[d] % s[d];
    return i;
  });
  EXPECT_TRUE(wt::exact<T>("tile " + wok::shape_str(shape) + " by " + wok::shape_str(repeats), y, want));
}

TEST_P(ShapeOpsExtra, TileMatchesNumPy) {
  check_tile<float>({2, 3}, {2, 2}, 1);
  check_tile<float>({2, 3}, {1, 4}, 2);
  check_tile<float>({2, 3}, {3, 1}, 3);
  check_tile<double>({3}, {2, 2}, 4);   // repeats longer than the rank
  check_tile<int32_t>({2, 1, 3}, {2}, 5);  // shorter
  check_tile<int64_t>({1, 4}, {3, 2}, 6);
  check_tile<bool>({2, 2, 2}, {1, 3, 2}, 7);
  check_tile<float>({2, 3}, {0, 2}, 8);
  check_tile<float>({}, {3}, 9);
  check_tile<float>({4, 5}, {1, 1}, 10);
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::tile(wok::zeros({2}), {-1}); }, {"wok::tile", "negative"}));
}

// ---- flip -----------------------------------------------------------------------------------

template <typename T>
void check_flip(const Shape& shape, std::vector<int64_t> axes, uint32_t seed) {
  std::vector<T> v = wt::random_values<T>(static_cast<size_t>(wok::numel(shape)), -50, 50, seed);
  Tensor y = wok::flip(wok::from_vector(v, shape), axes);
  std::vector<bool> flipped(shape.size(), axes.empty());
  for (int64_t a : axes) flipped[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(shape.size()) : a)] = true;
  std::vector<T> want = gather_ref<T>(v, shape, shape, [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> i = o;
    for (size_t d = 0; d < o.size(); ++d)
      if (flipped[d]) i[d] = shape[d] - 1 - o[d];
    return i;
  });
  EXPECT_EQ(y.shape(), shape);
  EXPECT_TRUE(wt::exact<T>("flip " + wok::shape_str(shape) + " along " + wok::shape_str(axes), y, want));
}

TEST_P(ShapeOpsExtra, FlipReversesAxes) {
  check_flip<float>({5}, {0}, 1);
  check_flip<float>({3, 4}, {}, 2);
  check_flip<float>({3, 4}, {1}, 3);
  check_flip<double>({2, 3, 4}, {0, 2}, 4);
  check_flip<int32_t>({2, 3, 4}, {-2}, 5);
  check_flip<int64_t>({4, 1, 3}, {0, 1, 2}, 6);
  check_flip<bool>({3, 33}, {1}, 7);
  check_flip<float>({300, 257}, {0, 1}, 8);
  check_flip<float>({2, 0, 3}, {1, 2}, 9);
  Tensor one = wok::zeros({1, 1});
  EXPECT_EQ(wok::flip(one).impl(), one.impl()) << "nothing to reverse: the input itself";
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::flip(one, {0, 0}); }, {"wok::flip", "repeated"}));
  // Fused with its neighbours' elementwise work around a copy.
  Tensor x = wok::from_vector(iota<float>(6), {2, 3});
  EXPECT_TRUE(wt::exact<float>("flip of a sum", wok::flip(x + 1.0f, {1}) * 2.0f, {6, 4, 2, 12, 10, 8}));
}

// ---- tril / triu -------------------------------------------------------------------------------

template <typename T>
void check_triangles(const Shape& shape, uint32_t seed) {
  std::vector<T> v = wt::random_values<T>(static_cast<size_t>(wok::numel(shape)), -9, 9, seed);
  Tensor x = wok::from_vector(v, shape);
  const int64_t H = shape[shape.size() - 2], W = shape.back();
  for (int64_t k = -H - 1; k <= W + 1; ++k) {
    std::vector<T> lo(v.size()), up(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      const int64_t c = static_cast<int64_t>(i) % W, r = (static_cast<int64_t>(i) / W) % H;
      lo[i] = c <= r + k ? v[i] : T(0);
      up[i] = c >= r + k ? v[i] : T(0);
    }
    const std::string at = wok::shape_str(shape) + " k=" + std::to_string(k);
    EXPECT_TRUE(wt::exact<T>("tril " + at, wok::tril(x, k), lo));
    EXPECT_TRUE(wt::exact<T>("triu " + at, wok::triu(x, k), up));
  }
}

TEST_P(ShapeOpsExtra, TrilTriuKeepTheirTriangle) {
  check_triangles<float>({4, 4}, 1);
  check_triangles<float>({3, 5}, 2);
  check_triangles<double>({5, 2}, 3);
  check_triangles<int32_t>({2, 3, 4, 3}, 4);
  check_triangles<int64_t>({3, 1, 6}, 5);
  check_triangles<bool>({2, 3, 3}, 6);
  check_triangles<float>({1, 1}, 7);
  check_triangles<float>({7, 40}, 8);
  EXPECT_EQ(wok::tril(wok::zeros({2, 0, 3})).shape(), (Shape{2, 0, 3}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([] { wok::tril(wok::zeros({3})); }, {"wok::tril", "2 dims"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([] { wok::triu(wok::scalar_tensor(1.0f)); }, {"wok::triu"}));
}

class ShapeOpsLaunches : public wt::JitLaunchCounts {};

// tril is a where over an index comparison: under the JIT it fuses with
// the elementwise ops around it, with one launch per (tiny) index vector.
TEST_F(ShapeOpsLaunches, TrilFusesWithItsNeighbours) {
  Tensor x = wok::from_vector(floats(64 * 64, 3), {64, 64});
  Tensor y = wok::tril(wok::exp(x) * 2.0f, 1) + 1.0f;
  EXPECT_EQ(launches_of({y}), 3);
  // The mask of causal attention: scores masked to -inf above the diagonal.
  Tensor m = wok::where(wok::tril(wok::ones({64, 64}, DType::kBool)), x, -INFINITY);
  EXPECT_EQ(launches_of({wok::softmax(m)}), 3);
}

// pad is one pass over its output on the CPU; the composition it falls
// back to elsewhere costs a copy per padded axis and its fills.
TEST_F(ShapeOpsLaunches, PadIsOneKernel) {
  Tensor x = wok::from_vector(floats(2 * 3 * 16 * 16, 5), {2, 3, 16, 16});
  const std::vector<int64_t> pads = {0, 0, 1, 2, 0, 0, 3, 1};
  EXPECT_EQ(launches_of({wok::pad(x, pads)}), 1);
  EXPECT_EQ(launches_of({wok::pad(x, pads, "reflect")}), 1);
  EXPECT_GT(launches_of({wok::detail::pad_composed(x, pads, "reflect", 0)}), 2);
  EXPECT_EQ(launches_of({wok::resize(x, {1, 1, 2, 2}, "linear")}), 1);
  EXPECT_EQ(launches_of({wok::resize(x, {1, 1, 2, 0.5}, {.mode = "cubic"})}), 1);
}

// logsumexp is one row kernel, like log_softmax.
TEST_F(ShapeOpsLaunches, LogSumExpIsOneKernel) {
  Tensor x = wok::from_vector(floats(32 * 100, 4), {32, 100});
  EXPECT_EQ(launches_of({wok::logsumexp(x, {1})}), 1);
  EXPECT_EQ(launches_of({wok::logsumexp(x * 3.0f, {-1}, true)}), 1);
}

// ---- pad ------------------------------------------------------------------------------------

// NumPy's pad (after cropping by negative pads), element by element.
template <typename T>
std::vector<T> pad_ref(const std::vector<T>& v, const Shape& shape, const std::vector<int64_t>& pads,
                       const std::string& mode, T value, Shape* out_shape) {
  const size_t n = shape.size();
  Shape out(n);
  for (size_t d = 0; d < n; ++d) out[d] = shape[d] + pads[d] + pads[d + n];
  *out_shape = out;
  return gather_ref<T>(
      v, shape, out,
      [&](const std::vector<int64_t>& o) -> std::optional<std::vector<int64_t>> {
        std::vector<int64_t> i(n);
        for (size_t d = 0; d < n; ++d) {
          const int64_t lo = std::max<int64_t>(-pads[d], 0);                 // first kept input index
          const int64_t m = shape[d] - lo - std::max<int64_t>(-pads[d + n], 0);  // kept count
          int64_t t = o[d] - std::max<int64_t>(pads[d], 0);                  // index into the kept part
          if (t < 0 || t >= m) {
            if (mode == "constant") return std::nullopt;
            if (mode == "edge") t = t < 0 ? 0 : m - 1;
            if (mode == "reflect") t = t < 0 ? -t : 2 * m - 2 - t;
            if (mode == "wrap") t = ((t % m) + m) % m;
          }
          i[d] = lo + t;
        }
        return i;
      },
      value);
}

template <typename T>
void check_pad(const Shape& shape, const std::vector<int64_t>& pads, const std::string& mode, uint32_t seed) {
  std::vector<T> v = wt::random_values<T>(static_cast<size_t>(wok::numel(shape)), -50, 50, seed);
  Tensor x = wok::from_vector(v, shape);
  const T value = static_cast<T>(7);
  Shape out;
  std::vector<T> want = pad_ref<T>(v, shape, pads, mode, value, &out);
  const std::string at = mode + " " + wok::shape_str(shape) + " pads " + wok::shape_str(pads);
  Tensor y = wok::pad(x, pads, mode, value);
  ASSERT_EQ(y.shape(), out) << at;
  EXPECT_TRUE(wt::exact<T>("pad " + at, y, want));
  Tensor c = wok::detail::pad_composed(x, pads, mode, value);
  ASSERT_EQ(c.shape(), out) << at;
  EXPECT_TRUE(wt::exact<T>("composed pad " + at, c, want));
}

TEST_P(ShapeOpsExtra, PadModes) {
  for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
    check_pad<float>({5}, {2, 3}, mode, 1);
    check_pad<float>({3, 4}, {1, 2, 2, 1}, mode, 2);
    check_pad<double>({3, 4}, {0, 3, 0, 0}, mode, 3);
    check_pad<int32_t>({2, 3, 4}, {1, 0, 2, 0, 2, 3}, mode, 4);
    check_pad<int64_t>({1, 2, 5, 6}, {0, 0, 1, 4, 0, 0, 3, 2}, mode, 5);
    check_pad<bool>({4, 4}, {2, 1, 3, 0}, mode, 6);
    // Negative pads crop first; the mode then reads the cropped part.
    check_pad<float>({6, 5}, {-1, 2, 1, -2}, mode, 7);
    check_pad<float>({6, 5}, {-2, -1, -3, -1}, mode, 8);
    check_pad<float>({200, 300}, {3, 2, 1, 4}, mode, 9);  // rows split across threads
    check_pad<float>({1 << 17}, {5, 9}, mode, 10);         // one long row, split
  }
  // Only wrap and constant go past the size of the axis.
  check_pad<float>({3, 2}, {7, 0, 5, 4}, "wrap", 11);
  check_pad<float>({3, 2}, {7, 0, 5, 4}, "constant", 12);
  check_pad<float>({3, 2}, {7, 0, 5, 4}, "edge", 13);
  check_pad<float>({0, 3}, {2, 1, 1, 0}, "constant", 14);
  check_pad<float>({}, {}, "reflect", 15);
}

// The examples of the ONNX operator documentation.
TEST_P(ShapeOpsExtra, PadOnnxExamples) {
  Tensor x = wok::from_vector(std::vector<float>{1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f}, {3, 2});
  EXPECT_TRUE(wt::exact<float>("constant", wok::pad(x, {0, 2, 0, 0}),
                               {0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f}));
  EXPECT_TRUE(wt::exact<float>("edge", wok::pad(x, {0, 2, 0, 0}, "edge"),
                               {1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f}));
  EXPECT_TRUE(wt::exact<float>("reflect", wok::pad(x, {0, 1, 0, 1}, "reflect"),
                               {1.2f, 1.0f, 1.2f, 1.0f, 3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f}));
  Tensor w = wok::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_TRUE(wt::exact<int32_t>("wrap", wok::pad(w, {2, 1, 1, 1}, "wrap"),
                                 {4, 3, 4, 3, 6, 5, 6, 5, 2, 1, 2, 1, 4, 3, 4, 3, 6, 5, 6, 5, 2, 1, 2, 1}));
  // The value is cast to x's dtype.
  EXPECT_TRUE(wt::exact<int32_t>("int value", wok::pad(w, {0, 1, 0, 0}, "constant", 2.9), {2, 1, 2, 2, 3, 4, 2, 5, 6}));
}

TEST_P(ShapeOpsExtra, PadErrors) {
  Tensor x = wok::zeros({3, 4});
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::pad(x, {0, 4, 0, 0}, "reflect"); },
                                                  {"wok::pad", "axis 1", "reflect pads 4, 0", "smaller", "(4)"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::pad(x, {3, 0, 0, 0}, "reflect"); },
                                                  {"wok::pad", "axis 0", "reflect"}));
  // Reflecting a cropped axis: the kept size counts.
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::pad(x, {0, -2, 0, 2}, "reflect"); },
                                                  {"wok::pad", "smaller", "(2)"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::pad(x, {-2, 0, -2, 0}); }, {"wok::pad", "crop more"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::pad(x, {1, 1}); }, {"wok::pad", "2 pads per axis"}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>([&] { wok::pad(x, {1, 1, 1, 1}, "mirror"); },
                                                     {"wok::pad", "mirror"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::pad(wok::zeros({0, 2}), {1, 0, 0, 0}, "edge"); },
                                                  {"wok::pad", "edge", "empty"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::detail::pad_composed(x, {0, 4, 0, 0}, "reflect", 0); },
                                                  {"wok::pad", "reflect"}));
  EXPECT_EQ(wok::pad(x, {0, 0, 0, 0}, "reflect").impl(), x.impl());
}

// ---- range ------------------------------------------------------------------------------------

TEST_P(ShapeOpsExtra, RangeIsOnnxRange) {
  EXPECT_TRUE(wt::exact<int64_t>("range", wok::range(0, 10, 3), {0, 3, 6, 9}));
  EXPECT_TRUE(wt::exact<int64_t>("range", wok::range(10, 4, -2), {10, 8, 6}));  // ONNX test_range_int32_type_negative_delta
  EXPECT_TRUE(wt::exact<int32_t>("range int32", wok::range(10, 6, -3, DType::kInt32), {10, 7}));
  EXPECT_TRUE(wt::exact<int64_t>("range empty", wok::range(5, 5, 1), {}));
  EXPECT_TRUE(wt::exact<int64_t>("range wrong way", wok::range(5, 1, 1), {}));
  EXPECT_TRUE(wt::close<float>("range float", wok::range(1.0, 5.0, 2.0), {1, 3}, 0, 0));  // test_range_float_type_positive_delta
  EXPECT_EQ(wok::range(0.0, 1.0, 0.1).numel(), 10);
  EXPECT_TRUE(wt::close<double>("range float64", wok::range(0.5, 2.0, 0.5, DType::kFloat64), {0.5, 1.0, 1.5}, 0, 0));
  // Integers stay exact where float64 would not.
  const int64_t big = (int64_t{1} << 62) + 1;
  EXPECT_TRUE(wt::exact<int64_t>("range big", wok::range(big, big + 7, 3), {big, big + 3, big + 6}));
  EXPECT_TRUE(wt::exact<int64_t>("range extremes",
                                 wok::range(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                                            std::numeric_limits<int64_t>::max()),
                                 {std::numeric_limits<int64_t>::min(), -1, std::numeric_limits<int64_t>::max() - 1}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>([] { wok::range(0, 3, 0); }, {"wok::range", "delta"}));
  EXPECT_TRUE(wt::throws_naming<wok::DTypeError>([] { wok::range(0, 3, 1, DType::kBool); }, {"wok::range", "bool"}));
  // arange is range in float64, cast: integer dtypes truncate each value.
  EXPECT_TRUE(wt::exact<int32_t>("arange", wok::arange(-0.5, 2, 1, DType::kInt32), {0, 0, 1}));
  EXPECT_TRUE(wt::exact<float>("arange", wok::arange(0, 1.25, 0.25), {0, 0.25f, 0.5f, 0.75f, 1.0f}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>([] { wok::arange(0, 1, 0); }, {"arange"}));
}

// ---- depth_to_space / space_to_depth --------------------------------------------------------------

TEST_P(ShapeOpsExtra, DepthToSpaceAndBack) {
  const int64_t N = 2, C = 8, H = 3, W = 2, b = 2, c = C / (b * b);
  std::vector<float> v = iota<float>(N * C * H * W);
  Tensor x = wok::from_vector(v, {N, C, H, W});
  Shape out{N, c, H * b, W * b};
  for (const char* mode : {"DCR", "CRD"}) {
    const bool dcr = std::string(mode) == "DCR";
    std::vector<float> want = gather_ref<float>(v, {N, C, H, W}, out, [&](const std::vector<int64_t>& o) {
      const int64_t bh = o[2] % b, bw = o[3] % b;
      const int64_t ch = dcr ? (bh * b + bw) * c + o[1] : o[1] * b * b + bh * b + bw;
      return std::vector<int64_t>{o[0], ch, o[2] / b, o[3] / b};
    });
    Tensor y = wok::depth_to_space(x, b, mode);
    EXPECT_EQ(y.shape(), out);
    EXPECT_TRUE(wt::exact<float>(std::string("depth_to_space ") + mode, y, want));
  }
  // The examples of the ONNX operator documentation: [1, 8, 2, 3], channel
  // c holding 9c + 3h + w, blocksize 2.
  std::vector<float> o;
  for (int c8 = 0; c8 < 8; ++c8)
    for (int i = 0; i < 6; ++i) o.push_back(static_cast<float>(9 * c8 + i));
  Tensor ox = wok::from_vector(o, {1, 8, 2, 3});
  EXPECT_TRUE(wt::exact<float>("onnx DCR", wok::depth_to_space(ox, 2),
                               {0,  18, 1,  19, 2,  20, 36, 54, 37, 55, 38, 56, 3,  21, 4,  22, 5,  23, 39, 57, 40, 58, 41, 59,
                                9,  27, 10, 28, 11, 29, 45, 63, 46, 64, 47, 65, 12, 30, 13, 31, 14, 32, 48, 66, 49, 67, 50, 68}));
  EXPECT_TRUE(wt::exact<float>("onnx CRD", wok::depth_to_space(ox, 2, "CRD"),
                               {0,  9,  1,  10, 2,  11, 18, 27, 19, 28, 20, 29, 3,  12, 4,  13, 5,  14, 21, 30, 22, 31, 23, 32,
                                36, 45, 37, 46, 38, 47, 54, 63, 55, 64, 56, 65, 39, 48, 40, 49, 41, 50, 57, 66, 58, 67, 59, 68}));
  Tensor s = wok::space_to_depth(wok::depth_to_space(x, b), b);
  EXPECT_EQ(s.shape(), x.shape());
  EXPECT_TRUE(wt::exact<float>("space_to_depth(depth_to_space)", s, v));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::depth_to_space(x, 3); }, {"wok::depth_to_space", "8"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::space_to_depth(x, 2); }, {"wok::space_to_depth", "3x2"}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>([&] { wok::depth_to_space(x, 2, "RDC"); }, {"RDC"}));
}

// ---- resize ---------------------------------------------------------------------------------------

// ONNX's x_original, straight from the operator's definition; `start` and
// `end` are the axis's roi (tf_crop_and_resize).
double source_coord(const std::string& m, int64_t x, double scale, int64_t in, int64_t out, double start = 0,
                    double end = 1) {
  if (m == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (m == "half_pixel_symmetric") {
    const double adj = out / (scale * in), center = in / 2.0;
    return center * (1 - adj) + (x + 0.5) / scale - 0.5;
  }
  if (m == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
  // The resized length before rounding (in * scale): ONNX's reference and
  // its test test_resize_downsample_scales_linear_align_corners.
  if (m == "align_corners") return out == 1 || in * scale <= 1 ? 0 : x * double(in - 1) / (in * scale - 1);
  if (m == "asymmetric") return x / scale;
  if (m == "tf_crop_and_resize")
    return out == 1 ? 0.5 * (start + end) * (in - 1) : start * (in - 1) + x * (end - start) * (in - 1) / (in * scale - 1);
  return (x + 0.5) / scale;  // tf_half_pixel_for_nn
}

int64_t nearest(const std::string& mode, double c, int64_t in) {
  double i;
  if (mode == "floor") i = std::floor(c);
  else if (mode == "ceil") i = std::ceil(c);
  else if (c - std::floor(c) == 0.5) i = mode == "round_prefer_floor" ? std::floor(c) : std::ceil(c);
  else i = std::round(c);
  return std::clamp<int64_t>(static_cast<int64_t>(i), 0, in - 1);
}

// Keys' cubic convolution kernel at distance t.
double keys(double t, double a) {
  t = std::fabs(t);
  if (t <= 1) return (a + 2) * t * t * t - (a + 3) * t * t + 1;
  if (t < 2) return a * t * t * t - 5 * a * t * t + 8 * a * t - 4 * a;
  return 0;
}

// All axes at once: each output element sums the products of its taps
// along every axis (nearest: one, linear: two, cubic: four), or is the
// extrapolation value where tf_crop_and_resize samples outside the input
// along some axis (then marked in `extrapolated`, when given).
std::vector<double> resize_ref(const std::vector<double>& v, const Shape& in, const Shape& out,
                               const std::vector<double>& scales, const wok::ResizeOptions& opt,
                               std::vector<bool>* extrapolated = nullptr) {
  const size_t n = in.size();
  const std::string& ctm = opt.coordinate_transformation_mode;
  std::vector<double> r(static_cast<size_t>(wok::numel(out)));
  if (extrapolated) extrapolated->assign(r.size(), false);
  for (int64_t i = 0; i < static_cast<int64_t>(r.size()); ++i) {
    std::vector<int64_t> o = unflat(i, out);
    std::vector<std::vector<std::pair<int64_t, double>>> taps(n);
    bool outside = false;
    for (size_t d = 0; d < n; ++d) {
      const double start = opt.roi.empty() ? 0 : opt.roi[d], end = opt.roi.empty() ? 1 : opt.roi[n + d];
      double c = source_coord(ctm, o[d], scales[d], in[d], out[d], start, end);
      if (ctm == "tf_crop_and_resize" && (c < 0 || c > double(in[d] - 1))) {
        outside = true;
        break;
      }
      if (opt.mode == "nearest") {
        taps[d] = {{nearest(opt.nearest_mode, c, in[d]), 1.0}};
      } else if (opt.mode == "linear") {
        c = std::clamp(c, 0.0, double(in[d] - 1));
        const auto lo = static_cast<int64_t>(std::floor(c));
        const double w = c - std::floor(c);
        taps[d] = {{lo, 1 - w}, {std::min<int64_t>(lo + 1, in[d] - 1), w}};
      } else {  // cubic: the 4 nearest, clamped to the edge or excluded
        const auto f = static_cast<int64_t>(std::floor(c));
        double sum = 0;
        for (int64_t j = f - 1; j <= f + 2; ++j) {
          const bool inside = j >= 0 && j < in[d];
          const double w = opt.exclude_outside && !inside ? 0 : keys(c - double(j), opt.cubic_coeff_a);
          taps[d].push_back({std::clamp<int64_t>(j, 0, in[d] - 1), w});
          sum += w;
        }
        if (opt.exclude_outside)
          for (auto& t : taps[d]) t.second /= sum;
      }
    }
    if (outside) {
      r[static_cast<size_t>(i)] = opt.extrapolation_value;
      if (extrapolated) (*extrapolated)[static_cast<size_t>(i)] = true;
      continue;
    }
    double acc = 0;
    std::vector<size_t> k(n, 0);  // an odometer over the taps of each axis
    for (;;) {
      double weight = 1;
      std::vector<int64_t> at(n);
      for (size_t d = 0; d < n; ++d) {
        weight *= taps[d][k[d]].second;
        at[d] = taps[d][k[d]].first;
      }
      if (weight != 0) acc += weight * v[static_cast<size_t>(flat(at, in))];
      size_t d = n;
      while (d > 0 && ++k[d - 1] == taps[d - 1].size()) k[--d] = 0;
      if (d == 0) break;
    }
    r[static_cast<size_t>(i)] = acc;
  }
  return r;
}

wok::ResizeOptions resize_options(std::string mode, std::string ctm, std::string nm = "round_prefer_floor") {
  wok::ResizeOptions o;
  o.mode = std::move(mode);
  o.coordinate_transformation_mode = std::move(ctm);
  o.nearest_mode = std::move(nm);
  return o;
}

const char* const kCoordinateModes[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                        "align_corners", "asymmetric",           "tf_half_pixel_for_nn"};
const char* const kNearestModes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

TEST_P(ShapeOpsExtra, ResizeNearestEveryMode) {
  const Shape in{2, 3, 5, 4};
  std::vector<float> v = floats(wok::numel(in), 11);
  Tensor x = wok::from_vector(v, in);
  const std::vector<std::vector<double>> scale_sets = {{1, 1, 2, 3}, {1, 1, 0.5, 0.75}, {1, 2, 1.7, 0.6}, {2, 1, 1, 1}};
  for (const auto& scales : scale_sets)
    for (const char* ctm : kCoordinateModes)
      for (const char* nm : kNearestModes) {
        Shape out;
        for (size_t d = 0; d < in.size(); ++d) out.push_back(static_cast<int64_t>(std::floor(in[d] * scales[d])));
        std::string at = std::string(ctm) + " " + nm + " scales";
        for (double sc : scales) at += " " + std::to_string(sc);
        Tensor y = wok::resize(x, scales, "nearest", ctm, nm);
        ASSERT_EQ(y.shape(), out) << at;
        EXPECT_TRUE(wt::close<float>("resize nearest " + at, y, resize_ref(as_doubles(v), in, out, scales, resize_options("nearest", ctm, nm)), 0, 0));
      }
  // Sizes, other dtypes (a gather of bytes).
  Tensor b = wok::from_vector(std::vector<bool>{true, false, false, true}, {2, 2});
  EXPECT_TRUE(wt::exact<bool>("bool", wok::resize_to(b, {4, 4}, "nearest", "asymmetric", "floor"),
                              {true, true, false, false, true, true, false, false,
                               false, false, true, true, false, false, true, true}));
  Tensor i = wok::from_vector(std::vector<int64_t>{1, 2, 3}, {3});
  EXPECT_TRUE(wt::exact<int64_t>("int64", wok::resize_to(i, {2}), {1, 3}));
}

// The ONNX backend tests' values.
TEST_P(ShapeOpsExtra, ResizeOnnxExamples) {
  Tensor x = wok::from_vector(std::vector<float>{1, 2, 3, 4}, {1, 1, 2, 2});
  EXPECT_TRUE(wt::exact<float>("upsample_scales_nearest", wok::resize(x, {1, 1, 2, 3}),
                               {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  EXPECT_TRUE(wt::close<float>("upsample_scales_linear", wok::resize(x, {1, 1, 2, 2}, "linear"),
                               {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}, 1e-6,
                               1e-6));
  EXPECT_TRUE(wt::close<float>("upsample_scales_linear_align_corners",
                               wok::resize(x, {1, 1, 2, 2}, "linear", "align_corners"),
                               {1, 4 / 3., 5 / 3., 2, 5 / 3., 2, 7 / 3., 8 / 3., 7 / 3., 8 / 3., 3, 10 / 3., 3,
                                10 / 3., 11 / 3., 4},
                               1e-6, 1e-6));
  Tensor d = wok::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4});
  EXPECT_TRUE(wt::close<float>("downsample_scales_linear", wok::resize(d, {1, 1, 0.6, 0.6}, "linear"),
                               {2.6666665, 4.3333331}, 1e-6, 1e-6));
  EXPECT_TRUE(wt::exact<float>("downsample_scales_nearest", wok::resize(d, {1, 1, 0.6, 0.6}), {1, 3}));
  EXPECT_TRUE(wt::close<float>("downsample_sizes_linear_pytorch_half_pixel",
                               wok::resize_to(wok::from_vector(iota<float>(16, 1), {1, 1, 4, 4}), {1, 1, 3, 1}, "linear",
                                              "pytorch_half_pixel"),
                               {1.6666666, 7.0, 12.333333}, 1e-6, 1e-6));
  EXPECT_TRUE(wt::exact<float>("upsample_sizes_nearest_ceil_half_pixel",
                               wok::slice(wok::resize_to(wok::from_vector(iota<float>(16, 1), {1, 1, 4, 4}),
                                                         {1, 1, 8, 8}, "nearest", "half_pixel", "ceil"),
                                          2, 0, 2),
                               {1, 2, 2, 3, 3, 4, 4, 4, 5, 6, 6, 7, 7, 8, 8, 8}));
}

TEST_P(ShapeOpsExtra, ResizeLinearMatchesTheNdDefinition) {
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    const Shape in{2, 3, 6, 7};
    std::vector<double> v = wt::random_values<double>(static_cast<size_t>(wok::numel(in)), -3, 3, 12);
    if (t == DType::kFloat32)
      for (double& e : v) e = static_cast<float>(e);
    Tensor x = wok::from_vector(v, in).astype(t);
    for (const auto& scales : std::vector<std::vector<double>>{{1, 1, 2, 2}, {1, 1, 0.5, 1.3}, {1.5, 2, 0.8, 3}})
      for (const char* ctm : kCoordinateModes) {
        Shape out;
        for (size_t d = 0; d < in.size(); ++d) out.push_back(static_cast<int64_t>(std::floor(in[d] * scales[d])));
        Tensor y = wok::resize(x, scales, "linear", ctm);
        ASSERT_EQ(y.shape(), out);
        std::vector<double> want = resize_ref(v, in, out, scales, resize_options("linear", ctm));
        const double tol = t == DType::kFloat32 ? 2e-6 : 1e-13;
        const std::string at = std::string("linear ") + ctm + " " + wt::dname(t);
        if (t == DType::kFloat32) EXPECT_TRUE(wt::close<float>(at, y, want, tol, tol));
        else EXPECT_TRUE(wt::close<double>(at, y, want, tol, tol));
      }
  }
}

// Random data in `t` (float32 data rounded to float32 first).
Tensor random_tensor(const Shape& shape, DType t, uint32_t seed, std::vector<double>& v) {
  v = wt::random_values<double>(static_cast<size_t>(wok::numel(shape)), -3, 3, seed);
  if (t == DType::kFloat32)
    for (double& e : v) e = static_cast<float>(e);
  return wok::from_vector(v, shape).astype(t);
}

::testing::AssertionResult close_in(DType t, const std::string& at, const Tensor& y, const std::vector<double>& want,
                                    double tol32, double tol64) {
  if (t == DType::kFloat32) return wt::close<float>(at, y, want, tol32, tol32);
  return wt::close<double>(at, y, want, tol64, tol64);
}

TEST_P(ShapeOpsExtra, ResizeCubicMatchesTheNdDefinition) {
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    const Shape in{2, 2, 6, 7};
    std::vector<double> v;
    Tensor x = random_tensor(in, t, 13, v);
    for (const auto& scales : std::vector<std::vector<double>>{{1, 1, 2, 2}, {1, 1, 0.5, 1.3}, {1.5, 2, 0.8, 3}})
      for (const char* ctm : kCoordinateModes)
        for (const auto& [a, exclude] : std::vector<std::pair<double, bool>>{{-0.75, false}, {-0.5, true}}) {
          wok::ResizeOptions o = resize_options("cubic", ctm);
          o.cubic_coeff_a = a;
          o.exclude_outside = exclude;
          Shape out;
          for (size_t d = 0; d < in.size(); ++d) out.push_back(static_cast<int64_t>(std::floor(in[d] * scales[d])));
          Tensor y = wok::resize(x, scales, o);
          ASSERT_EQ(y.shape(), out);
          const std::string at = std::string("cubic ") + ctm + " a=" + std::to_string(a) +
                                 (exclude ? " exclude_outside " : " ") + wt::dname(t);
          EXPECT_TRUE(close_in(t, at, y, resize_ref(v, in, out, scales, o), 4e-6, 1e-13));
        }
    // Sizes, down and up (each axis's scale is then out / in).
    for (const Shape& out : std::vector<Shape>{{2, 2, 3, 5}, {1, 2, 9, 7}}) {
      std::vector<double> scales;
      for (size_t d = 0; d < in.size(); ++d) scales.push_back(double(out[d]) / double(in[d]));
      const wok::ResizeOptions o = resize_options("cubic", "half_pixel");
      EXPECT_TRUE(close_in(t, "cubic sizes " + wt::dname(t), wok::resize_to(x, out, o), resize_ref(v, in, out, scales, o),
                           4e-6, 1e-13));
    }
  }
}

// The ONNX backend tests' values (ONNX's Operators.md).
TEST_P(ShapeOpsExtra, ResizeCubicOnnxExamples) {
  Tensor x = wok::from_vector(iota<float>(16, 1), {1, 1, 4, 4});
  EXPECT_TRUE(wt::close<float>("downsample_scales_cubic", wok::resize(x, {1, 1, 0.8, 0.8}, {.mode = "cubic"}),
                               {1.47119141, 2.78125, 4.08251953, 6.71142578, 8.02148438, 9.32275391, 11.91650391,
                                13.2265625, 14.52783203},
                               1e-6, 1e-6));
  EXPECT_TRUE(wt::close<float>(
      "downsample_scales_cubic_A_n0p5_exclude_outside",
      wok::resize(x, {1, 1, 0.8, 0.8}, {.mode = "cubic", .cubic_coeff_a = -0.5, .exclude_outside = true}),
      {1.36812675, 2.6695014, 4.0133367, 6.57362535, 7.875, 9.2188353, 11.94896657, 13.25034122, 14.59417652}, 1e-6,
      1e-6));
  // asymmetric: the first two rows of 8.
  EXPECT_TRUE(wt::close<float>(
      "upsample_scales_cubic_asymmetric",
      wok::slice(wok::resize(x, {1, 1, 2, 2}, {.mode = "cubic", .coordinate_transformation_mode = "asymmetric"}), 2, 0,
                 2),
      {1, 1.40625, 2, 2.5, 3, 3.59375, 4, 4.09375, 2.625, 3.03125, 3.625, 4.125, 4.625, 5.21875, 5.625, 5.71875}, 1e-6,
      1e-6));
  // The option struct and the mode strings record the same op.
  EXPECT_TRUE(wt::exact<float>("resize(x, scales, mode)", wok::resize(x, {1, 1, 2, 2}, "linear", "align_corners"),
                               wok::resize(x, {1, 1, 2, 2}, {.mode = "linear", .coordinate_transformation_mode = "align_corners"})
                                   .to_vector<float>()));
}

TEST_P(ShapeOpsExtra, ResizeTfCropAndResize) {
  // ONNX's test_resize_tf_crop_and_resize: a crop inside the input, and one
  // partly outside it (extrapolation value 10).
  Tensor x = wok::from_vector(iota<float>(16, 1), {1, 1, 4, 4});
  wok::ResizeOptions o = resize_options("linear", "tf_crop_and_resize");
  o.roi = {0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8};
  EXPECT_TRUE(wt::close<float>("tf_crop_and_resize", wok::resize_to(x, {1, 1, 3, 3}, o),
                               {7.6, 7.9, 8.2, 8.8, 9.1, 9.4, 10, 10.3, 10.6}, 1e-6, 1e-6));
  o.roi = {0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7};
  o.extrapolation_value = 10;
  EXPECT_TRUE(wt::close<float>("tf_crop_and_resize extrapolated", wok::resize_to(x, {1, 1, 3, 3}, o),
                               {7.6, 10, 10, 12.4, 10, 10, 10, 10, 10}, 1e-6, 1e-6));

  // Every mode against the definition: crops inside, partly outside on two
  // axes, flipped (start above end), and with sizes or scales.
  const Shape in{2, 5, 6};
  const std::vector<std::vector<double>> rois = {
      {0, 0.1, 0.2, 1, 0.8, 0.9}, {0, -0.3, 0.5, 1, 0.7, 1.4}, {0, 0.9, 0.1, 1, 0.2, 0.8}, {}};
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    std::vector<double> v;
    Tensor x3 = random_tensor(in, t, 14, v);
    for (const char* mode : {"nearest", "linear", "cubic"})
      for (const auto& roi : rois)
        for (double e : {0.0, -2.5, -std::numeric_limits<double>::infinity()})
          for (const Shape& out : std::vector<Shape>{{2, 4, 9}, {1, 7, 3}}) {
            wok::ResizeOptions opt = resize_options(mode, "tf_crop_and_resize");
            opt.roi = roi;
            opt.extrapolation_value = e;
            opt.exclude_outside = e == 0;
            std::vector<double> scales;
            for (size_t d = 0; d < in.size(); ++d) scales.push_back(double(out[d]) / double(in[d]));
            std::vector<bool> extrapolated;
            const std::vector<double> want = resize_ref(v, in, out, scales, opt, &extrapolated);
            Tensor y = wok::resize_to(x3, out, opt);
            std::string at = std::string(mode) + " roi";
            for (double r : roi) at += " " + std::to_string(r);
            at += " extrapolation " + std::to_string(e) + " " + wt::dname(t) + " to " + wok::shape_str(out);
            const double tol = std::string(mode) == "nearest" ? 0 : 4e-6;
            EXPECT_TRUE(close_in(t, at, y, want, tol, tol > 0 ? 1e-13 : 0));
            // Outside the input, exactly the extrapolation value, whatever the
            // pass order blended.
            const std::vector<double> got = y.astype(DType::kFloat64).to_vector<double>();
            for (size_t i = 0; i < got.size(); ++i) {
              if (extrapolated[i]) {
                ASSERT_EQ(got[i], e) << at << " at " << i;
              }
            }
          }
  }
  // Scales (the output size ignores the roi, as ONNX's shape inference does).
  std::vector<double> v;
  Tensor x3 = random_tensor(in, DType::kFloat64, 15, v);
  wok::ResizeOptions opt = resize_options("cubic", "tf_crop_and_resize");
  opt.roi = {0, -0.3, 0.5, 1, 0.7, 1.4};
  opt.extrapolation_value = 3;
  Tensor y = wok::resize(x3, {1, 1.5, 0.7}, opt);
  ASSERT_EQ(y.shape(), (Shape{2, 7, 4}));
  EXPECT_TRUE(wt::close<double>("tf_crop_and_resize scales", y, resize_ref(v, in, {2, 7, 4}, {1, 1.5, 0.7}, opt), 1e-13,
                                1e-13));
  // Nearest gathers any dtype; the extrapolation value converts to it.
  // Coordinates -1.5 (outside), 0, 1.5 (rounds down), 3.
  Tensor i = wok::from_vector(std::vector<int64_t>{1, 2, 3, 4}, {4});
  wok::ResizeOptions ni = resize_options("nearest", "tf_crop_and_resize");
  ni.roi = {-0.5, 1};
  ni.extrapolation_value = -7.9;
  EXPECT_TRUE(wt::exact<int64_t>("int64 nearest crop", wok::resize_to(i, {4}, ni), {-7, 1, 2, 4}));
}

TEST_P(ShapeOpsExtra, ResizeErrors) {
  Tensor x = wok::zeros({1, 2, 3});
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::resize(x, {1, 2}); }, {"wok::resize", "one scale per axis"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::resize(x, {1, 0, 2}); }, {"wok::resize", "scale"}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>([&] { wok::resize(x, {1, 1, 2}, "bicubic"); },
                                                     {"wok::resize", "mode 'bicubic'"}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>([&] { wok::resize(x, {1, 1, 2}, "nearest", "crop"); },
                                                     {"wok::resize", "coordinate_transformation_mode 'crop'"}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>([&] { wok::resize(x, {1, 1, 2}, "nearest", "half_pixel", "round"); },
                                                     {"wok::resize", "nearest_mode 'round'"}));
  EXPECT_TRUE(wt::throws_naming<wok::DTypeError>(
      [&] { wok::resize(x.astype(DType::kInt32), {1, 1, 2}, "linear"); }, {"wok::resize", "int32"}));
  EXPECT_TRUE(wt::throws_naming<wok::DTypeError>(
      [&] { wok::resize(x.astype(DType::kInt64), {1, 1, 2}, {.mode = "cubic"}); }, {"wok::resize", "cubic", "int64"}));
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>(
      [&] { wok::resize(x, {1, 1, 2}, {.mode = "cubic", .cubic_coeff_a = NAN}); }, {"wok::resize", "cubic_coeff_a"}));
  // The roi: a start and an end per axis, finite, and tf_crop_and_resize's only.
  wok::ResizeOptions crop = resize_options("linear", "tf_crop_and_resize");
  crop.roi = {0, 0, 1, 1};
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::resize(x, {1, 1, 2}, crop); },
                                                  {"wok::resize", "roi", "6 values for rank 3", "got 4"}));
  crop.roi = {0, 0, 0, 1, 1, INFINITY};
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::resize(x, {1, 1, 2}, crop); },
                                                  {"wok::resize", "roi", "not finite"}));
  crop.roi = {0, 0, 0, 1, 1, 1};
  crop.coordinate_transformation_mode = "align_corners";
  EXPECT_TRUE(wt::throws_naming<wok::ArgumentError>([&] { wok::resize(x, {1, 1, 2}, crop); },
                                                     {"wok::resize", "roi", "tf_crop_and_resize", "align_corners"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::resize_to(x, {1, 2}); }, {"wok::resize"}));
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([&] { wok::resize_to(wok::zeros({0, 2}), {1, 2}); },
                                                  {"wok::resize", "empty"}));
  EXPECT_EQ(wok::resize_to(wok::zeros({0, 2}), {0, 5}).shape(), (Shape{0, 5}));
}

// ---- reductions -----------------------------------------------------------------------------------

// log(sum(exp)) of each row of a [rows, n] tensor, in long double.
std::vector<double> lse_rows(const std::vector<double>& v, int64_t rows, int64_t n) {
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r) {
    LD m = -INFINITY;
    bool nan = false;
    for (int64_t j = 0; j < n; ++j) {
      const double e = v[static_cast<size_t>(r * n + j)];
      nan = nan || std::isnan(e);
      m = std::max<LD>(m, e);
    }
    if (nan) {
      out.push_back(NAN);
      continue;
    }
    if (std::isinf(m)) {
      out.push_back(static_cast<double>(m));
      continue;
    }
    LD s = 0;
    for (int64_t j = 0; j < n; ++j) s += std::exp(static_cast<LD>(v[static_cast<size_t>(r * n + j)]) - m);
    out.push_back(static_cast<double>(m + std::log(s)));
  }
  return out;
}

TEST_P(ShapeOpsExtra, LogSumExpIsStable) {
  std::vector<double> v = {1000, 1001, 1002, -1000, -1001, -1002, 0.5, -INFINITY, 2,
                           -INFINITY, -INFINITY, -INFINITY, INFINITY, 1, 2, NAN, 1, 2};
  Tensor x = wok::from_vector(v, {6, 3});
  EXPECT_TRUE(wt::close<double>("logsumexp", wok::logsumexp(x, {1}), lse_rows(v, 6, 3), 1e-15, 0));
  EXPECT_TRUE(wt::close<float>("logsumexp float32", wok::logsumexp(x.astype(DType::kFloat32), {-1}), lse_rows(v, 6, 3),
                               1e-6, 0));
  std::vector<double> r = wt::random_values<double>(40 * 257, -30, 30, 3);
  Tensor big = wok::from_vector(r, {40, 257});
  EXPECT_TRUE(wt::close<double>("logsumexp rows", wok::logsumexp(big, {1}), lse_rows(r, 40, 257), 1e-14, 0));
  Tensor k = wok::logsumexp(big, {1}, true);
  EXPECT_EQ(k.shape(), (Shape{40, 1}));
  // Over axis 0: the transposed rows.
  std::vector<double> t(r.size());
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 257; ++j) t[static_cast<size_t>(j * 40 + i)] = r[static_cast<size_t>(i * 257 + j)];
  EXPECT_TRUE(wt::close<double>("logsumexp axis 0", wok::logsumexp(big, {0}), lse_rows(t, 257, 40), 1e-14, 0));
  EXPECT_TRUE(wt::close<double>("logsumexp all", wok::logsumexp(big), lse_rows(r, 1, 40 * 257), 1e-14, 0));
  // Integers compute in float64; nothing gives -inf.
  EXPECT_TRUE(wt::close<double>("logsumexp int", wok::logsumexp(wok::from_vector(std::vector<int32_t>{0, 0})),
                                {std::log(2.0)}, 1e-15, 0));
  EXPECT_TRUE(wt::exact<float>("logsumexp of nothing", wok::logsumexp(wok::zeros({2, 0}), {1}), {-INFINITY, -INFINITY}));
  EXPECT_TRUE(wt::exact<double>("reduce_log_sum_exp", wok::reduce_log_sum_exp(x, {1}, true),
                                wok::logsumexp(x, {1}, true).to_vector<double>()));
}

TEST_P(ShapeOpsExtra, NormsAndOnnxReductions) {
  std::vector<double> v = {3, -4, 0, 1, -2, 2, 0, 0, 5, -1, 0.5, 0};
  Tensor x = wok::from_vector(v, {3, 4});
  auto rows = [&](const std::function<double(const double*)>& f) {
    std::vector<double> out;
    for (int r = 0; r < 3; ++r) out.push_back(f(&v[static_cast<size_t>(r * 4)]));
    return out;
  };
  auto fold = [](double p) {
    return [p](const double* e) {
      long double s = 0;
      for (int j = 0; j < 4; ++j) s += std::pow(std::fabs(static_cast<long double>(e[j])), p);
      return static_cast<double>(s);
    };
  };
  EXPECT_TRUE(wt::close<double>("l1", wok::reduce_l1(x, {1}), rows(fold(1)), 1e-15, 0));
  EXPECT_TRUE(wt::close<double>("sum_square", wok::reduce_sum_square(x, {1}), rows(fold(2)), 1e-15, 0));
  EXPECT_TRUE(wt::close<double>("l2", wok::reduce_l2(x, {1}), rows([&](const double* e) { return std::sqrt(fold(2)(e)); }),
                                1e-15, 0));
  EXPECT_TRUE(wt::close<double>("log_sum", wok::reduce_log_sum(wok::slice(x, 0, 0, 2) + 3.0, {1}),
                                {std::log(12.0), std::log(12.0)}, 1e-15, 0));
  EXPECT_TRUE(wt::close<double>("norm 2", wok::vector_norm(x, 2, {1}), rows([&](const double* e) { return std::sqrt(fold(2)(e)); }), 1e-15, 0));
  EXPECT_TRUE(wt::close<double>("norm 1", wok::vector_norm(x, 1, {-1}), rows(fold(1)), 1e-15, 0));
  EXPECT_TRUE(wt::close<double>("norm 3", wok::vector_norm(x, 3, {1}),
                                rows([&](const double* e) { return std::cbrt(fold(3)(e)); }), 1e-14, 0));
  EXPECT_TRUE(wt::close<double>("norm 0.5", wok::vector_norm(x, 0.5, {1}),
                                rows([&](const double* e) { return std::pow(fold(0.5)(e), 2.0); }), 1e-14, 0));
  EXPECT_TRUE(wt::close<double>("norm inf", wok::vector_norm(x, INFINITY, {1}), {4, 2, 5}, 0, 0));
  EXPECT_TRUE(wt::close<double>("norm -inf", wok::vector_norm(x, -INFINITY, {1}), {0, 0, 0}, 0, 0));
  EXPECT_TRUE(wt::close<double>("norm 0", wok::vector_norm(x, 0, {1}), {3, 2, 3}, 0, 0));
  EXPECT_TRUE(wt::close<double>("norm all", wok::vector_norm(x), {std::sqrt(60.25)}, 1e-15, 0));
  EXPECT_EQ(wok::vector_norm(x, 2, {0}, true).shape(), (Shape{1, 4}));
  // Integers: l1 and sum_square stay integral (int64, like sum), squared in
  // int64; the others are float64.
  Tensor xi = wok::from_vector(std::vector<int32_t>{3, -4, 100000, -100000}, {2, 2});
  EXPECT_TRUE(wt::exact<int64_t>("l1 int", wok::reduce_l1(xi, {1}), {7, 200000}));
  EXPECT_TRUE(wt::exact<int64_t>("sum_square int", wok::reduce_sum_square(xi, {1}), {25, 20000000000}));
  EXPECT_TRUE(wt::close<double>("l2 int", wok::reduce_l2(xi, {1}), {5, std::sqrt(2e10)}, 1e-15, 0));
  Tensor xb = wok::from_vector(std::vector<bool>{true, false, true, true}, {2, 2});
  EXPECT_TRUE(wt::exact<int64_t>("l1 bool", wok::reduce_l1(xb, {1}), {1, 2}));
  EXPECT_TRUE(wt::exact<int64_t>("sum_square bool", wok::reduce_sum_square(xb), {3}));
  EXPECT_TRUE(wt::close<float>("l2 bool", wok::reduce_l2(xb), {std::sqrt(3.0)}, 1e-7, 0));
  // Over nothing: 0 (log_sum: -inf; norm inf: 0).
  Tensor e = wok::zeros({2, 0});
  EXPECT_TRUE(wt::exact<float>("l1 of nothing", wok::reduce_l1(e, {1}), {0, 0}));
  EXPECT_TRUE(wt::exact<float>("l2 of nothing", wok::reduce_l2(e, {1}), {0, 0}));
  EXPECT_TRUE(wt::exact<float>("log_sum of nothing", wok::reduce_log_sum(e, {1}), {-INFINITY, -INFINITY}));
  EXPECT_TRUE(wt::exact<float>("norm inf of nothing", wok::vector_norm(e, INFINITY, {1}), {0, 0}));
  // nan propagates through the max-based norm.
  EXPECT_TRUE(wt::close<float>("norm inf nan", wok::vector_norm(wok::from_vector(std::vector<float>{1, NAN}), INFINITY),
                               {NAN}, 0, 0));
}

INSTANTIATE_TEST_SUITE_P(Backends, ShapeOpsExtra, wt::kBothBackends, wt::backend_param_name);

// ---- compile: the compositions trace and replay ---------------------------------------------------

TEST(ShapeOpsCompile, CompositionsReplayAtNewSizes) {
  auto f = wok::compile([](const Tensor& x) {
    Tensor t = wok::tril(x, 0) + wok::flip(x, {1});
    return wok::logsumexp(wok::pad(t, {0, 1, 0, 1}, "reflect"), {1});
  });
  for (int64_t n : {4, 6, 4, 9}) {
    std::vector<double> v = wt::random_values<double>(static_cast<size_t>(n * n), -2, 2, static_cast<uint32_t>(n));
    Tensor x = wok::from_vector(v, {n, n});
    Tensor want = wok::logsumexp(wok::pad(wok::tril(x, 0) + wok::flip(x, {1}), {0, 1, 0, 1}, "reflect"), {1});
    Tensor got = f(x);
    ASSERT_EQ(got.shape(), want.shape()) << "n=" << n;
    EXPECT_TRUE(wt::close<double>("compiled n=" + std::to_string(n), got, want.to_vector<double>(), 1e-15, 0));
  }
}

}  // namespace
