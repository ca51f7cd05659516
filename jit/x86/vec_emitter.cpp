#include "wok/jit/x86/vec_emitter.h"

#include "wok/jit/fused_kernel.h"

#include <cstring>
#include <vector>

#include "wok/runtime/error.h"
#include "wok/runtime/scalar.h"

namespace wok::jit::x86 {

using asmjit::Operand;
using Id = ax::Inst::Id;
namespace I = ax::Inst;

namespace {
bool is_f32(DType t) { return t == DType::kFloat32; }
bool is_f64(DType t) { return t == DType::kFloat64; }
bool wide(DType t) { return VecEmitter::lane_width(t) == 8; }

// Picks the instruction for a dtype: float32, float64, 32-bit int, 64-bit int.
Id pick(DType t, Id ps, Id pd, Id d, Id q) {
  if (is_f32(t)) return ps;
  if (is_f64(t)) return pd;
  return wide(t) ? q : d;
}

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

VecEmitter::VecEmitter(ax::Compiler& cc, bool avx512, int lanes) : cc_(cc), avx512_(avx512), lanes_(lanes) {}

ax::Vec VecEmitter::vec_of_bytes(int bytes) {
  if (bytes == 64) return cc_.newZmm();
  if (bytes == 32) return cc_.newYmm();
  return cc_.newXmm();
}

ax::Vec VecEmitter::new_vec(DType t) { return vec_of_bytes(reg_bytes(t)); }

namespace {
uint64_t constant_bits(DType t, double value);
}  // namespace

ax::Mem VecEmitter::const_bits(DType t, uint64_t bits) {
  int width = reg_bytes(t);
  int lane = lane_width(t);
  auto key = std::make_pair(width * 16 + lane, bits);
  if (auto it = consts_.find(key); it != consts_.end()) return it->second;
  std::vector<uint8_t> buf(width);
  for (int off = 0; off < width; off += lane) std::memcpy(buf.data() + off, &bits, lane);
  ax::Mem m = cc_.newConst(asmjit::ConstPoolScope::kLocal, buf.data(), buf.size());
  consts_.emplace(key, m);
  return m;
}

ax::Mem VecEmitter::const_mem(DType t, double value) { return const_bits(t, constant_bits(t, value)); }

namespace {
uint64_t constant_bits(DType t, double value) {
  uint64_t bits = 0;
  if (t == DType::kBool) return value != 0 ? 1 : 0;
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    T v = Scalar(value).cast(t).to<T>();
    std::memcpy(&bits, &v, sizeof v);
  });
  return bits;
}
}  // namespace

asmjit::Operand VecEmitter::const_bits_operand(DType t, uint64_t bits) {
  if (!avx512_ || !preamble_) return const_bits(t, bits);
  auto key = std::make_pair(reg_bytes(t) * 16 + lane_width(t), bits);
  if (auto it = hoisted_.find(key); it != hoisted_.end()) return it->second;
  ax::Mem m = const_bits(t, bits);
  ax::Vec r = new_vec(t);
  asmjit::BaseNode* here = cc_.setCursor(preamble_);
  cc_.vmovups(r, m);
  preamble_ = cc_.cursor();
  cc_.setCursor(here);
  hoisted_.emplace(key, r);
  return r;
}

asmjit::Operand VecEmitter::const_operand(DType t, double value) { return const_bits_operand(t, constant_bits(t, value)); }

ax::Vec VecEmitter::const_vec(DType t, double value) {
  asmjit::Operand op = const_operand(t, value);
  if (op.isReg()) return op.as<ax::Vec>();
  ax::Vec r = new_vec(t);
  cc_.vmovups(r, op.as<ax::Mem>());
  return r;
}

ax::Vec VecEmitter::const_scalar(DType t, const Scalar& value) {
  ax::Vec r = new_vec(t);
  cc_.vmovups(r, const_bits(t, param_bits(t, value)));
  return r;
}

ax::Vec VecEmitter::zero(DType t) {
  ax::Vec r = new_vec(t);
  cc_.vxorps(r, r, r);
  return r;
}

ax::Vec VecEmitter::all_ones(DType t) {
  ax::Vec r = new_vec(t);
  cc_.vmovups(r, const_bits(t, ~uint64_t{0}));
  return r;
}

