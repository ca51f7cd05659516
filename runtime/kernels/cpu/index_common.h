// What the indexing, scan and sort kernels share: reading an index tensor
// (int32 or int64) with its values checked, and buffers of int64.
//
// Note [Index errors from kernels]
// An index is data, so only the kernel can check it (Note [Indices are data]
// in runtime/ops/indexing_ops.cpp). A kernel may throw a wok::Error: the
// runner rethrows it to whoever evaluates (to_vector, wok::eval, the read
// after eval_async), and the tensor stays pending. But parallel_for's
// workers must not throw (nothing would catch it there), so the check runs
// as a parallel pass that only records the first bad position, and the
// calling thread throws after it, before anything is written.
//
// Everything here is in the instruction-set namespace and avoids templates
// of the standard library over plain types (std::vector<int64_t>): an
// out-of-line copy of one compiled for AVX-512 could be picked by the linker
// for a baseline caller (runtime/wrapping.h says the same).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "wok/runtime/error.h"
#include "wok/runtime/kernel.h"
#include "wok/runtime/kernels/cpu/isa.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/thread_pool.h"

namespace wok::cpu::WOK_ISA_NS {
namespace {

// Elements per parallel chunk for these kernels' light per-element work.
constexpr int64_t kIndexGrain = 1 << 14;

// An uninitialised int64 buffer.
struct I64Buffer {
  std::unique_ptr<int64_t[]> p;
  explicit I64Buffer(int64_t n) : p(new int64_t[static_cast<size_t>(n > 0 ? n : 1)]) {}
  int64_t& operator[](int64_t i) { return p[static_cast<size_t>(i)]; }
  int64_t operator[](int64_t i) const { return p[static_cast<size_t>(i)]; }
  const int64_t* data() const { return p.get(); }
};

// The indices as int64 with negative ones wrapped: position p must lie in
// [-size(p), size(p)). Otherwise throws ArgumentError naming the op, the
// first bad index (lowest position), its dim (dim(p), called `what`) and
// that dim's size.
template <class Size, class Dim>
I64Buffer read_indices(const KernelContext& ctx, const TensorRef& idx, Size&& size, Dim&& dim, const char* what) {
  const int64_t n = idx.numel();
  I64Buffer out(n);
  std::atomic<int64_t> first_bad{n};
  auto pass = [&](auto tag) {
    using I = decltype(tag);
    const I* in = idx.as<I>();
    parallel_for(n, kIndexGrain, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const int64_t s = size(p);
        int64_t v = static_cast<int64_t>(in[p]);
        if (v < 0) v += s;
        if (v < 0 || v >= s) {
          int64_t cur = first_bad.load(std::memory_order_relaxed);
          while (p < cur && !first_bad.compare_exchange_weak(cur, p, std::memory_order_relaxed)) {
          }
          v = 0;
        }
        out[p] = v;
      }
    });
  };
  if (idx.dtype == DType::kInt32) pass(int32_t{});
  else if (idx.dtype == DType::kInt64) pass(int64_t{});
  else throw DTypeError("wok::" + ctx.op.name() + " kernel: indices must be int32 or int64");
  const int64_t p = first_bad.load();
  if (p < n) {
    const int64_t v = idx.dtype == DType::kInt32 ? idx.as<int32_t>()[p] : idx.as<int64_t>()[p];
    const int64_t s = size(p);
    throw ArgumentError("wok::" + ctx.op.name() + ": index " + std::to_string(v) + " is out of range for " + what +
                        " " + std::to_string(dim(p)) + " of size " + std::to_string(s) + " (valid: [" +
                        std::to_string(-s) + ", " + std::to_string(s) + "); at position " + std::to_string(p) +
                        " of indices " + std::string(dtype_name(idx.dtype)) + shape_str(*idx.shape) + ")");
  }
  return out;
}

// Calls fn(U{}) with an unsigned type of the given item size.
template <typename Fn>
void visit_item(size_t size, Fn&& fn) {
  switch (size) {
    case 1: fn(uint8_t{}); return;
    case 4: fn(uint32_t{}); return;
    case 8: fn(uint64_t{}); return;
    default: throw DTypeError("indexing kernels handle items of 1, 4 or 8 bytes, not " + std::to_string(size));
  }
}

inline int64_t prod(const Shape& s, size_t b, size_t e) {
  int64_t n = 1;
  for (size_t i = b; i < e; ++i) n *= s[i];
  return n;
}

}  // namespace
}  // namespace wok::cpu::WOK_ISA_NS
