// Each collective over the world, for every dtype (and every reduction),
// on several shapes, against the reference each rank computes for the
// whole group (dist_test_util.h).
#include <algorithm>
#include <tuple>

#include "dist_test_util.h"

namespace {

using namespace dt;
namespace dist = wok::dist;

constexpr DType kDTypes[] = {DType::kBool, DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat64};
constexpr ReduceOp kReduceOps[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kMean};

// 0-d, empty, and small shapes.
const std::vector<Shape> kShapes = {{}, {0}, {3, 0}, {1}, {7}, {3, 5}, {2, 3, 4}};

uint64_t salt_of(ReduceOp op, DType t, size_t shape_index) {
  return static_cast<uint64_t>(op) * 1000 + static_cast<uint64_t>(t) * 100 + shape_index;
}

// ---- all_reduce ---------------------------------------------------------------------

class AllReduce : public ::testing::TestWithParam<std::tuple<ReduceOp, DType>> {};

TEST_P(AllReduce, MatchesReference) {
  const auto [op, dtype] = GetParam();
  const int rank = dist::rank(), size = dist::size();
  if (op == ReduceOp::kMean && !wok::is_floating(dtype)) {
    // Raised at the call, on every rank alike: nothing reaches the network.
    for_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      Tensor x = input<T>(rank, {4}, 1);
      DT_EXPECT_ERROR(wok::DTypeError, dist::all_reduce(x, op), "all_reduce");
    });
    return;
  }
  for_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (size_t s = 0; s < kShapes.size(); ++s) {
      const Shape& shape = kShapes[s];
      SCOPED_TRACE("all_reduce(" + opname(op) + ") " + dname(dtype) + shape_text(shape));
      const uint64_t salt = salt_of(op, dtype, s);
      Tensor x = input<T>(rank, shape, salt, values_for(op));
      Tensor y = dist::all_reduce(x, op);
      EXPECT_TRUE(matches<T>(y, shape, reduce_ref<T>(op, iota_ranks(size), numel_of(shape), salt)));
      // The input is untouched.
      EXPECT_TRUE(matches<T>(x, shape, values<T>(rank, numel_of(shape), salt, values_for(op))));
    }
  });
}

INSTANTIATE_TEST_SUITE_P(OpsDTypes, AllReduce, ::testing::Combine(::testing::ValuesIn(kReduceOps), ::testing::ValuesIn(kDTypes)),
                         [](const auto& info) {
                           return opname(std::get<0>(info.param)) + "_" + dname(std::get<1>(info.param));
                         });

TEST(AllReduceLarge, OneMebiFloats) {
  const int rank = dist::rank(), size = dist::size();
  const int64_t n = int64_t{1} << 20;
  Tensor x = input<float>(rank, {n}, 77);
  EXPECT_TRUE(matches<float>(dist::all_reduce(x), {n}, reduce_ref<float>(ReduceOp::kSum, iota_ranks(size), n, 77)));
  // And a computed input, the reduction feeding more work.
  Tensor y = dist::all_reduce(x * 0.5f, ReduceOp::kMax);
  std::vector<float> want = reduce_ref<float>(ReduceOp::kMax, iota_ranks(size), n, 77);
  for (float& w : want) w *= 0.5f;
  EXPECT_TRUE(matches<float>(y, {n}, want));
}

// ---- all_gather ---------------------------------------------------------------------

class AllGather : public ::testing::TestWithParam<DType> {};

TEST_P(AllGather, MatchesReference) {
  const DType dtype = GetParam();
  const int rank = dist::rank(), size = dist::size();
  const std::vector<Shape> shapes = {{}, {1}, {3}, {2, 3}, {0, 4}, {2, 0}};
  for_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (size_t s = 0; s < shapes.size(); ++s) {
      const Shape& shape = shapes[s];
      SCOPED_TRACE("all_gather " + dname(dtype) + shape_text(shape));
      const uint64_t salt = 500 + s;
      Tensor y = dist::all_gather(input<T>(rank, shape, salt));
      Shape want_shape = shape;
      if (want_shape.empty())
        want_shape = {size};
      else
        want_shape[0] *= size;
      std::vector<T> want;
      for (int r = 0; r < size; ++r) {
        std::vector<T> v = values<T>(r, numel_of(shape), salt);
        want.insert(want.end(), v.begin(), v.end());
      }
      EXPECT_TRUE(matches<T>(y, want_shape, want));
    }
  });
}