// ---- memory --------------------------------------------------------------------------

ax::Vec VecEmitter::load(DType t, const ax::Mem& m) {
  ax::Vec r = new_vec(t);
  if (t == DType::kBool) cc_.vpmovzxbd(r, m);  // bytes -> int32 lanes
  else cc_.vmovups(r, m);
  return r;
}

ax::Vec VecEmitter::broadcast_load(DType t, const ax::Mem& m) {
  ax::Vec r = new_vec(t);
  ax::Mem mm = m;
  switch (t) {
    case DType::kFloat32: mm.setSize(4); cc_.vbroadcastss(r, mm); break;
    case DType::kFloat64: mm.setSize(8); cc_.vbroadcastsd(r, mm); break;
    case DType::kInt32: mm.setSize(4); cc_.vpbroadcastd(r, mm); break;
    case DType::kInt64: mm.setSize(8); cc_.vpbroadcastq(r, mm); break;
    case DType::kBool: {
      mm.setSize(1);
      ax::Gp g = cc_.newGpd();
      cc_.movzx(g, mm);
      ax::Xmm x = cc_.newXmm();
      cc_.vmovd(x, g);
      cc_.vpbroadcastd(r, x);
      break;
    }
  }
  return r;
}

void VecEmitter::store(DType t, const ax::Mem& m, const ax::Vec& v) {
  if (t != DType::kBool) {
    cc_.vmovups(m, v);
    return;
  }
  if (avx512_) {
    cc_.vpmovdb(m, v);  // int32 lanes (0/1) -> bytes
    return;
  }
  // AVX2: pack dwords to bytes; 8 lanes (ymm) or 4 lanes (xmm).
  ax::Xmm x = cc_.newXmm();
  if (v.size() == 32) {
    ax::Xmm hi = cc_.newXmm();
    cc_.vextracti128(hi, v.as<ax::Ymm>(), 1);
    cc_.vpackusdw(x, v.as<ax::Ymm>().xmm(), hi);
    cc_.vpackuswb(x, x, x);
    ax::Mem mm = m;
    mm.setSize(8);
    cc_.vmovq(mm, x);
  } else {
    cc_.vpackusdw(x, v.as<ax::Xmm>(), v.as<ax::Xmm>());
    cc_.vpackuswb(x, x, x);
    ax::Mem mm = m;
    mm.setSize(4);
    cc_.vmovd(mm, x);
  }
}

// ---- arithmetic ------------------------------------------------------------------------

ax::Vec VecEmitter::add(DType t, const ax::Vec& a, const Operand& b) {
  ax::Vec r = new_vec(t);
  cc_.emit(pick(t, I::kIdVaddps, I::kIdVaddpd, I::kIdVpaddd, I::kIdVpaddq), r, a, b);
  return r;
}

ax::Vec VecEmitter::sub(DType t, const ax::Vec& a, const Operand& b) {
  ax::Vec r = new_vec(t);
  cc_.emit(pick(t, I::kIdVsubps, I::kIdVsubpd, I::kIdVpsubd, I::kIdVpsubq), r, a, b);
  return r;
}

ax::Vec VecEmitter::mul(DType t, const ax::Vec& a, const Operand& b) {
  ax::Vec r = new_vec(t);
  if (t == DType::kInt64 && !avx512_) {
    // a*b mod 2^64 from 32x32->64 products: lo*lo + ((hi*lo + lo*hi) << 32).
    ax::Vec bv = new_vec(t);
    if (b.isMem()) cc_.vmovups(bv, b.as<ax::Mem>());
    else bv = b.as<ax::Vec>();
    ax::Vec ah = new_vec(t), bh = new_vec(t), t1 = new_vec(t), t2 = new_vec(t);
    cc_.vpmuludq(t1, a, bv);
    cc_.vpsrlq(ah, a, 32);
    cc_.vpsrlq(bh, bv, 32);
    cc_.vpmuludq(ah, ah, bv);
    cc_.vpmuludq(bh, bh, a);
    cc_.vpaddq(t2, ah, bh);
    cc_.vpsllq(t2, t2, 32);
    cc_.vpaddq(r, t1, t2);
    return r;
  }
  cc_.emit(pick(t, I::kIdVmulps, I::kIdVmulpd, I::kIdVpmulld, I::kIdVpmullq), r, a, b);
  return r;
}

