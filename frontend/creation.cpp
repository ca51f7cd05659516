#include "wok/frontend/creation.h"

#include <cmath>
#include <cstring>

#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"
#include "wok/frontend/shape_ops.h"
#include "wok/runtime/thread_pool.h"

namespace wok {

namespace detail {

Tensor from_bytes(const void* data, Shape shape, DType dtype, Device device, int64_t given_numel) {
  // Names the ready tensor's creator in the live-memory report: the return
  // address is in from_vector<T>, which is inline in the user's code.
  WOK_CALLER_SCOPE();
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && infer < 0) infer = static_cast<int>(i);
    else if (shape[i] < 0) throw ShapeError("from_vector: invalid shape " + shape_str(shape));
    else known *= shape[i];
  }
  if (infer >= 0 && known > 0 && given_numel % known == 0) shape[infer] = given_numel / known;
  if (infer >= 0 && shape[infer] < 0)
    throw ShapeError("from_vector: cannot fit " + std::to_string(given_numel) + " values into " + shape_str(shape));
  if (numel(shape) != given_numel)
    throw ShapeError("from_vector: " + std::to_string(given_numel) + " values do not fill shape " + shape_str(shape) +
                     " (" + std::to_string(numel(shape)) + " elements)");
  // Device tensors are filled on the host and copied (Tensor::to).
  if (!device.is_cpu()) return from_bytes(data, std::move(shape), dtype, Device::cpu(), given_numel).to(device);
  TensorMeta meta{std::move(shape), dtype, device};
  StoragePtr storage = Storage::allocate(meta.nbytes(), device);
  if (meta.nbytes()) std::memcpy(storage->data(), data, meta.nbytes());
  return Tensor(std::make_shared<TensorImpl>(std::move(meta), std::move(storage)));
}

}  // namespace detail

Tensor scalar_tensor(Scalar value, Device device) {
  WOK_CALLER_SCOPE();
  return visit_any_dtype(value.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T v = value.to<T>();
    return detail::from_bytes(&v, {}, value.dtype(), device, 1);
  });
}

Tensor full(Shape shape, Scalar value, Device device) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("full");
  Tensor t = detail::record1(op, {}, detail::positional_attrs(op, {value, std::move(shape)}));
  return device.is_cpu() ? t : t.to(device);
}

Tensor zeros(Shape shape, DType dtype, Device device) {
  WOK_CALLER_SCOPE();
  return full(std::move(shape), Scalar(0).cast(dtype), device);
}
Tensor ones(Shape shape, DType dtype, Device device) {
  WOK_CALLER_SCOPE();
  return full(std::move(shape), Scalar(1).cast(dtype), device);
}

Tensor arange(double start, double stop, double step, DType dtype, Device device) {
  WOK_CALLER_SCOPE();
  if (step == 0 || !std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step))
    throw ArgumentError("arange: start, stop and step must be finite and step non-zero");
  // wok::range in float64 (start + i * step, ceil((stop - start) / step)
  // values), then cast: integer dtypes truncate each value.
  return range(start, stop, step, DType::kFloat64, device).astype(dtype);
}

namespace {

// SplitMix64 of (seed, index): a counter-based generator, so any element can
// be computed on any thread and the result does not depend on the split.
inline uint64_t mix(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

template <typename T>
void fill_uniform(T* out, int64_t n, uint64_t seed) {
  parallel_for(n, 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if constexpr (std::is_same_v<T, float>) out[i] = static_cast<float>(mix(seed, i) >> 40) * 0x1p-24f;
      else out[i] = static_cast<double>(mix(seed, i) >> 11) * 0x1p-53;
    }
  });
}

template <typename T>
void fill_normal(T* out, int64_t n, uint64_t seed) {
  parallel_for(n, 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      // (0, 1] keeps log() finite.
      double u1 = (static_cast<double>(mix(seed, 2 * i) >> 11) + 1) * 0x1p-53;
      double u2 = static_cast<double>(mix(seed, 2 * i + 1) >> 11) * 0x1p-53;
      out[i] = static_cast<T>(std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2));
    }
  });
}

Tensor random_tensor(Shape shape, uint64_t seed, DType dtype, Device device, bool normal) {
  if (!is_floating(dtype))
    throw DTypeError(std::string(normal ? "randn" : "rand") + ": dtype must be float32 or float64, got " +
                     std::string(dtype_name(dtype)));
  for (int64_t d : shape)
    if (d < 0) throw ShapeError("rand: invalid shape " + shape_str(shape));
  TensorMeta meta{std::move(shape), dtype, Device::cpu()};
  StoragePtr storage = Storage::allocate(meta.nbytes(), Device::cpu());
  int64_t n = meta.numel();
  if (dtype == DType::kFloat32) {
    normal ? fill_normal(static_cast<float*>(storage->data()), n, seed)
           : fill_uniform(static_cast<float*>(storage->data()), n, seed);
  } else {
    normal ? fill_normal(static_cast<double*>(storage->data()), n, seed)
           : fill_uniform(static_cast<double*>(storage->data()), n, seed);
  }
  Tensor t(std::make_shared<TensorImpl>(std::move(meta), std::move(storage)));
  return device.is_cpu() ? t : t.to(device);
}

}  // namespace

Tensor rand(Shape shape, uint64_t seed, DType dtype, Device device) {
  WOK_CALLER_SCOPE();
  return random_tensor(std::move(shape), seed, dtype, device, false);
}

Tensor randn(Shape shape, uint64_t seed, DType dtype, Device device) {
  WOK_CALLER_SCOPE();
  return random_tensor(std::move(shape), seed, dtype, device, true);
}

}  // namespace wok
