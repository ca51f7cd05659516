#include "wok/frontend/windows.h"

#include <numbers>
#include "wok/frontend/creation.h"
#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"

namespace wok {

namespace {

// The generalised cosine window a0 - a1 cos(2 pi n / D) + a2 cos(4 pi n / D)
// with D = size (periodic) or size - 1 (symmetric), computed in float64.
Tensor cosine_window(const char* name, int64_t size, bool periodic, DType dtype, double a0, double a1, double a2) {
  if (size < 0) throw ArgumentError(std::string(name) + ": size must be non-negative, got " + std::to_string(size));
  if (!is_floating(dtype) && dtype != DType::kInt32 && dtype != DType::kInt64)
    throw DTypeError(std::string(name) + ": dtype must be numeric, got " + std::string(dtype_name(dtype)));
  if (size == 0) return zeros({0}, dtype);
  if (size == 1) return ones({1}, dtype);
  const double denominator = static_cast<double>(periodic ? size : size - 1);
  const Tensor phase = arange(0, static_cast<double>(size), 1, DType::kFloat64) * (2 * std::numbers::pi / denominator);
  Tensor w = a0 - a1 * cos(phase);
  if (a2 != 0) w = w + a2 * cos(2.0 * phase);
  return w.astype(dtype);
}

}  // namespace

Tensor hann_window(int64_t size, bool periodic, DType dtype) {
  WOK_CALLER_SCOPE();
  return cosine_window("hann_window", size, periodic, dtype, 0.5, 0.5, 0);
}

Tensor hamming_window(int64_t size, bool periodic, DType dtype, double alpha, double beta) {
  WOK_CALLER_SCOPE();
  return cosine_window("hamming_window", size, periodic, dtype, alpha, beta, 0);
}

Tensor blackman_window(int64_t size, bool periodic, DType dtype) {
  WOK_CALLER_SCOPE();
  return cosine_window("blackman_window", size, periodic, dtype, 0.42, 0.5, 0.08);
}

}  // namespace wok