ax::Vec VecEmitter::div(DType t, const ax::Vec& a, const Operand& b) {
  ax::Vec r = new_vec(t);
  cc_.emit(is_f32(t) ? I::kIdVdivps : I::kIdVdivpd, r, a, b);
  return r;
}

ax::Vec VecEmitter::fma(DType t, const ax::Vec& a, const Operand& b, const Operand& c) {
  ax::Vec r = new_vec(t);
  if (c.isMem()) cc_.vmovups(r, c.as<ax::Mem>());
  else cc_.vmovaps(r, c.as<ax::Vec>());
  cc_.emit(is_f32(t) ? I::kIdVfmadd231ps : I::kIdVfmadd231pd, r, a, b);  // r = a*b + r
  return r;
}

void VecEmitter::fma_acc(DType t, const ax::Vec& acc, const ax::Vec& x, const Operand& c) {
  cc_.emit(is_f32(t) ? I::kIdVfmadd213ps : I::kIdVfmadd213pd, acc, x, c);  // acc = acc*x + c
}

ax::Vec VecEmitter::scale2(DType t, const ax::Vec& a, const ax::Vec& n) {
  ax::Vec r = new_vec(t);
  cc_.emit(is_f32(t) ? I::kIdVscalefps : I::kIdVscalefpd, r, a, n);
  return r;
}

ax::Vec VecEmitter::neg(DType t, const ax::Vec& a) {
  if (is_floating(t)) return bit_xor(t, a, const_bits_operand(t, is_f32(t) ? 0x80000000u : 0x8000000000000000ull));
  ax::Vec z = zero(t);
  return sub(t, z, a);
}

ax::Vec VecEmitter::abs(DType t, const ax::Vec& a) {
  if (is_floating(t)) return bit_and(t, a, const_bits_operand(t, is_f32(t) ? 0x7fffffffu : 0x7fffffffffffffffull));
  ax::Vec r = new_vec(t);
  if (t == DType::kInt32) {
    cc_.vpabsd(r, a);
  } else if (avx512_) {
    cc_.vpabsq(r, a);
  } else {
    ax::Vec m = new_vec(t), z = zero(t);
    cc_.vpcmpgtq(m, z, a);  // all ones where negative
    cc_.vpxor(r, a, m);
    cc_.vpsubq(r, r, m);
  }
  return r;
}

ax::Vec VecEmitter::sqrt(DType t, const ax::Vec& a) {
  ax::Vec r = new_vec(t);
  cc_.emit(is_f32(t) ? I::kIdVsqrtps : I::kIdVsqrtpd, r, a);
  return r;
}

ax::Vec VecEmitter::max_raw(DType t, const ax::Vec& a, const Operand& b) {
  ax::Vec r = new_vec(t);
  if (t == DType::kInt64 && !avx512_) {
    ax::Vec bv = new_vec(t);
    if (b.isMem()) cc_.vmovups(bv, b.as<ax::Mem>());
    else bv = b.as<ax::Vec>();
    ax::Vec m = new_vec(t);
    cc_.vpcmpgtq(m, a, bv);
    cc_.vblendvpd(r, bv, a, m);
    return r;
  }
  cc_.emit(pick(t, I::kIdVmaxps, I::kIdVmaxpd, I::kIdVpmaxsd, I::kIdVpmaxsq), r, a, b);
  return r;
}

ax::Vec VecEmitter::min_raw(DType t, const ax::Vec& a, const Operand& b) {
  ax::Vec r = new_vec(t);
  if (t == DType::kInt64 && !avx512_) {
    ax::Vec bv = new_vec(t);
    if (b.isMem()) cc_.vmovups(bv, b.as<ax::Mem>());
    else bv = b.as<ax::Vec>();
    ax::Vec m = new_vec(t);
    cc_.vpcmpgtq(m, bv, a);
    cc_.vblendvpd(r, bv, a, m);
    return r;
  }
  cc_.emit(pick(t, I::kIdVminps, I::kIdVminpd, I::kIdVpminsd, I::kIdVpminsq), r, a, b);
  return r;
}

ax::Vec VecEmitter::max(DType t, const ax::Vec& a, const ax::Vec& b) {
  ax::Vec r = max_raw(t, a, b);
  if (is_floating(t)) r = blend(t, is_nan(t, a), a, r);
  return r;
}

