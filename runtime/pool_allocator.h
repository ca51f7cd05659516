// A per-thread free list of fixed-size blocks, as an allocator for
// std::allocate_shared: the graph's nodes and pending tensors are made and
// freed by the thousand on the dispatch path (a traced loop records and
// evaluates a whole graph each iteration), and freeing a graph at once
// overflows malloc's small per-thread caches into its slow paths.
//
// Note [Pool blocks outlive their thread]
// Each thread keeps up to kMaxCachedBlocks freed blocks per block size and
// reuses them for its next allocations; a block freed on another thread
// (an asynchronous evaluation) joins that thread's list. When a thread
// exits, its list moves to a shared depot (one per block size, bounded),
// from which a thread whose own list is empty takes a batch before asking
// the system for memory: a server that starts a thread per request reuses
// the same blocks instead of growing without bound. The thread-local list
// heads are plain pointers, never destroyed, and the depot is never
// destroyed either, so freeing during static destruction (or after the
// thread's exit hook ran) is safe: such blocks go to the depot.
//
// Under AddressSanitizer a cached block is poisoned past its link word, so a
// use after free of a node or tensor is reported even though the memory is
// not given back. The link stays readable: LeakSanitizer ignores pointers
// found in poisoned memory, and would take every block behind the first of
// a list for a leak.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

#include "wok/runtime/sanitizers.h"

namespace wok {

namespace detail {

inline constexpr size_t kMaxCachedBlocks = 4096;
// The depot keeps at most this many blocks per size; beyond, frees go to
// the system.
inline constexpr size_t kMaxDepotBlocks = 4 * kMaxCachedBlocks;
// A thread whose list is empty takes this many from the depot at once.
inline constexpr size_t kDepotBatch = 256;

// Blocks of every size obtained from the system and not yet given back;
// tests read it to show that threads that come and go reuse blocks.
inline std::atomic<int64_t> g_pool_system_blocks{0};

template <size_t Size, size_t Align>
class BlockFreeList {
  struct Block {
    Block* next;
  };
  static_assert(Size >= sizeof(Block) && Align >= alignof(Block));

  struct Depot {
    std::mutex mu;
    std::vector<void*> blocks;
  };
  static Depot& depot() {
    static Depot* d = new Depot();  // never destroyed: see the Note above
    return *d;
  }

  // Moves this thread's list to the depot when the thread exits.
  struct ExitHook {
    bool armed = false;
    ~ExitHook() {
      exited_ = true;
      Depot& d = depot();
      std::lock_guard lock(d.mu);
      while (Block* b = pop_local()) push_depot_locked(d, b);
    }
  };

 public:
  static void* get() {
    if (void* b = pop_local()) return b;
    if (refill_from_depot())
      if (void* b = pop_local()) return b;
    g_pool_system_blocks.fetch_add(1, std::memory_order_relaxed);
    return ::operator new(Size, std::align_val_t(Align));
  }

  static void put(void* p) noexcept {
    if (exited_ || count_ >= kMaxCachedBlocks) {
      Depot& d = depot();
      std::lock_guard lock(d.mu);
      push_depot_locked(d, p);
      return;
    }
    if (count_ == 0) arm_exit_hook();
    Block* b = static_cast<Block*>(p);
    b->next = head_;
    poison_cached(b);
    head_ = b;
    ++count_;
  }

 private:
  // Touching the hook registers its destructor for this thread; done when
  // the list goes from empty to not, so the hot path pays nothing.
  static void arm_exit_hook() noexcept {
    if (!exit_hook_.armed) exit_hook_.armed = true;
  }

  static void poison_cached(void* b) noexcept {
    asan_poison(static_cast<char*>(b) + sizeof(Block), Size - sizeof(Block));
  }

  static Block* pop_local() noexcept {
    Block* b = head_;
    if (!b) return nullptr;
    asan_unpoison(b, Size);
    head_ = b->next;
    --count_;
    return b;
  }

  static bool refill_from_depot() {
    Depot& d = depot();
    std::lock_guard lock(d.mu);
    if (d.blocks.empty()) return false;
    arm_exit_hook();
    size_t take = std::min(kDepotBatch, d.blocks.size());
    for (size_t i = 0; i < take; ++i) {
      Block* b = static_cast<Block*>(d.blocks.back());
      d.blocks.pop_back();
      asan_unpoison(b, Size);
      b->next = head_;
      poison_cached(b);
      head_ = b;
      ++count_;
    }
    return true;
  }

  static void push_depot_locked(Depot& d, void* p) noexcept {
    if (d.blocks.size() >= kMaxDepotBlocks) {
      g_pool_system_blocks.fetch_sub(1, std::memory_order_relaxed);
      asan_unpoison(p, Size);
      ::operator delete(p, std::align_val_t(Align));
      return;
    }
    try {
      d.blocks.push_back(p);
      poison_cached(p);
    } catch (...) {  // no memory for the depot's vector: give the block back
      g_pool_system_blocks.fetch_sub(1, std::memory_order_relaxed);
      asan_unpoison(p, Size);
      ::operator delete(p, std::align_val_t(Align));
    }
  }

  static inline thread_local Block* head_ = nullptr;
  static inline thread_local size_t count_ = 0;
  static inline thread_local bool exited_ = false;
  static inline thread_local ExitHook exit_hook_;
};

}  // namespace detail

template <typename T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    if (n != 1) return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(alignof(T))));
    return static_cast<T*>(detail::BlockFreeList<sizeof(T), alignof(T)>::get());
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n != 1) {
      ::operator delete(p, std::align_val_t(alignof(T)));
      return;
    }
    detail::BlockFreeList<sizeof(T), alignof(T)>::put(p);
  }
  template <typename U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace wok
