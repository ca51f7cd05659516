// Reports and recompile reasons: a program whose dtype (then shape) changes
// is rebuilt for the right reason, and the report says so.
#include "observe_test_util.h"
#include "wok/jit/plan_cache.h"

namespace {

using wok::EventKind;
using wok::observe::bit;

// A program no other test traces: the reasons are about this test alone.
template <typename T>
wok::Tensor program(const std::vector<T>& values, wok::Shape shape) {
  wok::Tensor x = wok::from_vector(values, shape);
  wok::Tensor y = wok::cos(wok::square(x) - x) * 0.25;
  return wok::maximum(wok::rsqrt(wok::abs(y) + 1.0), x);
}

std::vector<std::string> plan_misses(ot::Collector& c) {
  std::vector<std::string> out;
  for (const wok::observe::Event& e : c.events())
    if (e.kind == EventKind::kPlanCache && !e.hit) out.push_back(e.detail);
  return out;
}

TEST(ObserveReport, RecompileReasons) {
  if (!ot::has_jit()) GTEST_SKIP() << "no JIT on this host";
  ot::JitNoDiskCache jit;
  wok::jit::PlanCache::global().clear();
  wok::reset_report();
  wok::collect_report(true);
  ot::Collector c(bit(EventKind::kPlanCache));
  program(std::vector<float>(6, 0.5f), {2, 3}).to_vector<float>();
  program(std::vector<float>(6, 0.75f), {2, 3}).to_vector<float>();   // same signature: a hit
  program(std::vector<double>(6, 0.5), {2, 3}).to_vector<double>();   // dtype changed
  program(std::vector<double>(12, 0.5), {4, 3}).to_vector<double>();  // shape changed
  c.stop();
  std::vector<std::string> misses = plan_misses(c);
  ASSERT_EQ(misses.size(), 3u);
  // Run again in one process (--gtest_repeat), the program is known: its
  // last trace was the float64 [4, 3] one.
  static int runs = 0;
  EXPECT_EQ(misses[0], runs++ == 0 ? "first trace of this program" : "dtype of input 0 changed: float64 -> float32");
  EXPECT_EQ(misses[1], "dtype of input 0 changed: float32 -> float64");
  EXPECT_EQ(misses[2], "shape of input 0 changed: [2, 3] -> [4, 3]");

  std::string report = wok::report_string();
  wok::collect_report(false);
  EXPECT_NE(report.find("evaluations by trigger"), std::string::npos) << report;
  EXPECT_NE(report.find("peak memory"), std::string::npos);
  EXPECT_NE(report.find("kernels (by total time)"), std::string::npos);
  // The program, built three times, with each reason once.
  EXPECT_NE(report.find("x square,sub,cos,mul,abs,..."), std::string::npos) << report;
  EXPECT_NE(report.find("1x dtype of input 0 changed: float32 -> float64"), std::string::npos) << report;
  EXPECT_NE(report.find("1x shape of input 0 changed: [2, 3] -> [4, 3]"), std::string::npos) << report;
  EXPECT_NE(report.find("fused_"), std::string::npos) << "per-kernel rows";
}

TEST(ObserveReport, WithoutCollectionStillShowsCounters) {
  wok::collect_report(false);
  wok::reset_report();
  std::string report = wok::report_string();
  EXPECT_NE(report.find("evaluations by trigger"), std::string::npos);
  EXPECT_NE(report.find("WOK_REPORT=1"), std::string::npos) << report;
}

}  // namespace
