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
#include <algorithm>
#include <map>

#include "wok/jit/x86/instr_emitter.h"
#include "wok/jit/x86/x86_codegen.h"

namespace wok::jit::x86 {

namespace {

using asmjit::Label;

// Columns per block: vector accumulators never add up more than this many
// values before they are folded into the row's running total.
constexpr int kBlockColumns = 1024;

class RowKernelGenerator {
 public:
  RowKernelGenerator(const FusedKernelSpec& spec, ax::Compiler& cc, bool avx512)
      : spec_(spec), cc_(cc), e_(cc, avx512, choose_lanes(spec, avx512)) {}

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

  void analyse();
  ax::Vec load_input(const ScalarInstr& in, const ax::Gp& j, int offset, bool bounce);
  void emit_row_level(int avail);
  void emit_phase(int phase);
  void emit_elements(const std::vector<int>& needed, const ax::Gp& j, int offset, bool bounce);
  ax::Vec identity(ScalarOp op, DType t);
  void accumulate(int r, const ax::Vec& acc, const ax::Vec& v);
  ax::Vec finish_reduction(int r, const ax::Vec& acc);

  const FusedKernelSpec& spec_;
  ax::Compiler& cc_;
  VecEmitter e_;
  std::vector<int> avail_;      // phase from which a value exists
  std::vector<bool> elem_;      // varies along the row
  std::vector<bool> per_call_;  // the same for every row
  std::vector<int> accum_phase_;
  int phases_ = 1;
  int unroll_ = 1;
  std::vector<ax::Vec> values_;
  std::vector<ax::Gp> base_, run_ptr_;
  std::vector<ax::Mem> bounce_;
  ax::Gp params_, shape_, len_;
};

void RowKernelGenerator::analyse() {
  const auto& ins = spec_.program.instrs;
  avail_.assign(ins.size(), 0);
  elem_.assign(ins.size(), false);
  per_call_.assign(ins.size(), false);
  accum_phase_.assign(ins.size(), -1);
  int heavy = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    const ScalarInstr& in = ins[i];
    if (in.op == ScalarOp::kInput) {
      bool param = in.index >= spec_.num_inputs();
      per_call_[i] = param;
      elem_[i] = !param && !spec_.inner_broadcast(in.index);
    } else if (in.op == ScalarOp::kConst || in.op == ScalarOp::kRowLength) {
      per_call_[i] = true;
    } else if (is_reduction(in.op)) {
      int a = in.args[0];
      accum_phase_[i] = avail_[a];
      avail_[i] = avail_[a] + 1;
      phases_ = std::max(phases_, avail_[a] + 1);
    } else {
      bool all_call = true;
      for (int a = 0; a < scalar_op_arity(in.op); ++a) {
        avail_[i] = std::max(avail_[i], avail_[in.args[a]]);
        elem_[i] = elem_[i] || elem_[in.args[a]];
        all_call = all_call && per_call_[in.args[a]];
      }
      per_call_[i] = all_call;
      if (elem_[i] && is_transcendental(in.op)) ++heavy;
    }
  }
  for (int o = 0; o < spec_.num_outputs(); ++o)
    if (!spec_.output_row_scalar[o]) phases_ = std::max(phases_, avail_[spec_.program.outputs[o]] + 1);
  unroll_ = heavy == 0 ? 4 : 2;
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
    if (elem_[i] || per_call_[i] || is_reduction(ins[i].op) || avail_[i] != avail) continue;
    values_[i] = ins[i].op == ScalarOp::kInput ? load_input(ins[i], ax::Gp(), 0, false)
                                               : emit_value_instr(e_, spec_.program, ins[i], values_);
  }
  for (int o = 0; o < spec_.num_outputs(); ++o) {
    int v = spec_.program.outputs[o];
    if (!spec_.output_row_scalar[o] || avail_[v] != avail) continue;
    e_.store_lane0(spec_.output_dtype(o), ax::ptr(run_ptr_[spec_.num_inputs() + o]), values_[v]);
  }
}

