// VecEmitter: wok's thin layer over asmjit's x86::Compiler. It knows how
// each vector primitive of the scalar IR maps to AVX-512 or AVX2+FMA
// instructions for each dtype, so the code generator above it never
// branches on the instruction set.
//
// Note [Lanes and registers]
// A kernel processes `lanes` elements per step. Every value is held in one
// register of lanes * width bytes (xmm, ymm or zmm), where width is the
// dtype's size and 4 for bool (bools live as int32 lanes holding 0 or 1).
// lanes = vector bytes / the widest width in the kernel, so float32 next to
// float64 uses half-width registers rather than two registers per value.
//
// Note [Half types in registers]
// float16 and bfloat16 live as float32 lanes (width 4, like bool): a load
// widens them exactly (F16C vcvtph2ps; a bfloat16 is a float32's top half,
// so a zero-extension and a 16-bit shift), a store rounds to nearest even
// once (vcvtps2ph; for bfloat16 integer arithmetic on the bits, NaN kept
// quiet, or AVX512-BF16: Note [bfloat16 stores]), and a cast to a half
// type rounds in the register (to the half type and back). Everything
// between is float32 arithmetic: the generator sees a
// program whose half-typed values are float32 but for its inputs, its casts
// to a half type and its outputs (Note [Programs in their compute dtypes]
// in runtime/compute_program.h).
//
// Note [Narrow integers in registers]
// int8, uint8, int16 and uint16 live as int32 lanes, like bool: a load
// sign- or zero-extends them (vpmovsx/vpmovzx), a store keeps the low bits
// (vpmovdb/vpmovdw; AVX2 masks them and packs), and a cast to one wraps in
// the register (a shift up and an arithmetic shift down, or a mask), so
// the value stays the int32 its type's range allows. compute_program
// (runtime/compute_program.h) turns every narrow op into its int32 op
// followed by that wrap: the bits of the precompiled kernels, which widen
// each op's operands to int32 and wrap its result (Note [The widening
// adapter] in runtime/widening.h). uint32 lives the same way as int64 lanes (vpmovzxdq
// loads, stores of the low dwords, a mask as its wrap); uint64 has no
// wider type and stays with the precompiled kernels.
//
// Note [bfloat16 stores]
// Rounding float32 to bfloat16 with integer arithmetic (bfloat16_bits) is
// seven instructions a vector, and it made bfloat16 kernels slower than
// float16 ones (layer_norm over [4096, 4096]: 0.165 ns an element against
// 0.135 on a Zen 5 EPYC). AVX512-BF16's vcvtneps2bf16 rounds the same way
// (to nearest even, a NaN made quiet with its sign and top payload bits
// kept) in one, but reads subnormal inputs as zero, where the integer code
// rounds them like any other value. So where the host has it, a store
// converts with it, asks vfpclassps whether a lane was subnormal, and only
// then (rarely: the values a network produces are normal) converts the
// vector again with the integer code: 0.140 ns an element. Hosts without
// it, and WOK_CPU_ISA=avx512 (the base AVX-512 set, to test that path on a
// host with it), keep the integer code; the kernel's signature and its
// cache entry's required features say which (uses_avx512_bf16).
//
// On AVX2 a bfloat16 vector costs two instructions to load (vpmovzxwd,
// vpslld), eight to round and three to pack and store. Two levers were
// measured in standalone loops of p1 over 2^24 elements on a Zen 3 EPYC
// (bench_half_programs' last table, bench/bfloat16_store_probe.h):
//  - Pairs of vectors in even/odd order: one 32-byte load gives the even
//    elements (vpslld 16) and the odd ones (vpand 0xFFFF0000), and one vpsrld
//    and one vpblendw put the two rounded vectors back, so each element gets
//    the same bits with, every 16 values, one instruction fewer per input
//    and five per output. Taken by elementwise kernels whose streamed
//    operands are all bfloat16 (Note [bfloat16 pairs] in x86_codegen.cpp);
//    row kernels keep element order (their reductions would see the
//    permutation).
//  - Streaming stores for outputs larger than the last-level cache, in both
//    loops: time(float32) / time(bfloat16) 1.59 and 1.64, then 1.49 and
//    1.68. float32 gains from them too (0.66-0.75 ns an element to
//    0.57-0.73), so they speed both more than they close the ratio; not
//    taken.
#pragma once

#include <asmjit/x86.h>

#include <map>
#include <string>
#include <utility>

#include "wok/runtime/dtype.h"
#include "wok/runtime/scalar.h"
#include "wok/runtime/scalar_formula.h"

