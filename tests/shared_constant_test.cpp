// Note [Shared scalar constants] (frontend/dispatch.cpp): a plain number is
// one pending constant per thread, shared by the ops that read it, and it
// stays a launch parameter of every fragment that reads it.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <thread>

#include "test_util.h"

namespace {

using wok::Tensor;

TEST(SharedConstants, ANumberUsedTwiceIsOneNode) {
  Tensor x = wok::from_vector(std::vector<float>{1, 2, 3}, {3});
  const int64_t before = wok::live_node_count();
  Tensor y = (x * 2.0f) * 2.0f;  // one constant, two muls
  EXPECT_EQ(wok::live_node_count() - before, 3);
  Tensor z = y + 2.0;  // another dtype of the number: float64 meets float32, stays float32
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{6, 10, 14}));
  // -0.0 and +0.0 are different constants.
  Tensor n = wok::from_vector(std::vector<float>{1}, {1});
  EXPECT_TRUE(std::signbit((n * -0.0f).to_vector<float>()[0]));
  EXPECT_FALSE(std::signbit((n * 0.0f).to_vector<float>()[0]));
}

TEST(SharedConstants, ReadersInSeparateEvaluationsEachComputeIt) {
  for (wok::Backend backend : {wok::Backend::kJit, wok::Backend::kPrecompiled}) {
    if (backend == wok::Backend::kJit && wok::host_cpu_isa() == wok::CpuIsa::kBaseline) continue;
    wok::set_backend(backend);
    Tensor x = wok::from_vector(std::vector<float>{1, 2, 3}, {3});
    Tensor y = wok::from_vector(std::vector<float>{4, 5, 6}, {3});
    Tensor a = x * 3.5f, b = y * 3.5f;  // one constant read by two graphs
    wok::reset_stats();
    EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{3.5f, 7, 10.5f}));
    // The constant was not written by a's evaluation: b's fragment computes
    // it again, as the same program (a parameter, not an input buffer).
    EXPECT_FALSE(b.is_ready());
    EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{14, 17.5f, 21}));
    if (backend == wok::Backend::kJit) {
      EXPECT_EQ(wok::stats().plan_cache_hits, 1);
    }
  }
  wok::set_backend(wok::Backend::kJit);
}

TEST(SharedConstants, OtherThreadsReadTheConstantsOfThisOne) {
  Tensor x = wok::from_vector(std::vector<float>{1, 2}, {2});
  Tensor a = x * 1.25f;
  Tensor b = x + 1.25f;  // the same constant as a's
  std::vector<float> got;
  std::thread t([&] { got = b.to_vector<float>(); });
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1.25f, 2.5f}));
  t.join();
  EXPECT_EQ(got, (std::vector<float>{2.25f, 3.25f}));
}

}  // namespace
