// Eight threads tracing and evaluating the same and different programs at
// once: results stay right, and a signature they race on compiles once.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <atomic>
#include <barrier>
#include <cmath>
#include <thread>

#include "wok/jit/kernel_cache.h"
#include "wok/jit/plan_cache.h"
#include "wok/runtime/cpu_features.h"

namespace {

constexpr int kThreads = 8;

class JitConcurrency : public ::testing::Test {
 protected:
  void SetUp() override {
    if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
    wok::set_backend(wok::Backend::kJit);
  }
};

TEST_F(JitConcurrency, SameAndDifferentProgramsFromEightThreads) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &wrong] {
      for (int it = 0; it < 40; ++it) {
        int64_t n = 1000 + 37 * it;
        wok::Tensor a = wok::rand({n}, static_cast<uint64_t>(t * 1000 + it));
        // Even threads share one program; odd threads each have their own
        // (a different constant count makes a different kernel).
        wok::Tensor y = (t % 2 == 0) ? wok::tanh(a * 2.0f + 1.0f) * a : wok::exp(a * static_cast<float>(t)) - a;
        for (int k = 0; k < t % 3; ++k) y = y + a;  // odd threads: distinct shapes of program
        std::vector<float> av = a.to_vector<float>();
        std::vector<float> yv = y.to_vector<float>();
        for (int64_t i = 0; i < n; i += 97) {
          double want = (t % 2 == 0) ? std::tanh(av[i] * 2.0 + 1.0) * av[i] : std::exp(av[i] * double(t)) - av[i];
          want += (t % 3) * av[i];
          if (std::abs(yv[i] - want) > 1e-4 * (1 + std::abs(want))) wrong.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(JitConcurrency, RacingThreadsCompileASignatureOnce) {
  // A program started by all threads at the same moment, on empty caches.
  wok::jit::PlanCache::global().clear();
  wok::jit::KernelCache::global().clear();
  wok::reset_stats();
  std::barrier start(kThreads);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      wok::Tensor a = wok::from_vector(std::vector<double>(513, 0.25 + t));
      start.arrive_and_wait();
      wok::Tensor y = wok::erf(wok::cos(a) * 3.0 + wok::sin(a)) - wok::sqrt(a);
      double got = y.to_vector<double>()[512];
      double x = 0.25 + t;
      if (std::abs(got - (std::erf(std::cos(x) * 3.0 + std::sin(x)) - std::sqrt(x))) > 1e-12) wrong.fetch_add(1);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(wok::stats().kernels_compiled, 1) << "racing threads wait for one compile";
  EXPECT_EQ(wok::stats().cache_misses, 1);
}

TEST_F(JitConcurrency, ThreadsReadingOneSharedPendingTensor) {
  wok::Tensor a = wok::rand({1 << 16}, 42);
  wok::Tensor shared = wok::exp(a) * 0.5f;  // pending; every thread reads it
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      std::vector<float> v = (shared + 1.0f).to_vector<float>();
      if (std::abs(v[100] - (std::exp(a.to_vector<float>()[100]) * 0.5f + 1.0f)) > 1e-5f) wrong.fetch_add(1);
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
