// Masked tails of row kernels (Note [Masked row tails] in row_tail.h).
#include "wok/jit/x86/row_tail.h"

#include <string>

#include "wok/runtime/error.h"

namespace wok::jit::x86 {

RowTail::RowTail(VecEmitter& e, const ax::Gp& rem, const std::set<int>& widths) : e_(e), rem_(rem) {
  if (!e_.avx512()) {
    for (int w : widths) {
      DType it = w == 8 ? DType::kInt64 : DType::kInt32;
      vmask_[w] = e_.cmp(it, Cmp::kLt, e_.lane_index(it), e_.broadcast_gpr(it, rem_)).v;
    }
    return;
  }
  // One bit per lane whatever the lane width: every register of the kernel
  // has `lanes` lanes (Note [Lanes and registers]).
  ax::Compiler& cc = e_.cc();
  ax::Gp bits = cc.newInt64("tail_bits");
  cc.mov(bits, -1);
  cc.bzhi(bits, bits, rem_);
  k_ = cc.newKq("tail_k");
  cc.kmovq(k_, bits);
}

Mask RowTail::valid(DType t) {
  Mask m;
  if (e_.avx512()) {
    m.k = k_;
    return m;
  }
  auto it = vmask_.find(VecEmitter::lane_width(t));
  if (it == vmask_.end()) throw Error("row kernel: no tail mask for " + std::string(dtype_name(t)) + " (internal error)");
  m.v = it->second;
  return m;
}

ax::Vec RowTail::load(DType t, const ax::Mem& m) {
  ax::Compiler& cc = e_.cc();
  ax::Vec r = e_.new_vec(t);
  const bool wide = itemsize(t) == 8;
  if (e_.avx512()) {
    if (wide) cc.k(k_).z().vmovupd(r, m);
    else cc.k(k_).z().vmovups(r, m);
  } else if (wide) {
    cc.vmaskmovpd(r, valid(t).v, m);
  } else {
    cc.vmaskmovps(r, valid(t).v, m);
  }
  return r;
}

void RowTail::store(DType t, const ax::Mem& m, const ax::Vec& v) {
  ax::Compiler& cc = e_.cc();
  const bool wide = itemsize(t) == 8;
  if (e_.avx512()) {
    if (wide) cc.k(k_).vmovupd(m, v);
    else cc.k(k_).vmovups(m, v);
  } else if (wide) {
    cc.vmaskmovpd(m, valid(t).v, v);
  } else {
    cc.vmaskmovps(m, valid(t).v, v);
  }
}

}  // namespace wok::jit::x86
