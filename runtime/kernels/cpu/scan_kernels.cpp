// Precompiled kernels of cumsum and cumprod (runtime/ops/scan_ops.cpp).
//
// x is viewed as [A, n, B] around the axis. Each line along the axis is
// accumulated in order, one element after another (so a float result is the
// running sum rounded at every step, as a plain loop gives, whatever the
// thread count); the work is split between lines, B columns at a time so
// that the inner loop runs along contiguous memory.
#include <algorithm>
#include <type_traits>

#include "wok/runtime/kernels/cpu/index_common.h"
#include "wok/runtime/wrapping.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

constexpr int64_t kScanColumns = 256;

template <bool kProd, typename P>
inline P step(P acc, P v) {
  if constexpr (kProd) return wrap_mul(acc, v);
  else return wrap_add(acc, v);
}

template <bool kProd, typename T, typename P>
void scan_typed(const T* x, P* out, int64_t A, int64_t n, int64_t B, bool exclusive, bool reverse) {
  const P identity = kProd ? P(1) : P(0);
  if (B == 1) {  // the last axis: each line is contiguous, one accumulator per line
    parallel_for(A, std::max<int64_t>(1, kIndexGrain / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
      for (int64_t a = b; a < e; ++a) {
        const T* xa = x + a * n;
        P* oa = out + a * n;
        P acc = identity;
        for (int64_t s = 0; s < n; ++s) {
          const int64_t i = reverse ? n - 1 - s : s;
          const P v = static_cast<P>(xa[i]);
          if (exclusive) oa[i] = acc;
          acc = step<kProd>(acc, v);
          if (!exclusive) oa[i] = acc;
        }
      }
    });
    return;
  }
  const int64_t blocks = (B + kScanColumns - 1) / kScanColumns;
  const int64_t work = n * std::min(B, kScanColumns);
  parallel_for(A * blocks, std::max<int64_t>(1, kIndexGrain / std::max<int64_t>(work, 1)), [&](int64_t b, int64_t e) {
    P acc[kScanColumns];
    for (int64_t unit = b; unit < e; ++unit) {
      const int64_t a = unit / blocks, c0 = (unit % blocks) * kScanColumns;
      const int64_t w = std::min(B, c0 + kScanColumns) - c0;
      const T* xa = x + a * n * B + c0;
      P* oa = out + a * n * B + c0;
      std::fill(acc, acc + w, identity);
      for (int64_t s = 0; s < n; ++s) {
        const int64_t i = reverse ? n - 1 - s : s;
        const T* xi = xa + i * B;
        P* oi = oa + i * B;
        if (exclusive) {
          for (int64_t c = 0; c < w; ++c) {
            oi[c] = acc[c];
            acc[c] = step<kProd>(acc[c], static_cast<P>(xi[c]));
          }
        } else {
          for (int64_t c = 0; c < w; ++c) {
            acc[c] = step<kProd>(acc[c], static_cast<P>(xi[c]));
            oi[c] = acc[c];
          }
        }
      }
    }
  });
}

template <bool kProd>
void scan_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  if (y.numel() == 0) return;
  const Shape& xs = *x.shape;
  const size_t axis = static_cast<size_t>(ctx.attrs.get_int("axis"));
  const int64_t A = prod(xs, 0, axis), n = xs[axis], B = prod(xs, axis + 1, xs.size());
  const bool exclusive = ctx.attrs.get_bool("exclusive"), reverse = ctx.attrs.get_bool("reverse");
  visit_dtype(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    using P = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
    if (y.dtype != dtype_of<P>())
      throw DTypeError("precompiled '" + ctx.op.name() + "' kernel: unexpected output dtype " +
                       std::string(dtype_name(y.dtype)));
    scan_typed<kProd, T, P>(x.as<T>(), y.as<P>(), A, n, B, exclusive, reverse);
  });
}

}  // namespace

void register_scan_kernels(OpRegistry& r) {
  constexpr DeviceType cpu = DeviceType::kCPU;
  r.add_kernel("cumsum", cpu, scan_kernel<false>);
  r.add_kernel("cumprod", cpu, scan_kernel<true>);
}

}  // namespace wok::cpu::WOK_ISA_NS
