// The precompiled movement kernels (permute, broadcast_to, slice, concat)
// against index arithmetic done here, for every item size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

// Distinct values per element (bool: a pattern that is not periodic in
// small strides).
template <typename T>
std::vector<T> iota_values(int64_t n, uint32_t seed = 0) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, bool>) v[static_cast<size_t>(i)] = ((i * 2654435761u + seed) >> 7) & 1;
    else v[static_cast<size_t>(i)] = static_cast<T>((i + seed) % 16000000);
  }
  return v;
}

std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const Shape& shape) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
  return f;
}

// ---- permute ---------------------------------------------------------------------------

template <typename T>
void check_permute(const Shape& shape, const std::vector<int64_t>& perm) {
  SCOPED_TRACE("permute " + wok::shape_str(shape) + " by " + wok::shape_str(perm) + " " +
               wt::dname(wok::dtype_of<T>()));
  std::vector<T> v = iota_values<T>(wok::numel(shape), 3);
  Tensor y = wok::permute(wok::from_vector(v, shape), perm);
  Shape out;
  for (int64_t p : perm) out.push_back(shape[static_cast<size_t>(p)]);
  ASSERT_EQ(y.shape(), out);
  std::vector<T> want(v.size());
  for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i) {
    std::vector<int64_t> oi = unravel(i, out), ii(shape.size());
    for (size_t d = 0; d < perm.size(); ++d) ii[static_cast<size_t>(perm[d])] = oi[d];
    want[static_cast<size_t>(i)] = v[static_cast<size_t>(ravel(ii, shape))];
  }
  EXPECT_TRUE(wt::exact<T>("permute", y, want));
}

template <typename T>
void permute_cases() {
  for (Shape s : {Shape{1, 1}, Shape{1, 7}, Shape{7, 1}, Shape{3, 5}, Shape{17, 33}, Shape{64, 64}, Shape{100, 37},
                  Shape{513, 1025}, Shape{0, 5}})
    check_permute<T>(s, {1, 0});
  std::vector<int64_t> p3 = {0, 1, 2};
  do {
    check_permute<T>({3, 5, 7}, p3);
    check_permute<T>({33, 17, 65}, p3);
    check_permute<T>({1, 5, 1}, p3);
    check_permute<T>({2, 1, 300}, p3);
  } while (std::next_permutation(p3.begin(), p3.end()));
  std::vector<int64_t> p4 = {0, 1, 2, 3};
  do {
    check_permute<T>({2, 3, 4, 5}, p4);
  } while (std::next_permutation(p4.begin(), p4.end()));
  check_permute<T>({8, 1, 33, 40}, {2, 0, 3, 1});
  check_permute<T>({8, 9, 33, 40}, {0, 2, 1, 3});
  check_permute<T>({16, 9, 33, 40}, {3, 1, 2, 0});
  check_permute<T>({2, 2, 2, 2, 2, 3}, {5, 3, 1, 0, 2, 4});
  // Short contiguous rows of 4 or 8 bytes move as single wider items.
  check_permute<T>({33, 17, 2}, {1, 0, 2});
  check_permute<T>({33, 17, 4}, {1, 0, 2});
  check_permute<T>({9, 7, 8}, {1, 0, 2});
  check_permute<T>({5, 6, 7, 2}, {2, 0, 1, 3});
}

TEST(MovementKernels, PermuteBool) { permute_cases<bool>(); }
TEST(MovementKernels, PermuteInt32) { permute_cases<int32_t>(); }
TEST(MovementKernels, PermuteInt64) { permute_cases<int64_t>(); }
TEST(MovementKernels, PermuteFloat32) { permute_cases<float>(); }
TEST(MovementKernels, PermuteFloat64) { permute_cases<double>(); }

