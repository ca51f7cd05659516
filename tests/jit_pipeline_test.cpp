// The JIT's one pipeline: its stage list, the IR verifier between stages
// (accepting the plans of real programs, rejecting broken graphs and
// plans), and the IR after each stage in WOK_DUMP_DIR.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "wok/jit/cuda/cuda_jit_runner.h"
#include "wok/jit/pipeline.h"
#include "wok/jit/verify.h"
#include "wok/runtime/cpu_features.h"

namespace {

using wok::Tensor;
using wok::jit::PlanLevel;

const std::vector<std::string> kStageNames = {
    "common-subexpression elimination", "dead-code elimination", "constant folding", "elementwise fusion",
    "draft steps",                      "order steps",           "assign lanes",     "plan memory",
};

wok::jit::cuda::PendingFragment fragment_of(const std::vector<Tensor>& targets) {
  std::vector<wok::TensorImplPtr> impls;
  for (const Tensor& t : targets) impls.push_back(t.impl());
  return wok::jit::cuda::pending_fragment(impls);
}

// Verification on for one test, whatever WOK_VERIFY says.
class JitPipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    was_ = wok::jit::verify_enabled();
    wok::jit::set_verify(true);
  }
  void TearDown() override { wok::jit::set_verify(was_); }
  bool was_ = false;
};

TEST(JitPipelineStages, AreTheEightNamedStagesInOrder) {
  std::vector<std::string> names;
  for (const wok::jit::Stage& s : wok::jit::pipeline_stages()) names.push_back(s.name);
  EXPECT_EQ(names, kStageNames);
}

// Under `WOK_VERIFY=1 ctest` every plan the suite builds is verified.
TEST(JitPipelineStages, VerificationFollowsWokVerify) {
  const char* env = std::getenv("WOK_VERIFY");
  EXPECT_EQ(wok::jit::verify_enabled(), env != nullptr && std::string(env) == "1");
}

// Programs covering the plan's shapes: chains, row and column reductions,
// precompiled kernels, aliasing movement ops, empty tensors, several outputs.
std::vector<std::pair<std::string, std::function<std::vector<Tensor>()>>> programs() {
  return {
      {"elementwise chain",
       [] {
         Tensor a = wok::rand({17, 33}, 1), b = wok::rand({33}, 2);
         return std::vector<Tensor>{wok::tanh(wok::exp(-(a * 2.0f + b)) * b - a) / (wok::abs(b) + 1.0f)};
       }},
      {"softmax and layer_norm",
       [] {
         Tensor x = wok::rand({9, 70}, 3);
         return std::vector<Tensor>{wok::softmax(x), wok::layer_norm(x + 1.0f)};
       }},
      {"reductions over axes",
       [] {
         Tensor x = wok::rand({5, 6, 7}, 4);
         return std::vector<Tensor>{wok::sum(x, {0}), wok::max(x, {1}, true), wok::mean(x * x, {2}), wok::sum(x),
                                    wok::argmax(x, {2})};
       }},
      {"matmul",
       [] {
         Tensor a = wok::rand({8, 12}, 5), b = wok::rand({12, 8}, 6);
         Tensor m = wok::matmul(wok::exp(a), b);
         return std::vector<Tensor>{wok::matmul(m, wok::matmul(a, b)) + 1.0f};
       }},
      {"movement ops",
       [] {
         Tensor x = wok::rand({4, 6, 5}, 7);
         Tensor y = wok::reshape(wok::exp(x), {24, 5});
         Tensor z = wok::permute(x, {2, 0, 1}) * 2.0f;
         Tensor s = wok::slice(x, 1, 1, 5, 2);
         return std::vector<Tensor>{wok::relu(y), z, wok::concat({s, s}, 0), wok::broadcast_to(wok::sum(x, {0}), {3, 6, 5})};
       }},
      {"empty tensors",
       [] {
         Tensor x = wok::rand({0, 7}, 8);
         return std::vector<Tensor>{wok::exp(x) + 1.0f, wok::sum(x, {1}), wok::sum(x, {0})};
       }},
      {"multiple outputs sharing work",
       [] {
         Tensor a = wok::rand({4096}, 9);
         Tensor t = wok::exp(a);
         Tensor u = wok::exp(a);  // a common subexpression
         return std::vector<Tensor>{t * 2.0f, u + 1.0f, wok::sum(t), t};
       }},
  };
}