ax::Vec VecEmitter::min(DType t, const ax::Vec& a, const ax::Vec& b) {
  ax::Vec r = min_raw(t, a, b);
  if (is_floating(t)) r = blend(t, is_nan(t, a), a, r);
  return r;
}

ax::Vec VecEmitter::round(DType t, const ax::Vec& a, int imm) {
  ax::Vec r = new_vec(t);
  if (r.size() == 64) cc_.emit(is_f32(t) ? I::kIdVrndscaleps : I::kIdVrndscalepd, r, a, imm);
  else cc_.emit(is_f32(t) ? I::kIdVroundps : I::kIdVroundpd, r, a, imm);
  return r;
}

// ---- bits ------------------------------------------------------------------------------

ax::Vec VecEmitter::bit_and(DType t, const ax::Vec& a, const Operand& b) {
  ax::Vec r = new_vec(t);
  cc_.emit(I::kIdVandps, r, a, b);
  return r;
}
ax::Vec VecEmitter::bit_or(DType t, const ax::Vec& a, const Operand& b) {
  ax::Vec r = new_vec(t);
  cc_.emit(I::kIdVorps, r, a, b);
  return r;
}
ax::Vec VecEmitter::bit_xor(DType t, const ax::Vec& a, const Operand& b) {
  ax::Vec r = new_vec(t);
  cc_.emit(I::kIdVxorps, r, a, b);
  return r;
}
ax::Vec VecEmitter::int_add(DType t, const ax::Vec& a, const Operand& b) {
  ax::Vec r = new_vec(t);
  cc_.emit(wide(t) ? I::kIdVpaddq : I::kIdVpaddd, r, a, b);
  return r;
}
ax::Vec VecEmitter::int_sub(DType t, const ax::Vec& a, const Operand& b) {
  ax::Vec r = new_vec(t);
  cc_.emit(wide(t) ? I::kIdVpsubq : I::kIdVpsubd, r, a, b);
  return r;
}
ax::Vec VecEmitter::shl(DType t, const ax::Vec& a, int bits) {
  ax::Vec r = new_vec(t);
  cc_.emit(wide(t) ? I::kIdVpsllq : I::kIdVpslld, r, a, bits);
  return r;
}
ax::Vec VecEmitter::shr_logical(DType t, const ax::Vec& a, int bits) {
  ax::Vec r = new_vec(t);
  cc_.emit(wide(t) ? I::kIdVpsrlq : I::kIdVpsrld, r, a, bits);
  return r;
}

ax::Vec VecEmitter::shr_arith(DType t, const ax::Vec& a, int bits) {
  ax::Vec r = new_vec(t);
  if (!wide(t)) {
    cc_.vpsrad(r, a, bits);
  } else if (avx512_) {
    cc_.vpsraq(r, a, bits);
  } else {
    // No vpsraq on AVX2: bias into the non-negative range, shift, unbias.
    constexpr uint64_t kBias = uint64_t{1} << 40;
    ax::Vec biased = int_add(t, a, const_bits(t, kBias));
    ax::Vec shifted = shr_logical(t, biased, bits);
    cc_.vpsubq(r, shifted, const_bits(t, kBias >> bits));
  }
  return r;
}

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

