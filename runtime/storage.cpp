#include "wok/runtime/storage.h"

#include "wok/runtime/error.h"
#include "wok/runtime/host_allocator.h"

namespace wok {

std::shared_ptr<Storage> Storage::allocate(size_t bytes, Device device) {
  if (!device.is_cpu())
    throw DeviceError("cannot allocate on " + device.str() + ": no allocator for this device in this build");
  void* p = HostAllocator::global().allocate(bytes);
  return std::shared_ptr<Storage>(new Storage(p, bytes, device));
}

Storage::~Storage() {
  if (device_.is_cpu()) HostAllocator::global().deallocate(data_, bytes_);
}

}  // namespace wok
