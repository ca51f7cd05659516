// The precompiled matmul kernel against plain triple loops: exact (wrapping)
// for integers, a float64 / long double reference with a tolerance scaled
// by the sum of |a||b| for floats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;
using LD = long double;

template <typename T>
std::vector<T> sample(int64_t n, uint32_t seed) {
  if constexpr (std::is_integral_v<T>) return wt::random_values<T>(static_cast<size_t>(n), -1000, 1000, seed);
  else return wt::random_values<T>(static_cast<size_t>(n), -1, 1, seed);
}

// Reference of a [.., n, k] @ b [.., k, m] with NumPy broadcasting of the
// batch dims; 1-D operands promoted as NumPy does.
template <typename T>
void check_matmul(Shape sa, Shape sb, uint32_t seed = 1) {
  SCOPED_TRACE("matmul " + wok::shape_str(sa) + " @ " + wok::shape_str(sb) + " " + wt::dname(wok::dtype_of<T>()));
  std::vector<T> va = sample<T>(wok::numel(sa), seed), vb = sample<T>(wok::numel(sb), seed + 7);
  Tensor y = wok::matmul(wok::from_vector(va, sa), wok::from_vector(vb, sb));
  const bool vec_a = sa.size() == 1, vec_b = sb.size() == 1;
  if (vec_a) sa.insert(sa.begin(), 1);
  if (vec_b) sb.push_back(1);
  const int64_t n = sa[sa.size() - 2], k = sa.back(), m = sb.back();
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  Shape batch = *wok::broadcast_shapes(ba, bb);
  Shape out = batch;
  if (!vec_a) out.push_back(n);
  if (!vec_b) out.push_back(m);
  ASSERT_EQ(y.shape(), out);
  ASSERT_EQ(y.dtype(), wok::dtype_of<T>());
  const wok::Strides sta = wok::broadcast_strides(ba, batch), stb = wok::broadcast_strides(bb, batch);
  const int64_t nbatch = wok::numel(batch);
  std::vector<T> want(static_cast<size_t>(nbatch * n * m));
  std::vector<double> tol(want.size());
  for (int64_t bi = 0; bi < nbatch; ++bi) {
    int64_t rem = bi, oa = 0, ob = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      int64_t idx = rem % batch[d];
      rem /= batch[d];
      oa += idx * sta[d];
      ob += idx * stb[d];
    }
    const T* a = va.data() + oa * n * k;
    const T* b = vb.data() + ob * k * m;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        size_t o = static_cast<size_t>((bi * n + i) * m + j);
        if constexpr (std::is_integral_v<T>) {
          using U = std::make_unsigned_t<T>;
          U acc = 0;
          for (int64_t p = 0; p < k; ++p) acc += static_cast<U>(a[i * k + p]) * static_cast<U>(b[p * m + j]);
          want[o] = static_cast<T>(acc);
        } else {
          LD acc = 0, mag = 0;
          for (int64_t p = 0; p < k; ++p) {
            LD t = static_cast<LD>(a[i * k + p]) * static_cast<LD>(b[p * m + j]);
            acc += t;
            mag += std::fabs(t);
          }
          want[o] = static_cast<T>(acc);
          tol[o] = static_cast<double>(mag) * (std::is_same_v<T, float> ? 4e-7 : 1e-15) * std::sqrt(k + 1.0) +
                   std::numeric_limits<T>::denorm_min();
        }
      }
  }
  if constexpr (std::is_integral_v<T>) {
    EXPECT_TRUE(wt::exact<T>("matmul", y, want));
  } else {
    std::vector<T> got = y.to_vector<T>();
    int bad = 0;
    for (size_t o = 0; o < want.size() && bad < 8; ++o) {
      double err = std::fabs(static_cast<double>(got[o]) - static_cast<double>(want[o]));
      if (!(err <= tol[o])) {
        ++bad;
        ADD_FAILURE() << "element " << o << " got " << got[o] << " want " << want[o] << " tol " << tol[o];
      }
    }
  }
}