void RowKernelGenerator::emit_elements(const std::vector<int>& needed, const ax::Gp& j, int offset, bool bounce) {
  for (int i : needed)
    values_[i] = instr(i).op == ScalarOp::kInput ? load_input(instr(i), j, offset, bounce)
                                                 : emit_value_instr(e_, spec_.program, instr(i), values_);
}

ax::Vec RowKernelGenerator::identity(ScalarOp op, DType t) {
  double inf = std::numeric_limits<double>::infinity();
  switch (op) {
    case ScalarOp::kReduceSum: return e_.zero(t);
    case ScalarOp::kReduceProd: return e_.const_vec(t, 1.0);
    case ScalarOp::kReduceMax:
      return is_floating(t) ? e_.const_vec(t, -inf) : e_.const_vec(t, static_cast<double>(std::numeric_limits<int32_t>::min()));
    default:
      return is_floating(t) ? e_.const_vec(t, inf) : e_.const_vec(t, static_cast<double>(std::numeric_limits<int32_t>::max()));
  }
}

// acc (a register this generator owns) = op(acc, v), nan-propagating.
void RowKernelGenerator::accumulate(int r, const ax::Vec& acc, const ax::Vec& v) {
  const ScalarInstr& in = instr(r);
  DType t = in.dtype;
  ax::Vec out;
  switch (in.op) {
    case ScalarOp::kReduceSum: out = e_.add(t, acc, v); break;
    case ScalarOp::kReduceProd: out = e_.mul(t, acc, v); break;
    case ScalarOp::kReduceMax: out = e_.max(t, v, acc); break;
    default: out = e_.min(t, v, acc); break;
  }
  cc_.vmovaps(acc, out);
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

void RowKernelGenerator::emit_phase(int phase) {
  const auto& ins = spec_.program.instrs;
  const int lanes = e_.lanes();
  std::vector<int> reductions;
  for (size_t i = 0; i < ins.size(); ++i)
    if (is_reduction(ins[i].op) && accum_phase_[i] == phase) reductions.push_back(static_cast<int>(i));
  std::vector<int> outputs;  // full outputs written in this phase
  for (int o = 0; o < spec_.num_outputs(); ++o)
    if (!spec_.output_row_scalar[o] && avail_[spec_.program.outputs[o]] == phase) outputs.push_back(o);
  if (reductions.empty() && outputs.empty()) return;

  // Per-element instructions the sinks depend on, in program order.
  std::vector<bool> need(ins.size(), false);
  for (int r : reductions) need[ins[r].args[0]] = true;
  for (int o : outputs) need[spec_.program.outputs[o]] = true;
  for (size_t i = ins.size(); i-- > 0;)
    if (need[i])
      for (int a = 0; a < scalar_op_arity(ins[i].op); ++a) need[ins[i].args[a]] = true;
  std::vector<int> needed;
  for (size_t i = 0; i < ins.size(); ++i)
    if (need[i] && elem_[i] && !is_reduction(ins[i].op)) needed.push_back(static_cast<int>(i));

  // Accumulators: `unroll_` per reduction inside a block, one for the row.
  std::map<int, std::vector<ax::Vec>> block_acc;
  std::map<int, ax::Vec> row_acc;
  for (int r : reductions) {
    row_acc[r] = e_.new_vec(ins[r].dtype);
    cc_.vmovaps(row_acc[r], identity(ins[r].op, ins[r].dtype));
    for (int u = 0; u < unroll_; ++u) block_acc[r].push_back(e_.new_vec(ins[r].dtype));
  }
  auto value_of = [&](int r) { return values_[ins[r].args[0]]; };
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
    for (int u = 0; u < unroll_; ++u) cc_.vmovaps(block_acc[r][u], identity(ins[r].op, ins[r].dtype));
  cc_.mov(block_end, j);
  cc_.add(block_end, kBlockColumns);
  cc_.cmp(block_end, len_);
  cc_.cmovg(block_end, len_);
  {
    Label loop = cc_.newLabel(), exit = cc_.newLabel();
    cc_.mov(limit, block_end);
    cc_.sub(limit, unroll_ * lanes);
    cc_.bind(loop);
    cc_.cmp(j, limit);
    cc_.jg(exit);
    for (int u = 0; u < unroll_; ++u) {
      emit_elements(needed, j, u * lanes, false);
      for (int r : reductions) accumulate(r, block_acc[r][u], value_of(r));
      store_outputs(j, u * lanes);
    }
    cc_.add(j, unroll_ * lanes);
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
    store_outputs(j, 0);
    cc_.add(j, lanes);
    cc_.jmp(loop);
    cc_.bind(exit);
  }
  // Fold the block into the row's accumulator.
  for (int r : reductions) {
    for (int u = 1; u < unroll_; ++u) accumulate(r, block_acc[r][0], block_acc[r][u]);
    accumulate(r, row_acc[r], block_acc[r][0]);
  }
  cc_.mov(limit, len_);
  cc_.sub(limit, lanes);
  cc_.cmp(j, limit);
  cc_.jle(block);  // at least one more full vector

  // Tail: fewer than `lanes` columns, through the bounce buffers; lanes
  // past the end are replaced by the reductions' identities.
  cc_.bind(tail);
  Label done = cc_.newLabel();
  ax::Gp rem = cc_.newInt64("rem"), nbytes = cc_.newInt64("nbytes"), src = cc_.newIntPtr("src"),
         buf = cc_.newIntPtr("buf");
  cc_.mov(rem, len_);
  cc_.sub(rem, j);
  cc_.jle(done);
  for (int k = 0; k < spec_.num_inputs(); ++k) {
    if (!streams(k)) continue;
    DType t = operand_dtype(k);
    cc_.mov(nbytes, rem);
    if (shift_of(t)) cc_.shl(nbytes, shift_of(t));
    cc_.lea(src, ax::ptr(run_ptr_[k], j, shift_of(t)));
    cc_.lea(buf, bounce_[k]);
    emit_byte_copy(cc_, buf, src, nbytes);
  }
  emit_elements(needed, j, 0, true);
  for (int r : reductions) {
    DType t = ins[r].dtype;
    DType it = VecEmitter::lane_width(t) == 8 ? DType::kInt64 : DType::kInt32;
    Mask valid = e_.cmp(it, Cmp::kLt, e_.lane_index(t), e_.broadcast_gpr(it, rem));
    accumulate(r, row_acc[r], e_.blend(t, e_.convert_mask(it, t, valid), value_of(r), identity(ins[r].op, t)));
  }
  for (int o : outputs) {
    int k = spec_.num_inputs() + o;
    DType t = operand_dtype(k);
    e_.store(t, bounce_[k], values_[spec_.program.outputs[o]]);
    cc_.mov(nbytes, rem);
    if (shift_of(t)) cc_.shl(nbytes, shift_of(t));
    cc_.lea(src, ax::ptr(run_ptr_[k], j, shift_of(t)));
    cc_.lea(buf, bounce_[k]);
    emit_byte_copy(cc_, src, buf, nbytes);
  }
  cc_.bind(done);
  for (int r : reductions) values_[r] = finish_reduction(r, row_acc[r]);
}

void RowKernelGenerator::generate() {
  analyse();
  const int rank = spec_.rank;
  const int n_in = spec_.num_inputs();
  asmjit::FuncNode* fn = cc_.addFunc(asmjit::FuncSignatureT<void, const void*, int64_t, int64_t>());
  fn->frame().setAvxEnabled();
  if (e_.avx512()) fn->frame().setAvx512Enabled();
  ax::Gp args = cc_.newIntPtr("args"), begin = cc_.newInt64("begin"), end = cc_.newInt64("end");
  fn->setArg(0, args);
  fn->setArg(1, begin);
  fn->setArg(2, end);
  e_.mark_preamble();
  Label done = cc_.newLabel();
  cc_.cmp(begin, end);
  cc_.jge(done);

  ax::Gp ptrs = cc_.newIntPtr("ptrs"), strides = cc_.newIntPtr("strides"), col0 = cc_.newInt64("col0");
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
    if (!per_call_[i]) continue;
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
  for (int p = 0; p < phases_; ++p) {
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
