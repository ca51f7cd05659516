#include "wok/frontend/cuda_api.h"

#include "wok/runtime/cuda/cuda_allocator.h"
#include "wok/runtime/cuda/cuda_driver.h"
#include "wok/runtime/cuda/nvrtc_loader.h"

namespace wok {

MemoryStats cuda_memory_stats(int device) { return cuda::CudaAllocator::get(device).stats(); }
void cuda_reset_peak_memory(int device) { cuda::CudaAllocator::get(device).reset_peak(); }
void cuda_empty_cache(int device) { cuda::CudaAllocator::get(device).empty_cache(); }

void cuda_synchronize(int device) {
  cuda::set_device(device);
  cuda::check(cuda::driver().cuCtxSynchronize(), "cuCtxSynchronize");
}

bool nvrtc_available() { return cuda::nvrtc_available(); }

std::string nvrtc_version() {
  absl::StatusOr<const cuda::Nvrtc*> n = cuda::nvrtc();
  return n.ok() ? (*n)->version_str() : std::string();
}

std::string nvrtc_unavailable_reason() { return cuda::nvrtc_unavailable_reason(); }

}  // namespace wok
