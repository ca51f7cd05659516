// The caching device allocator: every tensor buffer on a GPU comes from
// here. It mirrors the host allocator (runtime/host_allocator.h): freed
// blocks are kept by size class and handed out again instead of going back
// to the driver (cuMemAlloc and cuMemFree cost tens of microseconds and
// cuMemFree synchronizes the device), with the same MemoryStats.
//
// Note [Stream-ordered reuse]
// A block handed back may still be read by kernels in flight. wok keeps
// that from mattering with two rules: a fragment's run synchronizes its
// streams before any storage it used is released (its outputs, inputs and
// arena outlive the work), and a buffer that dies in the middle of a run
// (an intermediate of the precompiled executor, a reduction's scratch) is
// held by the run until that synchronization. So a block in the pool is
// idle on the device, and any stream may take it.
//
// Note [CUDA teardown]
// Allocators, stream and event pools, pinned staging buffers, loaded
// modules and the driver library are never destroyed: tensors held in
// static objects are freed after main returns, and the driver may already
// be shutting down then. The process exit releases device memory.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

#include "wok/runtime/host_allocator.h"  // MemoryStats

namespace wok::cuda {

class CudaAllocator {
 public:
  // Small blocks are rounded to this; the driver aligns to 256 bytes.
  static constexpr size_t kMinBlock = 512;
  // From 4 of these up, sizes round to whole steps (2 MiB, the driver's
  // own large-page granularity).
  static constexpr size_t kLargeStep = size_t{2} << 20;

  // The allocator of cuda:<device>; throws wok::DeviceError when the device
  // is absent (naming what is missing).
  static CudaAllocator& get(int device);

  // Never returns null: throws wok::DeviceError when the device is out of
  // memory even after giving the cache back.
  void* allocate(size_t bytes);
  // `bytes` must be what was passed to allocate().
  void deallocate(void* p, size_t bytes);

  MemoryStats stats() const;
  void reset_peak();
  void empty_cache();  // gives every cached block back to the driver

  // Classes of 4 steps per power of two (waste under 25%), whole 2 MiB
  // steps from 8 MiB up.
  static size_t size_class(size_t bytes);

  int device() const { return device_; }

 private:
  explicit CudaAllocator(int device) : device_(device) {}
  void empty_cache_locked();

  const int device_;
  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_blocks_;  // by size class
  MemoryStats stats_;
};

}  // namespace wok::cuda
