// Code generation for column kernels (see KernelKind in jit/fused_kernel.h):
// reductions over the R dim of a [P, R, C] space, vectorized along C.
//
// void kernel(const KernelArgs* args, int64 tile_begin, int64 tile_end):
//   a tile is one vector of columns of one p: (p, j0 .. j0 + lanes). Two
//   walks over the tiles (Note [Streaming column kernel]): narrow spaces
//   walk each tile down all rows with register accumulators; wider ones
//   stream rows across a group of tiles with accumulators in memory. Both
//   fold every block of rows (blocked summation), then compute the values
//   of the reductions and store. The last tile of a p may be partial: its
//   columns go through stack "bounce" buffers, and lanes past the end are
//   computed but never stored (each lane is its own column).
//
// Note [Streaming column kernel]
// Walking one tile (a cache line or two) down every row is one strided
// stream per tile: from 256 columns it is bound by memory latency (a new
// page every row, nothing for the prefetchers to follow; 4.6 GB/s against
// 19 GB/s on [4096, 4096]). So when a p has kStreamMinTiles tiles or more,
// the kernel takes the thread's tiles in groups of up to group_tiles()
// consecutive tiles of one p, and for each group reads rows in order:
// row r, then r + 1, each across all the group's tiles, which is one
// contiguous run of up to kGroupBytes per row. Each tile's accumulators
// (the block's and the total, per reduction) live in a stack scratch slot
// sized to stay in L1; every row loads, updates and stores them, which the
// load and store ports absorb far below memory bandwidth. One row at a
// time, not two: two rows under 4 KiB interleave inside one page, which the
// stream prefetcher did not follow ([131072, 512]). Spaces of up to 8 tiles
// per p (128 float32 columns under AVX-512) keep the register walk, which
// measured 1.4-2x the unfused pair there at 1 and 2 threads: with a few
// tiles per row a memory accumulator is a store-to-load chain per row, and
// a narrow walk is near contiguous already. The launcher gives each thread
// one run of tiles (jit/plan_replay.cpp), so its rows are cut as little as
// possible; threads still split columns, not rows, which is why bare wide
// reductions stay on the precompiled kernel (Note [Wide column reductions]
// in jit/fusion_policy.cpp).
#include <algorithm>
#include <functional>
#include <map>

#include "wok/jit/x86/argmax_emitter.h"
#include "wok/jit/x86/instr_emitter.h"
#include "wok/jit/x86/x86_codegen.h"
#include "wok/runtime/error.h"

namespace wok::jit::x86 {

namespace {

using asmjit::Label;

constexpr int kBlockRows = 1024;
constexpr int kUnrollRows = 2;
// Tiles per p from which the kernel streams rows (Note [Streaming column
// kernel]; jit/plan_replay.cpp splits such spaces in runs); a group's
// accumulator slots take at most kScratchBytes (in L1, beside the rows
// streaming through), and its run of a row at most kGroupBytes of the
// widest operand (a page: what a prefetcher follows).
constexpr int kStreamMinTiles = 9;
constexpr int kScratchBytes = 32768;
constexpr int kGroupBytes = 16384;

class ColumnKernelGenerator {
 public:
  ColumnKernelGenerator(const FusedKernelSpec& spec, ax::Compiler& cc, bool avx512)
      : spec_(spec), cc_(cc), e_(cc, avx512, choose_lanes(spec, avx512)) {}

  void generate();

 private:
  const ScalarInstr& instr(int i) const { return spec_.program.instrs[i]; }
  int num_operands() const { return spec_.num_inputs() + spec_.num_outputs(); }
  DType operand_dtype(int k) const {
    return k < spec_.num_inputs() ? spec_.input_dtypes[k] : spec_.output_dtype(k - spec_.num_inputs());
  }
  bool reduced_output(int o) const { return spec_.output_row_scalar[o]; }
  // Input k: varies along R / along C.
  bool input_varies_r(int k) const { return !spec_.input_broadcast[k][1]; }
  bool input_varies_c(int k) const { return !spec_.input_broadcast[k][2]; }

