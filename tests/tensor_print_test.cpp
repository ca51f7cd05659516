// Tensor::str(): NumPy-style nested rows, long tensors summarised with
// "..." in each long dimension.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <numeric>
#include <vector>

namespace {

using wok::Tensor;

TEST(TensorPrint, NestedRows) {
  EXPECT_EQ(wok::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}).str(),
            "float32[2, 3] [[1, 2, 3], [4, 5, 6]]");
  EXPECT_EQ(wok::from_vector(std::vector<int32_t>{1, 2, 3}, {3}).str(), "int32[3] [1, 2, 3]");
  EXPECT_EQ(wok::from_vector(std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}).str(),
            "int64[2, 2, 2] [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]");
  EXPECT_EQ(wok::from_vector(std::vector<double>{-0.5}, {}).str(), "float64[] -0.5");
  EXPECT_EQ(wok::from_vector(std::vector<bool>{true, false}, {2}).str(), "bool[2] [true, false]");
}

TEST(TensorPrint, EmptyDims) {
  EXPECT_EQ(wok::zeros({0}).str(), "float32[0] []");
  EXPECT_EQ(wok::zeros({2, 0}).str(), "float32[2, 0] [[], []]");
}

TEST(TensorPrint, LargeIntegersExactly) {
  EXPECT_EQ(wok::from_vector(std::vector<int64_t>{(int64_t{1} << 62) + 1}, {1}).str(), "int64[1] [4611686018427387905]");
}

TEST(TensorPrint, LongTensorsAreSummarisedPerDim) {
  std::vector<int32_t> v(2000);
  std::iota(v.begin(), v.end(), 0);
  EXPECT_EQ(wok::from_vector(v, {2000}).str(), "int32[2000] [0, 1, 2, ..., 1997, 1998, 1999]");
  EXPECT_EQ(wok::from_vector(v, {2, 1000}).str(),
            "int32[2, 1000] [[0, 1, 2, ..., 997, 998, 999], [1000, 1001, 1002, ..., 1997, 1998, 1999]]");
  // Short tensors print whole.
  std::vector<int32_t> w(12);
  std::iota(w.begin(), w.end(), 0);
  EXPECT_EQ(wok::from_vector(w, {12}).str(), "int32[12] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]");
}

}  // namespace