TEST(MovementKernels, TransposeLargeAndSwap) {
  const int64_t n = 1031, m = 2049;
  std::vector<float> v = iota_values<float>(n * m);
  Tensor y = wok::transpose(wok::from_vector(v, {n, m}));
  std::vector<float> got = y.to_vector<float>();
  ASSERT_EQ(y.shape(), (Shape{m, n}));
  int bad = 0;
  for (int64_t i = 0; i < m && bad < 5; ++i)
    for (int64_t j = 0; j < n && bad < 5; ++j)
      if (got[static_cast<size_t>(i * n + j)] != v[static_cast<size_t>(j * m + i)]) {
        ++bad;
        ADD_FAILURE() << "at (" << i << ", " << j << ")";
      }
  Tensor z = wok::transpose(wok::from_vector(iota_values<int64_t>(2 * 3 * 4), {2, 3, 4}), 0, 2);
  EXPECT_EQ(z.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(z.to_vector<int64_t>()[1], 12);
}

// ---- broadcast_to -----------------------------------------------------------------------

template <typename T>
void check_broadcast(const Shape& in, const Shape& out) {
  SCOPED_TRACE("broadcast " + wok::shape_str(in) + " to " + wok::shape_str(out) + " " + wt::dname(wok::dtype_of<T>()));
  std::vector<T> v = iota_values<T>(wok::numel(in), 5);
  Tensor y = wok::broadcast_to(wok::from_vector(v, in), out);
  ASSERT_EQ(y.shape(), out);
  std::vector<T> want(static_cast<size_t>(wok::numel(out)));
  const size_t lead = out.size() - in.size();
  for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i) {
    std::vector<int64_t> oi = unravel(i, out), ii(in.size());
    for (size_t d = 0; d < in.size(); ++d) ii[d] = in[d] == 1 ? 0 : oi[d + lead];
    want[static_cast<size_t>(i)] = v[static_cast<size_t>(ravel(ii, in))];
  }
  EXPECT_TRUE(wt::exact<T>("broadcast_to", y, want));
}

template <typename T>
void broadcast_cases() {
  check_broadcast<T>({3}, {4, 3});
  check_broadcast<T>({4, 1}, {4, 5});
  check_broadcast<T>({1}, {2, 3, 4});
  check_broadcast<T>({}, {3, 3});
  check_broadcast<T>({}, {1});
  check_broadcast<T>({2, 1, 3}, {4, 2, 5, 3});
  check_broadcast<T>({1, 17, 1}, {3, 17, 19});
  check_broadcast<T>({5, 1, 1}, {5, 2, 3});
  check_broadcast<T>({1, 1000}, {1000, 1000});
  check_broadcast<T>({1000, 1}, {1000, 1000});
  check_broadcast<T>({0, 3}, {2, 0, 3});
  check_broadcast<T>({1, 3}, {0, 3});
  check_broadcast<T>({3, 1, 2}, {3, 5, 2});
  check_broadcast<T>({4, 1}, {4, 4});
  check_broadcast<T>({1, 1, 8}, {7, 3, 8});
}

TEST(MovementKernels, BroadcastBool) { broadcast_cases<bool>(); }
TEST(MovementKernels, BroadcastInt32) { broadcast_cases<int32_t>(); }
TEST(MovementKernels, BroadcastInt64) { broadcast_cases<int64_t>(); }
TEST(MovementKernels, BroadcastFloat32) { broadcast_cases<float>(); }
TEST(MovementKernels, BroadcastFloat64) { broadcast_cases<double>(); }

// ---- slice -------------------------------------------------------------------------------

// Python's slice(start, stop, step).indices(n), expanded.
std::vector<int64_t> py_indices(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) {
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t i = *v < 0 ? *v + n : *v;
    return step > 0 ? std::clamp<int64_t>(i, 0, n) : std::clamp<int64_t>(i, -1, n - 1);
  };
  int64_t b = clamp(start, step > 0 ? 0 : n - 1), e = clamp(stop, step > 0 ? n : -1);
  std::vector<int64_t> out;
  for (int64_t i = b; step > 0 ? i < e : i > e; i += step) out.push_back(i);
  return out;
}