INSTANTIATE_TEST_SUITE_P(DTypes, AllGather, ::testing::ValuesIn(kDTypes), [](const auto& info) { return dname(info.param); });

// ---- reduce_scatter -----------------------------------------------------------------

class ReduceScatter : public ::testing::TestWithParam<std::tuple<ReduceOp, DType>> {};

TEST_P(ReduceScatter, MatchesReference) {
  const auto [op, dtype] = GetParam();
  if (op == ReduceOp::kMean && !wok::is_floating(dtype)) return;  // covered by AllReduce
  const int rank = dist::rank(), size = dist::size();
  const std::vector<Shape> slices = {{1}, {2}, {2, 3}, {0, 3}};  // each rank's slice of the result
  for_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (size_t s = 0; s < slices.size(); ++s) {
      Shape shape = slices[s];
      shape[0] *= size;
      SCOPED_TRACE("reduce_scatter(" + opname(op) + ") " + dname(dtype) + shape_text(shape));
      const uint64_t salt = 900 + salt_of(op, dtype, s);
      Tensor y = dist::reduce_scatter(input<T>(rank, shape, salt, values_for(op)), op);
      std::vector<T> full = reduce_ref<T>(op, iota_ranks(size), numel_of(shape), salt);
      const int64_t per = numel_of(slices[s]);
      std::vector<T> want(full.begin() + rank * per, full.begin() + (rank + 1) * per);
      EXPECT_TRUE(matches<T>(y, slices[s], want));
    }
  });
}

INSTANTIATE_TEST_SUITE_P(OpsDTypes, ReduceScatter,
                         ::testing::Combine(::testing::Values(ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kProd,
                                                              ReduceOp::kMean),
                                            ::testing::Values(DType::kBool, DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat64)),
                         [](const auto& info) {
                           return opname(std::get<0>(info.param)) + "_" + dname(std::get<1>(info.param));
                         });

TEST(ReduceScatterErrors, AxisZeroMustDivideBySize) {
  const int size = dist::size();
  if (size == 1) GTEST_SKIP() << "every length divides by 1";
  Tensor x = input<float>(dist::rank(), {size + 1, 2}, 3);
  DT_EXPECT_ERROR(wok::ShapeError, dist::reduce_scatter(x), "reduce_scatter", std::to_string(size + 1));
}

// ---- broadcast ----------------------------------------------------------------------

class Broadcast : public ::testing::TestWithParam<DType> {};

TEST_P(Broadcast, FromEachRoot) {
  const DType dtype = GetParam();
  const int rank = dist::rank(), size = dist::size();
  const std::vector<Shape> shapes = {{}, {5}, {2, 3}, {0}};
  for_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int root = 0; root < size; ++root) {
      for (size_t s = 0; s < shapes.size(); ++s) {
        SCOPED_TRACE("broadcast(root=" + std::to_string(root) + ") " + dname(dtype) + shape_text(shapes[s]));
        const uint64_t salt = 1300 + s;
        Tensor y = dist::broadcast(input<T>(rank, shapes[s], salt), root);
        EXPECT_TRUE(matches<T>(y, shapes[s], values<T>(root, numel_of(shapes[s]), salt)));
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(DTypes, Broadcast, ::testing::ValuesIn(kDTypes), [](const auto& info) { return dname(info.param); });

// ---- all_to_all ---------------------------------------------------------------------

class AllToAll : public ::testing::TestWithParam<DType> {};

TEST_P(AllToAll, MatchesReference) {
  const DType dtype = GetParam();
  const int rank = dist::rank(), size = dist::size();
  const std::vector<Shape> slices = {{1}, {2}, {2, 3}, {0, 2}};
  for_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (size_t s = 0; s < slices.size(); ++s) {
      Shape shape = slices[s];
      shape[0] *= size;
      SCOPED_TRACE("all_to_all " + dname(dtype) + shape_text(shape));
      const uint64_t salt = 1700 + s;
      Tensor y = dist::all_to_all(input<T>(rank, shape, salt));
      // Slice j of the result is slice `rank` of rank j's input.
      const int64_t per = numel_of(slices[s]);
      std::vector<T> want;
      for (int j = 0; j < size; ++j) {
        std::vector<T> v = values<T>(j, numel_of(shape), salt);
        want.insert(want.end(), v.begin() + rank * per, v.begin() + (rank + 1) * per);
      }
      EXPECT_TRUE(matches<T>(y, shape, want));
    }
  });
}

