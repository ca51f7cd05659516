// A reduction's layout (Note [Reduction layout] in reduction_kernels.cpp):
// the input's dims merged into alternating kept and reduced groups, and the
// odometer that walks a group of them.
#pragma once

#include "wok/runtime/kernels/cpu/isa.h"

#include <cstdint>
#include <vector>

#include "wok/runtime/error.h"
#include "wok/runtime/kernels/cpu/reduction_ops.h"
#include "wok/runtime/shape.h"

namespace wok::cpu::WOK_ISA_NS {

// Private to reduction_kernels.cpp (internal linkage, as when these lived
// there): one copy per instruction-set build.
namespace {

// ---- layout --------------------------------------------------------------------------

struct Group {
  int64_t size, stride;
};

// Walks a row-major index over groups, tracking the input offset.
struct Odometer {
  int n = 0;
  int64_t size[kMaxGroups], stride[kMaxGroups], idx[kMaxGroups];
  int64_t off = 0;

  Odometer(const std::vector<Group>& g, size_t count) : n(static_cast<int>(count)) {
    for (int d = 0; d < n; ++d) {
      size[d] = g[d].size;
      stride[d] = g[d].stride;
      idx[d] = 0;
    }
  }
  void seek(int64_t flat) {
    off = 0;
    for (int d = n - 1; d >= 0; --d) {
      idx[d] = flat % size[d];
      flat /= size[d];
      off += idx[d] * stride[d];
    }
  }
  void next() {
    for (int d = n - 1; d >= 0; --d) {
      off += stride[d];
      if (++idx[d] < size[d]) return;
      off -= size[d] * stride[d];
      idx[d] = 0;
    }
  }
};

struct ReduceLayout {
  std::vector<Group> kept, red;  // outer to inner, input strides
  bool last_reduced = false;
  int64_t out_numel = 1, count = 1;
};

ReduceLayout make_layout(const Shape& shape, const std::vector<int64_t>& axes) {
  std::vector<bool> reduce(shape.size(), false);
  for (int64_t a : axes) reduce[static_cast<size_t>(a)] = true;
  ReduceLayout l;
  std::vector<int64_t> sizes;
  std::vector<bool> flags;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (reduce[i]) l.count *= shape[i];
    else l.out_numel *= shape[i];
    if (shape[i] == 1) continue;
    if (!flags.empty() && flags.back() == reduce[i]) {
      sizes.back() *= shape[i];
    } else {
      sizes.push_back(shape[i]);
      flags.push_back(reduce[i]);
    }
  }
  if (sizes.size() > kMaxGroups) throw ShapeError("reduction over more than 64 alternating groups of dims");
  int64_t stride = 1;
  std::vector<Group> groups(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    groups[i] = {sizes[i], stride};
    stride *= sizes[i];
  }
  for (size_t i = 0; i < groups.size(); ++i) (flags[i] ? l.red : l.kept).push_back(groups[i]);
  l.last_reduced = !flags.empty() && flags.back();
  return l;
}

}  // namespace

}  // namespace wok::cpu::WOK_ISA_NS