ax::Vec VecEmitter::blend(DType t, const Mask& m, const ax::Vec& if_true, const ax::Vec& if_false) {
  ax::Vec r = new_vec(t);
  if (avx512_) {
    // A plain copy, then a masked one: a merge-masked blend would make the
    // register allocator treat r as live before it is written.
    Id move = wide(t) ? I::kIdVmovapd : I::kIdVmovaps;
    cc_.emit(move, r, if_false);
    cc_.k(m.k).emit(move, r, if_true);
  } else {
    cc_.emit(wide(t) ? I::kIdVblendvpd : I::kIdVblendvps, r, if_false, if_true, m.v);
  }
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

// ---- across lanes -----------------------------------------------------------------

ax::Vec VecEmitter::reduce_lanes(ScalarOp op, DType t, const ax::Vec& v) {
  Id id;
  switch (op) {
    case ScalarOp::kReduceSum: id = pick(t, I::kIdVaddps, I::kIdVaddpd, I::kIdVpaddd, I::kIdVpaddq); break;
    case ScalarOp::kReduceProd: id = pick(t, I::kIdVmulps, I::kIdVmulpd, I::kIdVpmulld, I::kIdVpmullq); break;
    case ScalarOp::kReduceMax: id = pick(t, I::kIdVmaxps, I::kIdVmaxpd, I::kIdVpmaxsd, I::kIdVpmaxsq); break;
    default: id = pick(t, I::kIdVminps, I::kIdVminpd, I::kIdVpminsd, I::kIdVpminsq); break;
  }
  // Halve the width down to one xmm, then combine within it.
  ax::Vec cur = v;
  while (cur.size() > 16) {
    ax::Vec hi = vec_of_bytes(cur.size() / 2), r = vec_of_bytes(cur.size() / 2);
    if (cur.size() == 64) {
      cc_.vextractf64x4(hi.as<ax::Ymm>(), cur.as<ax::Zmm>(), 1);
      cc_.emit(id, r, cur.as<ax::Zmm>().ymm(), hi);
    } else {
      cc_.vextractf128(hi.as<ax::Xmm>(), cur.as<ax::Ymm>(), 1);
      cc_.emit(id, r, cur.as<ax::Ymm>().xmm(), hi);
    }
    cur = r;
  }
  ax::Xmm x = cur.as<ax::Xmm>();
  ax::Xmm t1 = cc_.newXmm(), r1 = cc_.newXmm();
  if (!wide(t)) {
    cc_.vpermilps(t1, x, 0x4E);  // swap 64-bit halves
    cc_.emit(id, r1, x, t1);
    ax::Xmm t2 = cc_.newXmm();
    x = cc_.newXmm();
    cc_.vpermilps(t2, r1, 0xB1);  // swap neighbours
    cc_.emit(id, x, r1, t2);
  } else {
    cc_.vpermilpd(t1, x, 1);
    cc_.emit(id, r1, x, t1);
    x = r1;
  }
  ax::Vec out = new_vec(t);
  if (wide(t)) {
    if (out.size() == 16) cc_.vmovddup(out, x);
    else cc_.vbroadcastsd(out, x);
  } else {
    cc_.vbroadcastss(out, x);
  }
  return out;
}

ax::Vec VecEmitter::lane_index(DType t) {
  DType it = wide(t) ? DType::kInt64 : DType::kInt32;
  std::vector<uint8_t> buf(reg_bytes(t));
  for (int i = 0; i < lanes_; ++i) {
    if (wide(t)) {
      int64_t v = i;
      std::memcpy(buf.data() + 8 * i, &v, 8);
    } else {
      int32_t v = i;
      std::memcpy(buf.data() + 4 * i, &v, 4);
    }
  }
  ax::Vec r = new_vec(it);
  cc_.vmovups(r, cc_.newConst(asmjit::ConstPoolScope::kLocal, buf.data(), buf.size()));
  return r;
}

ax::Vec VecEmitter::broadcast_gpr(DType t, const ax::Gp& g) {
  ax::Vec r = new_vec(t);
  ax::Xmm x = cc_.newXmm();
  if (wide(t)) {
    cc_.vmovq(x, g.r64());
    cc_.vpbroadcastq(r, x);
  } else {
    cc_.vmovd(x, g.r32());
    cc_.vpbroadcastd(r, x);
  }
  return r;
}

ax::Vec VecEmitter::broadcast_int_as(DType t, const ax::Gp& g) {
  if (!is_floating(t)) return broadcast_gpr(t, g);
  ax::Xmm x = cc_.newXmm();
  cc_.vxorps(x, x, x);
  ax::Vec r = new_vec(t);
  if (t == DType::kFloat32) {
    cc_.vcvtsi2ss(x, x, g.r64());
    cc_.vbroadcastss(r, x);
  } else {
    cc_.vcvtsi2sd(x, x, g.r64());
    if (r.size() == 16) cc_.vmovddup(r, x);
    else cc_.vbroadcastsd(r, x);
  }
  return r;
}

Mask VecEmitter::convert_mask(DType from, DType to, const Mask& m) {
  if (avx512_ || lane_width(from) == lane_width(to)) return m;
  Mask out;
  if (lane_width(to) == 8) {
    out.v = new_vec(to);
    cc_.vpmovsxdq(out.v, m.v);
  } else {
    out.v = narrow64to32(m.v);
  }
  return out;
}

void VecEmitter::store_lane0(DType t, const ax::Mem& m, const ax::Vec& v) {
  ax::Mem mm = m;
  ax::Xmm x = v.as<ax::Xmm>();
  switch (t) {
    case DType::kFloat32: mm.setSize(4); cc_.vmovss(mm, x); break;
    case DType::kFloat64: mm.setSize(8); cc_.vmovsd(mm, x); break;
    case DType::kInt32: mm.setSize(4); cc_.vmovd(mm, x); break;
    case DType::kInt64: mm.setSize(8); cc_.vmovq(mm, x); break;
    case DType::kBool: {
      ax::Gp g = cc_.newGpd();
      cc_.vmovd(g, x);
      mm.setSize(1);
      cc_.mov(mm, g.r8());
      break;
    }
  }
}

// ---- casts -----------------------------------------------------------------------------

ax::Vec VecEmitter::scalar_convert(DType from, DType to, const ax::Vec& v) {
  // AVX2 has no vector int64 <-> float conversions; go through the stack,
  // one lane at a time, with the scalar instructions C++ uses.
  ax::Mem in = cc_.newStack(64, 32);
  ax::Mem out = cc_.newStack(64, 32);
  cc_.vmovups(in, v);
  ax::Gp g = cc_.newGpq();
  ax::Xmm x = cc_.newXmm();
  for (int i = 0; i < lanes_; ++i) {
    ax::Mem src = in.cloneAdjusted(i * lane_width(from));
    ax::Mem dst = out.cloneAdjusted(i * lane_width(to));
    src.setSize(lane_width(from));
    dst.setSize(lane_width(to));
    if (from == DType::kInt64) {
      cc_.mov(g, src);
      cc_.vxorps(x, x, x);
      if (to == DType::kFloat64) {
        cc_.vcvtsi2sd(x, x, g);
        cc_.vmovsd(dst, x);
      } else {
        cc_.vcvtsi2ss(x, x, g);
        cc_.vmovss(dst, x);
      }
    } else {
      if (from == DType::kFloat32) cc_.vcvttss2si(g, src);
      else cc_.vcvttsd2si(g, src);
      cc_.mov(dst, g);
    }
  }
  ax::Vec r = new_vec(to);
  cc_.vmovups(r, out);
  return r;
}

ax::Vec VecEmitter::cast(DType from, DType to, const ax::Vec& v) {
  if (from == to) return v;
  if (to == DType::kBool) return mask_to_bool(from, cmp(from, Cmp::kNe, v, zero(from)));
  if (from == DType::kBool) {
    if (to == DType::kInt32) return v;  // already int32 lanes holding 0/1
    from = DType::kInt32;
  }
  ax::Vec r = new_vec(to);
  switch (from) {
    case DType::kInt32:
      if (to == DType::kFloat32) cc_.vcvtdq2ps(r, v);
      else if (to == DType::kFloat64) cc_.vcvtdq2pd(r, v);
      else cc_.vpmovsxdq(r, v);
      return r;
    case DType::kFloat32:
      if (to == DType::kInt32) cc_.vcvttps2dq(r, v);
      else if (to == DType::kFloat64) cc_.vcvtps2pd(r, v);
      else if (avx512_) cc_.vcvttps2qq(r, v);
      else return scalar_convert(from, to, v);
      return r;
    case DType::kFloat64:
      if (to == DType::kFloat32) cc_.vcvtpd2ps(r, v);
      else if (to == DType::kInt32) cc_.vcvttpd2dq(r, v);
      else if (avx512_) cc_.vcvttpd2qq(r, v);
      else return scalar_convert(from, to, v);
      return r;
    case DType::kInt64:
      if (to == DType::kInt32) {
        if (avx512_) cc_.vpmovqd(r, v);
        else return narrow64to32(v);
      } else if (avx512_) {
        cc_.emit(to == DType::kFloat64 ? I::kIdVcvtqq2pd : I::kIdVcvtqq2ps, r, v);
      } else {
        return scalar_convert(from, to, v);
      }
      return r;
    case DType::kBool:
      break;
  }
  throw Error("VecEmitter::cast: unhandled conversion");
}

}  // namespace wok::jit::x86
