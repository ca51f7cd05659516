#include "wok/runtime/host_allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <new>

#include "wok/runtime/observe/events.h"
#include "wok/runtime/sanitizers.h"

namespace wok {

HostAllocator& HostAllocator::global() {
  // Never destroyed: tensors held in static objects may be freed after main
  // returns, and their blocks must still have somewhere to go.
  static HostAllocator* instance = new HostAllocator();
  return *instance;
}

HostAllocator::~HostAllocator() { empty_cache(); }

size_t HostAllocator::size_class(size_t bytes) {
  if (bytes <= kAlignment) return kAlignment;
  // From 4 huge pages up, whole huge pages waste less than a quarter.
  if (bytes > 4 * kHugePage) return (bytes + kHugePage - 1) / kHugePage * kHugePage;
  size_t pow2 = std::bit_floor(bytes - 1);  // largest power of two below bytes
  size_t step = std::max(pow2 / 4, kAlignment);
  return (bytes + step - 1) / step * step;
}

void* HostAllocator::os_allocate(size_t size) {
  if (size < kLargeBlock) {
    void* p = std::aligned_alloc(kAlignment, size);
    if (!p) throw std::bad_alloc();
    return p;
  }
  // Over-map by one huge page so the block can start on a huge-page
  // boundary, then trim the ends; the kernel can then back it with 2 MiB
  // pages from the first fault.
  size_t span = size + kHugePage;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = (begin + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
  if (aligned > begin) munmap(raw, aligned - begin);
  uintptr_t end = begin + span;
  if (end > aligned + size) munmap(reinterpret_cast<void*>(aligned + size), end - (aligned + size));
  madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(aligned);
}

void HostAllocator::os_free(void* p, size_t size) {
  // Poison left on unmapped pages would fault whoever maps them next.
  asan_unpoison(p, size);
  if (size < kLargeBlock) std::free(p);
  else munmap(p, size);
}

namespace {
// An allocation or free event with the live total; emitted after `lock`
// (held on entry) is released, so a listener may allocate.
void emit_memory_event(observe::EventKind kind, size_t size, int64_t live, std::unique_lock<std::mutex>& lock) {
  observe::Event e;
  e.kind = kind;
  e.bytes = static_cast<int64_t>(size);
  e.live_bytes = live;
  lock.unlock();
  observe::emit(std::move(e));
}
}  // namespace

void* HostAllocator::allocate(size_t bytes) {
  size_t size = size_class(bytes);
  std::unique_lock lock(mu_);
  ++stats_.allocations;
  void* p = nullptr;
  auto it = free_blocks_.find(size);
  if (it != free_blocks_.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
    ++stats_.reuses;
    stats_.cached_bytes -= static_cast<int64_t>(size);
  } else {
    lock.unlock();
    try {
      p = os_allocate(size);
    } catch (const std::bad_alloc&) {
      // Cached blocks of other sizes may be what stands in the way.
      empty_cache();
      p = os_allocate(size);
    }
    lock.lock();
    ++stats_.os_allocations;
    stats_.reserved_bytes += static_cast<int64_t>(size);
  }
  stats_.current_bytes += static_cast<int64_t>(size);
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.current_bytes);
  // Under ASan the caller gets exactly what it asked for: the size class's
  // slack stays poisoned, so an overrun inside it is reported.
  asan_unpoison(p, bytes);
  asan_poison(static_cast<char*>(p) + bytes, size - bytes);
  if (WOK_OBSERVING(observe::EventKind::kAlloc))
    emit_memory_event(observe::EventKind::kAlloc, size, stats_.current_bytes, lock);
  return p;
}

void HostAllocator::deallocate(void* p, size_t bytes) {
  if (!p) return;
  size_t size = size_class(bytes);
  asan_poison(p, size);  // a use after free of a cached block is reported
  std::unique_lock lock(mu_);
  free_blocks_[size].push_back(p);
  stats_.current_bytes -= static_cast<int64_t>(size);
  stats_.cached_bytes += static_cast<int64_t>(size);
  if (WOK_OBSERVING(observe::EventKind::kFree))
    emit_memory_event(observe::EventKind::kFree, size, stats_.current_bytes, lock);
}

MemoryStats HostAllocator::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void HostAllocator::reset_peak() {
  std::lock_guard lock(mu_);
  stats_.peak_bytes = stats_.current_bytes;
}

void HostAllocator::empty_cache() {
  std::lock_guard lock(mu_);
  empty_cache_locked();
}

void HostAllocator::empty_cache_locked() {
  for (auto& [size, blocks] : free_blocks_) {
    for (void* p : blocks) {
      os_free(p, size);
      ++stats_.os_frees;
      stats_.reserved_bytes -= static_cast<int64_t>(size);
      stats_.cached_bytes -= static_cast<int64_t>(size);
    }
    blocks.clear();
  }
}

}  // namespace wok
