#include "wok/jit/x86/instr_emitter.h"

#include <algorithm>
#include <array>
#include <limits>

#include "wok/jit/x86/math_emitter.h"
#include "wok/runtime/error.h"

namespace wok::jit::x86 {

namespace {

// What an emitter sees: the instruction's result dtype, its operands'
// dtype (the condition's for select) and the operand registers.
struct Operands {
  DType t;
  DType arg_t;
  const ax::Vec* v[3];
  ExpUse exp_use;  // exp only: Notes [Nonpositive exp arguments], [Half-grade exp]
};
using ValueEmitter = ax::Vec (*)(VecEmitter& e, const Operands& a);
using A = const Operands&;

// A set of dtypes, one bit per DType.
using DTypes = DTypeMask;
constexpr DTypes bit(DType t) { return dtype_bit(t); }
constexpr DTypes kAny = kComputeDTypeMask;
constexpr DTypes kFloats = bit(DType::kFloat32) | bit(DType::kFloat64);
constexpr DTypes kInts = bit(DType::kInt32) | bit(DType::kInt64);
constexpr DTypes kNone = 0;

struct X86Row {
  ScalarOp op;
  ValueEmitter emit;  // nullptr: loaded or accumulated by the generator itself
  // The result dtypes the emitter handles; a program with any other does
  // not compile here (can_compile), and runs on the precompiled kernel.
  DTypes emits = kAny;
  // The result dtypes it computes in float64 lanes, so the kernel takes
  // lanes of 8 bytes (Note [Lanes and registers]).
  DTypes in_float64 = kNone;
};

// Integer fmod and floor division in float64: the quotient of two int32
// values rounded to float64 is never on the wrong side of an integer (its
// error, under |a| 2^-53 / |b|, is below the 1/|b| to the next one), so
// its floor or trunc is the exact integer quotient. The cast back gives
// INT_MIN for INT_MIN / -1, the wrapped quotient; a zero divisor gives 0.
ax::Vec int32_div(VecEmitter& e, A a, bool floor) {
  const DType I = DType::kInt32, F = DType::kFloat64;
  ax::Vec x = e.cast(I, F, *a.v[0]), y = e.cast(I, F, *a.v[1]);
  ax::Vec q = e.round(F, e.div(F, x, y), floor ? 0x09 : 0x0B);
  ax::Vec qi = e.cast(F, I, q);
  Mask by_zero = e.cmp(I, Cmp::kEq, *a.v[1], e.zero(I));
  if (floor) return e.blend(I, by_zero, e.zero(I), qi);
  ax::Vec rem = e.sub(I, *a.v[0], e.mul(I, qi, *a.v[1]));  // wraps: INT_MIN - INT_MIN * -1 = 0
  return e.blend(I, by_zero, e.zero(I), rem);
}

ax::Vec compare(VecEmitter& e, const Operands& a, Cmp c) {
  return e.mask_to_bool(a.arg_t, e.cmp(a.arg_t, c, *a.v[0], *a.v[1]));
}

// The x86 column of Note [One table per primitive] (runtime/scalar_primitives.h).
using O = ScalarOp;
constexpr std::array<X86Row, kNumScalarOps> kX86Emitters = {{
    {O::kInput, nullptr},  // each generator loads its inputs its own way
    {O::kConst, nullptr},  // needs the constant: emit_value_instr handles it
    {O::kCast, [](VecEmitter& e, A a) { return e.cast(a.arg_t, a.t, *a.v[0]); }},
    {O::kNeg, [](VecEmitter& e, A a) { return e.neg(a.t, *a.v[0]); }},
    {O::kAbs, [](VecEmitter& e, A a) { return e.abs(a.t, *a.v[0]); }},
    {O::kSqrt, [](VecEmitter& e, A a) { return e.sqrt(a.t, *a.v[0]); }},
    {O::kExp, [](VecEmitter& e, A a) { return emit_exp(e, a.t, *a.v[0], a.exp_use); }},
    {O::kLog, [](VecEmitter& e, A a) { return emit_log(e, a.t, *a.v[0]); }},
    {O::kSin, [](VecEmitter& e, A a) { return emit_sin(e, a.t, *a.v[0]); }, kAny, bit(DType::kFloat32)},
    {O::kCos, [](VecEmitter& e, A a) { return emit_cos(e, a.t, *a.v[0]); }, kAny, bit(DType::kFloat32)},
    {O::kTanh, [](VecEmitter& e, A a) { return emit_tanh(e, a.t, *a.v[0]); }},
    {O::kErf, [](VecEmitter& e, A a) { return emit_erf(e, a.t, *a.v[0]); }},
    {O::kFloor, [](VecEmitter& e, A a) { return e.round(a.t, *a.v[0], 0x09); }},
    {O::kCeil, [](VecEmitter& e, A a) { return e.round(a.t, *a.v[0], 0x0A); }},
    {O::kRound, [](VecEmitter& e, A a) { return e.round(a.t, *a.v[0], 0x08); }},
    {O::kTrunc, [](VecEmitter& e, A a) { return e.round(a.t, *a.v[0], 0x0B); }},
    {O::kNot, [](VecEmitter& e, A a) { return e.bit_xor(a.t, *a.v[0], e.const_operand(DType::kBool, 1)); }},
    {O::kBitNot, [](VecEmitter& e, A a) {
       // bool lanes hold 0 or 1: not flips the low bit only.
       if (a.t == DType::kBool) return e.bit_xor(a.t, *a.v[0], e.const_operand(DType::kBool, 1));
       return e.bit_xor(a.t, *a.v[0], e.const_bits_operand(a.t, ~uint64_t{0}));
     }, kInts | bit(DType::kBool)},
    {O::kAdd, [](VecEmitter& e, A a) { return e.add(a.t, *a.v[0], *a.v[1]); }},
    {O::kSub, [](VecEmitter& e, A a) { return e.sub(a.t, *a.v[0], *a.v[1]); }},
    {O::kMul, [](VecEmitter& e, A a) { return e.mul(a.t, *a.v[0], *a.v[1]); }},
    {O::kDiv, [](VecEmitter& e, A a) { return e.div(a.t, *a.v[0], *a.v[1]); }},
    {O::kMax, [](VecEmitter& e, A a) { return e.max(a.t, *a.v[0], *a.v[1]); }},
    {O::kMin, [](VecEmitter& e, A a) { return e.min(a.t, *a.v[0], *a.v[1]); }},
    // Integer pow runs on the precompiled kernel.
    {O::kPow, [](VecEmitter& e, A a) { return emit_pow(e, a.t, *a.v[0], *a.v[1]); }, kFloats, bit(DType::kFloat32)},
    // Float fmod (exact, any exponent gap) and int64 division run on the
    // precompiled kernel.
    {O::kFmod, [](VecEmitter& e, A a) { return int32_div(e, a, false); }, bit(DType::kInt32), bit(DType::kInt32)},
    {O::kFloorDiv, [](VecEmitter& e, A a) {
       if (a.t == DType::kInt32) return int32_div(e, a, true);
       return e.round(a.t, e.div(a.t, *a.v[0], *a.v[1]), 0x09);
     }, kFloats | bit(DType::kInt32), bit(DType::kInt32)},
    {O::kEq, [](VecEmitter& e, A a) { return compare(e, a, Cmp::kEq); }},
    {O::kNe, [](VecEmitter& e, A a) { return compare(e, a, Cmp::kNe); }},
    {O::kLt, [](VecEmitter& e, A a) { return compare(e, a, Cmp::kLt); }},
    {O::kLe, [](VecEmitter& e, A a) { return compare(e, a, Cmp::kLe); }},
    {O::kGt, [](VecEmitter& e, A a) { return compare(e, a, Cmp::kGt); }},
    {O::kGe, [](VecEmitter& e, A a) { return compare(e, a, Cmp::kGe); }},
    {O::kAnd, [](VecEmitter& e, A a) { return e.bit_and(a.t, *a.v[0], *a.v[1]); }},
    {O::kOr, [](VecEmitter& e, A a) { return e.bit_or(a.t, *a.v[0], *a.v[1]); }},
    {O::kBitAnd, [](VecEmitter& e, A a) { return e.bit_and(a.t, *a.v[0], *a.v[1]); }, kInts | bit(DType::kBool)},
    {O::kBitOr, [](VecEmitter& e, A a) { return e.bit_or(a.t, *a.v[0], *a.v[1]); }, kInts | bit(DType::kBool)},
    {O::kBitXor, [](VecEmitter& e, A a) { return e.bit_xor(a.t, *a.v[0], *a.v[1]); }, kInts | bit(DType::kBool)},
    {O::kShl, [](VecEmitter& e, A a) { return e.shl_var(a.t, *a.v[0], *a.v[1]); }, kInts},
    {O::kShr, [](VecEmitter& e, A a) { return e.shr_var(a.t, *a.v[0], *a.v[1]); }, kInts},
    {O::kSelect, [](VecEmitter& e, A a) { return e.blend(a.t, e.bool_to_mask(a.t, *a.v[0]), *a.v[1], *a.v[2]); }},
    // Reductions and the row length are the row and column generators' own.
    {O::kReduceSum, nullptr},
    {O::kReduceMax, nullptr},
    {O::kReduceMin, nullptr},
    {O::kReduceProd, nullptr},
    {O::kReduceArgmax, nullptr},
    {O::kRowLength, nullptr},
}};
static_assert(rows_follow_enum(kX86Emitters), "kX86Emitters must have one row per ScalarOp, in enum order");

}  // namespace

bool emits(ScalarOp op, DType t) { return (kX86Emitters[static_cast<size_t>(op)].emits & bit(t)) != 0; }

bool computes_in_float64(ScalarOp op, DType t) {
  // A half type's op is its float32 op (Note [Half types in registers]), a
  // narrow integer's its int32 op and uint32's its int64 op (Note [Narrow
  // integers in registers]).
  if (is_half(t) || is_widened_int(t)) t = compute_dtype(t);
  return (kX86Emitters[static_cast<size_t>(op)].in_float64 & bit(t)) != 0;
}

int choose_lanes(const FusedKernelSpec& spec, bool avx512) {
  int widest = 4;
  for (const ScalarInstr& in : spec.program.instrs) {
    // An argmax's int64 index never sets the lanes: it is one scalar per
    // row in a row kernel, and a column kernel widens its int32 lanes as it
    // stores them (Note [Generated argmax] in jit/x86/argmax_emitter.h).
    if (in.op == ScalarOp::kReduceArgmax) continue;
    widest = std::max(widest, VecEmitter::lane_width(in.dtype));
    // float32 (and so half-type) sin, cos and pow, int32 fmod and floor
    // division run in float64 (Note [Lanes and registers]). The launcher
    // tiles column kernels by these lanes, so they must be the ones the
    // generator, which sees a half program's float32 form, chose.
    if (computes_in_float64(in.op, in.dtype)) widest = 8;
  }
  for (DType t : spec.input_dtypes) widest = std::max(widest, VecEmitter::lane_width(t));
  return (avx512 ? 64 : 32) / widest;
}

void emit_byte_copy(ax::Compiler& cc, const ax::Gp& dst, const ax::Gp& src, const ax::Gp& nbytes) {
  // Eight bytes at a time, then the last few one by one: tails are at most a
  // vector (64 bytes), and a byte loop alone made short rows slow.
  ax::Gp i = cc.newInt64("i"), left = cc.newInt64("left"), q = cc.newInt64("qword");
  ax::Gp b = cc.newGpd("byte");
  asmjit::Label qwords = cc.newLabel(), bytes = cc.newLabel(), done = cc.newLabel();
  cc.xor_(i, i);
  cc.bind(qwords);
  cc.mov(left, nbytes);
  cc.sub(left, i);
  cc.cmp(left, 8);
  cc.jl(bytes);
  cc.mov(q, ax::qword_ptr(src, i));
  cc.mov(ax::qword_ptr(dst, i), q);
  cc.add(i, 8);
  cc.jmp(qwords);
  cc.bind(bytes);
  cc.cmp(i, nbytes);
  cc.jge(done);
  cc.movzx(b, ax::byte_ptr(src, i));
  cc.mov(ax::byte_ptr(dst, i), b.r8());
  cc.inc(i);
  cc.jmp(bytes);
  cc.bind(done);
}

void emit_bounce_copy(ax::Compiler& cc, BounceCopy direction, const ax::Mem& bounce, const ax::Mem& at,
                      const ax::Gp& count, DType t) {
  ax::Gp nbytes = cc.newInt64("nbytes"), mem = cc.newIntPtr("mem"), buf = cc.newIntPtr("buf");
  cc.mov(nbytes, count);
  if (shift_of(t)) cc.shl(nbytes, shift_of(t));
  cc.lea(mem, at);
  cc.lea(buf, bounce);
  if (direction == BounceCopy::kIn) emit_byte_copy(cc, buf, mem, nbytes);
  else emit_byte_copy(cc, mem, buf, nbytes);
}

namespace {
[[noreturn]] void not_a_reduction(ScalarOp op) {
  throw Error("x86 JIT: '" + std::string(scalar_op_name(op)) + "' is not a sum, prod, max or min (internal error)");
}
}  // namespace

ax::Vec reduction_identity(VecEmitter& e, ScalarOp op, DType t) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (reduce_kind(op)) {
    case ReduceKind::kSum: return e.zero(t);
    case ReduceKind::kProd: return e.const_vec(t, 1.0);
    case ReduceKind::kMax:
      return is_floating(t) ? e.const_vec(t, -inf)
                            : e.const_vec(t, static_cast<double>(std::numeric_limits<int32_t>::min()));
    case ReduceKind::kMin:
      return is_floating(t) ? e.const_vec(t, inf)
                            : e.const_vec(t, static_cast<double>(std::numeric_limits<int32_t>::max()));
    case ReduceKind::kArgmax:
    case ReduceKind::kNone: break;
  }
  not_a_reduction(op);
}