INSTANTIATE_TEST_SUITE_P(DTypes, AllToAll, ::testing::ValuesIn(kDTypes), [](const auto& info) { return dname(info.param); });

TEST(AllToAllErrors, AxisZeroMustDivideBySize) {
  const int size = dist::size();
  if (size == 1) GTEST_SKIP() << "every length divides by 1";
  Tensor x = input<int32_t>(dist::rank(), {size + 1}, 3);
  DT_EXPECT_ERROR(wok::ShapeError, dist::all_to_all(x), "all_to_all");
}

// ---- send / recv --------------------------------------------------------------------

class SendRecv : public ::testing::TestWithParam<DType> {};

// Rank r sends to r + 1 and receives from r - 1 (mod size), each in its own
// eval: even ranks send first, odd ranks receive first.
TEST_P(SendRecv, Ring) {
  const DType dtype = GetParam();
  const int rank = dist::rank(), size = dist::size();
  if (size == 1) GTEST_SKIP() << "a group of one has no peer (dist_single_process_test.cpp checks the error)";
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  const std::vector<Shape> shapes = {{}, {4}, {2, 3}, {0}};
  for_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (size_t s = 0; s < shapes.size(); ++s) {
      SCOPED_TRACE("send/recv ring " + dname(dtype) + shape_text(shapes[s]));
      const uint64_t salt = 2100 + s;
      const int64_t n = numel_of(shapes[s]);
      Tensor x = input<T>(rank, shapes[s], salt);
      Tensor sent, got;
      auto do_send = [&] {
        sent = dist::send(x, next);
        wok::eval({sent});
      };
      auto do_recv = [&] {
        got = dist::recv(shapes[s], dtype, prev);
        wok::eval({got});
      };
      if (rank % 2 == 0) {
        do_send();
        do_recv();
      } else {
        do_recv();
        do_send();
      }
      EXPECT_TRUE(matches<T>(sent, shapes[s], values<T>(rank, n, salt)));  // send's result is its input
      EXPECT_TRUE(matches<T>(got, shapes[s], values<T>(prev, n, salt)));
    }
  });
}

INSTANTIATE_TEST_SUITE_P(DTypes, SendRecv, ::testing::ValuesIn(kDTypes), [](const auto& info) { return dname(info.param); });

// The ring in one plan on every rank: a send is posted without waiting for
// its receiver, so every rank may send before it receives.
TEST(SendRecvRing, InOnePlan) {
  const int rank = dist::rank(), size = dist::size();
  if (size == 1) GTEST_SKIP() << "a group of one has no peer";
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  for (int step = 0; step < 3; ++step) {  // the later steps replay the plan
    SCOPED_TRACE("step " + std::to_string(step));
    const uint64_t salt = 2300 + step;
    Tensor s = dist::send(input<int64_t>(rank, {2, 5}, salt), next);
    Tensor r = dist::recv({2, 5}, DType::kInt64, prev) * int64_t{2};
    wok::eval({s, r});
    EXPECT_TRUE(matches<int64_t>(s, {2, 5}, values<int64_t>(rank, 10, salt)));
    std::vector<int64_t> want = values<int64_t>(prev, 10, salt);
    for (int64_t& w : want) w *= 2;
    EXPECT_TRUE(matches<int64_t>(r, {2, 5}, want));
  }
  // Two messages to the same peer arrive in the order they were sent.
  Tensor a = dist::send(wok::full({3}, 1.0f * rank), next), b = dist::send(wok::full({3}, 10.0f * rank), next);
  wok::eval({a, b});
  Tensor ra = dist::recv({3}, DType::kFloat32, prev);
  wok::eval({ra});
  Tensor rb = dist::recv({3}, DType::kFloat32, prev);
  EXPECT_TRUE(matches<float>(ra, {3}, std::vector<float>(3, 1.0f * prev)));
  EXPECT_TRUE(matches<float>(rb, {3}, std::vector<float>(3, 10.0f * prev)));
}