template <typename T>
void check_slice(const Shape& shape, int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop,
                 int64_t step) {
  auto opt = [](std::optional<int64_t> v) { return v ? std::to_string(*v) : std::string("none"); };
  SCOPED_TRACE("slice " + wok::shape_str(shape) + " axis " + std::to_string(axis) + " [" + opt(start) + ":" +
               opt(stop) + ":" + std::to_string(step) + "] " + wt::dname(wok::dtype_of<T>()));
  std::vector<T> v = iota_values<T>(wok::numel(shape), 9);
  Tensor y = wok::slice(wok::from_vector(v, shape), axis, start, stop, step);
  const size_t a = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis);
  std::vector<int64_t> sel = py_indices(shape[a], start, stop, step);
  Shape out = shape;
  out[a] = static_cast<int64_t>(sel.size());
  ASSERT_EQ(y.shape(), out);
  std::vector<T> want(static_cast<size_t>(wok::numel(out)));
  for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i) {
    std::vector<int64_t> idx = unravel(i, out);
    idx[a] = sel[static_cast<size_t>(idx[a])];
    want[static_cast<size_t>(i)] = v[static_cast<size_t>(ravel(idx, shape))];
  }
  EXPECT_TRUE(wt::exact<T>("slice", y, want));
}

template <typename T>
void slice_cases() {
  using std::nullopt;
  check_slice<T>({10}, 0, 2, 7, 1);
  check_slice<T>({10}, 0, nullopt, nullopt, -1);
  check_slice<T>({10}, 0, 8, 1, -3);
  check_slice<T>({10}, 0, -2, nullopt, -2);
  check_slice<T>({10}, 0, 5, 5, 1);    // empty
  check_slice<T>({10}, 0, 7, 2, 1);    // empty: start past stop
  check_slice<T>({10}, 0, 2, 7, -1);   // empty: wrong direction
  check_slice<T>({10}, 0, -100, 100, 3);
  check_slice<T>({1}, 0, nullopt, nullopt, -1);
  check_slice<T>({7, 9}, 0, 1, 6, 2);
  check_slice<T>({7, 9}, 1, nullopt, nullopt, -1);
  check_slice<T>({7, 9}, 0, nullopt, nullopt, -1);
  check_slice<T>({7, 9}, 1, 8, 0, -3);
  check_slice<T>({7, 9}, -1, 3, 4, 1);
  check_slice<T>({7, 9}, 0, 3, 3, 1);
  check_slice<T>({5, 6, 7}, 1, nullopt, nullopt, -2);
  check_slice<T>({5, 6, 7}, 2, 1, nullopt, 2);
  check_slice<T>({5, 6, 7}, 0, 4, 0, -1);
  check_slice<T>({5, 1, 7}, 1, 0, 1, 1);
  check_slice<T>({1000, 1000}, 1, 1, 999, 2);
  check_slice<T>({1000, 1000}, 0, nullopt, nullopt, -1);
  check_slice<T>({1000, 1000}, 1, nullopt, nullopt, -1);
  check_slice<T>({1000, 1000}, 0, 10, 990, 1);
  check_slice<T>({6, 4}, 1, 1, 3, 1);  // short rows, offset by one item
  check_slice<T>({6, 4}, 1, 0, 2, 1);
  check_slice<T>({5, 7, 2}, 1, 1, 7, 2);
  check_slice<T>({1 << 20}, 0, 3, std::nullopt, 3);  // one long strided row
  check_slice<T>({1 << 20}, 0, std::nullopt, std::nullopt, -1);
}

TEST(MovementKernels, SliceBool) { slice_cases<bool>(); }
TEST(MovementKernels, SliceInt32) { slice_cases<int32_t>(); }
TEST(MovementKernels, SliceInt64) { slice_cases<int64_t>(); }
TEST(MovementKernels, SliceFloat32) { slice_cases<float>(); }
TEST(MovementKernels, SliceFloat64) { slice_cases<double>(); }