namespace wok::jit::x86 {

namespace ax = asmjit::x86;

enum class Cmp { kEq, kNe, kLt, kLe, kGt, kGe };

// A per-lane condition: a k register on AVX-512, a full-lane mask vector on
// AVX2. Lanes are those of the dtype it was made for.
struct Mask {
  ax::KReg k;
  ax::Vec v;
};

class VecEmitter {
 public:
  VecEmitter(ax::Compiler& cc, bool avx512, int lanes);

  // Where hoisted constants are loaded: call at function entry, and at the
  // entry of a region that should have registers of its own for them.
  void mark_preamble() {
    preamble_ = cc_.cursor();
    hoisted_.clear();  // constants hoisted before are not defined on a path to here
  }

  // Note [Loop constants on AVX2] (vec_emitter.cpp): between
  // mark_loop_preamble and end_loop_constants, constants that would be
  // loaded into a register (const_vec, const_addend) while a budget is
  // open, up to `registers` of them, are loaded once at the mark, and every
  // later use of them until the end reads that register. Mark before the
  // loop's entry; open the budget around the loop's body only (a constant
  // claimed anywhere is live across the whole span); end after the last
  // use.
  void mark_loop_preamble();
  void open_loop_constants(int registers) { loop_registers_left_ = loop_preamble_ ? registers : 0; }
  void close_loop_constants() { loop_registers_left_ = 0; }
  void end_loop_constants();

  ax::Compiler& cc() { return cc_; }
  bool avx512() const { return avx512_; }
  int lanes() const { return lanes_; }
  static int lane_width(DType t) {
    if (t == DType::kUInt32) return 8;  // Note [Narrow integers in registers]
    return t == DType::kBool || is_half(t) || is_narrow_int(t) ? 4 : static_cast<int>(itemsize(t));
  }
  int reg_bytes(DType t) const { return lanes_ * lane_width(t); }

  ax::Vec new_vec(DType t);

  // Constants live in the function's constant pool (RIP-relative, so the
  // code stays position-independent) as full-width vectors; most
  // instructions take them straight from memory.
  ax::Mem const_mem(DType t, double value);
  ax::Mem const_bits(DType t, uint64_t bits);
  // A constant as an instruction operand: on AVX-512 a register loaded once
  // at function entry (32 registers leave room), on AVX2 the pool memory.
  // Never write to it.
  asmjit::Operand const_operand(DType t, double value);
  asmjit::Operand const_bits_operand(DType t, uint64_t bits);
  // A constant in a register (hoisted on AVX-512, or a loop constant on
  // AVX2; read only).
  ax::Vec const_vec(DType t, double value);
  // A constant an instruction copies into its destination first (fma's
  // and fnma's addend c): a register where one holds it, whose copy costs
  // no load, else the pool memory.
  asmjit::Operand const_addend(DType t, double value);
  ax::Vec const_scalar(DType t, const Scalar& value);  // exact, also for int64
  ax::Vec zero(DType t);

  // Memory: `lanes` consecutive elements, or one element broadcast.
  ax::Vec load(DType t, const ax::Mem& m);
  ax::Vec broadcast_load(DType t, const ax::Mem& m);
  void store(DType t, const ax::Mem& m, const ax::Vec& v);
  // AVX2, 8 lanes: 16 bfloat16 values from 32 bytes as two float32 vectors,
  // the even elements and the odd ones, and back, rounded as store() rounds
  // (Note [bfloat16 pairs]).
  void load_bfloat16_pair(const ax::Mem& m, ax::Vec* even, ax::Vec* odd);
  void store_bfloat16_pair(const ax::Mem& m, const ax::Vec& even, const ax::Vec& odd);

