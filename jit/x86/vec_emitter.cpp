// VecEmitter's constants, loads and stores, arithmetic and bit operations;
// its masks and its lane operations (reductions across lanes, broadcasts,
// casts) are in vec_emitter_masks.cpp and vec_emitter_lanes.cpp.
#include "wok/jit/x86/vec_emitter.h"

#include "wok/jit/fused_kernel.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "wok/jit/x86/vec_emitter_internal.h"
#include "wok/runtime/cpu_features.h"
#include "wok/runtime/error.h"
#include "wok/runtime/scalar.h"

namespace wok::jit::x86 {

using namespace vec_internal;

VecEmitter::VecEmitter(ax::Compiler& cc, bool avx512, int lanes)
    : cc_(cc), avx512_(avx512), bf16_(avx512 && host_has_avx512_bf16()), lanes_(lanes) {}

ax::Vec VecEmitter::vec_of_bytes(int bytes) {
  // One zmm register, even unused, lets asmjit's allocator hand out
  // xmm16-31, whose EVEX encodings fault on AVX2 machines.
  if (bytes == 64 && !avx512_) throw wok::Error("x86 JIT: a 64-byte vector in an AVX2 kernel (internal error)");
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
  ConstKey key = const_key(t, bits);
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

// Note [Loop constants on AVX2]
// AVX2 has 16 vector registers, so constants stay in the pool and most
// instructions read them from memory at no cost of their own (the load is
// part of the instruction). Some instructions need a constant in a
// register: a clamp (vmaxps keeps its second operand's nan, so the
// constant must be the first operand, a register), and a multiply-add
// whose addend is a constant (the addend is copied into the destination
// first). Each of those took a load per vector: in the exp of softmax's
// second pass, the clamp, the magic number that rounds n and the
// polynomial's first addend, three of its 22 instructions per vector. The
// pass had two more copies per vector that need not be: each accumulation
// into a new register and a copy back (now written in place: add's `into`),
// and a copy of the clamped argument that the reduction by ln2 overwrote
// (now reduced in its own register: exp_reduce's x_scratch), and its
// software pipelining (Note [Software-pipelined steps]) carried four
// values from one iteration to the next by copies, in a loop that used all
// 16 registers. On AVX2 a row kernel's walk with a transcendental now
// interleaves its copies instead (Note [Interleaved copies]), which leaves
// registers to spare, and marks its loops' span: while it emits the
// unrolled body, up to kLoopConstantRegisters (row_codegen.cpp) such
// constants are claimed, loaded once per walk along the row, and read from
// their registers by every loop and tail of the walk (a copy from a
// register is renamed away; a load is not). The loop went from 22.5 to 18
// vector instructions per vector in a half type, 26 to 20 in float32.
//
// Measured on a Zen 3 EPYC (AVX2) with the JIT's own listings of the
// float16 softmax's exp loop run standalone (best of 4 runs of 60 rounds):
// 6.5-7.1 cycles per vector before, 5.5-6.0 after (9-10 against 8 while
// the host was busy). Softmax, the library before and after alternating
// in one probe (16-20 pairs, median of the paired ratios, 1 thread; two
// probes): over [64, 4096] in cache 0.90-0.91 of the time before in
// float32, 0.90-0.96 in float16, 0.91-0.95 in bfloat16; over [4096, 4096]
// 0.89-0.97, 0.85-0.90 and 0.90-0.93. The budget is opened
// around the loop's body only, since a constant claimed anywhere in the
// span is live across all of it (a reduction's identity, claimed at the
// walk's top, took a register the loop needed).
ax::Vec VecEmitter::hoist(DType t, uint64_t bits, asmjit::BaseNode*& at,
                          std::map<ConstKey, ax::Vec>& held) {
  ConstKey key = const_key(t, bits);
  if (auto it = held.find(key); it != held.end()) return it->second;
  ax::Mem m = const_bits(t, bits);
  ax::Vec r = new_vec(t);
  asmjit::BaseNode* here = cc_.setCursor(at);
  cc_.vmovups(r, m);
  const bool at_cursor = here == at;  // nothing emitted since the mark: go on after the load
  at = cc_.cursor();
  cc_.setCursor(at_cursor ? at : here);
  held.emplace(key, r);
  return r;
}

void VecEmitter::mark_loop_preamble() {
  if (avx512_) return;  // every constant is hoisted already
  loop_preamble_ = cc_.cursor();
  loop_registers_left_ = 0;
  loop_consts_.clear();
}

void VecEmitter::end_loop_constants() {
  loop_preamble_ = nullptr;
  loop_registers_left_ = 0;
  loop_consts_.clear();
}

asmjit::Operand VecEmitter::const_bits_operand(DType t, uint64_t bits) {
  if (avx512_ && preamble_) return hoist(t, bits, preamble_, hoisted_);
  if (auto it = loop_consts_.find(const_key(t, bits)); it != loop_consts_.end()) return it->second;
  return const_bits(t, bits);
}

asmjit::Operand VecEmitter::const_operand(DType t, double value) { return const_bits_operand(t, constant_bits(t, value)); }

asmjit::Operand VecEmitter::const_addend(DType t, double value) {
  uint64_t bits = constant_bits(t, value);
  if (loop_preamble_ && loop_registers_left_ > 0 && !loop_consts_.count(const_key(t, bits))) {
    --loop_registers_left_;
    return hoist(t, bits, loop_preamble_, loop_consts_);
  }
  return const_bits_operand(t, bits);
}

ax::Vec VecEmitter::const_vec(DType t, double value) {
  asmjit::Operand op = const_addend(t, value);
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
  if (t == DType::kBool) {
    cc_.vpmovzxbd(r, m);  // bytes -> int32 lanes
  } else if (is_narrow_int(t)) {
    // Note [Narrow integers in registers]: extended to int32 lanes.
    switch (t) {
      case DType::kInt8: cc_.vpmovsxbd(r, m); break;
      case DType::kUInt8: cc_.vpmovzxbd(r, m); break;
      case DType::kInt16: cc_.vpmovsxwd(r, m); break;
      default: cc_.vpmovzxwd(r, m); break;
    }
  } else if (t == DType::kUInt32) {
    cc_.vpmovzxdq(r, m);  // zero-extended to int64 lanes
  } else if (t == DType::kFloat16) {
    cc_.vcvtph2ps(r, m);
  } else if (t == DType::kBFloat16) {
    cc_.vpmovzxwd(r, m);
    cc_.vpslld(r, r, 16);
  } else {
    cc_.vmovups(r, m);
  }
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
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kUInt16: {
      mm.setSize(itemsize(t));
      ax::Gp g = cc_.newGpd();
      if (t == DType::kInt8 || t == DType::kInt16) cc_.movsx(g, mm);
      else cc_.movzx(g, mm);
      ax::Xmm x = cc_.newXmm();
      cc_.vmovd(x, g);
      cc_.vpbroadcastd(r, x);
      break;
    }
    case DType::kUInt32: {
      mm.setSize(4);
      ax::Gp g = cc_.newGpd();
      cc_.mov(g, mm);  // zero-extends to 64 bits
      ax::Xmm x = cc_.newXmm();
      cc_.vmovq(x, g.r64());
      cc_.vpbroadcastq(r, x);
      break;
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      mm.setSize(2);
      ax::Gp g = cc_.newGpd();
      cc_.movzx(g, mm);
      if (t == DType::kBFloat16) cc_.shl(g, 16);
      ax::Xmm x = cc_.newXmm();
      cc_.vmovd(x, g);
      if (t == DType::kFloat16) cc_.vcvtph2ps(x, x);
      cc_.vpbroadcastd(r, x);
      break;
    }
    default: throw Error("x86 JIT: broadcast_load of " + std::string(dtype_name(t)) + " (internal error)");
  }
  return r;
}

void VecEmitter::store(DType t, const ax::Mem& m, const ax::Vec& v) {
  // Converting into a register and storing that: the memory forms of
  // vcvtps2ph and vpmovdw are microcoded on Zen 4 (a float16 GELU ran at
  // half float32's speed with them).
  if (t == DType::kFloat16) {
    ax::Vec h = vec_of_bytes(std::max(16, static_cast<int>(v.size()) / 2));
    cc_.vcvtps2ph(h, v, 0);  // imm 0: round to nearest even
    store_packed(m, h, v.size() / 2);
    return;
  }
  if (t == DType::kBFloat16) {
    if (avx512_) store_packed(m, bfloat16_words(v), v.size() / 2);
    else store_int32_lanes_low(m, bfloat16_bits(v), 2, /*in_range=*/true);
    return;
  }
  if (t == DType::kUInt32) {
    store_int64_lanes_low(m, v);
    return;
  }
  if (t == DType::kBool || is_narrow_int(t)) {
    // Note [Narrow integers in registers]; bools are 0 or 1.
    store_int32_lanes_low(m, v, static_cast<int>(itemsize(t)), /*in_range=*/t == DType::kBool);
    return;
  }
  cc_.vmovups(m, v);
}

void VecEmitter::store_packed(const ax::Mem& m, const ax::Vec& h, uint32_t bytes) {
  // A vmovdqu stores its register whole: a ymm register's xmm view is
  // still stored as 32 bytes (a uint32 store once wrote 16 bytes past its
  // output that way). The smaller stores have only an xmm form.
  if (bytes >= 16 && h.size() != bytes)
    throw Error("x86 JIT: a " + std::to_string(h.size()) + "-byte register stored as " + std::to_string(bytes) +
                " bytes (internal error)");
  ax::Mem mm = m;
  mm.setSize(bytes);
  if (bytes >= 16) cc_.vmovdqu(mm, h);
  else if (bytes == 8) cc_.vmovq(mm, h.as<ax::Xmm>());
  else cc_.vmovd(mm, h.as<ax::Xmm>());
}

void VecEmitter::store_int32_lanes_low(const ax::Mem& m, const ax::Vec& v, int width, bool in_range) {
  const uint32_t stored = static_cast<uint32_t>(v.size() / 4 * width);
  ax::Xmm x = cc_.newXmm();
  if (avx512_) {
    // Into a register, then stored (the memory forms are microcoded on Zen 4).
    ax::Vec h = width == 1 ? ax::Vec(x) : vec_of_bytes(std::max(16, static_cast<int>(v.size()) / 2));
    if (width == 1) cc_.vpmovdb(h, v);
    else cc_.vpmovdw(h, v);
    store_packed(m, h, stored);
    return;
  }
  // AVX2: unsigned-saturating packs, which keep values already in range.
  ax::Vec low = v;
  if (!in_range) {
    low = vec_of_bytes(v.size());
    cc_.vpand(low, v, const_bits(DType::kInt32, width == 1 ? 0xFF : 0xFFFF));
  }
  if (v.size() == 32) {
    ax::Xmm hi = cc_.newXmm();
    cc_.vextracti128(hi, low.as<ax::Ymm>(), 1);
    cc_.vpackusdw(x, low.as<ax::Ymm>().xmm(), hi);
  } else {
    cc_.vpackusdw(x, low.as<ax::Xmm>(), low.as<ax::Xmm>());
  }
  if (width == 1) cc_.vpackuswb(x, x, x);
  store_packed(m, x, stored);
}

void VecEmitter::store_int64_lanes_low(const ax::Mem& m, const ax::Vec& v) {
  const uint32_t stored = v.size() / 2;
  if (avx512_) {
    ax::Vec h = vec_of_bytes(std::max(16, static_cast<int>(v.size()) / 2));
    cc_.vpmovqd(h, v);
    store_packed(m, h, stored);
    return;
  }
  // AVX2: the even dwords to the bottom of each 128-bit half, then the
  // halves' bottom quadwords together, into an xmm register of its own (a
  // ymm register's xmm view stored as such is stored whole).
  ax::Xmm x = cc_.newXmm();
  if (v.size() == 32) {
    ax::Ymm t = cc_.newYmm();
    cc_.vpshufd(t, v, 0x08);
    cc_.vpermq(t, t, 0x08);
    cc_.vextracti128(x, t, 0);
  } else {
    cc_.vpshufd(x, v, 0x08);
  }
  store_packed(m, x, stored);
}

// ---- arithmetic ------------------------------------------------------------------------

ax::Vec VecEmitter::add(DType t, const ax::Vec& a, const Operand& b, const ax::Vec* into) {
  ax::Vec r = new_vec_or(t, into);
  cc_.emit(pick(t, I::kIdVaddps, I::kIdVaddpd, I::kIdVpaddd, I::kIdVpaddq), r, a, b);
  return r;
}

ax::Vec VecEmitter::sub(DType t, const ax::Vec& a, const Operand& b) {
  ax::Vec r = new_vec(t);
  cc_.emit(pick(t, I::kIdVsubps, I::kIdVsubpd, I::kIdVpsubd, I::kIdVpsubq), r, a, b);
  return r;
}

ax::Vec VecEmitter::mul(DType t, const ax::Vec& a, const Operand& b, const ax::Vec* into) {
  ax::Vec r = new_vec_or(t, into);
  if (t == DType::kInt64 && !avx512_) {
    // a*b mod 2^64 from 32x32->64 products: lo*lo + ((hi*lo + lo*hi) << 32).
    ax::Vec bv = new_vec(t);
    if (b.isMem()) cc_.vmovups(bv, b.as<ax::Mem>());
    else bv = b.as<ax::Vec>();
    int64_mul_avx2(r, a, bv);
    return r;
  }
  cc_.emit(pick(t, I::kIdVmulps, I::kIdVmulpd, I::kIdVpmulld, I::kIdVpmullq), r, a, b);
  return r;
}

void VecEmitter::int64_mul_avx2(const ax::Vec& r, const ax::Vec& a, const ax::Vec& b) {
  ax::Vec ah = vec_of_bytes(r.size()), bh = vec_of_bytes(r.size()), t1 = vec_of_bytes(r.size());
  cc_.vpmuludq(t1, a, b);
  cc_.vpsrlq(ah, a, 32);
  cc_.vpsrlq(bh, b, 32);
  cc_.vpmuludq(ah, ah, b);
  cc_.vpmuludq(bh, bh, a);
  cc_.vpaddq(ah, ah, bh);
  cc_.vpsllq(ah, ah, 32);
  cc_.vpaddq(r, t1, ah);
}

void VecEmitter::int64_max_avx2(const ax::Vec& r, const ax::Vec& a, const ax::Vec& b) {
  ax::Vec m = vec_of_bytes(r.size());
  cc_.vpcmpgtq(m, a, b);  // a > b: take a
  cc_.vblendvpd(r, b, a, m);
}

void VecEmitter::int64_min_avx2(const ax::Vec& r, const ax::Vec& a, const ax::Vec& b) {
  ax::Vec m = vec_of_bytes(r.size());
  cc_.vpcmpgtq(m, b, a);  // b > a: take a
  cc_.vblendvpd(r, b, a, m);
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

ax::Vec VecEmitter::fnma(DType t, const ax::Vec& a, const Operand& b, const Operand& c) {
  ax::Vec r = new_vec(t);
  if (c.isMem()) cc_.vmovups(r, c.as<ax::Mem>());
  else cc_.vmovaps(r, c.as<ax::Vec>());
  cc_.emit(is_f32(t) ? I::kIdVfnmadd231ps : I::kIdVfnmadd231pd, r, a, b);  // r = -(a*b) + r
  return r;
}

void VecEmitter::fma_acc(DType t, const ax::Vec& acc, const ax::Vec& x, const Operand& c) {
  cc_.emit(is_f32(t) ? I::kIdVfmadd213ps : I::kIdVfmadd213pd, acc, x, c);  // acc = acc*x + c
}

void VecEmitter::fnma_acc(DType t, const ax::Vec& acc, const ax::Vec& a, const Operand& b) {
  cc_.emit(is_f32(t) ? I::kIdVfnmadd231ps : I::kIdVfnmadd231pd, acc, a, b);  // acc = -(a*b) + acc
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
    int64_max_avx2(r, a, bv);
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
    int64_min_avx2(r, a, bv);
    return r;
  }
  cc_.emit(pick(t, I::kIdVminps, I::kIdVminpd, I::kIdVpminsd, I::kIdVpminsq), r, a, b);
  return r;
}

ax::Vec VecEmitter::max(DType t, const ax::Vec& a, const ax::Vec& b, const ax::Vec* into) {
  return nan_of_a_wins(t, a, max_raw(t, a, b), into);
}

ax::Vec VecEmitter::min(DType t, const ax::Vec& a, const ax::Vec& b, const ax::Vec* into) {
  return nan_of_a_wins(t, a, min_raw(t, a, b), into);
}

ax::Vec VecEmitter::nan_of_a_wins(DType t, const ax::Vec& a, const ax::Vec& raw, const ax::Vec* into) {
  if (is_floating(t)) return blend(t, is_nan(t, a), a, raw, into);
  if (!into) return raw;
  cc_.vmovaps(*into, raw);  // integer lanes: no blend to write it
  return *into;
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

ax::Vec VecEmitter::shl_var(DType t, const ax::Vec& a, const ax::Vec& counts) {
  ax::Vec r = new_vec(t);
  cc_.emit(wide(t) ? I::kIdVpsllvq : I::kIdVpsllvd, r, a, counts);
  return r;
}
ax::Vec VecEmitter::shr_var(DType t, const ax::Vec& a, const ax::Vec& counts) {
  ax::Vec r = new_vec(t);
  cc_.emit(wide(t) ? I::kIdVpsrlvq : I::kIdVpsrlvd, r, a, counts);
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

}  // namespace wok::jit::x86