  void analyse();
  // Loads input `in` for row pointer `row` (second row: + row stride) or
  // for the tile when row is empty; `bounce` for partial tiles.
  ax::Vec load_input(const ScalarInstr& in, bool second_row, bool bounce);
  void emit_set(const std::vector<int>& set, bool second_row, bool bounce);
  void emit_tile(bool partial);
  // The streaming walk (Note [Streaming column kernel]).
  void layout_slots();
  int group_tiles() const;
  void emit_stream(const ax::Gp& begin, const ax::Gp& end, const ax::Gp& tiles_per_p);
  void emit_slot_loop(const ax::Gp& count, const std::function<void(bool partial)>& body, bool moves_rows);
  void emit_row_pass();
  void emit_pass_tile(bool partial);
  void emit_fold(bool partial, bool first);
  void emit_final_tile(bool partial);
  bool moves_r(int k) const {
    return k >= spec_.num_inputs() ? !reduced_output(k - spec_.num_inputs()) : input_varies_r(k);
  }
  bool moves_c(int k) const { return k >= spec_.num_inputs() || input_varies_c(k); }
  void copy_in(int k, bool second_row);
  void copy_out(int k, const ax::Gp& dst);
  // Points tile_ptr_ at element p * sP + j0 * sC of each operand (`scratch`
  // is clobbered).
  void point_tiles(const ax::Gp& p, const ax::Gp& j0, const ax::Gp& scratch);
  ax::Vec identity(ScalarOp op, DType t) { return reduction_identity(e_, op, t); }
  // acc (a register this generator owns) = op(acc, v), nan-propagating.
  void accumulate(int r, const ax::Vec& acc, const ax::Vec& v) {
    emit_accumulate(e_, instr(r).op, instr(r).dtype, acc, v);
  }
  // Instruction i is an argmax whose indices are int32 lanes: its int64
  // result takes two registers' worth of memory (Note [Generated argmax]).
  bool is_int32_index(int i) const;
  void store_widened_index(const ax::Mem& m, const ax::Vec& v);

