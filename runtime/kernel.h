// What a kernel sees: raw pointers to contiguous row-major buffers, their
// shapes and dtypes, and the op's attributes.
#pragma once

#include <functional>
#include <span>

#include "wok/runtime/attrs.h"
#include "wok/runtime/device.h"
#include "wok/runtime/dtype.h"
#include "wok/runtime/shape.h"

namespace wok {

class RegisteredOp;

// A contiguous, row-major tensor buffer handed to a kernel.
struct TensorRef {
  void* data = nullptr;
  const Shape* shape = nullptr;
  DType dtype = DType::kFloat32;

  int64_t numel() const { return wok::numel(*shape); }
  int ndim() const { return static_cast<int>(shape->size()); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data);
  }
};

struct KernelContext {
  const RegisteredOp& op;
  const Attrs& attrs;
  std::span<const TensorRef> inputs;
  std::span<const TensorRef> outputs;  // allocated by the runtime, to be filled
  Device device;
};

using KernelFn = std::function<void(const KernelContext&)>;

}  // namespace wok