  // Arithmetic on values of one dtype (ints wrap). `b` may be a constant
  // from const_mem. Where an `into` is given (add, mul, max, min, blend),
  // the result is written there, a register the caller owns (a reduction's
  // accumulator, after its last read), not to a new one: acc = acc + v in
  // one instruction where a new register and a copy back took two.
  ax::Vec add(DType t, const ax::Vec& a, const asmjit::Operand& b, const ax::Vec* into = nullptr);
  ax::Vec sub(DType t, const ax::Vec& a, const asmjit::Operand& b);
  ax::Vec mul(DType t, const ax::Vec& a, const asmjit::Operand& b, const ax::Vec* into = nullptr);
  ax::Vec div(DType t, const ax::Vec& a, const asmjit::Operand& b);  // floats
  ax::Vec fma(DType t, const ax::Vec& a, const asmjit::Operand& b, const asmjit::Operand& c);  // a*b + c
  // -(a*b) + c, rounded once: the same result as fma(-a, b, c), one
  // instruction fewer.
  ax::Vec fnma(DType t, const ax::Vec& a, const asmjit::Operand& b, const asmjit::Operand& c);
  // acc = acc*x + c in place; acc must be a temporary the caller owns.
  void fma_acc(DType t, const ax::Vec& acc, const ax::Vec& x, const asmjit::Operand& c);
  // acc = acc - a*b in place, rounded once as fnma(a, b, acc) rounds; acc
  // must be a temporary the caller owns.
  void fnma_acc(DType t, const ax::Vec& acc, const ax::Vec& a, const asmjit::Operand& b);
  // a * 2^n for float n holding integers (vscalef; AVX-512 only).
  ax::Vec scale2(DType t, const ax::Vec& a, const ax::Vec& n);
  ax::Vec neg(DType t, const ax::Vec& a);
  ax::Vec abs(DType t, const ax::Vec& a);
  ax::Vec sqrt(DType t, const ax::Vec& a);
  // NumPy maximum/minimum: a nan in `a` or `b` wins (vm::maximum).
  ax::Vec max(DType t, const ax::Vec& a, const ax::Vec& b, const ax::Vec* into = nullptr);
  ax::Vec min(DType t, const ax::Vec& a, const ax::Vec& b, const ax::Vec* into = nullptr);
  // The raw instruction: a > b ? a : b (clamping in math sequences).
  ax::Vec max_raw(DType t, const ax::Vec& a, const asmjit::Operand& b);
  ax::Vec min_raw(DType t, const ax::Vec& a, const asmjit::Operand& b);
  // imm: 0x08 nearest-even, 0x09 floor, 0x0A ceil.
  ax::Vec round(DType t, const ax::Vec& a, int imm);

  // Bitwise on the register (any dtype).
  ax::Vec bit_and(DType t, const ax::Vec& a, const asmjit::Operand& b);
  ax::Vec bit_or(DType t, const ax::Vec& a, const asmjit::Operand& b);
  ax::Vec bit_xor(DType t, const ax::Vec& a, const asmjit::Operand& b);
  // Integer lanes of the float's width: +, -, shifts (for bit tricks).
  ax::Vec int_add(DType float_t, const ax::Vec& a, const asmjit::Operand& b);
  ax::Vec int_sub(DType float_t, const ax::Vec& a, const asmjit::Operand& b);
  ax::Vec shl(DType t, const ax::Vec& a, int bits);
  ax::Vec shr_logical(DType t, const ax::Vec& a, int bits);
  // Arithmetic shift; for 64-bit lanes on AVX2 valid for |a| < 2^40.
  ax::Vec shr_arith(DType t, const ax::Vec& a, int bits);
  // Logical shifts of integer lanes by per-lane counts, read as unsigned:
  // a count of at least the width gives 0 (vpsllv, vpsrlv).
  ax::Vec shl_var(DType t, const ax::Vec& a, const ax::Vec& counts);
  ax::Vec shr_var(DType t, const ax::Vec& a, const ax::Vec& counts);

  Mask cmp(DType t, Cmp c, const ax::Vec& a, const asmjit::Operand& b);
  Mask is_nan(DType t, const ax::Vec& a);
  Mask mask_and(DType t, const Mask& a, const Mask& b);
  Mask mask_or(DType t, const Mask& a, const Mask& b);
  Mask mask_not(DType t, const Mask& a);
  // m ? if_true : if_false, lanes of dtype t.
  ax::Vec blend(DType t, const Mask& m, const ax::Vec& if_true, const ax::Vec& if_false, const ax::Vec* into = nullptr);
  // Lanes of t -> a bool value (int32 0/1) and back.
  ax::Vec mask_to_bool(DType t, const Mask& m);
  Mask bool_to_mask(DType t, const ax::Vec& b);

  // Reductions across the lanes of v (sum, prod, max, min with raw
  // instruction semantics), the result broadcast to every lane.
  ax::Vec reduce_lanes(ScalarOp op, DType t, const ax::Vec& v);
  // 0, 1, ..., lanes-1 in integer lanes of t's width.
  ax::Vec lane_index(DType t);
  // A general-purpose register's value in every integer lane of t's width.
  ax::Vec broadcast_gpr(DType t, const ax::Gp& g);
  // The integer in g, converted to t (C++ conversion), in every lane.
  ax::Vec broadcast_int_as(DType t, const ax::Gp& g);
  // The mask `m` (lanes of `from`) as a mask on lanes of `to`.
  Mask convert_mask(DType from, DType to, const Mask& m);
  // Stores lane 0 only.
  void store_lane0(DType t, const ax::Mem& m, const ax::Vec& v);
  // g = the low 32 bits (a 32-bit g) or 64 bits of v's lane 0
  // (Note [Vector lanes into general registers]).
  void lane0_to_gpr(const ax::Gp& g, const ax::Vec& v);

