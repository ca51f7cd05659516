#include "wok/runtime/storage.h"

#include "wok/runtime/cuda/cuda_allocator.h"
#include "wok/runtime/error.h"
#include "wok/runtime/host_allocator.h"

namespace wok {

std::shared_ptr<Storage> Storage::allocate(size_t bytes, Device device) {
  // The CUDA allocator throws DeviceError naming what is missing (driver,
  // device) where it cannot be used.
  void* p = device.is_cuda() ? cuda::CudaAllocator::get(device.index).allocate(bytes)
                             : HostAllocator::global().allocate(bytes);
  return std::shared_ptr<Storage>(new Storage(p, bytes, device));
}

Storage::~Storage() {
  if (device_.is_cpu()) HostAllocator::global().deallocate(data_, bytes_);
  else cuda::CudaAllocator::get(device_.index).deallocate(data_, bytes_);
}

}  // namespace wok
