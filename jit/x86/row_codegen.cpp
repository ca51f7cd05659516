// Code generation for row kernels (Note [Row kernels] in jit/fused_kernel.h).
//
// void kernel(const KernelArgs* args, int64 row_begin, int64 row_end):
//   per-call values (constants, params, the row length)
//   split row_begin into a multi-index over the outer dims once
//   per row:
//     point each operand at column col_begin of the row
//     per-row values (inputs broadcast along the row)
//     per phase: walk the row in blocks of vectors, computing what the
//       phase's reductions and full outputs need; fold each block's vector
//       accumulators into a running one (blocked summation); reduce across
//       lanes; then the values that needed the reductions, and one-per-row
//       outputs
// The schedule (phases, per-row values, spills) is computed in
// row_schedule.cpp; this file emits the machine code for it.
#include <algorithm>
#include <map>

#include "wok/jit/x86/argmax_emitter.h"
#include "wok/jit/x86/instr_emitter.h"
#include "wok/jit/x86/row_schedule.h"
#include "wok/jit/x86/x86_codegen.h"
#include "wok/runtime/error.h"

namespace wok::jit::x86 {

namespace {

using asmjit::Label;

// Columns per block: vector accumulators never add up more than this many
// values before they are folded into the row's running total.
constexpr int kBlockColumns = 1024;

class RowKernelGenerator {
 public:
  RowKernelGenerator(const FusedKernelSpec& spec, ax::Compiler& cc, bool avx512)
      : spec_(spec), cc_(cc), e_(cc, avx512, choose_lanes(spec, avx512)), sched_(spec) {}

  void generate();

 private:
  const ScalarInstr& instr(int i) const { return spec_.program.instrs[i]; }
  int num_operands() const { return spec_.num_inputs() + spec_.num_outputs(); }
  DType operand_dtype(int k) const {
    return k < spec_.num_inputs() ? spec_.input_dtypes[k] : spec_.output_dtype(k - spec_.num_inputs());
  }
  bool streams(int k) const {
    if (k < spec_.num_inputs()) return !spec_.inner_broadcast(k);
    return !spec_.output_row_scalar[k - spec_.num_inputs()];
  }

  ax::Vec load_input(const ScalarInstr& in, const ax::Gp& j, int offset, bool bounce);
  void emit_row_level(int avail);
  void emit_phase(int phase);
  void emit_elements(const std::vector<int>& needed, const ax::Gp& j, int offset, bool bounce);
  ax::Mem spill_slot(int v, const ax::Gp& j, int offset, bool bounce) const;
  ax::Vec identity(ScalarOp op, DType t) { return reduction_identity(e_, op, t); }
  // acc (a register this generator owns) = op(acc, v), nan-propagating.
  void accumulate(int r, const ax::Vec& acc, const ax::Vec& v) {
    emit_accumulate(e_, instr(r).op, instr(r).dtype, acc, v);
  }
  ax::Vec finish_reduction(int r, const ax::Vec& acc);
  // argmax (Note [Generated argmax]): the type it compares, and its result
  // (the index, in lane 0 as int64) from the row's accumulator.
  DType argmax_input(int r) const { return instr(instr(r).args[0]).dtype; }
  ax::Vec finish_argmax(int r, ArgmaxEmitter& am, const ArgmaxAcc& acc);