// The same ring with the recv's result passed to eval first: the JIT's plan
// issues every ready send before any recv (OpDef::schedule_priority), so
// no rank waits in its recv before it has posted its send.
TEST(SendRecvRing, InOnePlanRecvFirst) {
  const int rank = dist::rank(), size = dist::size();
  if (size == 1) GTEST_SKIP() << "a group of one has no peer";
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  Tensor s = dist::send(input<int32_t>(rank, {4}, 2400), next);
  Tensor r = dist::recv({4}, DType::kInt32, prev);
  wok::eval({r, s});
  EXPECT_TRUE(matches<int32_t>(r, {4}, values<int32_t>(prev, 4, 2400)));
}

// A send whose result feeds more work, and a received tensor computed on.
TEST(SendRecvCompute, ResultsFeedOtherOps) {
  const int rank = dist::rank(), size = dist::size();
  if (size == 1) GTEST_SKIP() << "a group of one has no peer";
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  Tensor x = input<float>(rank, {3, 4}, 2500);
  Tensor sent, got;
  if (rank % 2 == 0) {
    sent = dist::send(x * 3.0f, next) + 1.0f;
    wok::eval({sent});
    got = wok::relu(dist::recv({3, 4}, DType::kFloat32, prev) * 3.0f);
    wok::eval({got});
  } else {
    got = wok::relu(dist::recv({3, 4}, DType::kFloat32, prev) * 3.0f);
    wok::eval({got});
    sent = dist::send(x * 3.0f, next) + 1.0f;
    wok::eval({sent});
  }
  std::vector<float> mine = values<float>(rank, 12, 2500), theirs = values<float>(prev, 12, 2500);
  for (float& v : mine) v = v * 3.0f + 1.0f;
  for (float& v : theirs) v = std::max(v * 9.0f, 0.0f);  // sent as x * 3, then * 3
  EXPECT_TRUE(matches<float>(sent, {3, 4}, mine));
  EXPECT_TRUE(matches<float>(got, {3, 4}, theirs));
}

// ---- errors at the call ---------------------------------------------------------------

TEST(CollectiveErrors, BadPeerNamesTheOp) {
  const int rank = dist::rank(), size = dist::size();
  Tensor x = input<float>(rank, {4}, 1);
  DT_EXPECT_ERROR(wok::ArgumentError, dist::broadcast(x, size), "broadcast", std::to_string(size));
  DT_EXPECT_ERROR(wok::ArgumentError, dist::broadcast(x, -1), "broadcast");
  DT_EXPECT_ERROR(wok::ArgumentError, dist::send(x, size), "send");
  DT_EXPECT_ERROR(wok::ArgumentError, dist::recv({4}, DType::kFloat32, size), "recv");
  DT_EXPECT_ERROR(wok::ArgumentError, dist::send(x, rank), "send");  // to itself
  DT_EXPECT_ERROR(wok::DTypeError, dist::reduce_scatter(input<int64_t>(rank, {size}, 1), ReduceOp::kMean),
                  "reduce_scatter");
  // Nothing was issued: a collective after the errors still works on every rank.
  EXPECT_TRUE(matches<float>(dist::all_reduce(x, ReduceOp::kMax), {4},
                             reduce_ref<float>(ReduceOp::kMax, iota_ranks(size), 4, 1)));
}

}  // namespace
