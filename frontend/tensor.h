// wok::Tensor: a cheap handle to a lazily computed array.
//
// Ops on tensors only record; work runs when data is read (to_vector,
// item, data), on wok::eval, or when the pending work behind a tensor passes
// a limit (runtime/evaluator.h).
#pragma once

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "wok/runtime/device.h"
#include "wok/runtime/dtype.h"
#include "wok/runtime/element_cast.h"
#include "wok/runtime/error.h"
#include "wok/runtime/graph.h"
#include "wok/runtime/scalar.h"
#include "wok/runtime/shape.h"

namespace wok {

class Tensor {
 public:
  Tensor() = default;  // undefined; most calls on it throw wok::Error
  explicit Tensor(TensorImplPtr impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return meta().shape; }
  DType dtype() const { return meta().dtype; }
  Device device() const { return meta().device; }
  int ndim() const { return static_cast<int>(shape().size()); }
  int64_t numel() const { return meta().numel(); }
  size_t nbytes() const { return meta().nbytes(); }
  int64_t size(int64_t axis) const;  // negative axes count from the end
  // True once the tensor's data exists (nothing pending behind it).
  bool is_ready() const { return impl_ && impl_->ready(); }

  // Reading data evaluates what is pending. to_vector and item convert to T
  // with C++ conversion rules (copying from a GPU when the tensor is on
  // one); data<T>() requires T to match dtype() and a tensor on the CPU.
  template <typename T>
  std::vector<T> to_vector() const;
  template <typename T>
  T item() const;
  template <typename T>
  const T* data() const;
  Scalar item_scalar() const;

  // Methods that mirror free functions in frontend/ops.h.
  Tensor reshape(Shape shape) const;  // one -1 is inferred
  Tensor permute(std::vector<int64_t> dims) const;
  Tensor transpose() const;           // reverses all dims
  Tensor transpose(int64_t a, int64_t b) const;
  Tensor broadcast_to(Shape shape) const;
  Tensor astype(DType dtype) const;
  Tensor to(Device device) const;

  std::string str() const;  // "float32[2, 2] [[1, 2], [3, 4]]"; evaluates

  const TensorImplPtr& impl() const { return impl_; }

 private:
  const TensorMeta& meta() const { return impl_ ? impl_->meta() : undefined_error(); }
  [[noreturn]] static const TensorMeta& undefined_error();
  // Evaluates if needed and returns the host bytes (CPU tensors only).
  const void* host_data() const;
  // The same for any device: a tensor on a GPU is copied to a host buffer,
  // which `keep` holds for as long as `data` is read.
  struct HostBytes {
    StoragePtr keep;
    const void* data = nullptr;
  };
  HostBytes host_bytes() const;

  TensorImplPtr impl_;
};

// Makes every tensor ready; work shared between them runs once.
void eval(const std::vector<Tensor>& tensors);
// Starts evaluating and returns at once; reading a tensor's data (or
// wok::eval on it) waits for the work, and rethrows its failure.
void eval_async(const std::vector<Tensor>& tensors);

template <typename T>
std::vector<T> Tensor::to_vector() const {
  static_assert(is_element_type_v<T>, "to_vector<T>: T must be a wok element type (see runtime/dtype.h)");
  const HostBytes bytes = host_bytes();
  const void* p = bytes.data;
  std::vector<T> out(static_cast<size_t>(numel()));
  if constexpr (!std::is_same_v<T, bool>) {  // std::vector<bool> is packed: no memcpy
    if (dtype() == dtype_of<T>()) {
      if (!out.empty()) std::memcpy(out.data(), p, out.size() * sizeof(T));
      return out;
    }
  }
  visit_any_dtype(dtype(), [&](auto tag) {
    using S = decltype(tag);
    const S* src = static_cast<const S*>(p);
    for (size_t i = 0; i < out.size(); ++i) out[i] = element_cast<T>(src[i]);  // the cast op's rules
  });
  return out;
}

template <typename T>
T Tensor::item() const {
  static_assert(is_element_type_v<T>, "item<T>: T must be a wok element type (see runtime/dtype.h)");
  return item_scalar().to<T>();
}

template <typename T>
const T* Tensor::data() const {
  static_assert(is_element_type_v<T>, "data<T>: T must be a wok element type (see runtime/dtype.h)");
  if (defined() && dtype() != dtype_of<T>())
    throw DTypeError("data<" + std::string(dtype_name(dtype_of<T>())) + ">() on a " +
                     std::string(dtype_name(dtype())) + " tensor; use to_vector<T>() to convert or astype()");
  return static_cast<const T*>(host_data());
}

}  // namespace wok