TEST_F(JitPipeline, VerifierAcceptsThePlansOfRealPrograms) {
  for (auto& [label, make] : programs()) {
    SCOPED_TRACE(label);
    std::vector<Tensor> outs = make();
    wok::jit::cuda::PendingFragment pf = fragment_of(outs);
    wok::jit::PlanGraph g(pf.fragment);
    std::shared_ptr<wok::jit::Plan> plan;
    ASSERT_NO_THROW(plan = wok::jit::run_pipeline(g, nullptr));  // verified after each stage
    EXPECT_TRUE(wok::jit::verify_graph(g).ok());
    absl::Status st = wok::jit::verify_plan(*plan, g, PlanLevel::kPlaced);
    EXPECT_TRUE(st.ok()) << st << "\n" << plan->str();
  }
}

TEST_F(JitPipeline, EvaluationWithVerificationGivesTheSameValues) {
  if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
  for (auto& [label, make] : programs()) {
    SCOPED_TRACE(label);
    wok::set_backend(wok::Backend::kPrecompiled);
    std::vector<Tensor> want = make();
    wok::eval(want);
    wok::set_backend(wok::Backend::kJit);
    std::vector<Tensor> got = make();
    ASSERT_NO_THROW(wok::eval(got));
    for (size_t i = 0; i < got.size(); ++i) {
      Tensor g = wok::cast(got[i], wok::DType::kFloat64), w = wok::cast(want[i], wok::DType::kFloat64);
      std::vector<double> gv = g.to_vector<double>(), wv = w.to_vector<double>();
      ASSERT_EQ(gv.size(), wv.size());
      for (size_t k = 0; k < gv.size(); ++k) EXPECT_NEAR(gv[k], wv[k], 1e-4 * (1 + std::abs(wv[k]))) << i << "[" << k << "]";
    }
  }
  wok::set_backend(wok::Backend::kJit);
}

// A plan of three matmuls on the precompiled kernels: two intermediates in
// the arena, both live when the third step runs.
struct MatmulPlan {
  std::vector<Tensor> outs;
  wok::jit::cuda::PendingFragment pf;
  std::unique_ptr<wok::jit::PlanGraph> g;
  std::shared_ptr<wok::jit::Plan> plan;
  MatmulPlan() {
    Tensor x = wok::rand({16, 16}, 10), y = wok::rand({16, 16}, 11);
    outs = {wok::matmul(wok::matmul(x, y), wok::matmul(y, x))};
    pf = fragment_of(outs);
    g = std::make_unique<wok::jit::PlanGraph>(pf.fragment);
    plan = wok::jit::run_pipeline(*g, nullptr);
  }
};

TEST_F(JitPipeline, VerifierRejectsAReadBeforeItsWrite) {
  MatmulPlan p;
  ASSERT_EQ(p.plan->steps.size(), 3u) << p.plan->str();
  std::swap(p.plan->steps[0], p.plan->steps[2]);  // the last matmul first
  absl::Status st = wok::jit::verify_plan(*p.plan, *p.g, PlanLevel::kOrdered);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("before its write"), std::string::npos) << st;
}

TEST_F(JitPipeline, VerifierRejectsOverlappingArenaPlacements) {
  MatmulPlan p;
  wok::jit::Plan& plan = *p.plan;
  ASSERT_EQ(plan.steps.size(), 3u) << plan.str();
  int a = plan.steps[0].writes[0], b = plan.steps[1].writes[0];
  ASSERT_EQ(plan.placement[a].where, wok::jit::Placement::Where::kArena) << plan.str();
  ASSERT_EQ(plan.placement[b].where, wok::jit::Placement::Where::kArena) << plan.str();
  ASSERT_TRUE(wok::jit::verify_plan(plan, *p.g, PlanLevel::kPlaced).ok());
  plan.placement[b].offset = plan.placement[a].offset;
  absl::Status st = wok::jit::verify_plan(plan, *p.g, PlanLevel::kPlaced);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("arena placements overlap"), std::string::npos) << st;
}

