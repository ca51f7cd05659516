// VecEmitter's lane operations: reductions across lanes, lane indices,
// broadcasts, lane 0 stores and casts between dtypes; separate from the
// per-lane arithmetic in vec_emitter.cpp.
#include "wok/jit/x86/vec_emitter.h"

#include <algorithm>

#include <cstring>
#include <vector>

#include "wok/jit/x86/vec_emitter_internal.h"
#include "wok/runtime/error.h"

namespace wok::jit::x86 {

using namespace vec_internal;

// ---- across lanes -----------------------------------------------------------------

ax::Vec VecEmitter::reduce_lanes(ScalarOp op, DType t, const ax::Vec& v) {
  Id id;
  switch (reduce_kind(op)) {
    case ReduceKind::kSum: id = pick(t, I::kIdVaddps, I::kIdVaddpd, I::kIdVpaddd, I::kIdVpaddq); break;
    case ReduceKind::kProd: id = pick(t, I::kIdVmulps, I::kIdVmulpd, I::kIdVpmulld, I::kIdVpmullq); break;
    case ReduceKind::kMax: id = pick(t, I::kIdVmaxps, I::kIdVmaxpd, I::kIdVpmaxsd, I::kIdVpmaxsq); break;
    case ReduceKind::kMin: id = pick(t, I::kIdVminps, I::kIdVminpd, I::kIdVpminsd, I::kIdVpminsq); break;
    case ReduceKind::kArgmax:
    case ReduceKind::kNone:
      throw Error("x86 JIT: reduce_lanes of '" + std::string(scalar_op_name(op)) + "' (internal error)");
  }
  // AVX2 has no int64 max, min or multiply (vpmaxsq, vpminsq and vpmullq
  // are AVX-512 only, and would fault): those combine in AVX2 instructions.
  const ReduceKind kind = reduce_kind(op);
  const bool emulate = t == DType::kInt64 && !avx512_ && kind != ReduceKind::kSum;
  auto combine = [&](const ax::Vec& r, const ax::Vec& a, const ax::Vec& b) {
    if (!emulate) cc_.emit(id, r, a, b);
    else if (kind == ReduceKind::kMax) int64_max_avx2(r, a, b);
    else if (kind == ReduceKind::kMin) int64_min_avx2(r, a, b);
    else int64_mul_avx2(r, a, b);
  };
  // Halve the width down to one xmm, then combine within it.
  ax::Vec cur = v;
  while (cur.size() > 16) {
    ax::Vec hi = vec_of_bytes(cur.size() / 2), r = vec_of_bytes(cur.size() / 2);
    if (cur.size() == 64) {
      cc_.vextractf64x4(hi.as<ax::Ymm>(), cur.as<ax::Zmm>(), 1);
      combine(r, cur.as<ax::Zmm>().ymm(), hi);
    } else {
      cc_.vextractf128(hi.as<ax::Xmm>(), cur.as<ax::Ymm>(), 1);
      combine(r, cur.as<ax::Ymm>().xmm(), hi);
    }
    cur = r;
  }
  ax::Xmm x = cur.as<ax::Xmm>();
  ax::Xmm t1 = cc_.newXmm(), r1 = cc_.newXmm();
  if (!wide(t)) {
    cc_.vpermilps(t1, x, 0x4E);  // swap 64-bit halves
    combine(r1, x, t1);
    ax::Xmm t2 = cc_.newXmm();
    x = cc_.newXmm();
    cc_.vpermilps(t2, r1, 0xB1);  // swap neighbours
    combine(x, r1, t2);
  } else {
    cc_.vpermilpd(t1, x, 1);
    combine(r1, x, t1);
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

// Note [Vector lanes into general registers]
// vmovd and vmovq have two forms, xmm <- r/m and r/m <- xmm, and Debian's
// asmjit (a 2022 snapshot) lets its register allocator put a spilled vector
// operand of `vmovd r32, xmm` in memory, as if the first form's r/m were
// allowed there: it then encodes `vmovd xmm0, [slot]`, which overwrites
// xmm0 and leaves the general register unset (random program 1001942, an
// AVX2 row kernel with 18 outputs: a bool output got a stale byte and the
// float64 output stored after it got the bool). vpextrd, vpextrq and
// vpextrb take their vector operand from a register only, so the allocator
// reloads a spilled one; a bool lane is stored with vpextrb directly.
void VecEmitter::lane0_to_gpr(const ax::Gp& g, const ax::Vec& v) {
  if (g.size() == 8) cc_.vpextrq(g, v.as<ax::Xmm>(), 0);
  else cc_.vpextrd(g, v.as<ax::Xmm>(), 0);
}

void VecEmitter::store_lane0(DType t, const ax::Mem& m, const ax::Vec& v) {
  ax::Mem mm = m;
  ax::Xmm x = v.as<ax::Xmm>();
  switch (t) {
    case DType::kFloat32: mm.setSize(4); cc_.vmovss(mm, x); break;
    case DType::kFloat64: mm.setSize(8); cc_.vmovsd(mm, x); break;
    case DType::kInt32: mm.setSize(4); cc_.vmovd(mm, x); break;
    case DType::kInt64: mm.setSize(8); cc_.vmovq(mm, x); break;
    case DType::kBool:
    case DType::kInt8:
    case DType::kUInt8:
      mm.setSize(1);
      cc_.vpextrb(mm, x, 0);  // not through a register: Note [Vector lanes into general registers]
      break;
    case DType::kInt16:
    case DType::kUInt16:
      mm.setSize(2);
      cc_.vpextrw(mm, x, 0);
      break;
    case DType::kUInt32: mm.setSize(4); cc_.vmovd(mm, x); break;
    case DType::kFloat16: {
      ax::Xmm h = cc_.newXmm();
      cc_.vcvtps2ph(h, x, 0);
      mm.setSize(2);
      cc_.vpextrw(mm, h, 0);
      break;
    }
    case DType::kBFloat16: {
      mm.setSize(2);
      cc_.vpextrw(mm, bfloat16_bits(v).as<ax::Xmm>(), 0);
      break;
    }
    default: throw Error("x86 JIT: store_lane0 of " + std::string(dtype_name(t)) + " (internal error)");
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

ax::Vec VecEmitter::bfloat16_rounded_high(const ax::Vec& v, const ax::Vec& top) {
  // bits + 0x7FFF + (bit 16 of bits): round to nearest even in the high
  // word (an overflow carries into the exponent: to infinity). NaN lanes
  // are the caller's.
  ax::Vec lsb = vec_of_bytes(v.size()), r = vec_of_bytes(v.size());
  cc_.vpsrld(top, v, 16);
  cc_.vpand(lsb, top, const_bits(DType::kInt32, 1));
  cc_.vpaddd(r, v, const_bits(DType::kInt32, 0x7FFF));
  cc_.vpaddd(r, r, lsb);
  return r;
}

ax::Vec VecEmitter::bfloat16_high(const ax::Vec& v) {
  // A NaN keeps its sign and top payload bits, made quiet.
  ax::Vec top = vec_of_bytes(v.size()), quiet = vec_of_bytes(v.size());
  ax::Vec r = bfloat16_rounded_high(v, top);
  cc_.vpor(quiet, v, const_bits(DType::kInt32, 0x00400000));
  return blend(DType::kFloat32, is_nan(DType::kFloat32, v), quiet, r);
}

ax::Vec VecEmitter::bfloat16_bits(const ax::Vec& v) {
  ax::Vec r = vec_of_bytes(v.size());
  if (!avx512_) {
    cc_.vpsrld(r, bfloat16_high(v), 16);
    return r;
  }
  // The quiet NaN straight into the NaN lanes: one masked instruction
  // where a blend took an OR and two moves (r is written first, so the
  // merge reads nothing undefined).
  ax::Vec top = vec_of_bytes(v.size());
  cc_.vpsrld(r, bfloat16_rounded_high(v, top), 16);
  const Mask nan = is_nan(DType::kFloat32, v);
  cc_.k(nan.k).vpord(r, top, const_bits(DType::kInt32, 0x0040));
  return r;
}

void VecEmitter::load_bfloat16_pair(const ax::Mem& m, ax::Vec* even, ax::Vec* odd) {
  // Note [bfloat16 pairs]: element 2i's bits are word 2i, the low word of
  // dword i; element 2i + 1's, the high word.
  ax::Vec w = vec_of_bytes(32);
  ax::Mem mm = m;
  mm.setSize(32);
  cc_.vmovdqu(w, mm);
  *even = vec_of_bytes(32);
  *odd = vec_of_bytes(32);
  cc_.vpslld(*even, w, 16);
  cc_.vpand(*odd, w, const_bits(DType::kInt32, 0xFFFF0000u));
}

void VecEmitter::store_bfloat16_pair(const ax::Mem& m, const ax::Vec& even, const ax::Vec& odd) {
  ax::Vec w = vec_of_bytes(32);
  cc_.vpsrld(w, bfloat16_high(even), 16);
  cc_.vpblendw(w, w, bfloat16_high(odd), 0xAA);  // the odd elements' high words over the even ones' zeros
  ax::Mem mm = m;
  mm.setSize(32);
  cc_.vmovdqu(mm, w);
}

ax::Vec VecEmitter::bfloat16_words(const ax::Vec& v) {
  ax::Vec h = vec_of_bytes(std::max(16, static_cast<int>(v.size()) / 2));
  if (!bf16_) {
    cc_.vpmovdw(h, bfloat16_bits(v));
    return h;
  }
  // Note [bfloat16 stores]: vcvtneps2bf16, and the integer code again for
  // a vector with a subnormal lane (vfpclassps class 0x20: denormal).
  asmjit::Label done = cc_.newLabel();
  ax::KReg sub = cc_.newKq();
  cc_.vcvtneps2bf16(h, v);
  cc_.vfpclassps(sub, v, 0x20);
  cc_.kortestw(sub, sub);
  cc_.jz(done);
  cc_.vpmovdw(h, bfloat16_bits(v));
  cc_.bind(done);
  return h;
}

ax::Vec VecEmitter::round_to_half(DType t, const ax::Vec& v) {
  ax::Vec r = vec_of_bytes(v.size());
  if (t == DType::kFloat16) {
    ax::Vec h = vec_of_bytes(std::max(16, static_cast<int>(v.size()) / 2));
    cc_.vcvtps2ph(h, v, 0);
    cc_.vcvtph2ps(r, h);
  } else if (bf16_) {
    cc_.vpmovzxwd(r, bfloat16_words(v));
    cc_.vpslld(r, r, 16);
  } else {
    cc_.vpand(r, bfloat16_high(v), const_bits(DType::kInt32, 0xFFFF0000u));
  }
  return r;
}

ax::Vec VecEmitter::wrap_to(DType t, const ax::Vec& v) {
  ax::Vec r = vec_of_bytes(v.size());
  if (t == DType::kUInt32) {  // int64 lanes
    cc_.vpand(r, v, const_bits(DType::kInt64, 0xFFFFFFFFu));
    return r;
  }
  if (is_unsigned(t)) {
    cc_.vpand(r, v, const_bits(DType::kInt32, t == DType::kUInt8 ? 0xFF : 0xFFFF));
    return r;
  }
  const int shift = t == DType::kInt8 ? 24 : 16;
  cc_.vpslld(r, v, shift);
  cc_.vpsrad(r, r, shift);
  return r;
}

ax::Vec VecEmitter::cast(DType from, DType to, const ax::Vec& v) {
  if (from == to) return v;
  // Narrow integers are int32 in registers (Note [Narrow integers in registers]).
  if (is_widened_int(to)) {
    const DType wide = compute_dtype(to);
    return wrap_to(to, cast(is_widened_int(from) ? compute_dtype(from) : from, wide, v));
  }
  if (is_widened_int(from)) from = compute_dtype(from);
  if (from == to) return v;
  // Half types are float32 in registers (Note [Half types in registers]).
  if (is_half(to)) return round_to_half(to, is_half(from) ? v : cast(from, DType::kFloat32, v));
  if (is_half(from)) from = DType::kFloat32;
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
    default: break;
  }
  throw Error("VecEmitter::cast: unhandled conversion");
}

}  // namespace wok::jit::x86