  // C++ conversion semantics (static_cast), x86 "integer indefinite" for
  // out-of-range floats, != 0 for bool targets.
  ax::Vec cast(DType from, DType to, const ax::Vec& v);

 private:
  ax::Vec vec_of_bytes(int bytes);
  ax::Vec narrow64to32(const ax::Vec& v);  // AVX2: low dwords of 64-bit lanes
  ax::Vec all_ones(DType t);
  ax::Vec scalar_convert(DType from, DType to, const ax::Vec& v);  // AVX2 int64 <-> float
  // Stores the low `bytes` (4, 8, 16 or 32) of h: packed elements.
  void store_packed(const ax::Mem& m, const ax::Vec& h, uint32_t bytes);
  // Stores the low `width` (1 or 2) bytes of each int32 lane of v (bool,
  // bfloat16 bits, narrow integers); `in_range` when every lane already
  // fits them unsigned, else AVX2 masks before its saturating packs.
  void store_int32_lanes_low(const ax::Mem& m, const ax::Vec& v, int width, bool in_range);
  ax::Vec wrap_to(DType t, const ax::Vec& v);  // compute-dtype lanes wrapped to t's range
  // Stores the low dword of each int64 lane (uint32 values).
  void store_int64_lanes_low(const ax::Mem& m, const ax::Vec& v);
  // float32 lanes rounded to bfloat16, as int32 lanes holding the 16 bits.
  ax::Vec bfloat16_bits(const ax::Vec& v);
  // AVX2: the same 16 bits in the high word of each lane (the low word is
  // not zeroed).
  ax::Vec bfloat16_high(const ax::Vec& v);
  // Both: v's rounding, NaN lanes aside, in the high words; top = v >> 16.
  ax::Vec bfloat16_rounded_high(const ax::Vec& v, const ax::Vec& top);
  // AVX-512: the same, packed to words (Note [bfloat16 stores]).
  ax::Vec bfloat16_words(const ax::Vec& v);
  // float32 lanes rounded to the half type t, as float32 lanes.
  ax::Vec round_to_half(DType t, const ax::Vec& v);
  // AVX2 has no vpmullq, vpmaxsq or vpminsq: r = a*b (mod 2^64), max or
  // min of int64 lanes at r's width.
  void int64_mul_avx2(const ax::Vec& r, const ax::Vec& a, const ax::Vec& b);
  void int64_max_avx2(const ax::Vec& r, const ax::Vec& a, const ax::Vec& b);
  void int64_min_avx2(const ax::Vec& r, const ax::Vec& a, const ax::Vec& b);

  ax::Compiler& cc_;
  bool avx512_;
  bool bf16_;  // AVX512-BF16 (uses_avx512_bf16 in jit/x86/x86_codegen.h)
  int lanes_;
  // A constant: its register width and lane width (width * 16 + lane), and
  // one lane's bits.
  using ConstKey = std::pair<int, uint64_t>;
  ConstKey const_key(DType t, uint64_t bits) const { return {reg_bytes(t) * 16 + lane_width(t), bits}; }
  std::map<ConstKey, ax::Mem> consts_;
  std::map<ConstKey, ax::Vec> hoisted_;
  asmjit::BaseNode* preamble_ = nullptr;
  // Note [Loop constants on AVX2]: where they are loaded (null outside a
  // loop's span), how many more may be, and those that are.
  asmjit::BaseNode* loop_preamble_ = nullptr;
  int loop_registers_left_ = 0;
  std::map<ConstKey, ax::Vec> loop_consts_;
  // The register holding constant `bits` (loaded at `at`, recorded in
  // `held`), loading it there first if it is not yet.
  ax::Vec hoist(DType t, uint64_t bits, asmjit::BaseNode*& at, std::map<ConstKey, ax::Vec>& held);
  // The register an arithmetic result goes to: `into` where given.
  ax::Vec new_vec_or(DType t, const ax::Vec* into) { return into ? *into : new_vec(t); }
  // max and min from their raw instruction's result: a nan in `a` wins
  // (the raw instructions keep b's), written to `into` where given.
  ax::Vec nan_of_a_wins(DType t, const ax::Vec& a, const ax::Vec& raw, const ax::Vec* into);
};

}  // namespace wok::jit::x86
