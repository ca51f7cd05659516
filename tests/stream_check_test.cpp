// WOK_CHECK_STREAMS: the vector-clock checker on its own, then plans whose
// events were removed on purpose (through the test-only plan edit hook),
// which the checker stops before the step that would race.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <string>

#include "test_util.h"
#include "wok/jit/plan_cache.h"
#include "wok/jit/plan_order_check.h"
#include "wok/runtime/cpu_features.h"
#include "wok/runtime/stream_order_check.h"

namespace {

using wok::BufferAccess;
using wok::StreamHazard;
using wok::StreamOrderChecker;
using wok::Tensor;

BufferAccess read(uint64_t buffer, int64_t begin, int64_t end) { return {buffer, begin, end, false}; }
BufferAccess write(uint64_t buffer, int64_t begin, int64_t end) { return {buffer, begin, end, true}; }

TEST(StreamOrderChecker, ReadOnAnotherStreamWithoutEventIsAHazard) {
  StreamOrderChecker c(2);
  BufferAccess w = write(7, 0, 64), r = read(7, 0, 64);
  EXPECT_FALSE(c.enqueue(0, 0, {&w, 1}));
  std::optional<StreamHazard> h = c.enqueue(1, 1, {&r, 1});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->kind, StreamHazard::Kind::kReadAfterWrite);
  EXPECT_EQ(h->step, 1);
  EXPECT_EQ(h->stream, 1);
  EXPECT_EQ(h->other_step, 0);
  EXPECT_EQ(h->other_stream, 0);
}

TEST(StreamOrderChecker, AnEventOrdersTheReadAfterTheWrite) {
  StreamOrderChecker c(2);
  BufferAccess w = write(7, 0, 64), r = read(7, 0, 64);
  EXPECT_FALSE(c.enqueue(0, 0, {&w, 1}));
  c.wait(1, c.record(0));
  EXPECT_FALSE(c.enqueue(1, 1, {&r, 1}));
}

TEST(StreamOrderChecker, AnEventRecordedBeforeTheWriteDoesNotOrderIt) {
  StreamOrderChecker c(2);
  BufferAccess w = write(7, 0, 64), r = read(7, 0, 64);
  const int early = c.record(0);
  EXPECT_FALSE(c.enqueue(0, 0, {&w, 1}));
  c.wait(1, early);
  EXPECT_TRUE(c.enqueue(1, 1, {&r, 1}));
}

TEST(StreamOrderChecker, OrderIsTransitiveThroughAThirdStream) {
  StreamOrderChecker c(3);
  BufferAccess w = write(1, 0, 64), r = read(1, 0, 64), other = write(2, 0, 8);
  EXPECT_FALSE(c.enqueue(0, 0, {&w, 1}));
  c.wait(1, c.record(0));
  EXPECT_FALSE(c.enqueue(1, 1, {&other, 1}));
  c.wait(2, c.record(1));
  EXPECT_FALSE(c.enqueue(2, 2, {&r, 1}));
}

TEST(StreamOrderChecker, OneStreamIsOrderedByItself) {
  StreamOrderChecker c(2);
  BufferAccess w = write(1, 0, 64), r = read(1, 0, 64);
  EXPECT_FALSE(c.enqueue(1, 0, {&w, 1}));
  EXPECT_FALSE(c.enqueue(1, 1, {&r, 1}));
  EXPECT_FALSE(c.enqueue(1, 2, {&w, 1}));
}

// The arena's hazard: bytes handed to a new value while another stream
// still reads the old one.
TEST(StreamOrderChecker, OverwritingBytesAnotherStreamStillReadsIsAHazard) {
  StreamOrderChecker c(2);
  BufferAccess w = write(3, 0, 128), r = read(3, 0, 128), reuse = write(3, 64, 96);
  EXPECT_FALSE(c.enqueue(0, 0, {&w, 1}));
  c.wait(1, c.record(0));
  EXPECT_FALSE(c.enqueue(1, 1, {&r, 1}));
  std::optional<StreamHazard> h = c.enqueue(0, 2, {&reuse, 1});  // partial overlap, no wait for stream 1
  ASSERT_TRUE(h);
  EXPECT_EQ(h->kind, StreamHazard::Kind::kWriteAfterRead);
  EXPECT_EQ(h->other_step, 1);
  EXPECT_EQ(h->other_stream, 1);
  // Waiting for the reader makes the same write safe.
  StreamOrderChecker ok(2);
  EXPECT_FALSE(ok.enqueue(0, 0, {&w, 1}));
  ok.wait(1, ok.record(0));
  EXPECT_FALSE(ok.enqueue(1, 1, {&r, 1}));
  ok.wait(0, ok.record(1));
  EXPECT_FALSE(ok.enqueue(0, 2, {&reuse, 1}));
}

TEST(StreamOrderChecker, TwoUnorderedWritesAreAHazard) {
  StreamOrderChecker c(2);
  BufferAccess a = write(3, 0, 64), b = write(3, 32, 128);
  EXPECT_FALSE(c.enqueue(0, 0, {&a, 1}));
  std::optional<StreamHazard> h = c.enqueue(1, 1, {&b, 1});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->kind, StreamHazard::Kind::kWriteAfterWrite);
}

TEST(StreamOrderChecker, DisjointBytesAndOtherBuffersDoNotConflict) {
  StreamOrderChecker c(2);
  BufferAccess a = write(3, 0, 64), b = write(3, 64, 128), d = write(4, 0, 64), r = read(3, 64, 128);
  EXPECT_FALSE(c.enqueue(0, 0, {&a, 1}));
  EXPECT_FALSE(c.enqueue(1, 1, {&b, 1}));
  EXPECT_FALSE(c.enqueue(1, 2, {&d, 1}));
  EXPECT_FALSE(c.enqueue(1, 3, {&r, 1}));
}