  const FusedKernelSpec& spec_;
  ax::Compiler& cc_;
  VecEmitter e_;
  std::vector<bool> per_call_, varies_r_, post_;
  std::vector<int> tile_level_, row_level_, post_level_;  // instruction lists, program order
  std::vector<int> reductions_, argmaxes_;
  std::vector<ax::Vec> values_;
  std::vector<ax::Gp> base_, tile_ptr_, row_ptr_, row_step_;
  // What load_input and copy_in read through: row_ptr_ / tile_ptr_ in the
  // register walk, the current tile's pointers (cur_) when streaming.
  std::vector<ax::Gp> ld_row_, ld_tile_;
  std::vector<ax::Mem> bounce_;
  ax::Gp params_, shape_, strides_, cols_, tmp_;
  // Streaming: tile-level instructions the rows read, accumulator slot
  // offsets (per reduction: block, then total; per argmax: block best and
  // index, then total best and index), bytes per tile.
  std::vector<int> tile_row_level_;
  std::map<int, int> slot_off_;
  int slot_bytes_ = 0;
  ax::Mem scratch_;
  std::vector<ax::Gp> cur_;
  ax::Gp slot_, full_;
  std::map<DType, ax::Vec> rpos_;
};

void ColumnKernelGenerator::analyse() {
  const auto& ins = spec_.program.instrs;
  per_call_.assign(ins.size(), false);
  varies_r_.assign(ins.size(), false);
  post_.assign(ins.size(), false);
  for (size_t i = 0; i < ins.size(); ++i) {
    const ScalarInstr& in = ins[i];
    if (in.op == ScalarOp::kInput) {
      if (in.index >= spec_.num_inputs()) per_call_[i] = true;
      else varies_r_[i] = input_varies_r(in.index);
    } else if (in.op == ScalarOp::kConst || in.op == ScalarOp::kRowLength) {
      per_call_[i] = true;
    } else if (is_reduction(in.op)) {
      if (post_[in.args[0]]) throw Error("column kernel: a reduction of a reduction (internal error)");
      post_[i] = true;
      (in.op == ScalarOp::kReduceArgmax ? argmaxes_ : reductions_).push_back(static_cast<int>(i));
    } else {
      bool all_call = true;
      for (int a = 0; a < scalar_op_arity(in.op); ++a) {
        if (ins[in.args[a]].op == ScalarOp::kReduceArgmax)
          throw Error("column kernel: an instruction reads an argmax index (internal error)");
        varies_r_[i] = varies_r_[i] || varies_r_[in.args[a]];
        post_[i] = post_[i] || post_[in.args[a]];
        all_call = all_call && per_call_[in.args[a]];
      }
      per_call_[i] = all_call;
      if (post_[i] && varies_r_[i]) throw Error("column kernel: a per-row value after the reduction (internal error)");
    }
  }
  for (size_t i = 0; i < ins.size(); ++i) {
    if (per_call_[i] || is_reduction(ins[i].op)) continue;
    if (post_[i]) post_level_.push_back(static_cast<int>(i));
    else if (varies_r_[i]) row_level_.push_back(static_cast<int>(i));
    else tile_level_.push_back(static_cast<int>(i));
  }
  // The tile-level values the rows read (streaming recomputes them per row):
  // those the row-level values and the reductions use, and the outputs
  // stored every row (a full output that does not vary along R).
  std::vector<bool> needed(ins.size(), false);
  for (int o = 0; o < spec_.num_outputs(); ++o)
    if (!reduced_output(o)) needed[spec_.program.outputs[o]] = true;
  for (int i = static_cast<int>(ins.size()) - 1; i >= 0; --i) {
    const bool row = !per_call_[i] && !post_[i] && varies_r_[i];
    if (!row && !needed[i] && !is_reduction(ins[i].op)) continue;
    if (ins[i].op == ScalarOp::kInput || ins[i].op == ScalarOp::kConst) continue;
    for (int a = 0; a < scalar_op_arity(ins[i].op); ++a) needed[ins[i].args[a]] = true;
  }
  for (int i : tile_level_)
    if (needed[i]) tile_row_level_.push_back(i);
}

ax::Vec ColumnKernelGenerator::load_input(const ScalarInstr& in, bool second_row, bool bounce) {
  const DType t = in.dtype;
  const int k = in.index;
  if (k >= spec_.num_inputs()) return e_.broadcast_load(t, ax::ptr(params_, 8 * (k - spec_.num_inputs())));
  ax::Mem m = input_varies_r(k) ? (second_row ? ax::ptr(ld_row_[k], row_step_[k]) : ax::ptr(ld_row_[k]))
                                : ax::ptr(ld_tile_[k]);
  if (!input_varies_c(k)) return e_.broadcast_load(t, m);
  if (bounce) return e_.load(t, bounce_[k]);
  return e_.load(t, m);
}

void ColumnKernelGenerator::emit_set(const std::vector<int>& set, bool second_row, bool bounce) {
  for (int i : set)
    values_[i] = instr(i).op == ScalarOp::kInput ? load_input(instr(i), second_row, bounce)
                                                 : emit_value_instr(e_, spec_.program, instr(i), values_);
}

// Copies the tile's `cols` elements of input k (at the row, or the tile)
// into its bounce buffer.
void ColumnKernelGenerator::copy_in(int k, bool second_row) {
  ax::Mem src = !input_varies_r(k) ? ax::ptr(ld_tile_[k])
                : second_row       ? ax::ptr(ld_row_[k], row_step_[k])
                                   : ax::ptr(ld_row_[k]);
  emit_bounce_copy(cc_, BounceCopy::kIn, bounce_[k], src, cols_, operand_dtype(k));
}

void ColumnKernelGenerator::copy_out(int k, const ax::Gp& dst) {
  emit_bounce_copy(cc_, BounceCopy::kOut, bounce_[k], ax::ptr(dst), cols_, operand_dtype(k));
}

void ColumnKernelGenerator::emit_tile(bool partial) {
  const int n_in = spec_.num_inputs();
  // Values that vary along C only.
  if (partial)
    for (int k = 0; k < n_in; ++k)
      if (!input_varies_r(k) && input_varies_c(k)) copy_in(k, false);
  emit_set(tile_level_, false, partial);

  std::map<int, std::vector<ax::Vec>> acc;
  std::map<int, ax::Vec> total;
  for (int r : reductions_) {
    total[r] = e_.new_vec(instr(r).dtype);
    cc_.vmovaps(total[r], identity(instr(r).op, instr(r).dtype));
    for (int u = 0; u < kUnrollRows; ++u) acc[r].push_back(e_.new_vec(instr(r).dtype));
  }
  // argmax (Note [Generated argmax]): accumulators, and per index dtype
  // the number of the current row in every lane (rpos).
  std::map<int, ArgmaxEmitter> am;
  std::map<int, std::vector<ArgmaxAcc>> arg_acc;
  std::map<int, ArgmaxAcc> arg_total;
  std::map<DType, ax::Vec> rpos;
  for (int r : argmaxes_) {
    ArgmaxEmitter& a = am.emplace(r, ArgmaxEmitter(e_, instr(instr(r).args[0]).dtype)).first->second;
    arg_total[r] = a.new_acc();
    a.reset(arg_total[r]);
    for (int u = 0; u < kUnrollRows; ++u) arg_acc[r].push_back(a.new_acc());
    if (!rpos.count(a.index_dtype())) rpos[a.index_dtype()] = e_.new_vec(a.index_dtype());
  }
  auto add_id = [](DType it) { return it == DType::kInt64 ? ax::Inst::kIdVpaddq : ax::Inst::kIdVpaddd; };
  for (int k = 0; k < num_operands(); ++k)
    if (k >= n_in ? !reduced_output(k - n_in) : input_varies_r(k)) cc_.mov(row_ptr_[k], tile_ptr_[k]);

  // One row (or the second of a pair): compute, accumulate, store.
  auto one_row = [&](int u, bool second) {
    if (partial)
      for (int k = 0; k < n_in; ++k)
        if (input_varies_r(k) && input_varies_c(k)) copy_in(k, second);
    emit_set(row_level_, second, partial);
    for (int r : reductions_) accumulate(r, acc[r][u], values_[instr(r).args[0]]);
    for (int r : argmaxes_) {
      ArgmaxEmitter& a = am.at(r);
      const ax::Vec& p = rpos.at(a.index_dtype());
      ax::Vec row = p;
      if (second) {
        row = e_.new_vec(a.index_dtype());
        cc_.emit(add_id(a.index_dtype()), row, p, e_.const_bits_operand(a.index_dtype(), 1));
      }
      a.step(arg_acc[r][u], values_[instr(r).args[0]], row);
    }
    for (int o = 0; o < spec_.num_outputs(); ++o) {
      if (reduced_output(o)) continue;
      int k = n_in + o;
      DType t = operand_dtype(k);
      ax::Vec v = values_[spec_.program.outputs[o]];
      if (partial) {
        e_.store(t, bounce_[k], v);
        ax::Gp dst = cc_.newIntPtr("dst");
        cc_.mov(dst, row_ptr_[k]);
        if (second) cc_.add(dst, row_step_[k]);
        copy_out(k, dst);
      } else {
        e_.store(t, second ? ax::ptr(row_ptr_[k], row_step_[k]) : ax::ptr(row_ptr_[k]), v);
      }
    }
  };
  auto advance = [&](int rows) {
    for (int k = 0; k < num_operands(); ++k) {
      bool moves = k >= n_in ? !reduced_output(k - n_in) : input_varies_r(k);
      if (!moves) continue;
      for (int i = 0; i < rows; ++i) cc_.add(row_ptr_[k], row_step_[k]);
    }
    for (auto& [it, p] : rpos) cc_.emit(add_id(it), p, p, e_.const_bits_operand(it, static_cast<uint64_t>(rows)));
  };

  ax::Gp r = cc_.newInt64("r"), block_end = cc_.newInt64("block_end"), limit = cc_.newInt64("limit");
  ax::Gp rows = cc_.newInt64("rows");
  cc_.mov(rows, ax::qword_ptr(shape_, 8));
  cc_.xor_(r, r);
  Label block = cc_.newLabel(), blocks_done = cc_.newLabel();
  cc_.bind(block);
  cc_.cmp(r, rows);
  cc_.jge(blocks_done);
  for (int red : reductions_)
    for (int u = 0; u < kUnrollRows; ++u) cc_.vmovaps(acc[red][u], identity(instr(red).op, instr(red).dtype));
  for (int red : argmaxes_)
    for (int u = 0; u < kUnrollRows; ++u) am.at(red).reset(arg_acc[red][u]);
  for (auto& [it, p] : rpos) {
    ax::Vec b = e_.broadcast_gpr(it, r);
    cc_.vmovaps(p, b);
  }
  cc_.mov(block_end, r);
  cc_.add(block_end, kBlockRows);
  cc_.cmp(block_end, rows);
  cc_.cmovg(block_end, rows);
  {
    Label loop = cc_.newLabel(), exit = cc_.newLabel();
    cc_.mov(limit, block_end);
    cc_.sub(limit, kUnrollRows);
    cc_.bind(loop);
    cc_.cmp(r, limit);
    cc_.jg(exit);
    one_row(0, false);
    one_row(1, true);
    advance(kUnrollRows);
    cc_.add(r, kUnrollRows);
    cc_.jmp(loop);
    cc_.bind(exit);
  }
  {
    Label skip = cc_.newLabel();
    cc_.cmp(r, block_end);
    cc_.jge(skip);
    one_row(0, false);
    advance(1);
    cc_.inc(r);
    cc_.bind(skip);
  }
  for (int red : reductions_) {
    for (int u = 1; u < kUnrollRows; ++u) accumulate(red, acc[red][0], acc[red][u]);
    accumulate(red, total[red], acc[red][0]);
  }
  for (int red : argmaxes_) {
    for (int u = 1; u < kUnrollRows; ++u) am.at(red).merge(arg_acc[red][0], arg_acc[red][u]);
    am.at(red).merge(arg_total[red], arg_acc[red][0]);
  }
  cc_.jmp(block);
  cc_.bind(blocks_done);

  for (int red : reductions_) values_[red] = total[red];
  for (int red : argmaxes_) {
    // A lane that took no row saw only identities: row 0 wins. The indices
    // stay in their lanes (int32 or int64) until the store widens them.
    ArgmaxEmitter& a = am.at(red);
    const DType it = a.index_dtype();
    const ax::Vec& index = arg_total[red].index;
    Mask none = e_.cmp(it, Cmp::kEq, index, e_.const_bits_operand(it, argmax_no_index(instr(instr(red).args[0]).dtype)));
    values_[red] = e_.blend(it, none, e_.zero(it), index);
  }
  emit_set(post_level_, false, partial);
  for (int o = 0; o < spec_.num_outputs(); ++o) {
    if (!reduced_output(o)) continue;
    int k = n_in + o;
    DType t = operand_dtype(k);
    ax::Vec v = values_[spec_.program.outputs[o]];
    ax::Mem at = partial ? bounce_[k] : ax::ptr(tile_ptr_[k]);
    if (is_int32_index(spec_.program.outputs[o])) store_widened_index(at, v);
    else e_.store(t, at, v);
    if (partial) copy_out(k, tile_ptr_[k]);
  }
}

void ColumnKernelGenerator::layout_slots() {
  int off = 0;
  for (int r : reductions_) {
    slot_off_[r] = off;
    off += 2 * e_.reg_bytes(instr(r).dtype);
  }
  for (int r : argmaxes_) {
    const DType t = instr(instr(r).args[0]).dtype;
    slot_off_[r] = off;
    off += 2 * (e_.reg_bytes(argmax_compare_dtype(t)) + e_.reg_bytes(argmax_index_dtype(t)));
  }
  slot_bytes_ = std::max(off, 64);
}

int ColumnKernelGenerator::group_tiles() const {
  int widest = 1;  // bytes of one tile of the widest operand read or written per row
  for (int k = 0; k < num_operands(); ++k)
    if (moves_r(k) && moves_c(k)) widest = std::max(widest, e_.lanes() * static_cast<int>(itemsize(operand_dtype(k))));
  return std::max(1, std::min(kScratchBytes / slot_bytes_, kGroupBytes / widest));
}

// Runs body once per tile of the group (full ones, then the partial one if
// any) with cur_ at the tile: the current row of operands that move along
// R when moves_rows, else the tile of the first row; slot_ at its slot.
void ColumnKernelGenerator::emit_slot_loop(const ax::Gp& count, const std::function<void(bool partial)>& body,
                                           bool moves_rows) {
  const int lanes = e_.lanes();
  for (int k = 0; k < num_operands(); ++k) cc_.mov(cur_[k], moves_rows && moves_r(k) ? row_ptr_[k] : tile_ptr_[k]);
  cc_.lea(slot_, scratch_);
  ax::Gp i = cc_.newInt64("i");
  Label loop = cc_.newLabel(), full_done = cc_.newLabel(), skip = cc_.newLabel();
  cc_.mov(i, count);
  cc_.test(i, i);
  cc_.jz(full_done);
  cc_.bind(loop);
  body(false);
  for (int k = 0; k < num_operands(); ++k)
    if (moves_c(k)) cc_.add(cur_[k], lanes * static_cast<int>(itemsize(operand_dtype(k))));
  cc_.add(slot_, slot_bytes_);
  cc_.dec(i);
  cc_.jnz(loop);
  cc_.bind(full_done);
  cc_.cmp(cols_, lanes);
  cc_.jge(skip);
  body(true);
  cc_.bind(skip);
}

// Slots of one tile: first: both accumulators take the identity; else the
// block's accumulator is folded into the total and restarts.
void ColumnKernelGenerator::emit_fold(bool, bool first) {
  for (int r : reductions_) {
    const DType t = instr(r).dtype;
    const int off = slot_off_.at(r), rb = e_.reg_bytes(t);
    if (first) {
      e_.store(t, ax::ptr(slot_, off + rb), identity(instr(r).op, t));
    } else {
      ax::Vec total = e_.load(t, ax::ptr(slot_, off + rb));
      accumulate(r, total, e_.load(t, ax::ptr(slot_, off)));
      e_.store(t, ax::ptr(slot_, off + rb), total);
    }
    e_.store(t, ax::ptr(slot_, off), identity(instr(r).op, t));
  }
  for (int r : argmaxes_) {
    const DType t = instr(instr(r).args[0]).dtype;
    ArgmaxEmitter a(e_, t);
    const DType ct = argmax_compare_dtype(t), it = a.index_dtype();
    const int off = slot_off_.at(r), half = e_.reg_bytes(ct) + e_.reg_bytes(it);
    if (!first) {
      ArgmaxAcc total{e_.load(ct, ax::ptr(slot_, off + half)), e_.load(it, ax::ptr(slot_, off + half + e_.reg_bytes(ct)))};
      a.merge(total, ArgmaxAcc{e_.load(ct, ax::ptr(slot_, off)), e_.load(it, ax::ptr(slot_, off + e_.reg_bytes(ct)))});
      e_.store(ct, ax::ptr(slot_, off + half), total.best);
      e_.store(it, ax::ptr(slot_, off + half + e_.reg_bytes(ct)), total.index);
    }
    ArgmaxAcc id = a.new_acc();
    a.reset(id);
    for (int h = 0; h < (first ? 2 : 1); ++h) {
      e_.store(ct, ax::ptr(slot_, off + h * half), id.best);
      e_.store(it, ax::ptr(slot_, off + h * half + e_.reg_bytes(ct)), id.index);
    }
  }
}

// One row of one tile: the block accumulators come from the slot and go
// back to it.
void ColumnKernelGenerator::emit_pass_tile(bool partial) {
  const int n_in = spec_.num_inputs();
  if (partial)
    for (int k = 0; k < n_in; ++k)
      if (!input_varies_r(k) && input_varies_c(k)) copy_in(k, false);
  emit_set(tile_row_level_, false, partial);
  std::map<int, ax::Vec> acc;
  std::map<int, ArgmaxAcc> arg;
  for (int r : reductions_) acc[r] = e_.load(instr(r).dtype, ax::ptr(slot_, slot_off_.at(r)));
  for (int r : argmaxes_) {
    const DType t = instr(instr(r).args[0]).dtype, ct = argmax_compare_dtype(t);
    const int off = slot_off_.at(r);
    arg[r] = {e_.load(ct, ax::ptr(slot_, off)), e_.load(argmax_index_dtype(t), ax::ptr(slot_, off + e_.reg_bytes(ct)))};
  }
  if (partial)
    for (int k = 0; k < n_in; ++k)
      if (input_varies_r(k) && input_varies_c(k)) copy_in(k, false);
  emit_set(row_level_, false, partial);
  for (int r : reductions_) accumulate(r, acc[r], values_[instr(r).args[0]]);
  for (int r : argmaxes_) {
    ArgmaxEmitter a(e_, instr(instr(r).args[0]).dtype);
    a.step(arg[r], values_[instr(r).args[0]], rpos_.at(a.index_dtype()));
  }
  for (int o = 0; o < spec_.num_outputs(); ++o) {
    if (reduced_output(o)) continue;
    const int k = n_in + o;
    const DType t = operand_dtype(k);
    ax::Vec v = values_[spec_.program.outputs[o]];
    if (partial) {
      e_.store(t, bounce_[k], v);
      copy_out(k, cur_[k]);
    } else {
      e_.store(t, ax::ptr(cur_[k]), v);
    }
  }
  for (int r : reductions_) e_.store(instr(r).dtype, ax::ptr(slot_, slot_off_.at(r)), acc[r]);
  for (int r : argmaxes_) {
    const DType t = instr(instr(r).args[0]).dtype, ct = argmax_compare_dtype(t);
    const int off = slot_off_.at(r);
    e_.store(ct, ax::ptr(slot_, off), arg[r].best);
    e_.store(argmax_index_dtype(t), ax::ptr(slot_, off + e_.reg_bytes(ct)), arg[r].index);
  }
}

// After the last row: the values computed from the totals, and the stores.
void ColumnKernelGenerator::emit_final_tile(bool partial) {
  const int n_in = spec_.num_inputs();
  if (partial)
    for (int k = 0; k < n_in; ++k)
      if (!input_varies_r(k) && input_varies_c(k)) copy_in(k, false);
  emit_set(tile_level_, false, partial);
  for (int r : reductions_)
    values_[r] = e_.load(instr(r).dtype, ax::ptr(slot_, slot_off_.at(r) + e_.reg_bytes(instr(r).dtype)));
  for (int r : argmaxes_) {
    // As in emit_tile: a lane that took no row answers row 0.
    const DType t = instr(instr(r).args[0]).dtype, ct = argmax_compare_dtype(t), it = argmax_index_dtype(t);
    const int off = slot_off_.at(r) + 2 * e_.reg_bytes(ct) + e_.reg_bytes(it);
    ax::Vec index = e_.load(it, ax::ptr(slot_, off));
    Mask none = e_.cmp(it, Cmp::kEq, index, e_.const_bits_operand(it, argmax_no_index(t)));
    values_[r] = e_.blend(it, none, e_.zero(it), index);
  }
  emit_set(post_level_, false, partial);
  for (int o = 0; o < spec_.num_outputs(); ++o) {
    if (!reduced_output(o)) continue;
    const int k = n_in + o;
    ax::Vec v = values_[spec_.program.outputs[o]];
    ax::Mem at = partial ? bounce_[k] : ax::ptr(cur_[k]);
    if (is_int32_index(spec_.program.outputs[o])) store_widened_index(at, v);
    else e_.store(operand_dtype(k), at, v);
    if (partial) copy_out(k, cur_[k]);
  }
}

// Row r across the group's tiles.
void ColumnKernelGenerator::emit_row_pass() {
  emit_slot_loop(full_, [&](bool partial) { emit_pass_tile(partial); }, true);
}

void ColumnKernelGenerator::emit_stream(const ax::Gp& begin, const ax::Gp& end, const ax::Gp& tiles_per_p) {
  const int lanes = e_.lanes();
  const int lane_shift = lanes == 16 ? 4 : lanes == 8 ? 3 : 2;
  layout_slots();
  const int group = group_tiles();
  scratch_ = cc_.newStack(group * slot_bytes_, 64);
  slot_ = cc_.newIntPtr("slot");
  full_ = cc_.newInt64("full");
  for (int k = 0; k < num_operands(); ++k) cur_.push_back(cc_.newIntPtr("cur%d", k));
  ld_row_ = cur_;
  ld_tile_ = cur_;
  for (int r : argmaxes_) {
    const DType it = argmax_index_dtype(instr(instr(r).args[0]).dtype);
    if (rpos_.count(it)) continue;
    rpos_[it] = e_.new_vec(it);
  }
  ax::Gp t = cc_.newInt64("t"), p = cc_.newInt64("p"), j0 = cc_.newInt64("j0"), n = cc_.newInt64("n"),
         left = cc_.newInt64("left"), rows = cc_.newInt64("rows"), r = cc_.newInt64("r"),
         block_end = cc_.newInt64("block_end");
  ax::Gp all = cc_.newInt64("all");
  cc_.mov(t, begin);
  Label group_loop = cc_.newLabel(), done = cc_.newLabel();
  cc_.bind(group_loop);
  cc_.cmp(t, end);
  cc_.jge(done);
  // The group: n = min(tiles left in this p, tiles left in the range, group).
  cc_.mov(p, t);
  cc_.xor_(j0, j0);
  cc_.div(j0, p, tiles_per_p);  // p = t / tiles_per_p, j0 = t % tiles_per_p
  cc_.mov(n, tiles_per_p);
  cc_.sub(n, j0);
  cc_.mov(left, end);
  cc_.sub(left, t);
  cc_.cmp(n, left);
  cc_.cmovg(n, left);
  cc_.mov(left, group);
  cc_.cmp(n, left);
  cc_.cmovg(n, left);
  cc_.shl(j0, lane_shift);
  point_tiles(p, j0, left);
  // Columns of the group's last tile; that tile is partial when under lanes.
  cc_.mov(cols_, ax::qword_ptr(shape_, 16));
  cc_.sub(cols_, j0);
  cc_.mov(tmp_, n);
  cc_.dec(tmp_);
  cc_.shl(tmp_, lane_shift);
  cc_.sub(cols_, tmp_);
  cc_.mov(full_, n);
  cc_.mov(tmp_, n);
  cc_.dec(tmp_);
  cc_.cmp(cols_, lanes);
  cc_.cmovl(full_, tmp_);
  cc_.mov(all, n);
  emit_slot_loop(full_, [&](bool partial) { emit_fold(partial, true); }, false);

  cc_.mov(rows, ax::qword_ptr(shape_, 8));
  cc_.xor_(r, r);
  for (int k = 0; k < num_operands(); ++k)
    if (moves_r(k)) cc_.mov(row_ptr_[k], tile_ptr_[k]);
  auto advance = [&] {
    for (int k = 0; k < num_operands(); ++k)
      if (moves_r(k)) cc_.add(row_ptr_[k], row_step_[k]);
    for (auto& [it, v] : rpos_)
      cc_.emit(it == DType::kInt64 ? ax::Inst::kIdVpaddq : ax::Inst::kIdVpaddd, v, v, e_.const_bits_operand(it, 1));
    cc_.inc(r);
  };
  Label block = cc_.newLabel(), rows_done = cc_.newLabel();
  cc_.bind(block);
  cc_.cmp(r, rows);
  cc_.jge(rows_done);
  for (auto& [it, v] : rpos_) cc_.vmovaps(v, e_.broadcast_gpr(it, r));
  cc_.mov(block_end, r);
  cc_.add(block_end, kBlockRows);
  cc_.cmp(block_end, rows);
  cc_.cmovg(block_end, rows);
  {
    Label row = cc_.newLabel(), exit = cc_.newLabel();
    cc_.bind(row);
    cc_.cmp(r, block_end);
    cc_.jge(exit);
    emit_row_pass();
    advance();
    cc_.jmp(row);
    cc_.bind(exit);
  }
  emit_slot_loop(full_, [&](bool partial) { emit_fold(partial, false); }, false);
  cc_.jmp(block);
  cc_.bind(rows_done);
  emit_slot_loop(full_, [&](bool partial) { emit_final_tile(partial); }, false);
  cc_.add(t, all);
  cc_.jmp(group_loop);
  cc_.bind(done);
}

bool ColumnKernelGenerator::is_int32_index(int i) const {
  return instr(i).op == ScalarOp::kReduceArgmax && argmax_index_dtype(instr(instr(i).args[0]).dtype) == DType::kInt32;
}

// Sign-extends int32 lanes to int64 at m: one register's worth, or two.
void ColumnKernelGenerator::store_widened_index(const ax::Mem& m, const ax::Vec& v) {
  const int bytes = e_.reg_bytes(DType::kInt32);
  if (bytes == 16) {
    ax::Ymm w = cc_.newYmm();
    cc_.vpmovsxdq(w, v.as<ax::Xmm>());
    cc_.vmovups(m, w);
    return;
  }
  ax::Vec lo = bytes == 64 ? ax::Vec(cc_.newZmm()) : ax::Vec(cc_.newYmm());
  ax::Vec hi = bytes == 64 ? ax::Vec(cc_.newZmm()) : ax::Vec(cc_.newYmm());
  ax::Vec upper = bytes == 64 ? ax::Vec(cc_.newYmm()) : ax::Vec(cc_.newXmm());
  if (bytes == 64) {
    cc_.vextracti64x4(upper.as<ax::Ymm>(), v.as<ax::Zmm>(), 1);
    cc_.vpmovsxdq(lo, v.as<ax::Zmm>().ymm());
  } else {
    cc_.vextracti128(upper.as<ax::Xmm>(), v.as<ax::Ymm>(), 1);
    cc_.vpmovsxdq(lo, v.as<ax::Ymm>().xmm());
  }
  cc_.vpmovsxdq(hi, upper);
  cc_.vmovups(m, lo);
  cc_.vmovups(m.cloneAdjusted(bytes), hi);
}

void ColumnKernelGenerator::point_tiles(const ax::Gp& p, const ax::Gp& j0, const ax::Gp& scratch) {
  for (int k = 0; k < num_operands(); ++k) {
    cc_.mov(tmp_, p);
    cc_.imul(tmp_, ax::qword_ptr(strides_, 8 * (3 * k)));
    cc_.mov(scratch, j0);
    cc_.imul(scratch, ax::qword_ptr(strides_, 8 * (3 * k + 2)));
    cc_.add(tmp_, scratch);
    cc_.lea(tile_ptr_[k], ax::ptr(base_[k], tmp_, shift_of(operand_dtype(k))));
  }
}

void ColumnKernelGenerator::generate() {
  analyse();
  const int lanes = e_.lanes();
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

  ax::Gp ptrs = cc_.newIntPtr("ptrs");
  ax::Gp strides = strides_ = cc_.newIntPtr("strides");
  shape_ = cc_.newIntPtr("shape");
  cc_.mov(ptrs, ax::ptr(args, offsetof(KernelArgs, ptrs)));
  cc_.mov(shape_, ax::ptr(args, offsetof(KernelArgs, shape)));
  cc_.mov(strides, ax::ptr(args, offsetof(KernelArgs, strides)));
  if (spec_.num_params() > 0) {
    params_ = cc_.newIntPtr("params");
    cc_.mov(params_, ax::ptr(args, offsetof(KernelArgs, params)));
  }
  tmp_ = cc_.newInt64("tmp");
  for (int k = 0; k < num_operands(); ++k) {
    base_.push_back(cc_.newIntPtr("base%d", k));
    cc_.mov(base_[k], ax::ptr(ptrs, 8 * k));
    tile_ptr_.push_back(cc_.newIntPtr("tile%d", k));
    row_ptr_.push_back(cc_.newIntPtr("row%d", k));
    // Bytes from one row to the next.
    row_step_.push_back(cc_.newInt64("step%d", k));
    cc_.mov(row_step_[k], ax::qword_ptr(strides, 8 * (3 * k + 1)));
    if (shift_of(operand_dtype(k))) cc_.shl(row_step_[k], shift_of(operand_dtype(k)));
    // Widened argmax indices of a 16-lane tile take 128 bytes.
    bool wide = k >= spec_.num_inputs() && is_int32_index(spec_.program.outputs[k - spec_.num_inputs()]);
    bounce_.push_back(cc_.newStack(wide ? 128 : 64, 64));
  }
  ld_row_ = row_ptr_;
  ld_tile_ = tile_ptr_;
  values_.resize(spec_.program.instrs.size());
  const auto& ins = spec_.program.instrs;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!per_call_[i]) continue;
    if (ins[i].op == ScalarOp::kInput) {
      values_[i] = load_input(ins[i], false, false);
    } else if (ins[i].op == ScalarOp::kRowLength) {
      ax::Gp n = cc_.newInt64("rows");
      cc_.mov(n, ax::qword_ptr(shape_, 8));
      values_[i] = e_.broadcast_int_as(ins[i].dtype, n);
    } else {
      values_[i] = emit_value_instr(e_, spec_.program, ins[i], values_);
    }
  }