TEST_F(JitPipeline, VerifierRejectsMisalignedAndOutOfArenaOffsets) {
  MatmulPlan p;
  wok::jit::Plan& plan = *p.plan;
  int a = plan.steps[0].writes[0];
  plan.placement[a].offset += 8;
  absl::Status st = wok::jit::verify_plan(plan, *p.g, PlanLevel::kPlaced);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not aligned"), std::string::npos) << st;
  plan.placement[a].offset = plan.arena_bytes;
  st = wok::jit::verify_plan(plan, *p.g, PlanLevel::kPlaced);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("runs past the arena"), std::string::npos) << st;
}

TEST_F(JitPipeline, VerifierRejectsAnAliveNodeReadingADeadNode) {
  MatmulPlan p;
  wok::jit::PlanGraph& g = *p.g;
  const wok::Fragment& f = g.fragment;
  int killed = -1;
  for (size_t n = 0; n < f.nodes.size() && killed < 0; ++n)
    for (int v : g.inputs_of(static_cast<int>(n)))
      if (g.alive[n] && g.producer[v] >= 0) killed = g.producer[v];
  ASSERT_GE(killed, 0);
  g.alive[killed] = false;
  g.group[killed] = -1;
  g.constant[killed] = false;
  absl::Status st = wok::jit::verify_graph(g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("of dead node"), std::string::npos) << st;
}

TEST_F(JitPipeline, AFailingStageIsNamedAndThrows) {
  MatmulPlan p;
  wok::jit::PlanGraph g(p.pf.fragment);
  wok::jit::Plan plan;
  wok::jit::PipelineState s{g, plan, {}};
  // A stage that breaks the graph: its outputs' producer is dead.
  static constexpr wok::jit::Stage kBreak[] = {
      {"kill everything", [](wok::jit::PipelineState& s) { s.graph.alive.assign(s.graph.alive.size(), false); },
       PlanLevel::kNone}};
  try {
    wok::jit::run_stages(s, kBreak, nullptr);
    FAIL() << "the verifier let a dead output through";
  } catch (const wok::Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("after stage \"kill everything\""), std::string::npos) << what;
    EXPECT_NE(what.find("fragment output"), std::string::npos) << what;
  }
}

TEST_F(JitPipeline, RecordsTheIRAfterEveryStage) {
  Tensor x = wok::rand({9, 70}, 12);
  std::vector<Tensor> outs = {wok::softmax(x) * 3.0f};
  wok::jit::cuda::PendingFragment pf = fragment_of(outs);
  wok::jit::PlanGraph g(pf.fragment);
  std::vector<wok::jit::StageRecord> records;
  std::shared_ptr<wok::jit::Plan> plan = wok::jit::run_pipeline(g, &records);
  ASSERT_EQ(records.size(), kStageNames.size());
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].name, kStageNames[i]);
    EXPECT_FALSE(records[i].after.empty()) << records[i].name;
  }
  EXPECT_NE(records[3].after.find("[group 0]"), std::string::npos) << records[3].after;   // fusion
  EXPECT_NE(records[4].after.find("step 0: kernel"), std::string::npos) << records[4].after;  // drafted
  EXPECT_NE(records[7].after.find("placements:"), std::string::npos) << records[7].after;
  EXPECT_NE(records[7].after.find("arena: "), std::string::npos) << records[7].after;
  EXPECT_EQ(records[7].after, plan->str());
}

