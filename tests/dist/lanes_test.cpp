// Note [The communication lane] (jit/plan_lanes.cpp): a plan's collectives
// get a lane of their own, beside the compute that does not depend on
// them, and the replay on streams orders them with events.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <vector>

#include "wok/jit/plan.h"
#include "wok/jit/plan_cache.h"
#include "wok/jit/plan_order_check.h"

namespace {

using wok::Tensor;

struct SeenPlan {
  bool communicates = false;
  int lanes = 0;
  std::vector<int> node_lanes, kernel_lanes;  // node steps are the collectives here
};
std::vector<SeenPlan> seen;

void remember(wok::jit::Plan& plan) {
  SeenPlan p{plan.communicates, plan.lanes, {}, {}};
  for (const wok::jit::PlanStep& st : plan.steps)
    (st.kind == wok::jit::PlanStep::Kind::kNode ? p.node_lanes : p.kernel_lanes).push_back(st.lane);
  seen.push_back(p);
}

class DistLanes : public ::testing::Test {
 protected:
  void SetUp() override {
    if (wok::dist::size() == 1) GTEST_SKIP() << "a group of one records no collective";
    saved_backend_ = wok::backend();
    wok::set_backend(wok::Backend::kJit);
    wok::jit::PlanCache::global().clear();
    seen.clear();
    wok::jit::testing::set_plan_edit_hook(remember);
  }
  void TearDown() override {
    wok::jit::testing::set_plan_edit_hook(nullptr);
    wok::set_check_streams(false);
    wok::set_backend(saved_backend_);
  }
  wok::Backend saved_backend_ = wok::Backend::kJit;
};

TEST_F(DistLanes, CollectivesGetALaneNoComputeStepShares) {
  const int r = wok::dist::rank(), n = wok::dist::size();
  // Checked by the stream-order checker too: every cross-lane read has its event.
  wok::set_check_streams(true);
  Tensor a = wok::full({16, 16}, 0.5f), b = wok::full({16, 16}, 2.0f);
  Tensor x = wok::full({64}, static_cast<float>(r + 1));
  Tensor prod = wok::matmul(a, b);                          // independent of the collectives
  Tensor s = wok::dist::all_reduce(x * 2.0f);               // sum of 2(r+1)
  Tensor m = wok::dist::all_reduce(s + 1.0f, wok::dist::ReduceOp::kMax);  // s + 1 everywhere
  Tensor y = wok::relu(m) + wok::sum(prod);                 // joins both
  std::vector<float> v = y.to_vector<float>();
  const float sum = static_cast<float>(n * (n + 1));         // sum over ranks of 2(r+1)
  EXPECT_FLOAT_EQ(v[0], sum + 1.0f + 16 * 16 * 16.0f);
  ASSERT_EQ(seen.size(), 1u);
  const SeenPlan& p = seen[0];
  EXPECT_TRUE(p.communicates);
  ASSERT_EQ(p.node_lanes.size(), 2u);
  // Both collectives on one lane, in step order; no compute step there.
  EXPECT_EQ(p.node_lanes[0], p.node_lanes[1]);
  for (int l : p.kernel_lanes) EXPECT_NE(l, p.node_lanes[0]);
  EXPECT_GE(p.lanes, 2);
}

TEST_F(DistLanes, APlanWithOnlyACollectiveRunsOnTheCallersThread) {
  Tensor x = wok::full({8}, 1.0f);
  std::vector<float> v = wok::dist::all_reduce(x).to_vector<float>();
  EXPECT_FLOAT_EQ(v[7], static_cast<float>(wok::dist::size()));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(seen[0].communicates);
  EXPECT_EQ(seen[0].lanes, 1);
}

}  // namespace