  // Tiles per p: ceil(C / lanes).
  ax::Gp tiles_per_p = cc_.newInt64("tiles_per_p"), t = cc_.newInt64("t"), p = cc_.newInt64("p"),
         j0 = cc_.newInt64("j0");
  cols_ = cc_.newInt64("cols");
  cc_.mov(tiles_per_p, ax::qword_ptr(shape_, 16));
  cc_.add(tiles_per_p, lanes - 1);
  int lane_shift = lanes == 16 ? 4 : lanes == 8 ? 3 : 2;
  cc_.shr(tiles_per_p, lane_shift);
  Label stream = cc_.newLabel();
  cc_.cmp(tiles_per_p, kStreamMinTiles);
  cc_.jge(stream);
  cc_.mov(t, begin);

  Label tile = cc_.newLabel(), partial = cc_.newLabel(), next = cc_.newLabel();
  cc_.bind(tile);
  cc_.mov(p, t);
  cc_.xor_(j0, j0);
  cc_.div(j0, p, tiles_per_p);  // p = t / tiles_per_p, j0 = t % tiles_per_p
  cc_.shl(j0, lane_shift);
  point_tiles(p, j0, cc_.newInt64("c"));
  cc_.mov(cols_, ax::qword_ptr(shape_, 16));
  cc_.sub(cols_, j0);
  cc_.cmp(cols_, lanes);
  cc_.jl(partial);
  emit_tile(false);
  cc_.jmp(next);
  cc_.bind(partial);
  emit_tile(true);
  cc_.bind(next);
  cc_.inc(t);
  cc_.cmp(t, end);
  cc_.jl(tile);
  cc_.jmp(done);
  cc_.bind(stream);
  emit_stream(begin, end, tiles_per_p);
  cc_.bind(done);
  cc_.endFunc();
}

}  // namespace

void generate_column_kernel(const FusedKernelSpec& spec, ax::Compiler& cc, bool avx512) {
  ColumnKernelGenerator(spec, cc, avx512).generate();
}

}  // namespace wok::jit::x86