void emit_accumulate(VecEmitter& e, ScalarOp op, DType t, const ax::Vec& acc, const ax::Vec& v) {
  switch (reduce_kind(op)) {
    case ReduceKind::kSum: e.add(t, acc, v, &acc); break;
    case ReduceKind::kProd: e.mul(t, acc, v, &acc); break;
    case ReduceKind::kMax: e.max(t, v, acc, &acc); break;
    case ReduceKind::kMin: e.min(t, v, acc, &acc); break;
    case ReduceKind::kArgmax:
    case ReduceKind::kNone: not_a_reduction(op);
  }
}

// Note [Nonpositive exp arguments]
// exp clamps its argument to [kExpMin, kExpMax] before the range reduction
// (vm::exp), two instructions per vector in the chain of dependent ones.
// Some arguments cannot be positive, and for them the upper clamp is a
// no-op, bit for bit (a nan passes through either way): x - max(x), the
// shifted argument of every softmax, where a - max(a) rounds to <= 0 since
// a <= max(a); and -|x|. The program shows these forms, so the emitter
// looks for them rather than the ops that produce them saying so. Removing
// that clamp took about half a cycle per 16 values from softmax's exp pass
// in a standalone AVX-512 loop on a Zen 5 EPYC (12.7 to 12.1 cycles per
// vector for all three passes of a float16 row in L1). erf's exp(-x^2)
// skips it as well (math_emitter.cpp). Without AVX-512 such an exp also
// scales by 2^n in one factor where vm::exp takes two (Note [One-factor
// exp scaling] in math_emitter.cpp), with the same bits.
namespace {
bool nonpositive(const ScalarProgram& program, int32_t v) {
  const ScalarInstr& in = program.instrs[v];
  if (in.op == ScalarOp::kSub) {
    const ScalarInstr& b = program.instrs[in.args[1]];
    return b.op == ScalarOp::kReduceMax && b.args[0] == in.args[0];
  }
  if (in.op == ScalarOp::kNeg) return program.instrs[in.args[0]].op == ScalarOp::kAbs;
  return false;
}
}  // namespace

