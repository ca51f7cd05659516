// A buffer of bytes on a device, shared by the tensors that read it and
// returned to its allocator when the last one lets go.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "wok/runtime/device.h"

namespace wok {

class Storage {
 public:
  // Allocates from the device's caching allocator. Throws wok::DeviceError
  // for a device that has no allocator in this build or on this machine.
  static std::shared_ptr<Storage> allocate(size_t bytes, Device device);

  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  Storage(void* data, size_t bytes, Device device) : data_(data), bytes_(bytes), device_(device) {}

  void* data_;
  size_t bytes_;
  Device device_;
};

using StoragePtr = std::shared_ptr<Storage>;

// A kernel's scratch buffer of `elements` T on the CPU, from the caching
// allocator: kernels reuse the same blocks call after call instead of
// touching fresh pages (each first touch is a page fault).
template <typename T>
class ScratchBuffer {
 public:
  explicit ScratchBuffer(int64_t elements)
      : storage_(Storage::allocate(static_cast<size_t>(elements > 0 ? elements : 1) * sizeof(T), Device::cpu())) {}
  T* get() const { return static_cast<T*>(storage_->data()); }

 private:
  StoragePtr storage_;
};

}  // namespace wok
