// The event stream: a known program's events arrive in order with the
// right fields; call sites; the listening mask; log lines.
#include <algorithm>

#include "observe_test_util.h"
#include "wok/jit/plan_cache.h"
#include "wok/runtime/observe/log.h"

namespace {

using wok::observe::EventKind;
using wok::observe::bit;

int index_of(const std::vector<wok::observe::Event>& ev, EventKind k, size_t from = 0) {
  for (size_t i = from; i < ev.size(); ++i)
    if (ev[i].kind == k) return static_cast<int>(i);
  return -1;
}

int count_of(const std::vector<wok::observe::Event>& ev, EventKind k) {
  return static_cast<int>(std::count_if(ev.begin(), ev.end(), [&](const wok::observe::Event& e) { return e.kind == k; }));
}

TEST(ObserveEvents, ListeningMaskFollowsSubscribers) {
  bool before = wok::observe::listening(EventKind::kShadow);  // WOK_LOG=all may hold it on
  {
    ot::Collector c(bit(EventKind::kShadow));
    EXPECT_TRUE(wok::observe::listening(EventKind::kShadow));
  }
  EXPECT_EQ(wok::observe::listening(EventKind::kShadow), before);
}

TEST(ObserveEvents, KnownProgramInOrder) {
  if (!ot::has_jit()) GTEST_SKIP() << "no JIT on this host";
  ot::JitNoDiskCache jit;
  wok::jit::PlanCache::global().clear();  // the plan is built here, not found
  const uint32_t me = wok::observe::thread_id();
  ot::Collector c;
  wok::Tensor x = wok::from_vector(std::vector<float>(13 * 29, 0.5f), {13, 29});
  const int line = __LINE__ + 1;
  wok::Tensor y = wok::call1("exp", {x});
  wok::Tensor z = wok::call1("mul", {y, x});
  std::vector<float> v = z.to_vector<float>();
  c.stop();
  ASSERT_EQ(v.size(), 13u * 29u);
  EXPECT_FLOAT_EQ(v[0], std::exp(0.5f) * 0.5f);

  std::vector<wok::observe::Event> ev = c.on_thread(me);
  // The two calls, with their sites, before anything runs.
  int op0 = index_of(ev, EventKind::kOpRecorded);
  ASSERT_GE(op0, 0);
  EXPECT_EQ(ev[op0].name, "exp");
  EXPECT_EQ(ev[op0].site.line(), static_cast<unsigned>(line));
  EXPECT_TRUE(std::string(ev[op0].site.file_name()).ends_with("observe_events_test.cpp"));
  int op1 = index_of(ev, EventKind::kOpRecorded, op0 + 1);
  ASSERT_GE(op1, 0);
  EXPECT_EQ(ev[op1].name, "mul");
  EXPECT_EQ(ev[op1].site.line(), static_cast<unsigned>(line + 1));
  EXPECT_GT(ev[op1].id, ev[op0].id);

  // evaluation begins (a data read) -> plan miss -> passes -> kernel lookup -> launch -> evaluation ends
  int begin = index_of(ev, EventKind::kEvalBegin, op1);
  ASSERT_GT(begin, op1);
  EXPECT_EQ(ev[begin].reason, static_cast<int>(wok::EvalReason::kDataRead));
  EXPECT_EQ(ev[begin].name, "jit");
  EXPECT_EQ(ev[begin].count, 2);
  int plan = index_of(ev, EventKind::kPlanCache, begin);
  ASSERT_GT(plan, begin);
  EXPECT_FALSE(ev[plan].hit);
  EXPECT_FALSE(ev[plan].detail.empty());
  std::vector<std::string> passes;
  int last = plan;
  for (int i = plan; i < static_cast<int>(ev.size()); ++i)
    if (ev[i].kind == EventKind::kPass) {
      passes.push_back(ev[i].name);
      last = i;
    }
  // One event per pipeline stage (jit/pipeline.h): graph passes, then plan stages.
  EXPECT_EQ(passes, (std::vector<std::string>{"common-subexpression elimination", "dead-code elimination",
                                              "constant folding", "elementwise fusion", "draft steps",
                                              "order steps", "assign lanes", "plan memory"}));
  int kc = index_of(ev, EventKind::kKernelCache, last);
  ASSERT_GT(kc, last);
  int launch_b = index_of(ev, EventKind::kLaunchBegin, kc);
  int launch_e = index_of(ev, EventKind::kLaunchEnd, kc);
  ASSERT_GT(launch_b, kc);
  ASSERT_GT(launch_e, launch_b);
  EXPECT_TRUE(ev[launch_e].name.starts_with("fused")) << ev[launch_e].name;
  EXPECT_EQ(ev[launch_e].detail, "exp+mul");
  EXPECT_EQ(ev[launch_e].bytes, 3 * 13 * 29 * 4);  // x read; y (held by the test) and z written
  EXPECT_EQ(ev[launch_e].count, 13 * 29);
  EXPECT_GE(ev[launch_e].dur_ns, 0);
  int end = index_of(ev, EventKind::kEvalEnd, launch_e);
  ASSERT_GT(end, launch_e);
  EXPECT_EQ(ev[end].id, ev[begin].id);
  EXPECT_GE(ev[end].dur_ns, ev[launch_e].dur_ns);
  // The compile (this kernel is new: no disk cache, fresh shape) sits between lookup and launch.
  int compile = index_of(ev, EventKind::kCompileEnd, plan);
  if (compile >= 0) {
    EXPECT_LT(compile, launch_b);
  }
  // Output buffer allocated before the launch.
  int alloc = index_of(ev, EventKind::kAlloc, begin);
  ASSERT_GE(alloc, 0);
  EXPECT_LT(alloc, launch_b);
  EXPECT_GE(ev[alloc].bytes, 13 * 29 * 4);
  // Timestamps never go backwards on one thread.
  for (size_t i = 1; i < ev.size(); ++i) EXPECT_GE(ev[i].t_ns, ev[i - 1].t_ns) << i;

  // The same program again: a plan hit, no passes, no compile.
  ot::Collector again;
  wok::Tensor x2 = wok::from_vector(std::vector<float>(13 * 29, 0.25f), {13, 29});
  wok::call1("mul", {wok::call1("exp", {x2}), x2}).to_vector<float>();
  again.stop();
  std::vector<wok::observe::Event> ev2 = again.on_thread(me);
  int plan2 = index_of(ev2, EventKind::kPlanCache);
  ASSERT_GE(plan2, 0);
  EXPECT_TRUE(ev2[plan2].hit);
  EXPECT_EQ(count_of(ev2, EventKind::kPass), 0);
  EXPECT_EQ(count_of(ev2, EventKind::kCompileEnd), 0);
  EXPECT_EQ(count_of(ev2, EventKind::kLaunchEnd), 1);
}

TEST(ObserveEvents, EvalReasonsAndPrecompiledLaunches) {
  wok::Backend saved = wok::backend();
  wok::set_backend(wok::Backend::kPrecompiled);
  const uint32_t me = wok::observe::thread_id();
  ot::Collector c(bit(EventKind::kEvalEnd) | bit(EventKind::kLaunchEnd));
  wok::Tensor x = wok::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  wok::Tensor y = wok::call1("neg", {x});
  wok::eval({y});
  c.stop();
  wok::set_backend(saved);
  std::vector<wok::observe::Event> ev = c.on_thread(me);
  ASSERT_EQ(count_of(ev, EventKind::kEvalEnd), 1);
  const wok::observe::Event& e = ev[index_of(ev, EventKind::kEvalEnd)];
  EXPECT_EQ(e.reason, static_cast<int>(wok::EvalReason::kEvalCall));
  EXPECT_EQ(e.name, "precompiled");
  int l = index_of(ev, EventKind::kLaunchEnd);
  ASSERT_GE(l, 0);
  EXPECT_EQ(ev[l].name, "neg (precompiled)");
  EXPECT_EQ(ev[l].bytes, 32);
}

TEST(ObserveEvents, CallSiteScopeLabelsNamedOps) {
  ot::Collector c(bit(EventKind::kOpRecorded));
  const uint32_t me = wok::observe::thread_id();
  wok::Tensor x = wok::from_vector(std::vector<float>{1, 2}, {2});
  int line;
  {
    line = __LINE__ + 1;
    wok::CallSiteScope here;
    wok::Tensor y = wok::exp(x) * 2.0f;  // named function and operator: the scope's site
  }
  wok::Tensor z = wok::exp(x);  // no scope: no site
  c.stop();
  std::vector<wok::observe::Event> ev = c.on_thread(me);
  ASSERT_GE(ev.size(), 3u);
  for (size_t i = 0; i + 1 < ev.size(); ++i) {
    EXPECT_EQ(ev[i].site.line(), static_cast<unsigned>(line)) << ev[i].name;
    EXPECT_FALSE(wok::observe::site_str(ev[i].site).empty());
  }
  EXPECT_EQ(ev.back().name, "exp");
  EXPECT_EQ(ev.back().site.line(), 0u);
  EXPECT_EQ(wok::observe::site_str(ev.back().site), "");
}

// With no scope open, the named functions and the operators capture where
// the user's code called them: a return address that reads back as this
// test's function. The ops softmax records inside carry the same address.
TEST(ObserveEvents, NamedOpsCaptureTheCallersAddress) {
  ot::Collector c(bit(EventKind::kOpRecorded));
  const uint32_t me = wok::observe::thread_id();
  wok::Tensor x = wok::from_vector(std::vector<float>{1, 2}, {2});
  wok::Tensor y = wok::softmax(wok::exp(x) * 2.0f);
  c.stop();
  std::vector<wok::observe::Event> ev = c.on_thread(me);
  ASSERT_GE(ev.size(), 4u);
  const std::string first = wok::observe::site_str(ev[0].site, ev[0].caller);
  if (first.starts_with("0x")) GTEST_SKIP() << "no symbolizer here (addr2line missing): " << first;
  for (const wok::observe::Event& e : ev) {
    ASSERT_NE(e.caller, nullptr) << e.name;
    const std::string where = wok::observe::site_str(e.site, e.caller);
    EXPECT_NE(where.find("NamedOpsCaptureTheCallersAddress"), std::string::npos) << e.name << " at " << where;
  }
  EXPECT_EQ(ev.front().name, "exp");
  // exp, full (the 2.0f), mul, then softmax's own ops: one call, one address.
  EXPECT_EQ(ev.back().caller, ev[ev.size() - 2].caller) << "softmax's ops share its call";
  EXPECT_NE(ev.back().caller, ev.front().caller);
}

TEST(ObserveEvents, LogLinesAndTopics) {
  wok::observe::Event e;
  e.kind = EventKind::kPlanCache;
  e.name = "exp,mul (2 nodes) #12345678";
  e.detail = "dtype of input 0 changed: float32 -> float64";
  EXPECT_EQ(wok::observe::format_log_line(e),
            "wok cache: plan miss exp,mul (2 nodes) #12345678: dtype of input 0 changed: float32 -> float64");
  e.kind = EventKind::kCacheLog;
  e.detail = "hit abc (exp)";
  EXPECT_EQ(wok::observe::format_log_line(e), "wok cache: hit abc (exp)");  // the persistent cache's wording
  e = {};
  e.kind = EventKind::kEvalEnd;
  e.id = 7;
  e.count = 3;
  e.reason = static_cast<int>(wok::EvalReason::kNodeLimit);
  e.name = "jit";
  e.dur_ns = 1500000;
  EXPECT_EQ(wok::observe::format_log_line(e), "wok eval: #7 3 nodes, node limit, on jit, 1.500 ms");
  using wok::observe::log_topic_mask;
  EXPECT_TRUE(log_topic_mask("compile") & bit(EventKind::kCompileEnd));
  EXPECT_TRUE(log_topic_mask("cache") & bit(EventKind::kCacheLog));
  EXPECT_TRUE(log_topic_mask("cache") & bit(EventKind::kPlanCache));
  EXPECT_TRUE(log_topic_mask("eval") & bit(EventKind::kEvalEnd));
  EXPECT_FALSE(log_topic_mask("eval") & bit(EventKind::kOpRecorded));
  EXPECT_EQ(log_topic_mask("nonsense"), 0u);
}

}  // namespace
