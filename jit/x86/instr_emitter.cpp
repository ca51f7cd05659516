#include "wok/jit/x86/instr_emitter.h"

#include <limits>

#include <algorithm>

#include "wok/jit/x86/math_emitter.h"
#include "wok/runtime/error.h"

namespace wok::jit::x86 {

namespace {
Cmp cmp_of(ScalarOp op) {
  switch (op) {
    case ScalarOp::kEq: return Cmp::kEq;
    case ScalarOp::kNe: return Cmp::kNe;
    case ScalarOp::kLt: return Cmp::kLt;
    case ScalarOp::kLe: return Cmp::kLe;
    case ScalarOp::kGt: return Cmp::kGt;
    default: return Cmp::kGe;
  }
}
}  // namespace

bool is_transcendental(ScalarOp op) {
  switch (op) {
    case ScalarOp::kExp: case ScalarOp::kLog: case ScalarOp::kSin: case ScalarOp::kCos:
    case ScalarOp::kTanh: case ScalarOp::kErf: case ScalarOp::kPow:
      return true;
    default:
      return false;
  }
}

int choose_lanes(const FusedKernelSpec& spec, bool avx512) {
  int widest = 4;
  for (const ScalarInstr& in : spec.program.instrs) {
    // An argmax's int64 index never sets the lanes: it is one scalar per
    // row in a row kernel, and a column kernel widens its int32 lanes as it
    // stores them (Note [Generated argmax] in jit/x86/argmax_emitter.h).
    if (in.op == ScalarOp::kReduceArgmax) continue;
    widest = std::max(widest, VecEmitter::lane_width(in.dtype));
    // float32 sin, cos and pow run in float64 (Note [Lanes and registers]).
    if (in.op == ScalarOp::kSin || in.op == ScalarOp::kCos || in.op == ScalarOp::kPow) widest = 8;
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

ax::Vec reduction_identity(VecEmitter& e, ScalarOp op, DType t) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (op) {
    case ScalarOp::kReduceSum: return e.zero(t);
    case ScalarOp::kReduceProd: return e.const_vec(t, 1.0);
    case ScalarOp::kReduceMax:
      return is_floating(t) ? e.const_vec(t, -inf)
                            : e.const_vec(t, static_cast<double>(std::numeric_limits<int32_t>::min()));
    default:
      return is_floating(t) ? e.const_vec(t, inf)
                            : e.const_vec(t, static_cast<double>(std::numeric_limits<int32_t>::max()));
  }
}

void emit_accumulate(VecEmitter& e, ScalarOp op, DType t, const ax::Vec& acc, const ax::Vec& v) {
  ax::Vec out;
  switch (op) {
    case ScalarOp::kReduceSum: out = e.add(t, acc, v); break;
    case ScalarOp::kReduceProd: out = e.mul(t, acc, v); break;
    case ScalarOp::kReduceMax: out = e.max(t, v, acc); break;
    default: out = e.min(t, v, acc); break;
  }
  e.cc().vmovaps(acc, out);
}

ax::Vec emit_value_instr(VecEmitter& e, const ScalarProgram& program, const ScalarInstr& in,
                         const std::vector<ax::Vec>& values) {
  const DType t = in.dtype;
  auto arg = [&](int a) { return values[in.args[a]]; };
  auto arg_t = [&](int a) { return program.instrs[in.args[a]].dtype; };
  switch (in.op) {
    case ScalarOp::kConst: return e.const_scalar(t, in.constant);
    case ScalarOp::kCast: return e.cast(arg_t(0), t, arg(0));
    case ScalarOp::kNeg: return e.neg(t, arg(0));
    case ScalarOp::kAbs: return e.abs(t, arg(0));
    case ScalarOp::kSqrt: return e.sqrt(t, arg(0));
    case ScalarOp::kExp: return emit_exp(e, t, arg(0));
    case ScalarOp::kLog: return emit_log(e, t, arg(0));
    case ScalarOp::kSin: return emit_sin(e, t, arg(0));
    case ScalarOp::kCos: return emit_cos(e, t, arg(0));
    case ScalarOp::kTanh: return emit_tanh(e, t, arg(0));
    case ScalarOp::kErf: return emit_erf(e, t, arg(0));
    case ScalarOp::kFloor: return e.round(t, arg(0), 0x09);
    case ScalarOp::kCeil: return e.round(t, arg(0), 0x0A);
    case ScalarOp::kRound: return e.round(t, arg(0), 0x08);
    case ScalarOp::kNot: return e.bit_xor(t, arg(0), e.const_operand(DType::kBool, 1));
    case ScalarOp::kAdd: return e.add(t, arg(0), arg(1));
    case ScalarOp::kSub: return e.sub(t, arg(0), arg(1));
    case ScalarOp::kMul: return e.mul(t, arg(0), arg(1));
    case ScalarOp::kDiv: return e.div(t, arg(0), arg(1));
    case ScalarOp::kMax: return e.max(t, arg(0), arg(1));
    case ScalarOp::kMin: return e.min(t, arg(0), arg(1));
    case ScalarOp::kPow: return emit_pow(e, t, arg(0), arg(1));
    case ScalarOp::kEq: case ScalarOp::kNe: case ScalarOp::kLt:
    case ScalarOp::kLe: case ScalarOp::kGt: case ScalarOp::kGe:
      return e.mask_to_bool(arg_t(0), e.cmp(arg_t(0), cmp_of(in.op), arg(0), arg(1)));
    case ScalarOp::kAnd: return e.bit_and(t, arg(0), arg(1));
    case ScalarOp::kOr: return e.bit_or(t, arg(0), arg(1));
    case ScalarOp::kSelect: return e.blend(t, e.bool_to_mask(t, arg(0)), arg(1), arg(2));
    default: break;
  }
  throw Error(std::string("x86 JIT: instruction '") + std::string(scalar_op_name(in.op)) +
              "' is not a value instruction (internal error)");
}

}  // namespace wok::jit::x86