template <typename T>
void matmul_cases() {
  check_matmul<T>({1, 1}, {1, 1});
  check_matmul<T>({7, 13}, {13, 5});
  check_matmul<T>({3, 4}, {4, 2});
  check_matmul<T>({17, 33}, {33, 65});
  check_matmul<T>({64, 64}, {64, 64});
  check_matmul<T>({67, 300}, {300, 129});   // several k blocks, edge rows and columns
  check_matmul<T>({130, 70}, {70, 1001});   // several row and column bands
  check_matmul<T>({2, 517}, {517, 3});
  check_matmul<T>({1, 40}, {40, 70});
  check_matmul<T>({40, 70}, {70, 1});
  check_matmul<T>({13}, {13, 6});           // vector @ matrix
  check_matmul<T>({6, 13}, {13});           // matrix @ vector
  check_matmul<T>({300}, {300});            // dot product
  check_matmul<T>({2, 3, 7, 13}, {13, 5});  // batched @ 2-D
  check_matmul<T>({7, 13}, {4, 13, 5});     // 2-D @ batched
  check_matmul<T>({2, 1, 5, 6}, {3, 6, 4}); // broadcast batch dims
  check_matmul<T>({3, 1, 9, 8}, {1, 4, 8, 10});
  check_matmul<T>({5, 4, 3}, {3});          // batched @ vector
  check_matmul<T>({4}, {2, 4, 3});          // vector @ batched
  check_matmul<T>({0, 5}, {5, 3});          // empty output
  check_matmul<T>({4, 0}, {0, 3});          // k == 0: zeros
  check_matmul<T>({2, 0, 4}, {2, 4, 3});
}

TEST(MatmulKernels, Int32) { matmul_cases<int32_t>(); }
TEST(MatmulKernels, Int64) { matmul_cases<int64_t>(); }
TEST(MatmulKernels, Float32) { matmul_cases<float>(); }
TEST(MatmulKernels, Float64) { matmul_cases<double>(); }

TEST(MatmulKernels, Large) {
  check_matmul<float>({512, 512}, {512, 512}, 3);
  check_matmul<double>({257, 300}, {300, 511}, 4);
  check_matmul<int32_t>({200, 300}, {300, 190}, 5);
  check_matmul<float>({64, 33, 40}, {64, 40, 20}, 6);  // many small batches
  check_matmul<float>({1000, 700}, {700}, 7);
  check_matmul<float>({3, 50}, {50, 2500}, 8);  // few rows, several column tiles
  check_matmul<int64_t>({2, 1, 1, 70}, {5, 70, 1100}, 9);  // one row per batch, broadcast batches
}

TEST(MatmulKernels, IntegersWrap) {
  const int32_t big = std::numeric_limits<int32_t>::max();
  Tensor a = wok::from_vector(std::vector<int32_t>{big, big, 3, -4}, {2, 2});
  Tensor b = wok::from_vector(std::vector<int32_t>{big, 2, big, -5}, {2, 2});
  std::vector<int32_t> got = wok::matmul(a, b).to_vector<int32_t>();
  auto wrap = [](int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); };
  EXPECT_EQ(got[0], wrap(static_cast<int64_t>(big) * big * 2));
  EXPECT_EQ(got[1], wrap(static_cast<int64_t>(big) * 2 + static_cast<int64_t>(big) * -5));
  EXPECT_EQ(got[2], wrap(int64_t{3} * big + int64_t{-4} * big));
  EXPECT_EQ(got[3], 3 * 2 + -4 * -5);
}

TEST(MatmulKernels, BoolOperandsPromote) {
  Tensor a = wok::from_vector(std::vector<bool>{true, false, true, true}, {2, 2});
  Tensor y = wok::matmul(a, a);
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_TRUE(wt::exact<int32_t>("matmul", y, {1, 0, 2, 1}));
}

}  // namespace
