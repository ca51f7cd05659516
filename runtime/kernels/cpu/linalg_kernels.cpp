// Precompiled kernel of det: LU factorization with partial pivoting of each
// matrix, in float64 whatever the dtype (one rounding at the end for
// float32), the determinant being the product of the pivots with the sign
// of the row permutation. Matrices are independent: split between threads.
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "wok/runtime/error.h"
#include "wok/runtime/kernels/cpu/isa.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/thread_pool.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

double lu_determinant(std::vector<double>& a, int64_t n) {
  double det = 1;
  for (int64_t k = 0; k < n; ++k) {
    int64_t pivot = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::abs(a[static_cast<size_t>(i * n + k)]) > std::abs(a[static_cast<size_t>(pivot * n + k)])) pivot = i;
    const double p = a[static_cast<size_t>(pivot * n + k)];
    if (p == 0) return 0.0;  // singular (a nan pivot propagates below)
    if (pivot != k) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[static_cast<size_t>(k * n + j)], a[static_cast<size_t>(pivot * n + j)]);
      det = -det;
    }
    det *= p;
    for (int64_t i = k + 1; i < n; ++i) {
      const double f = a[static_cast<size_t>(i * n + k)] / p;
      for (int64_t j = k + 1; j < n; ++j) a[static_cast<size_t>(i * n + j)] -= f * a[static_cast<size_t>(k * n + j)];
    }
  }
  return det;
}

template <typename T>
void det_of(const T* in, T* out, int64_t count, int64_t n) {
  parallel_for(count, 1, [&](int64_t b, int64_t e) {
    std::vector<double> a(static_cast<size_t>(n * n));
    for (int64_t m = b; m < e; ++m) {
      const T* src = in + m * n * n;
      for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(src[i]);
      out[m] = static_cast<T>(lu_determinant(a, n));
    }
  });
}

void det_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  const int64_t n = x.shape->back(), count = y.numel();
  if (x.dtype == DType::kFloat32) det_of<float>(x.as<float>(), y.as<float>(), count, n);
  else if (x.dtype == DType::kFloat64) det_of<double>(x.as<double>(), y.as<double>(), count, n);
  else throw DTypeError("precompiled det: float32 or float64 only, got " + std::string(dtype_name(x.dtype)));
}

}  // namespace

void register_linalg_kernels(OpRegistry& r) { r.add_kernel("det", DeviceType::kCPU, det_kernel); }

}  // namespace wok::cpu::WOK_ISA_NS
