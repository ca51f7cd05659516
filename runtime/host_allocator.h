// The caching host allocator: every tensor buffer on the CPU comes from here.
//
// Page faults are the cost that matters on the machines wok targets (about
// 11 us per 4 KiB page), so freed blocks are kept by size class and handed
// out again instead of going back to the OS, and large blocks are backed by
// transparent huge pages. empty_cache() returns what is cached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace wok {

struct MemoryStats {
  int64_t current_bytes = 0;   // in live buffers (size-class rounded)
  int64_t peak_bytes = 0;      // highest current_bytes since the last reset_peak
  int64_t reserved_bytes = 0;  // taken from the OS: live + cached
  int64_t cached_bytes = 0;    // freed, kept for reuse
  int64_t allocations = 0;     // allocate() calls
  int64_t reuses = 0;          // of those, served from the cache
  int64_t os_allocations = 0;  // blocks taken from the OS
  int64_t os_frees = 0;        // blocks given back to the OS
};

class HostAllocator {
 public:
  static constexpr size_t kAlignment = 64;
  // Blocks this large are mapped on their own and advised to use huge pages.
  static constexpr size_t kLargeBlock = size_t{1} << 20;
  static constexpr size_t kHugePage = size_t{2} << 20;

  static HostAllocator& global();

  // 64-byte aligned; never returns null (throws std::bad_alloc).
  void* allocate(size_t bytes);
  // `bytes` must be what was passed to allocate().
  void deallocate(void* p, size_t bytes);

  MemoryStats stats() const;
  void reset_peak();
  void empty_cache();  // gives every cached block back to the OS

  // The size a request is rounded to: classes of 4 steps per power of two,
  // then whole huge pages from 8 MiB up. Waste stays under 25%.
  static size_t size_class(size_t bytes);

  ~HostAllocator();

 private:
  void* os_allocate(size_t size);
  void os_free(void* p, size_t size);
  void empty_cache_locked();

  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_blocks_;  // by size class
  MemoryStats stats_;
};

}  // namespace wok