// Run by ctest with WOK_DUMP_DIR set (tests/CMakeLists.txt): the dumped
// .passes.txt has a section after each stage.
TEST(JitPipelineDump, PassesFileHasASectionAfterEveryStage) {
  const char* dir = std::getenv("WOK_DUMP_DIR");
  if (!dir || !*dir) GTEST_SKIP() << "WOK_DUMP_DIR is not set";
  std::filesystem::remove_all(dir);
  Tensor x = wok::rand({7, 45}, 13);
  std::vector<Tensor> outs = {wok::layer_norm(x) - 2.0f};
  wok::jit::cuda::PendingFragment pf = fragment_of(outs);
  wok::jit::plan_structure(pf.fragment);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().string().find(".passes.txt") == std::string::npos) continue;
    ++files;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    size_t at = 0;
    for (const std::string& name : kStageNames) {
      size_t found = text.str().find("-- after " + name + ":\n", at);
      ASSERT_NE(found, std::string::npos) << name << " in " << entry.path() << ":\n" << text.str();
      at = found;
    }
  }
  EXPECT_EQ(files, 1);
}

// Note [Arena reuse across lanes]: two independent chains land on two
// lanes, which stream replay runs at the same time. The first chain's
// intermediate is dead (by step index) before the second chain's is written,
// yet the two may be live at once: they must not share bytes.
struct TwoChains {
  std::vector<Tensor> outs;
  wok::jit::cuda::PendingFragment pf;
  std::unique_ptr<wok::jit::PlanGraph> g;
  std::shared_ptr<wok::jit::Plan> plan;
  explicit TwoChains(bool independent) {
    Tensor x = wok::rand({16, 16}, 12), y = wok::rand({16, 16}, 13);
    Tensor a = wok::matmul(x, x);
    Tensor first = wok::matmul(a, x);
    // Independent: the second chain starts from y; dependent: from `first`.
    Tensor c = wok::matmul(independent ? y : first, y);
    outs = {first, wok::matmul(c, y)};
    pf = fragment_of(outs);
    g = std::make_unique<wok::jit::PlanGraph>(pf.fragment);
    plan = wok::jit::run_pipeline(*g, nullptr);
  }
  // The arena values, in step order.
  std::vector<int> arena_values() const {
    std::vector<int> vs;
    for (const wok::jit::PlanStep& st : plan->steps)
      for (int v : st.writes)
        if (plan->placement[v].where == wok::jit::Placement::Where::kArena) vs.push_back(v);
    return vs;
  }
};

TEST_F(JitPipeline, BuffersOnConcurrentLanesNeverShareBytes) {
  TwoChains p(/*independent=*/true);
  ASSERT_EQ(p.plan->steps.size(), 4u) << p.plan->str();
  ASSERT_GE(p.plan->lanes, 2) << p.plan->str();
  std::vector<int> arena = p.arena_values();
  ASSERT_EQ(arena.size(), 2u) << p.plan->str();
  EXPECT_NE(p.plan->placement[arena[0]].offset, p.plan->placement[arena[1]].offset) << p.plan->str();
  EXPECT_TRUE(wok::jit::verify_plan(*p.plan, *p.g, PlanLevel::kPlaced).ok());
  // The verifier knows the rule too: put them on the same bytes.
  p.plan->placement[arena[1]].offset = p.plan->placement[arena[0]].offset;
  absl::Status st = wok::jit::verify_plan(*p.plan, *p.g, PlanLevel::kPlaced);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("may be live at once"), std::string::npos) << st;
}

TEST_F(JitPipeline, BuffersOrderedByDependenciesStillShareBytes) {
  TwoChains p(/*independent=*/false);
  std::vector<int> arena = p.arena_values();
  ASSERT_EQ(arena.size(), 2u) << p.plan->str();
  // The second intermediate is written after the first's last read, on a
  // chain of dependencies: the same bytes serve both.
  EXPECT_EQ(p.plan->placement[arena[0]].offset, p.plan->placement[arena[1]].offset) << p.plan->str();
  EXPECT_TRUE(wok::jit::verify_plan(*p.plan, *p.g, PlanLevel::kPlaced).ok());
}

}  // namespace
