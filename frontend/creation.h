// Making tensors: from host data, constants, ranges and random numbers.
#pragma once

#include <cstdint>
#include <vector>

#include "wok/frontend/tensor.h"

namespace wok {

// Copies `values` into a new tensor of `shape` (default: 1-D).
template <typename T>
Tensor from_vector(const std::vector<T>& values, Shape shape = {-1}, Device device = Device::cpu());
// A 0-d tensor holding `value`.
Tensor scalar_tensor(Scalar value, Device device = Device::cpu());

// Constants; recorded lazily, so the JIT can fold them into what uses them.
Tensor full(Shape shape, Scalar value, Device device = Device::cpu());
Tensor zeros(Shape shape, DType dtype = DType::kFloat32, Device device = Device::cpu());
Tensor ones(Shape shape, DType dtype = DType::kFloat32, Device device = Device::cpu());

// start, start + step, ... below stop: wok::range (frontend/shape_ops.h)
// computed in float64, then cast to `dtype`.
Tensor arange(double start, double stop, double step = 1, DType dtype = DType::kFloat32,
              Device device = Device::cpu());

// Uniform in [0, 1), reproducible from `seed` and independent of thread
// count. float32 or float64.
Tensor rand(Shape shape, uint64_t seed, DType dtype = DType::kFloat32, Device device = Device::cpu());
// Standard normal (Box-Muller over the same generator).
Tensor randn(Shape shape, uint64_t seed, DType dtype = DType::kFloat32, Device device = Device::cpu());

namespace detail {
Tensor from_bytes(const void* data, Shape shape, DType dtype, Device device, int64_t given_numel);
}

template <typename T>
Tensor from_vector(const std::vector<T>& values, Shape shape, Device device) {
  static_assert(is_element_type_v<T>, "from_vector: T must be a wok element type (see runtime/dtype.h)");
  if constexpr (std::is_same_v<T, bool>) {
    // std::vector<bool> is packed; unpack to one byte per element.
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return detail::from_bytes(bytes.data(), std::move(shape), DType::kBool, device,
                              static_cast<int64_t>(bytes.size()));
  } else {
    return detail::from_bytes(values.data(), std::move(shape), dtype_of<T>(), device,
                              static_cast<int64_t>(values.size()));
  }
}

}  // namespace wok
