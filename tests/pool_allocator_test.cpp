// The graph's block pool (runtime/pool_allocator.h): threads that record
// and evaluate and then exit hand their cached blocks on, so a program that
// starts a thread per request does not grow (Note [Pool blocks outlive
// their thread]).
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <thread>
#include <vector>

#include "wok/runtime/pool_allocator.h"

namespace {

using wok::Tensor;

// Records and evaluates a chain of `ops` elementwise ops on this thread,
// then drops every tensor: its nodes and tensor impls are freed here.
void run_request(int ops) {
  Tensor x = wok::ones({16});
  for (int i = 0; i < ops; ++i) x = x * 1.0001f + 0.0001f;
  x.to_vector<float>();
}

int64_t system_blocks() { return wok::detail::g_pool_system_blocks.load(); }

TEST(PoolAllocator, ThreadsThatComeAndGoReuseTheirBlocks) {
  constexpr int kOps = 1500;
  std::thread([] { run_request(kOps); }).join();  // warm: caches, pools
  const int64_t after_one = system_blocks();
  std::thread([] { run_request(kOps); }).join();
  const int64_t per_thread = system_blocks() - after_one;  // what one thread would leave behind without the depot
  for (int t = 0; t < 20; ++t) std::thread([] { run_request(kOps); }).join();
  const int64_t growth = system_blocks() - after_one;
  // Each request allocates thousands of blocks; the threads after the first
  // take them from the depot, so 21 more threads add (almost) nothing.
  EXPECT_LT(growth, 200) << "blocks per request thread: " << per_thread;
}

TEST(PoolAllocator, BlocksFreedOnAnotherThreadAreReused) {
  std::vector<Tensor> made;
  std::thread([&] {
    Tensor x = wok::ones({8});
    for (int i = 0; i < 500; ++i) made.push_back(x * static_cast<float>(i));
  }).join();
  const int64_t before = system_blocks();
  made.clear();  // freed here, on the main thread
  for (int round = 0; round < 5; ++round) {
    std::vector<Tensor> again;
    Tensor x = wok::ones({8});
    for (int i = 0; i < 500; ++i) again.push_back(x * static_cast<float>(i));
  }
  EXPECT_LT(system_blocks() - before, 100);
}

}  // namespace
