#include "wok/runtime/cuda/cuda_allocator.h"

#include <algorithm>
#include <bit>
#include <memory>

#include "wok/runtime/cuda/cuda_driver.h"
#include "wok/runtime/error.h"

namespace wok::cuda {

CudaAllocator& CudaAllocator::get(int device) {
  require_device(device);
  static std::mutex mu;
  static auto* allocators = new std::vector<std::unique_ptr<CudaAllocator>>();  // leaked: Note [CUDA teardown]
  std::lock_guard lock(mu);
  if (allocators->size() <= static_cast<size_t>(device)) allocators->resize(device + 1);
  auto& a = (*allocators)[device];
  if (!a) a.reset(new CudaAllocator(device));
  return *a;
}

size_t CudaAllocator::size_class(size_t bytes) {
  if (bytes <= kMinBlock) return kMinBlock;
  if (bytes > 4 * kLargeStep) return (bytes + kLargeStep - 1) / kLargeStep * kLargeStep;
  size_t pow2 = std::bit_floor(bytes - 1);
  size_t step = std::max(pow2 / 4, kMinBlock);
  return (bytes + step - 1) / step * step;
}

void* CudaAllocator::allocate(size_t bytes) {
  const size_t size = size_class(bytes);
  std::unique_lock lock(mu_);
  ++stats_.allocations;
  auto it = free_blocks_.find(size);
  if (it != free_blocks_.end() && !it->second.empty()) {
    void* p = it->second.back();
    it->second.pop_back();
    ++stats_.reuses;
    stats_.cached_bytes -= static_cast<int64_t>(size);
    stats_.current_bytes += static_cast<int64_t>(size);
    stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.current_bytes);
    return p;
  }
  lock.unlock();
  set_device(device_);
  const DriverApi& d = driver();
  CUdeviceptr ptr = 0;
  CUresult r = d.cuMemAlloc(&ptr, size);
  if (r == kErrorOutOfMemory) {
    // Cached blocks of other sizes may be what stands in the way.
    empty_cache();
    r = d.cuMemAlloc(&ptr, size);
  }
  if (r != kSuccess) {
    MemoryStats s = stats();
    size_t free = 0, total = 0;
    d.cuMemGetInfo(&free, &total);
    throw DeviceError("cuda:" + std::to_string(device_) + ": cannot allocate " + std::to_string(bytes) +
                      " bytes (" + error_text(r) + "); wok holds " + std::to_string(s.current_bytes) +
                      " bytes in tensors, the device has " + std::to_string(free) + " of " + std::to_string(total) +
                      " bytes free");
  }
  lock.lock();
  ++stats_.os_allocations;
  stats_.reserved_bytes += static_cast<int64_t>(size);
  stats_.current_bytes += static_cast<int64_t>(size);
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.current_bytes);
  return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
}

void CudaAllocator::deallocate(void* p, size_t bytes) {
  if (!p) return;
  const size_t size = size_class(bytes);
  std::lock_guard lock(mu_);
  free_blocks_[size].push_back(p);
  stats_.current_bytes -= static_cast<int64_t>(size);
  stats_.cached_bytes += static_cast<int64_t>(size);
}

MemoryStats CudaAllocator::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void CudaAllocator::reset_peak() {
  std::lock_guard lock(mu_);
  stats_.peak_bytes = stats_.current_bytes;
}

void CudaAllocator::empty_cache() {
  std::lock_guard lock(mu_);
  empty_cache_locked();
}

void CudaAllocator::empty_cache_locked() {
  set_device(device_);
  const DriverApi& d = driver();
  for (auto& [size, blocks] : free_blocks_) {
    for (void* p : blocks) {
      d.cuMemFree(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)));
      ++stats_.os_frees;
      stats_.reserved_bytes -= static_cast<int64_t>(size);
      stats_.cached_bytes -= static_cast<int64_t>(size);
    }
    blocks.clear();
  }
}

}  // namespace wok::cuda
