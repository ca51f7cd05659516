// VecEmitter's masks: compares, nan tests, mask logic, blends, and masks to
// and from bool lanes; separate from the arithmetic in vec_emitter.cpp.
#include "wok/jit/x86/vec_emitter.h"

#include "wok/jit/x86/vec_emitter_internal.h"

namespace wok::jit::x86 {

using namespace vec_internal;

namespace {
// vcmpps predicates with C++ semantics for nan (ordered compares are false,
// != is true).
int float_predicate(Cmp c) {
  switch (c) {
    case Cmp::kEq: return 0x00;  // EQ_OQ
    case Cmp::kNe: return 0x04;  // NEQ_UQ
    case Cmp::kLt: return 0x11;  // LT_OQ
    case Cmp::kLe: return 0x12;  // LE_OQ
    case Cmp::kGt: return 0x1E;  // GT_OQ
    case Cmp::kGe: return 0x1D;  // GE_OQ
  }
  return 0;
}
// vpcmpd predicates.
int int_predicate(Cmp c) {
  switch (c) {
    case Cmp::kEq: return 0;
    case Cmp::kLt: return 1;
    case Cmp::kLe: return 2;
    case Cmp::kNe: return 4;
    case Cmp::kGe: return 5;
    case Cmp::kGt: return 6;
  }
  return 0;
}
}  // namespace

// ---- masks -----------------------------------------------------------------------------

Mask VecEmitter::cmp(DType t, Cmp c, const ax::Vec& a, const Operand& b) {
  Mask m;
  if (is_floating(t)) {
    if (avx512_) {
      m.k = cc_.newKq();
      cc_.emit(is_f32(t) ? I::kIdVcmpps : I::kIdVcmppd, m.k, a, b, float_predicate(c));
    } else {
      m.v = new_vec(t);
      cc_.emit(is_f32(t) ? I::kIdVcmpps : I::kIdVcmppd, m.v, a, b, float_predicate(c));
    }
    return m;
  }
  if (avx512_) {
    m.k = cc_.newKq();
    cc_.emit(wide(t) ? I::kIdVpcmpq : I::kIdVpcmpd, m.k, a, b, int_predicate(c));
    return m;
  }
  // AVX2 has only == and signed >; the rest are swaps and complements.
  ax::Vec bv = new_vec(t);
  if (b.isMem()) cc_.vmovups(bv, b.as<ax::Mem>());
  else bv = b.as<ax::Vec>();
  Id eq = wide(t) ? I::kIdVpcmpeqq : I::kIdVpcmpeqd;
  Id gt = wide(t) ? I::kIdVpcmpgtq : I::kIdVpcmpgtd;
  m.v = new_vec(t);
  switch (c) {
    case Cmp::kEq: cc_.emit(eq, m.v, a, bv); return m;
    case Cmp::kNe: cc_.emit(eq, m.v, a, bv); return mask_not(t, m);
    case Cmp::kGt: cc_.emit(gt, m.v, a, bv); return m;
    case Cmp::kLt: cc_.emit(gt, m.v, bv, a); return m;
    case Cmp::kLe: cc_.emit(gt, m.v, a, bv); return mask_not(t, m);
    case Cmp::kGe: cc_.emit(gt, m.v, bv, a); return mask_not(t, m);
  }
  return m;
}

Mask VecEmitter::is_nan(DType t, const ax::Vec& a) {
  Mask m;
  if (avx512_) {
    m.k = cc_.newKq();
    cc_.emit(is_f32(t) ? I::kIdVcmpps : I::kIdVcmppd, m.k, a, a, 0x03);  // UNORD_Q
  } else {
    m.v = new_vec(t);
    cc_.emit(is_f32(t) ? I::kIdVcmpps : I::kIdVcmppd, m.v, a, a, 0x03);
  }
  return m;
}

Mask VecEmitter::mask_and(DType t, const Mask& a, const Mask& b) {
  Mask m;
  if (avx512_) {
    m.k = cc_.newKq();
    cc_.kandq(m.k, a.k, b.k);
  } else {
    m.v = new_vec(t);
    cc_.vandps(m.v, a.v, b.v);
  }
  return m;
}

Mask VecEmitter::mask_or(DType t, const Mask& a, const Mask& b) {
  Mask m;
  if (avx512_) {
    m.k = cc_.newKq();
    cc_.korq(m.k, a.k, b.k);
  } else {
    m.v = new_vec(t);
    cc_.vorps(m.v, a.v, b.v);
  }
  return m;
}

Mask VecEmitter::mask_not(DType t, const Mask& a) {
  Mask m;
  if (avx512_) {
    m.k = cc_.newKq();
    cc_.knotq(m.k, a.k);
  } else {
    m.v = new_vec(t);
    cc_.emit(I::kIdVxorps, m.v, a.v, const_bits_operand(t, ~uint64_t{0}));
  }
  return m;
}

ax::Vec VecEmitter::blend(DType t, const Mask& m, const ax::Vec& if_true, const ax::Vec& if_false,
                          const ax::Vec* into) {
  if (avx512_) {
    // A plain copy, then a masked one: a merge-masked blend would make the
    // register allocator treat r as live before it is written. Into an
    // accumulator it is one copy more, so the accumulator is written by
    // one instruction (Note [Software-pipelined steps] cuts between
    // instructions).
    ax::Vec r = new_vec(t);
    Id move = wide(t) ? I::kIdVmovapd : I::kIdVmovaps;
    cc_.emit(move, r, if_false);
    cc_.k(m.k).emit(move, r, if_true);
    if (into) cc_.emit(move, *into, r);
    return into ? *into : r;
  }
  ax::Vec r = new_vec_or(t, into);
  cc_.emit(wide(t) ? I::kIdVblendvpd : I::kIdVblendvps, r, if_false, if_true, m.v);
  return r;
}

ax::Vec VecEmitter::narrow64to32(const ax::Vec& v) {
  ax::Xmm hi = cc_.newXmm();
  ax::Xmm r = cc_.newXmm();
  cc_.vextractf128(hi, v.as<ax::Ymm>(), 1);
  cc_.vshufps(r, v.as<ax::Ymm>().xmm(), hi, 0x88);  // dwords 0 and 2 of each half
  return r;
}

ax::Vec VecEmitter::mask_to_bool(DType t, const Mask& m) {
  ax::Vec r = new_vec(DType::kBool);
  if (avx512_) {
    cc_.vpmovm2d(r, m.k);
    cc_.vpsrld(r, r, 31);
    return r;
  }
  ax::Vec lanes32 = wide(t) ? narrow64to32(m.v) : m.v;
  cc_.vpsrld(r, lanes32, 31);
  return r;
}

Mask VecEmitter::bool_to_mask(DType t, const ax::Vec& b) {
  Mask m;
  if (avx512_) {
    m.k = cc_.newKq();
    cc_.vptestmd(m.k, b, b);
    return m;
  }
  ax::Vec s = new_vec(DType::kBool);
  cc_.vpslld(s, b, 31);
  cc_.vpsrad(s, s, 31);  // 0 or all ones per dword
  if (!wide(t)) {
    m.v = s;
  } else {
    m.v = new_vec(t);
    cc_.vpmovsxdq(m.v, s);
  }
  return m;
}

}  // namespace wok::jit::x86