  const FusedKernelSpec& spec_;
  ax::Compiler& cc_;
  VecEmitter e_;
  const RowSchedule sched_;
  int phase_ = 0;  // the phase being emitted
  std::vector<ax::Vec> values_;
  std::vector<ax::Gp> base_, run_ptr_;
  std::vector<ax::Mem> bounce_;
  ax::Gp args_, params_, shape_, len_, col0_;
  std::map<int, ax::Vec> argmax_best_;  // per argmax: the winning value, lane 0
};

ax::Mem RowKernelGenerator::spill_slot(int v, const ax::Gp& j, int offset, bool bounce) const {
  const int k = spec_.num_inputs() + sched_.spill_to(v);
  if (bounce) return bounce_[k];
  const DType t = instr(v).dtype;
  return ax::ptr(run_ptr_[k], j, shift_of(t), offset * static_cast<int>(itemsize(t)));
}

ax::Vec RowKernelGenerator::load_input(const ScalarInstr& in, const ax::Gp& j, int offset, bool bounce) {
  const DType t = in.dtype;
  if (in.index >= spec_.num_inputs()) return e_.broadcast_load(t, ax::ptr(params_, 8 * (in.index - spec_.num_inputs())));
  if (spec_.inner_broadcast(in.index)) return e_.broadcast_load(t, ax::ptr(run_ptr_[in.index]));
  if (bounce) return e_.load(t, bounce_[in.index]);
  return e_.load(t, ax::ptr(run_ptr_[in.index], j, shift_of(t), offset * static_cast<int>(itemsize(t))));
}

// Row-level values (not varying along the row) that exist from phase
// `avail` on, in program order.
void RowKernelGenerator::emit_row_level(int avail) {
  const auto& ins = spec_.program.instrs;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (sched_.elem(i) || sched_.per_call(i) || is_reduction(ins[i].op) || sched_.avail(i) != avail) continue;
    values_[i] = ins[i].op == ScalarOp::kInput ? load_input(ins[i], ax::Gp(), 0, false)
                                               : emit_value_instr(e_, spec_.program, ins[i], values_);
  }
  for (int o = 0; o < spec_.num_outputs(); ++o) {
    int v = spec_.program.outputs[o];
    if (!spec_.output_row_scalar[o] || sched_.avail(v) != avail) continue;
    // An unset register here would be encoded as an invalid one and fault
    // at run time (random program 2002482, a row of length 1): refuse.
    if (!values_[v].isValid())
      throw Error("row kernel: output " + std::to_string(o) + " is one value per row but varies along it (internal error)");
    e_.store_lane0(spec_.output_dtype(o), ax::ptr(run_ptr_[spec_.num_inputs() + o]), values_[v]);
    if (instr(v).op == ScalarOp::kReduceArgmax) {
      // A chunk of a split row: the runtime compares the chunks' values.
      Label skip = cc_.newLabel();
      ax::Gp slots = cc_.newIntPtr("partial_values");
      cc_.mov(slots, ax::ptr(args_, offsetof(KernelArgs, partial_values)));
      cc_.test(slots, slots);
      cc_.jz(skip);
      e_.store_lane0(argmax_input(v), ax::ptr(slots, 8 * o), argmax_best_.at(v));
      cc_.bind(skip);
    }
  }
}

void RowKernelGenerator::emit_elements(const std::vector<int>& needed, const ax::Gp& j, int offset, bool bounce) {
  for (int i : needed) {
    if (sched_.reloaded(i, phase_)) values_[i] = e_.load(instr(i).dtype, spill_slot(i, j, offset, bounce));
    else if (instr(i).op == ScalarOp::kInput) values_[i] = load_input(instr(i), j, offset, bounce);
    else values_[i] = emit_value_instr(e_, spec_.program, instr(i), values_);
    if (sched_.spill_to(i) >= 0 && sched_.spill_phase(i) == phase_)
      e_.store(instr(i).dtype, spill_slot(i, j, offset, bounce), values_[i]);
  }
}

ax::Vec RowKernelGenerator::finish_reduction(int r, const ax::Vec& acc) {
  const ScalarInstr& in = instr(r);
  DType t = in.dtype;
  ax::Vec v = e_.reduce_lanes(in.op, t, acc);
  if (is_floating(t) && (in.op == ScalarOp::kReduceMax || in.op == ScalarOp::kReduceMin)) {
    // The lane instructions drop nans; a nan in any lane makes the result nan.
    ax::Vec any = e_.reduce_lanes(ScalarOp::kReduceMax, DType::kBool, e_.mask_to_bool(t, e_.is_nan(t, acc)));
    v = e_.blend(t, e_.bool_to_mask(t, any), e_.const_vec(t, std::numeric_limits<double>::quiet_NaN()), v);
  }
  return v;
}

ax::Vec RowKernelGenerator::finish_argmax(int r, ArgmaxEmitter& am, const ArgmaxAcc& acc) {
  ArgmaxAcc w = am.reduce_lanes(acc);
  argmax_best_[r] = w.best;
  // No lane took an element: every element equals the identity, and the
  // first one (column col0) wins.
  ax::Gp i = cc_.newInt64("argmax");
  if (am.index_dtype() == DType::kInt32) {
    cc_.vmovd(i.r32(), w.index.as<ax::Xmm>());
    cc_.cmp(i.r32(), static_cast<int32_t>(argmax_no_index(argmax_input(r))));
  } else {
    ax::Gp none = cc_.newInt64("no_index");
    cc_.vmovq(i, w.index.as<ax::Xmm>());
    cc_.mov(none, argmax_no_index(argmax_input(r)));
    cc_.cmp(i, none);
  }
  cc_.cmove(i, col0_);
  ax::Xmm out = cc_.newXmm();
  cc_.vmovq(out, i);
  return out;
}

void RowKernelGenerator::emit_phase(int phase) {
  const auto& ins = spec_.program.instrs;
  const int lanes = e_.lanes();
  std::vector<int> reductions, argmaxes;
  for (size_t i = 0; i < ins.size(); ++i)
    if (is_reduction(ins[i].op) && sched_.accum_phase(i) == phase)
      (ins[i].op == ScalarOp::kReduceArgmax ? argmaxes : reductions).push_back(static_cast<int>(i));
  std::vector<int> outputs;  // full outputs written in this phase
  for (int o = 0; o < spec_.num_outputs(); ++o)
    if (!spec_.output_row_scalar[o] && sched_.avail(spec_.program.outputs[o]) == phase) outputs.push_back(o);
  if (reductions.empty() && argmaxes.empty() && outputs.empty()) return;

  // Per-element instructions the sinks depend on, in program order.
  phase_ = phase;
  const std::vector<bool> need = sched_.phase_need(phase);
  std::vector<int> needed;
  for (size_t i = 0; i < ins.size(); ++i)
    if (need[i] && sched_.elem(i) && !is_reduction(ins[i].op)) needed.push_back(static_cast<int>(i));

  // Accumulators: `sched_.unroll()` per reduction inside a block, one for the row.
  std::map<int, std::vector<ax::Vec>> block_acc;
  std::map<int, ax::Vec> row_acc;
  for (int r : reductions) {
    row_acc[r] = e_.new_vec(ins[r].dtype);
    cc_.vmovaps(row_acc[r], identity(ins[r].op, ins[r].dtype));
    for (int u = 0; u < sched_.unroll(); ++u) block_acc[r].push_back(e_.new_vec(ins[r].dtype));
  }
  auto value_of = [&](int r) { return values_[ins[r].args[0]]; };
  // argmax: accumulators like the others, plus per index dtype a vector
  // of the columns of the current step (pos).
  std::map<int, ArgmaxEmitter> am;
  std::map<int, std::vector<ArgmaxAcc>> arg_block;
  std::map<int, ArgmaxAcc> arg_row;
  std::map<DType, ax::Vec> pos;
  for (int r : argmaxes) {
    ArgmaxEmitter& a = am.emplace(r, ArgmaxEmitter(e_, argmax_input(r))).first->second;
    arg_row[r] = a.new_acc();
    a.reset(arg_row[r]);
    for (int u = 0; u < sched_.unroll(); ++u) arg_block[r].push_back(a.new_acc());
    if (!pos.count(a.index_dtype())) pos[a.index_dtype()] = e_.new_vec(a.index_dtype());
  }
  auto add_id = [](DType it) { return it == DType::kInt64 ? ax::Inst::kIdVpaddq : ax::Inst::kIdVpaddd; };
  auto advance_pos = [&](int columns) {
    for (auto& [it, p] : pos) cc_.emit(add_id(it), p, p, e_.const_bits_operand(it, static_cast<uint64_t>(columns)));
  };
  // Steps each argmax with the vector at `offset` columns past pos.
  auto step_argmaxes = [&](int offset, const std::map<int, ArgmaxAcc>& into) {
    std::map<DType, ax::Vec> at;
    for (auto& [it, p] : pos) {
      if (offset == 0) {
        at[it] = p;
      } else {
        at[it] = e_.new_vec(it);
        cc_.emit(add_id(it), at[it], p, e_.const_bits_operand(it, static_cast<uint64_t>(offset)));
      }
    }
    for (int r : argmaxes) {
      ArgmaxEmitter& a = am.at(r);
      a.step(into.at(r), value_of(r), at.at(a.index_dtype()));
    }
  };
  auto block_accs = [&](int u) {
    std::map<int, ArgmaxAcc> m;
    for (int r : argmaxes) m[r] = arg_block[r][u];
    return m;
  };
  auto store_outputs = [&](const ax::Gp& j, int offset) {
    for (int o : outputs) {
      int k = spec_.num_inputs() + o;
      DType t = operand_dtype(k);
      e_.store(t, ax::ptr(run_ptr_[k], j, shift_of(t), offset * static_cast<int>(itemsize(t))),
               values_[spec_.program.outputs[o]]);
    }
  };

  ax::Gp j = cc_.newInt64("j"), limit = cc_.newInt64("limit"), block_end = cc_.newInt64("block_end");
  cc_.xor_(j, j);
  Label block = cc_.newLabel(), tail = cc_.newLabel();
  cc_.bind(block);
  for (int r : reductions)
    for (int u = 0; u < sched_.unroll(); ++u) cc_.vmovaps(block_acc[r][u], identity(ins[r].op, ins[r].dtype));
  for (int r : argmaxes)
    for (int u = 0; u < sched_.unroll(); ++u) am.at(r).reset(arg_block[r][u]);
  if (!pos.empty()) {
    // The columns of the block's first step, counted from the row's start.
    ax::Gp at = cc_.newInt64("at");
    cc_.mov(at, j);
    cc_.add(at, col0_);
    for (auto& [it, p] : pos) cc_.emit(add_id(it), p, e_.broadcast_gpr(it, at), e_.lane_index(it));
  }
  cc_.mov(block_end, j);
  cc_.add(block_end, kBlockColumns);
  cc_.cmp(block_end, len_);
  cc_.cmovg(block_end, len_);
  {
    Label loop = cc_.newLabel(), exit = cc_.newLabel();
    cc_.mov(limit, block_end);
    cc_.sub(limit, sched_.unroll() * lanes);
    cc_.bind(loop);
    cc_.cmp(j, limit);
    cc_.jg(exit);
    for (int u = 0; u < sched_.unroll(); ++u) {
      emit_elements(needed, j, u * lanes, false);
      for (int r : reductions) accumulate(r, block_acc[r][u], value_of(r));
      if (!argmaxes.empty()) step_argmaxes(u * lanes, block_accs(u));
      store_outputs(j, u * lanes);
    }
    advance_pos(sched_.unroll() * lanes);
    cc_.add(j, sched_.unroll() * lanes);
    cc_.jmp(loop);
    cc_.bind(exit);
  }
  {
    Label loop = cc_.newLabel(), exit = cc_.newLabel();
    cc_.mov(limit, block_end);
    cc_.sub(limit, lanes);
    cc_.bind(loop);
    cc_.cmp(j, limit);
    cc_.jg(exit);
    emit_elements(needed, j, 0, false);
    for (int r : reductions) accumulate(r, block_acc[r][0], value_of(r));
    if (!argmaxes.empty()) step_argmaxes(0, block_accs(0));
    store_outputs(j, 0);
    advance_pos(lanes);
    cc_.add(j, lanes);
    cc_.jmp(loop);
    cc_.bind(exit);
  }
  // Fold the block into the row's accumulator.
  for (int r : reductions) {
    for (int u = 1; u < sched_.unroll(); ++u) accumulate(r, block_acc[r][0], block_acc[r][u]);
    accumulate(r, row_acc[r], block_acc[r][0]);
  }
  for (int r : argmaxes) {
    for (int u = 1; u < sched_.unroll(); ++u) am.at(r).merge(arg_block[r][0], arg_block[r][u]);
    am.at(r).merge(arg_row[r], arg_block[r][0]);
  }
  cc_.mov(limit, len_);
  cc_.sub(limit, lanes);
  cc_.cmp(j, limit);
  cc_.jle(block);  // at least one more full vector

  // Tail: fewer than `lanes` columns, through the bounce buffers; lanes
  // past the end are replaced by the reductions' identities.
  cc_.bind(tail);
  Label done = cc_.newLabel();
  ax::Gp rem = cc_.newInt64("rem");
  cc_.mov(rem, len_);
  cc_.sub(rem, j);
  cc_.jle(done);
  // Operand k's tail, as `t` (a spilled value's type for its output's row).
  auto copy = [&](BounceCopy direction, int k, DType t) {
    emit_bounce_copy(cc_, direction, bounce_[k], ax::ptr(run_ptr_[k], j, shift_of(t)), rem, t);
  };
  for (int k = 0; k < spec_.num_inputs(); ++k)
    if (streams(k)) copy(BounceCopy::kIn, k, operand_dtype(k));
  // Spilled values: loaded through (and stored into) their output's bounce
  // buffer, whose copy to the output follows.
  for (int v : needed)
    if (sched_.reloaded(v, phase)) copy(BounceCopy::kIn, spec_.num_inputs() + sched_.spill_to(v), instr(v).dtype);
  emit_elements(needed, j, 0, true);
  for (int v : needed)
    if (sched_.spill_to(v) >= 0 && sched_.spill_phase(v) == phase)
      copy(BounceCopy::kOut, spec_.num_inputs() + sched_.spill_to(v), instr(v).dtype);
  for (int r : reductions) {
    DType t = ins[r].dtype;
    DType it = VecEmitter::lane_width(t) == 8 ? DType::kInt64 : DType::kInt32;
    Mask valid = e_.cmp(it, Cmp::kLt, e_.lane_index(t), e_.broadcast_gpr(it, rem));
    accumulate(r, row_acc[r], e_.blend(t, e_.convert_mask(it, t, valid), value_of(r), identity(ins[r].op, t)));
  }
  for (int r : argmaxes) {
    // pos is at column j: lanes at rem and past take the identity, which
    // never wins.
    ArgmaxEmitter& a = am.at(r);
    DType t = argmax_compare_dtype(argmax_input(r)), it = a.index_dtype();
    Mask valid = e_.cmp(it, Cmp::kLt, e_.lane_index(it), e_.broadcast_gpr(it, rem));
    a.step(arg_row[r], e_.blend(t, e_.convert_mask(it, t, valid), value_of(r), a.identity()), pos.at(it));
  }
  for (int o : outputs) {
    int k = spec_.num_inputs() + o;
    DType t = operand_dtype(k);
    e_.store(t, bounce_[k], values_[spec_.program.outputs[o]]);
    copy(BounceCopy::kOut, k, t);
  }
  cc_.bind(done);
  for (int r : reductions) values_[r] = finish_reduction(r, row_acc[r]);
  for (int r : argmaxes) values_[r] = finish_argmax(r, am.at(r), arg_row[r]);
}

void RowKernelGenerator::generate() {
  const int rank = spec_.rank;
  asmjit::FuncNode* fn = cc_.addFunc(asmjit::FuncSignatureT<void, const void*, int64_t, int64_t>());
  fn->frame().setAvxEnabled();
  if (e_.avx512()) fn->frame().setAvx512Enabled();
  ax::Gp args = cc_.newIntPtr("args"), begin = cc_.newInt64("begin"), end = cc_.newInt64("end");
  args_ = args;
  fn->setArg(0, args);
  fn->setArg(1, begin);
  fn->setArg(2, end);
  e_.mark_preamble();
  Label done = cc_.newLabel();
  cc_.cmp(begin, end);
  cc_.jge(done);

  ax::Gp ptrs = cc_.newIntPtr("ptrs"), strides = cc_.newIntPtr("strides");
  col0_ = cc_.newInt64("col0");
  const ax::Gp& col0 = col0_;
  cc_.mov(ptrs, ax::ptr(args, offsetof(KernelArgs, ptrs)));
  shape_ = cc_.newIntPtr("shape");
  cc_.mov(shape_, ax::ptr(args, offsetof(KernelArgs, shape)));
  cc_.mov(strides, ax::ptr(args, offsetof(KernelArgs, strides)));
  cc_.mov(col0, ax::ptr(args, offsetof(KernelArgs, col_begin)));
  len_ = cc_.newInt64("len");
  cc_.mov(len_, ax::ptr(args, offsetof(KernelArgs, col_end)));
  cc_.sub(len_, col0);
  for (int k = 0; k < num_operands(); ++k) {
    base_.push_back(cc_.newIntPtr("base%d", k));
    cc_.mov(base_[k], ax::ptr(ptrs, 8 * k));
    run_ptr_.push_back(cc_.newIntPtr("run%d", k));
    bounce_.push_back(streams(k) ? cc_.newStack(64, 64) : ax::Mem());
  }
  if (spec_.num_params() > 0) {
    params_ = cc_.newIntPtr("params");
    cc_.mov(params_, ax::ptr(args, offsetof(KernelArgs, params)));
  }
  values_.resize(spec_.program.instrs.size());
  // Per-call values.
  const auto& ins = spec_.program.instrs;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!sched_.per_call(i)) continue;
    if (ins[i].op == ScalarOp::kInput) {
      values_[i] = load_input(ins[i], ax::Gp(), 0, false);
    } else if (ins[i].op == ScalarOp::kRowLength) {
      ax::Gp n = cc_.newInt64("row_length");
      cc_.mov(n, ax::qword_ptr(shape_, 8 * (rank - 1)));
      values_[i] = e_.broadcast_int_as(ins[i].dtype, n);
    } else {
      values_[i] = emit_value_instr(e_, spec_.program, ins[i], values_);
    }
  }

  auto stride_of = [&](int k, int d) { return ax::qword_ptr(strides, 8 * (k * rank + d)); };
  auto dim = [&](int d) { return ax::qword_ptr(shape_, 8 * d); };
  // Outer multi-index of `begin`, and each operand's offset to that row.
  const int outer = rank - 1;
  std::vector<ax::Gp> idx(outer), row_off(num_operands());
  ax::Gp quot = cc_.newInt64("quot"), remd = cc_.newInt64("remd"), t = cc_.newInt64("t");
  cc_.mov(quot, begin);
  for (int d = outer - 1; d >= 0; --d) {
    idx[d] = cc_.newInt64("idx%d", d);
    cc_.xor_(remd, remd);
    cc_.div(remd, quot, dim(d));
    cc_.mov(idx[d], remd);
  }
  for (int k = 0; k < num_operands(); ++k) {
    row_off[k] = cc_.newInt64("row_off%d", k);
    cc_.xor_(row_off[k], row_off[k]);
    for (int d = 0; d < outer; ++d) {
      cc_.mov(t, idx[d]);
      cc_.imul(t, stride_of(k, d));
      cc_.add(row_off[k], t);
    }
  }
  ax::Gp row = cc_.newInt64("row");
  cc_.mov(row, begin);

  Label next_row = cc_.newLabel();
  cc_.bind(next_row);
  for (int k = 0; k < num_operands(); ++k) {
    cc_.mov(t, row_off[k]);
    if (streams(k)) cc_.add(t, col0);
    cc_.lea(run_ptr_[k], ax::ptr(base_[k], t, shift_of(operand_dtype(k))));
  }
  emit_row_level(0);
  for (int p = 0; p < sched_.phases(); ++p) {
    emit_phase(p);
    emit_row_level(p + 1);
  }
  cc_.inc(row);
  cc_.cmp(row, end);
  cc_.jge(done);
  for (int d = outer - 1; d >= 0; --d) {
    cc_.inc(idx[d]);
    for (int k = 0; k < num_operands(); ++k) cc_.add(row_off[k], stride_of(k, d));
    if (d == 0) break;
    cc_.cmp(idx[d], dim(d));
    cc_.jl(next_row);
    cc_.xor_(idx[d], idx[d]);
    for (int k = 0; k < num_operands(); ++k) {
      cc_.mov(t, dim(d));
      cc_.imul(t, stride_of(k, d));
      cc_.sub(row_off[k], t);
    }
  }
  cc_.jmp(next_row);
  cc_.bind(done);
  cc_.endFunc();
}

}  // namespace

void generate_row_kernel(const FusedKernelSpec& spec, ax::Compiler& cc, bool avx512) {
  RowKernelGenerator(spec, cc, avx512).generate();
}

}  // namespace wok::jit::x86