// Note [Half-grade exp]
// A half-type kernel computes in float32 and rounds its outputs once
// (docs/numerics.md), so the float32 exp, within 0.72 float32 ulps, is
// about 2^10 times more accurate than a float16 result can show (2^13 for
// bfloat16). Where exp is the arithmetic's bulk and its value reaches only
// half outputs, a cheaper exp serves as well: ln2 subtracted in one part
// (rounded to float32) rather than two, and a degree 5 polynomial where
// the float32 exp's has degree 6 (vmc::kExpHalfPolyF): two fused
// multiply-adds fewer per vector, for at most 2^-21 relative error, 1/1000
// of a float16 ulp. The outputs are then the exact result rounded once up
// to that error: a value within 2^-21 of a rounding boundary may round the
// other way (about one float16 result in 2^10 differs by an ulp from the
// float32 kernel's rounded; tests/jit_half_test.cpp bounds both).
// Which exps: those summed along the row (softmax's: a row kernel's exp
// pass is compute bound, where an elementwise exp waits on memory, and
// keeps the float32 op's bits, which the precompiled kernel gives too),
// whose value flows only through products, quotients and its own sum (a
// positive sum: relative errors stay relative) into casts to a half type.
// Any other use (a difference, a float32 output, a log) could turn the
// small relative error into a large one, and the exp keeps its float32
// grade. Measured with this polynomial before it was taken, float16
// softmax over rows in L2 went from 1.07 to 1.21 times float32 softmax's
// speed (AVX-512, Zen 5 EPYC); on a Zen 3 EPYC with AVX2, together with
// Note [One-factor exp scaling] (math_emitter.cpp), float16 softmax over
// [4096, 4096] went from 1.15 to 1.33 times float32's (README).
bool half_grade_exp(const ScalarProgram& program, int32_t v) {
  const auto& ins = program.instrs;
  if (ins[v].dtype != DType::kFloat32) return false;
  bool summed = false;
  std::vector<bool> reached(ins.size(), false);  // values carrying the exp's error
  reached[v] = true;
  for (size_t i = static_cast<size_t>(v) + 1; i < ins.size(); ++i) {
    const ScalarInstr& in = ins[i];
    bool uses = false;
    for (int a = 0; a < scalar_op_arity(in.op); ++a) uses = uses || reached[in.args[a]];
    if (!uses) continue;
    switch (in.op) {
      case ScalarOp::kMul:
      case ScalarOp::kDiv: reached[i] = true; break;
      case ScalarOp::kReduceSum:
        if (in.args[0] != v) return false;
        summed = reached[i] = true;
        break;
      case ScalarOp::kCast:
        if (!is_half(in.dtype)) return false;
        break;  // rounded to the half type here
      default: return false;
    }
  }
  for (int32_t o : program.outputs)
    if (reached[o]) return false;  // an output of float32
  return summed;
}

