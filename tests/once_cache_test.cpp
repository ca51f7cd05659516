// The compile-once cache behind the kernel, CUDA-kernel and plan caches
// (Note [Compile once per key] in jit/once_cache.h): racing callers wait for
// one build; a failed build, returned or thrown, reaches every waiter and is
// not kept.
#include <gtest/gtest.h>

#include <absl/status/statusor.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "wok/jit/once_cache.h"

namespace {

using wok::hash128;
using wok::jit::OnceCache;
using Result = absl::StatusOr<int>;

constexpr int kThreads = 8;

// Runs `call` on kThreads threads released together.
template <typename Call>
void race(Call call) {
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      call(t);
    });
  go = true;
  for (auto& th : threads) th.join();
}

TEST(OnceCache, RacingCallersShareOneBuild) {
  OnceCache<Result> cache;
  std::atomic<int> builds{0};
  std::vector<int> got(kThreads, 0);
  race([&](int t) {
    Result r = cache.get(hash128("k"), "k", [&]() -> Result {
      ++builds;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      return 42;
    });
    got[t] = r.ok() ? *r : -1;
  });
  EXPECT_EQ(builds.load(), 1);
  for (int v : got) EXPECT_EQ(v, 42);
  EXPECT_EQ(cache.size(), 1u);
  ASSERT_TRUE(cache.find(hash128("k"), "k").has_value());
}

TEST(OnceCache, AThrownBuildReachesEveryWaiterAndIsNotKept) {
  OnceCache<Result> cache;
  std::atomic<int> builds{0}, real_errors{0};
  race([&](int) {
    try {
      (void)cache.get(hash128("k"), "k", [&]() -> Result {
        ++builds;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        throw std::runtime_error("generator failed: no registers left");
      });
    } catch (const std::runtime_error& e) {
      if (std::string(e.what()) == "generator failed: no registers left") ++real_errors;
    } catch (...) {  // a broken promise, for example
    }
  });
  EXPECT_EQ(real_errors.load(), kThreads) << "every caller sees the generator's own error";
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_FALSE(cache.find(hash128("k"), "k").has_value());
  // Not kept: the next call builds again.
  Result again = cache.get(hash128("k"), "k", [&]() -> Result { return 7; });
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 7);
  EXPECT_EQ(builds.load(), 1);
}

TEST(OnceCache, AnErrorValueReachesEveryWaiterAndIsNotKept) {
  OnceCache<Result> cache;
  std::atomic<int> builds{0}, errors{0}, arrived{0};
  race([&](int) {
    ++arrived;
    Result r = cache.get(hash128("k"), "k", [&]() -> Result {
      ++builds;
      // An error is not kept, so a caller arriving after it was handed out
      // builds again: hold the build until every thread has come to the
      // cache (on a loaded 2-core machine a thread can start 50 ms late).
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (arrived.load() < kThreads && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      return absl::FailedPreconditionError("strict mode: compiling is off");
    });
    if (!r.ok() && r.status().message() == "strict mode: compiling is off") ++errors;
  });
  EXPECT_EQ(builds.load(), 1);
  EXPECT_EQ(errors.load(), kThreads);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_TRUE(cache.get(hash128("k"), "k", [] { return Result(1); }).ok());
  EXPECT_EQ(cache.size(), 1u);
}

TEST(OnceCache, AHashCollisionIsNotAHit) {
  OnceCache<Result> cache;
  const auto key = hash128("same key");
  EXPECT_EQ(*cache.get(key, "signature a", [] { return Result(1); }), 1);
  EXPECT_EQ(*cache.get(key, "signature b", [] { return Result(2); }), 2);
  EXPECT_EQ(*cache.get(key, "signature a", [] { return Result(3); }), 1);
  EXPECT_EQ(cache.size(), 2u);
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
