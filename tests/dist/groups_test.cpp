// The world and its sub-groups: ranks, sizes and names after split (by
// color, by key, nested, negative colors), and collectives on them.
#include "dist_test_util.h"

namespace {

using namespace dt;
namespace dist = wok::dist;

TEST(World, RankSizeName) {
  EXPECT_TRUE(dist::initialized());
  const dist::Group w = dist::world();
  EXPECT_EQ(w.rank(), dist::rank());
  EXPECT_EQ(w.size(), dist::size());
  EXPECT_GE(w.rank(), 0);
  EXPECT_LT(w.rank(), w.size());
  EXPECT_EQ(w.name(), "world");
  EXPECT_EQ(dist::world().id(), w.id());
  const char* env_size = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (env_size) {
    EXPECT_EQ(w.size(), std::atoi(env_size));
    EXPECT_EQ(w.rank(), std::atoi(std::getenv("OMPI_COMM_WORLD_RANK")));
  } else {
    EXPECT_EQ(w.size(), 1);
  }
  // Every rank has a distinct rank: their sum is 0 + 1 + ... + (size - 1).
  const int64_t n = w.size();
  EXPECT_EQ(dist::all_reduce(wok::scalar_tensor(int64_t{w.rank()})).item<int64_t>(), n * (n - 1) / 2);
}

// The world ranks that passed `color` (as world().split(color_of(r)) would
// make them), in the new group's rank order for key 0.
template <typename ColorOf>
std::vector<int> members(int size, ColorOf color_of, int color) {
  std::vector<int> m;
  for (int r = 0; r < size; ++r)
    if (color_of(r) == color) m.push_back(r);
  return m;
}

TEST(Split, ByParity) {
  const int rank = dist::rank(), size = dist::size();
  auto color_of = [](int r) { return r % 2; };
  const dist::Group g = dist::world().split(color_of(rank));
  const std::vector<int> mine = members(size, color_of, color_of(rank));
  EXPECT_EQ(g.size(), static_cast<int>(mine.size()));
  EXPECT_EQ(g.rank(), rank / 2);
  EXPECT_EQ(g.name(), "world/split(color=" + std::to_string(rank % 2) + ")");
  EXPECT_NE(g.id(), dist::world().id());

  EXPECT_TRUE(matches<float>(dist::all_reduce(input<float>(rank, {6}, 6000), ReduceOp::kSum, g), {6},
                             reduce_ref<float>(ReduceOp::kSum, mine, 6, 6000)));
  EXPECT_TRUE(matches<int32_t>(dist::all_reduce(input<int32_t>(rank, {2, 2}, 6001), ReduceOp::kMin, g), {2, 2},
                               reduce_ref<int32_t>(ReduceOp::kMin, mine, 4, 6001)));
  std::vector<int64_t> gathered;
  for (int r : mine) {
    std::vector<int64_t> v = values<int64_t>(r, 3, 6002);
    gathered.insert(gathered.end(), v.begin(), v.end());
  }
  EXPECT_TRUE(matches<int64_t>(dist::all_gather(input<int64_t>(rank, {3}, 6002), g), {3 * g.size()}, gathered));
  // The group's last rank is the root (a group rank, not a world rank).
  EXPECT_TRUE(matches<double>(dist::broadcast(input<double>(rank, {4}, 6003), g.size() - 1, g), {4},
                              values<double>(mine.back(), 4, 6003)));
  // And the world still works between the groups' collectives.
  EXPECT_TRUE(matches<float>(dist::all_reduce(input<float>(rank, {3}, 6004)), {3},
                             reduce_ref<float>(ReduceOp::kSum, iota_ranks(size), 3, 6004)));
}

TEST(Split, KeyOrdersRanks) {
  const int rank = dist::rank(), size = dist::size();
  // One group, ranked by descending world rank.
  const dist::Group g = dist::world().split(0, /*key=*/size - rank);
  EXPECT_EQ(g.size(), size);
  EXPECT_EQ(g.rank(), size - 1 - rank);
  EXPECT_EQ(g.name(), "world/split(color=0)");
  std::vector<float> want;
  for (int r = size - 1; r >= 0; --r) want.push_back(static_cast<float>(r));
  EXPECT_TRUE(matches<float>(dist::all_gather(wok::full({1}, static_cast<float>(rank)), g), {size}, want));
}

TEST(Split, Nested) {
  const int rank = dist::rank(), size = dist::size();
  const dist::Group outer = dist::world().split(rank % 2);
  const dist::Group inner = outer.split(outer.rank() % 2);
  EXPECT_EQ(inner.name(), "world/split(color=" + std::to_string(rank % 2) + ")/split(color=" +
                              std::to_string(outer.rank() % 2) + ")");
  auto color_of = [](int r) { return (r % 2) * 2 + (r / 2) % 2; };
  const std::vector<int> mine = members(size, color_of, color_of(rank));
  EXPECT_EQ(inner.size(), static_cast<int>(mine.size()));
  EXPECT_EQ(inner.rank(), rank / 4);
  EXPECT_TRUE(matches<int64_t>(dist::all_reduce(input<int64_t>(rank, {5}, 6100), ReduceOp::kSum, inner), {5},
                               reduce_ref<int64_t>(ReduceOp::kSum, mine, 5, 6100)));
  // Collectives on the outer group, the inner one and the world in one plan.
  Tensor x = input<float>(rank, {4}, 6101);
  Tensor a = dist::all_reduce(x, ReduceOp::kMax, outer);
  Tensor b = dist::all_reduce(x, ReduceOp::kMax, inner);
  Tensor c = dist::all_reduce(x, ReduceOp::kMax);
  wok::eval({c, b, a});
  EXPECT_TRUE(matches<float>(a, {4}, reduce_ref<float>(ReduceOp::kMax, members(size, [](int r) { return r % 2; }, rank % 2), 4, 6101)));
  EXPECT_TRUE(matches<float>(b, {4}, reduce_ref<float>(ReduceOp::kMax, mine, 4, 6101)));
  EXPECT_TRUE(matches<float>(c, {4}, reduce_ref<float>(ReduceOp::kMax, iota_ranks(size), 4, 6101)));
}

TEST(Split, NegativeColorJoinsNoGroup) {
  const int rank = dist::rank(), size = dist::size();
  // Rank 0 stays out; the others form one group.
  const dist::Group g = dist::world().split(rank == 0 ? -1 : 0);
  if (rank == 0) {
    EXPECT_EQ(g.size(), 1);
    EXPECT_EQ(g.rank(), 0);
    EXPECT_EQ(g.name(), "world/split(none)");
  } else {
    EXPECT_EQ(g.size(), size - 1);
    EXPECT_EQ(g.rank(), rank - 1);
    EXPECT_EQ(g.name(), "world/split(color=0)");
  }
  // Each rank reduces over its own group: rank 0 alone gets its input.
  std::vector<int> mine = rank == 0 ? std::vector<int>{0} : members(size, [](int r) { return r == 0 ? -1 : 0; }, 0);
  EXPECT_TRUE(matches<int32_t>(dist::all_reduce(input<int32_t>(rank, {3}, 6200), ReduceOp::kSum, g), {3},
                               reduce_ref<int32_t>(ReduceOp::kSum, mine, 3, 6200)));
  // Then everyone meets in the world again.
  EXPECT_TRUE(matches<int32_t>(dist::all_reduce(input<int32_t>(rank, {3}, 6201)), {3},
                               reduce_ref<int32_t>(ReduceOp::kSum, iota_ranks(size), 3, 6201)));
}

// A group of one (the world of a lone process, or a split that leaves a
// rank alone) returns its input itself: nothing is recorded.
TEST(GroupOfOne, ReturnsInputRecordsNothing) {
  const int rank = dist::rank();
  const dist::Group g = dist::world().split(rank);  // every rank alone
  EXPECT_EQ(g.size(), 1);
  EXPECT_EQ(g.rank(), 0);
  EXPECT_EQ(g.name(), "world/split(color=" + std::to_string(rank) + ")");
  Tensor x = input<float>(rank, {4, 3}, 6300) * 2.0f;  // pending
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kMean}) {
    EXPECT_EQ(dist::all_reduce(x, op, g).impl(), x.impl()) << opname(op);
    EXPECT_EQ(dist::reduce_scatter(x, op, g).impl(), x.impl()) << opname(op);
  }
  EXPECT_EQ(dist::all_gather(x, g).impl(), x.impl());
  EXPECT_EQ(dist::broadcast(x, 0, g).impl(), x.impl());
  EXPECT_EQ(dist::all_to_all(x, g).impl(), x.impl());
  EXPECT_FALSE(x.is_ready());
  std::vector<float> want = values<float>(rank, 12, 6300);
  for (float& v : want) v *= 2.0f;
  EXPECT_TRUE(matches<float>(dist::all_reduce(x, ReduceOp::kSum, g), {4, 3}, want));
  // Still checked at the call: a bad root, mean on integers, send to self.
  DT_EXPECT_ERROR(wok::ArgumentError, dist::broadcast(x, 1, g), "broadcast");
  DT_EXPECT_ERROR(wok::DTypeError, dist::all_reduce(input<int32_t>(rank, {2}, 1), ReduceOp::kMean, g), "all_reduce");
  DT_EXPECT_ERROR(wok::ArgumentError, dist::send(x, 0, g), "send");
  DT_EXPECT_ERROR(wok::ArgumentError, dist::recv({4, 3}, DType::kFloat32, 0, g), "recv");
}

// Run alone (dist_single), the world itself is the group of one.
TEST(GroupOfOne, LoneWorld) {
  if (dist::size() != 1) GTEST_SKIP() << "only as a lone process";
  EXPECT_EQ(dist::rank(), 0);
  wok::reset_stats();
  Tensor x = input<int64_t>(0, {3, 2}, 6400) + int64_t{1};
  EXPECT_EQ(dist::all_reduce(x).impl(), x.impl());
  EXPECT_EQ(dist::all_gather(x).impl(), x.impl());
  EXPECT_EQ(dist::reduce_scatter(x, ReduceOp::kMax).impl(), x.impl());
  EXPECT_EQ(dist::broadcast(x, 0).impl(), x.impl());
  EXPECT_EQ(dist::all_to_all(x).impl(), x.impl());
  EXPECT_EQ(wok::stats().evaluations, 0);  // nothing ran
  // A 0-d tensor gathers to [1].
  Tensor s = wok::scalar_tensor(2.5);
  EXPECT_TRUE(matches<double>(dist::all_gather(s), {1}, {2.5}));
}

}  // namespace