// ---- plans with an event removed on purpose ------------------------------------------

// Removes every dependency a step has on a step of another lane: the
// replay no longer waits for the event between them.
void drop_cross_lane_events(wok::jit::Plan& plan) {
  for (wok::jit::PlanStep& st : plan.steps)
    std::erase_if(st.deps, [&](int d) { return plan.steps[d].lane != st.lane; });
}

// Puts the first two arena values on the same bytes (the memory planner's
// rule for values that may be live at once, broken on purpose).
void share_first_arena_bytes(wok::jit::Plan& plan) {
  int first = -1;
  for (const wok::jit::PlanStep& st : plan.steps)
    for (int v : st.writes) {
      wok::jit::Placement& p = plan.placement[v];
      if (p.where != wok::jit::Placement::Where::kArena) continue;
      if (first < 0) first = v;
      else if (v != first) {
        p.offset = plan.placement[first].offset;
        return;
      }
    }
}

class StreamCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "no JIT under WOK_CPU_ISA=baseline";
    saved_backend_ = wok::backend();
    saved_check_ = wok::check_streams();
    wok::set_backend(wok::Backend::kJit);
    wok::jit::PlanCache::global().clear();  // plans built here carry the hook's edit
  }
  void TearDown() override {
    wok::jit::testing::set_plan_edit_hook(nullptr);
    wok::jit::PlanCache::global().clear();
    wok::set_check_streams(saved_check_);
    wok::set_backend(saved_backend_);
  }
  wok::Backend saved_backend_ = wok::Backend::kJit;
  bool saved_check_ = false;
};

// Two matmuls on two lanes, joined by a third product of the two. The
// line numbers of the calls are what the report names.
struct JoinedMatmuls {
  Tensor x = wok::rand({32, 32}, 21), y = wok::rand({32, 32}, 22);
  int line_right = 0, line_out = 0;
  Tensor out;
  JoinedMatmuls() {
    Tensor left = wok::call1("matmul", {x, x});
    line_right = __LINE__ + 1;
    Tensor right = wok::call1("matmul", {y, y});
    line_out = __LINE__ + 1;
    out = wok::call1("matmul", {left, right});
  }
  std::vector<float> expected() const {
    std::vector<float> xv = x.to_vector<float>(), yv = y.to_vector<float>();
    auto product = [](const std::vector<double>& a, const std::vector<double>& b) {
      std::vector<double> c(32 * 32, 0.0);
      for (int i = 0; i < 32; ++i)
        for (int k = 0; k < 32; ++k)
          for (int j = 0; j < 32; ++j) c[i * 32 + j] += a[i * 32 + k] * b[k * 32 + j];
      return c;
    };
    std::vector<double> xd(xv.begin(), xv.end()), yd(yv.begin(), yv.end());
    std::vector<double> e = product(product(xd, xd), product(yd, yd));
    return std::vector<float>(e.begin(), e.end());
  }
};

TEST_F(StreamCheck, CorrectPlansOnSeveralStreamsPass) {
  wok::set_check_streams(true);
  JoinedMatmuls p;
  std::vector<float> got = p.out.to_vector<float>(), want = p.expected();
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-3f * (1 + std::fabs(want[i]))) << i;
}

TEST_F(StreamCheck, AMissingEventIsReportedWithBothStepsAndTheirCallSites) {
  wok::set_check_streams(true);
  wok::jit::testing::set_plan_edit_hook(drop_cross_lane_events);
  JoinedMatmuls p;
  try {
    p.out.to_vector<float>();
    FAIL() << "the checker did not stop the run";
  } catch (const wok::CheckError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("WOK_CHECK_STREAMS"), std::string::npos) << msg;
    EXPECT_NE(msg.find("reads bytes written by"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no event orders the two"), std::string::npos) << msg;
    EXPECT_NE(msg.find("CPU stream"), std::string::npos) << msg;
    EXPECT_NE(msg.find("matmul"), std::string::npos) << msg;
    EXPECT_NE(msg.find("float32[32, 32]"), std::string::npos) << msg;
    // Both steps' call sites: the joining product reads the right one's
    // result, made on the other lane.
    const std::string reader = "recorded at stream_check_test.cpp:" + std::to_string(p.line_out) + "), on CPU stream";
    const std::string writer = "by step 1 (fused kernel 'matmul', recorded at stream_check_test.cpp:" +
                               std::to_string(p.line_right) + "), on CPU stream";
    EXPECT_NE(msg.find(reader), std::string::npos) << msg;
    EXPECT_NE(msg.find(writer), std::string::npos) << msg;
  }
}

TEST_F(StreamCheck, ArenaBytesSharedByConcurrentLanesAreReported) {
  wok::set_check_streams(true);
  wok::jit::testing::set_plan_edit_hook(share_first_arena_bytes);
  // Two chains of two products each: each chain's first product lives in
  // the arena while the other chain may run.
  Tensor x = wok::rand({32, 32}, 23), y = wok::rand({32, 32}, 24);
  Tensor first = wok::matmul(wok::matmul(x, x), x);
  Tensor second = wok::matmul(wok::matmul(y, y), y);
  try {
    wok::eval({first, second});
    FAIL() << "the checker did not stop the run";
  } catch (const wok::CheckError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("overwrites bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("the plan's arena"), std::string::npos) << msg;
  }
}

}  // namespace
