// A per-thread free list of fixed-size blocks, as an allocator for
// std::allocate_shared: the graph's nodes and pending tensors are made and
// freed by the thousand on the dispatch path (a traced loop records and
// evaluates a whole graph each iteration), and freeing a graph at once
// overflows malloc's small per-thread caches into its slow paths.
//
// Each thread keeps up to kMaxCachedBlocks freed blocks per block size and
// reuses them for its next allocations; a block freed on another thread
// (an asynchronous evaluation) joins that thread's list. The lists are
// plain thread-local pointers, never destroyed, so freeing during static
// destruction is safe; what a thread caches when it exits stays allocated
// (at most kMaxCachedBlocks blocks per size).
#pragma once

#include <cstddef>
#include <new>

namespace wok {

namespace detail {

inline constexpr size_t kMaxCachedBlocks = 4096;

template <size_t Size, size_t Align>
class BlockFreeList {
  struct Block {
    Block* next;
  };
  static_assert(Size >= sizeof(Block) && Align >= alignof(Block));

 public:
  static void* get() {
    if (Block* b = head_) {
      head_ = b->next;
      --count_;
      return b;
    }
    return ::operator new(Size, std::align_val_t(Align));
  }
  static void put(void* p) noexcept {
    if (count_ >= kMaxCachedBlocks) {
      ::operator delete(p, std::align_val_t(Align));
      return;
    }
    Block* b = static_cast<Block*>(p);
    b->next = head_;
    head_ = b;
    ++count_;
  }

 private:
  static inline thread_local Block* head_ = nullptr;
  static inline thread_local size_t count_ = 0;
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