ax::Vec emit_value_instr(VecEmitter& e, const ScalarProgram& program, const ScalarInstr& in,
                         const std::vector<ax::Vec>& values) {
  if (in.op == ScalarOp::kConst) return e.const_scalar(in.dtype, in.constant);
  if (in.op == ScalarOp::kCast && in.index == kCastRoundedByTheStore) return values[in.args[0]];
  const ValueEmitter emit = kX86Emitters[static_cast<size_t>(in.op)].emit;
  if (!emit)
    throw Error(std::string("x86 JIT: instruction '") + std::string(scalar_op_name(in.op)) +
                "' is not a value instruction (internal error)");
  Operands a{in.dtype, in.dtype, {nullptr, nullptr, nullptr}, ExpUse{}};
  for (int i = 0; i < scalar_op_arity(in.op); ++i) a.v[i] = &values[in.args[i]];
  if (scalar_op_arity(in.op) > 0) {
    a.arg_t = program.instrs[in.args[0]].dtype;
    if (in.op == ScalarOp::kExp) {
      a.exp_use.nonpositive = nonpositive(program, in.args[0]);
      a.exp_use.half_grade = half_grade_exp(program, static_cast<int32_t>(&in - program.instrs.data()));
    }
  }
  return emit(e, a);
}

}  // namespace wok::jit::x86
