#include "wok/runtime/cuda/cuda_copy.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "wok/runtime/cuda/cuda_driver.h"
#include "wok/runtime/cuda/cuda_stream.h"
#include "wok/runtime/error.h"

namespace wok::cuda {

namespace {

CUdeviceptr dptr(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

// Two pinned chunks and a copy stream; one copy at a time per device.
struct Staging {
  explicit Staging(int device) : stream(device, -1), done{CudaEvent(device), CudaEvent(device)} {
    set_device(device);
    for (void*& c : chunk) check(driver().cuMemHostAlloc(&c, kStagingChunk, kMemHostAllocPortable), "cuMemHostAlloc");
  }
  std::mutex mu;
  CudaStream stream;
  void* chunk[2] = {};
  CudaEvent done[2];  // chunk i is free again once done[i] is reached
  bool busy[2] = {false, false};
};

Staging& staging(int device) {
  require_device(device);
  static std::mutex mu;
  static auto* all = new std::vector<std::unique_ptr<Staging>>();  // leaked: Note [CUDA teardown]
  std::lock_guard lock(mu);
  if (all->size() <= static_cast<size_t>(device)) all->resize(device + 1);
  auto& s = (*all)[device];
  if (!s) s = std::make_unique<Staging>(device);
  return *s;
}

}  // namespace

void copy_host_to_device(void* dst, const void* src, size_t bytes, int device) {
  if (bytes == 0) return;
  Staging& s = staging(device);
  std::lock_guard lock(s.mu);
  set_device(device);
  const DriverApi& d = driver();
  int k = 0;
  for (size_t off = 0; off < bytes; off += kStagingChunk, k ^= 1) {
    const size_t n = std::min(kStagingChunk, bytes - off);
    if (s.busy[k]) s.done[k].synchronize();  // its previous DMA has read it
    std::memcpy(s.chunk[k], static_cast<const char*>(src) + off, n);
    check(d.cuMemcpyHtoDAsync(dptr(static_cast<char*>(dst) + off), s.chunk[k], n, s.stream.handle()),
          "cuMemcpyHtoDAsync");
    s.done[k].record(s.stream);
    s.busy[k] = true;
  }
  s.stream.synchronize();
  s.busy[0] = s.busy[1] = false;
}

void copy_device_to_host(void* dst, const void* src, size_t bytes, int device) {
  if (bytes == 0) return;
  Staging& s = staging(device);
  std::lock_guard lock(s.mu);
  set_device(device);
  const DriverApi& d = driver();
  // Chunk c's DMA is issued before chunk c-1 is copied out of its buffer.
  size_t prev_off = 0, prev_n = 0;
  int k = 0;
  for (size_t off = 0; off < bytes; off += kStagingChunk, k ^= 1) {
    const size_t n = std::min(kStagingChunk, bytes - off);
    check(d.cuMemcpyDtoHAsync(s.chunk[k], dptr(static_cast<const char*>(src) + off), n, s.stream.handle()),
          "cuMemcpyDtoHAsync");
    s.done[k].record(s.stream);
    if (prev_n) {
      s.done[k ^ 1].synchronize();
      std::memcpy(static_cast<char*>(dst) + prev_off, s.chunk[k ^ 1], prev_n);
    }
    prev_off = off;
    prev_n = n;
  }
  s.done[k ^ 1].synchronize();
  std::memcpy(static_cast<char*>(dst) + prev_off, s.chunk[k ^ 1], prev_n);
}

void copy_device_to_device(void* dst, int dst_device, const void* src, int src_device, size_t bytes) {
  if (bytes == 0) return;
  // Unified addressing: cuMemcpyAsync finds both devices from the pointers.
  CudaStream& stream = CudaStreamPool::for_device(src_device).next();
  require_device(dst_device);
  set_device(src_device);
  check(driver().cuMemcpyAsync(dptr(dst), dptr(src), bytes, stream.handle()), "cuMemcpyAsync");
  stream.synchronize();
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) {
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    if (bytes) std::memcpy(dst, src, bytes);
  } else if (src_device.is_cpu()) {
    copy_host_to_device(dst, src, bytes, dst_device.index);
  } else if (dst_device.is_cpu()) {
    copy_device_to_host(dst, src, bytes, src_device.index);
  } else {
    copy_device_to_device(dst, dst_device.index, src, src_device.index, bytes);
  }
}

}  // namespace wok::cuda