TEST(MovementKernels, SliceOfSlice) {
  std::vector<int32_t> v = iota_values<int32_t>(6 * 8);
  Tensor x = wok::from_vector(v, {6, 8});
  Tensor y = wok::slice(wok::slice(x, 1, std::nullopt, std::nullopt, -1), 0, 1, 5, 2);  // rows 1, 3, columns reversed
  std::vector<int32_t> want;
  for (int64_t r : {1, 3})
    for (int64_t c = 7; c >= 0; --c) want.push_back(v[static_cast<size_t>(r * 8 + c)]);
  EXPECT_TRUE(wt::exact<int32_t>("slice", y, want));
}

// ---- concat ------------------------------------------------------------------------------

template <typename T>
void check_concat(const std::vector<Shape>& shapes, int64_t axis) {
  std::string names;
  for (const Shape& s : shapes) names += wok::shape_str(s) + " ";
  SCOPED_TRACE("concat " + names + "axis " + std::to_string(axis) + " " + wt::dname(wok::dtype_of<T>()));
  std::vector<Tensor> xs;
  std::vector<std::vector<T>> vals;
  for (size_t k = 0; k < shapes.size(); ++k) {
    vals.push_back(iota_values<T>(wok::numel(shapes[k]), static_cast<uint32_t>(1000 * k + 1)));
    xs.push_back(wok::from_vector(vals.back(), shapes[k]));
  }
  Tensor y = wok::concat(xs, axis);
  const size_t a = static_cast<size_t>(axis);
  Shape out = shapes[0];
  out[a] = 0;
  for (const Shape& s : shapes) out[a] += s[a];
  ASSERT_EQ(y.shape(), out);
  std::vector<T> want(static_cast<size_t>(wok::numel(out)));
  for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i) {
    std::vector<int64_t> idx = unravel(i, out);
    size_t k = 0;
    while (idx[a] >= shapes[k][a]) idx[a] -= shapes[k++][a];
    want[static_cast<size_t>(i)] = vals[k][static_cast<size_t>(ravel(idx, shapes[k]))];
  }
  EXPECT_TRUE(wt::exact<T>("concat", y, want));
}

template <typename T>
void concat_cases() {
  check_concat<T>({{1, 3, 4}, {2, 3, 4}, {0, 3, 4}}, 0);
  check_concat<T>({{2, 1, 4}, {2, 5, 4}}, 1);
  check_concat<T>({{2, 3, 1}, {2, 3, 7}, {2, 3, 2}}, 2);
  check_concat<T>({{5}, {0}, {11}}, 0);
  check_concat<T>({{0, 2}, {0, 3}}, 1);
  check_concat<T>({{300, 1000}, {300, 1}, {300, 999}}, 1);
  check_concat<T>({{1000, 300}, {1, 300}, {1300, 300}}, 0);
  check_concat<T>({{1, 1 << 19}, {1, 1 << 18}}, 1);
}

TEST(MovementKernels, ConcatBool) { concat_cases<bool>(); }
TEST(MovementKernels, ConcatInt32) { concat_cases<int32_t>(); }
TEST(MovementKernels, ConcatInt64) { concat_cases<int64_t>(); }
TEST(MovementKernels, ConcatFloat32) { concat_cases<float>(); }
TEST(MovementKernels, ConcatFloat64) { concat_cases<double>(); }

TEST(MovementKernels, ConcatPromotesMixedDtypes) {
  Tensor a = wok::from_vector(std::vector<int32_t>{1, 2}, {1, 2});
  Tensor b = wok::from_vector(std::vector<double>{0.5, 1.5, 2.5, 3.5}, {2, 2});
  Tensor y = wok::concat({a, b}, 0);
  EXPECT_TRUE(wt::exact<double>("concat", y, {1, 2, 0.5, 1.5, 2.5, 3.5}));
}

}  // namespace
