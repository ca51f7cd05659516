// The GEMM micro-kernel generator (Note [GEMM micro-kernels] in
// jit/gemm_kernel.h): the k loop over a register-blocked tile, then the
// fused epilogue over the tile's rows.
#include <cstddef>

#include "wok/jit/gemm_kernel.h"
#include "wok/jit/x86/instr_emitter.h"
#include "wok/jit/x86/vec_emitter.h"
#include "wok/jit/x86/x86_codegen.h"

namespace wok::jit::x86 {

namespace {

using asmjit::Label;

class GemmGenerator {
 public:
  GemmGenerator(const FusedKernelSpec& spec, ax::Compiler& cc, bool avx512)
      : spec_(spec),
        cc_(cc),
        avx512_(avx512),
        t_(spec.input_dtypes[0]),
        size_(static_cast<int>(itemsize(t_))),
        lanes_((avx512 ? 64 : 32) / size_),
        rows_(spec.tile_rows),
        vecs_(spec.tile_cols / lanes_),
        e_(cc, avx512, lanes_) {}

  void generate();

 private:
  bool f32() const { return t_ == DType::kFloat32; }
  int operands() const { return spec_.num_inputs() - 1 + spec_.num_outputs(); }
  // Entry k of GemmTileArgs::ptrs: epilogue input k + 1, or an output.
  DType operand_dtype(int k) const {
    const int in = spec_.num_inputs() - 1;
    return k < in ? spec_.input_dtypes[k + 1] : spec_.output_dtype(k - in);
  }
  bool along_row_only(int k) const {  // one value per row (broadcast along columns)
    return k < spec_.num_inputs() - 1 && spec_.input_broadcast[k + 1][1];
  }

  void k_loop();
  void k_step(int unroll_index);
  void finish_rows(bool masked);
  void row_body(bool epilogue, bool masked);
  ax::Vec load(DType t, const ax::Mem& m, int v, bool masked);
  void store(DType t, const ax::Mem& m, const ax::Vec& x, int v, bool masked);

  const FusedKernelSpec& spec_;
  ax::Compiler& cc_;
  bool avx512_;
  DType t_;
  int size_, lanes_, rows_, vecs_;
  VecEmitter e_;

  static constexpr int kPrefetchRows = 12;  // how far ahead B is prefetched
  ax::Gp args_, a_, b_, ldb_, kc_, prefetch_;
  std::vector<ax::Vec> acc_;  // rows_ x vecs_
  ax::Mem tile_;
  ax::Gp tile_row_, acc_ptr_, ldacc_, row_, rows_valid_, flags_, params_;
  std::vector<ax::Gp> ptr_, stride_;  // per operand: the current row, the row stride in bytes
  std::vector<Mask> masks_;           // per vector of a row: its valid lanes
  std::vector<ax::Vec> values_;
  std::vector<bool> per_call_;
};

void GemmGenerator::k_step(int u) {
  std::vector<ax::Vec> bv(vecs_);
  for (int v = 0; v < vecs_; ++v) {
    bv[v] = e_.new_vec(t_);
    cc_.vmovups(bv[v], ax::ptr(b_, v * lanes_ * size_));
  }
  for (int r = 0; r < rows_; ++r) {
    const int off = (u * rows_ + r) * size_;
    if (avx512_) {
      // The broadcast rides in the multiply-add's memory operand.
      ax::Mem m = f32() ? ax::dword_ptr(a_, off)._1to16() : ax::qword_ptr(a_, off)._1to8();
      for (int v = 0; v < vecs_; ++v) {
        if (f32()) cc_.vfmadd231ps(acc_[r * vecs_ + v], bv[v], m);
        else cc_.vfmadd231pd(acc_[r * vecs_ + v], bv[v], m);
      }
      continue;
    }
    ax::Vec av = e_.new_vec(t_);
    if (f32()) cc_.vbroadcastss(av, ax::dword_ptr(a_, off));
    else cc_.vbroadcastsd(av, ax::qword_ptr(a_, off));
    for (int v = 0; v < vecs_; ++v) {
      if (f32()) cc_.vfmadd231ps(acc_[r * vecs_ + v], bv[v], av);
      else cc_.vfmadd231pd(acc_[r * vecs_ + v], bv[v], av);
    }
  }
  // B's rows are ldb apart: far apart when the kernel reads the weights in
  // place (a few rows of A), where the hardware prefetchers do not follow.
  for (int line = 0; line < vecs_ * lanes_ * size_; line += 64) cc_.prefetcht0(ax::ptr(prefetch_, line));
  cc_.add(b_, ldb_);
  cc_.add(prefetch_, ldb_);
}

void GemmGenerator::k_loop() {
  constexpr int kUnroll = 4;
  for (ax::Vec& x : acc_) {
    x = e_.new_vec(t_);
    cc_.vxorps(x, x, x);
  }
  Label loop = cc_.newLabel(), tail = cc_.newLabel(), one = cc_.newLabel(), done = cc_.newLabel();
  cc_.cmp(kc_, kUnroll);
  cc_.jl(tail);
  cc_.bind(loop);
  for (int u = 0; u < kUnroll; ++u) k_step(u);
  cc_.add(a_, kUnroll * rows_ * size_);
  cc_.sub(kc_, kUnroll);
  cc_.cmp(kc_, kUnroll);
  cc_.jge(loop);
  cc_.bind(tail);
  cc_.test(kc_, kc_);
  cc_.jz(done);
  cc_.bind(one);
  k_step(0);
  cc_.add(a_, rows_ * size_);
  cc_.dec(kc_);
  cc_.jnz(one);
  cc_.bind(done);
}

ax::Vec GemmGenerator::load(DType t, const ax::Mem& m, int v, bool masked) {
  if (!masked) return e_.load(t, m);
  ax::Vec r = e_.new_vec(t);
  const bool wide = itemsize(t) == 8;
  if (avx512_) {
    if (wide) cc_.k(masks_[v].k).z().vmovupd(r, m);
    else cc_.k(masks_[v].k).z().vmovups(r, m);
  } else if (wide) {
    cc_.vmaskmovpd(r, masks_[v].v, m);
  } else {
    cc_.vmaskmovps(r, masks_[v].v, m);
  }
  return r;
}

void GemmGenerator::store(DType t, const ax::Mem& m, const ax::Vec& x, int v, bool masked) {
  if (!masked) {
    e_.store(t, m, x);
    return;
  }
  const bool wide = itemsize(t) == 8;
  if (avx512_) {
    if (wide) cc_.k(masks_[v].k).vmovupd(m, x);
    else cc_.k(masks_[v].k).vmovups(m, x);
  } else if (wide) {
    cc_.vmaskmovpd(m, masks_[v].v, x);
  } else {
    cc_.vmaskmovps(m, masks_[v].v, x);
  }
}

// One row of the finished tile: add partial sums, then either store the
// sum for the next k block or run the epilogue and write the outputs.
void GemmGenerator::row_body(bool epilogue, bool masked) {
  const auto& instrs = spec_.program.instrs;
  const int n_in = spec_.num_inputs();
  const int bytes = lanes_ * size_;
  for (int v = 0; v < vecs_; ++v) {
    ax::Vec x = e_.new_vec(t_);
    cc_.vmovups(x, ax::ptr(tile_row_, v * bytes));
    Label fresh = cc_.newLabel();
    cc_.test(flags_, kGemmLoadAcc);
    cc_.jz(fresh);
    ax::Vec partial = load(t_, ax::ptr(acc_ptr_, v * bytes), v, masked);
    if (f32()) cc_.vaddps(x, x, partial);
    else cc_.vaddpd(x, x, partial);
    cc_.bind(fresh);
    if (!epilogue) {
      store(t_, ax::ptr(acc_ptr_, v * bytes), x, v, masked);
      continue;
    }
    for (size_t i = 0; i < instrs.size(); ++i) {
      if (per_call_[i]) continue;
      const ScalarInstr& in = instrs[i];
      if (in.op != ScalarOp::kInput) {
        values_[i] = emit_value_instr(e_, spec_.program, in, values_);
      } else if (in.index == 0) {
        values_[i] = x;
      } else {
        const int k = in.index - 1;
        if (along_row_only(k)) values_[i] = e_.broadcast_load(in.dtype, ax::ptr(ptr_[k]));
        else values_[i] = load(in.dtype, ax::ptr(ptr_[k], v * bytes), v, masked);
      }
    }
    for (int o = 0; o < spec_.num_outputs(); ++o) {
      const int k = n_in - 1 + o;
      store(operand_dtype(k), ax::ptr(ptr_[k], v * bytes), values_[spec_.program.outputs[o]], v, masked);
    }
  }
}

void GemmGenerator::finish_rows(bool masked) {
  Label raw = cc_.newLabel(), out = cc_.newLabel();
  auto rows_loop = [&](bool epilogue) {
    Label loop = cc_.newLabel();
    cc_.bind(loop);
    row_body(epilogue, masked);
    cc_.add(tile_row_, vecs_ * lanes_ * size_);
    cc_.add(acc_ptr_, ldacc_);
    if (epilogue)
      for (int k = 0; k < operands(); ++k) cc_.add(ptr_[k], stride_[k]);
    cc_.inc(row_);
    cc_.cmp(row_, rows_valid_);
    cc_.jl(loop);
  };
  cc_.test(flags_, kGemmEpilogue);
  cc_.jz(raw);
  rows_loop(true);
  cc_.jmp(out);
  cc_.bind(raw);
  rows_loop(false);
  cc_.bind(out);
}

void GemmGenerator::generate() {
  asmjit::FuncNode* fn = cc_.addFunc(asmjit::FuncSignatureT<void, const void*>());
  fn->frame().setAvxEnabled();
  if (avx512_) fn->frame().setAvx512Enabled();
  args_ = cc_.newIntPtr("args");
  fn->setArg(0, args_);
  auto field = [&](size_t offset) { return ax::qword_ptr(args_, static_cast<int32_t>(offset)); };
  const int shift = shift_of(t_);

  a_ = cc_.newIntPtr("a");
  b_ = cc_.newIntPtr("b");
  ldb_ = cc_.newInt64("ldb");
  kc_ = cc_.newInt64("kc");
  cc_.mov(a_, field(offsetof(GemmTileArgs, a)));
  cc_.mov(b_, field(offsetof(GemmTileArgs, b)));
  cc_.mov(ldb_, field(offsetof(GemmTileArgs, ldb)));
  cc_.shl(ldb_, shift);
  cc_.mov(kc_, field(offsetof(GemmTileArgs, kc)));
  prefetch_ = cc_.newIntPtr("prefetch");
  cc_.imul(prefetch_, ldb_, kPrefetchRows);
  cc_.add(prefetch_, b_);
  // The tile's rows of the accumulation buffer (partial sums, or where an
  // output goes) are far apart and rarely in cache: ask for them now, so
  // they arrive while the k loop runs instead of stalling the store.
  {
    ax::Gp c = cc_.newIntPtr("c"), ldc = cc_.newInt64("ldc");
    cc_.mov(c, field(offsetof(GemmTileArgs, acc)));
    cc_.mov(ldc, field(offsetof(GemmTileArgs, ldacc)));
    cc_.shl(ldc, shift);
    Label none = cc_.newLabel();
    cc_.test(c, c);
    cc_.jz(none);
    for (int r = 0; r < rows_; ++r) {
      for (int line = 0; line < vecs_ * lanes_ * size_; line += 64) cc_.prefetcht0(ax::ptr(c, line));
      if (r + 1 < rows_) cc_.add(c, ldc);
    }
    cc_.bind(none);
  }
  acc_.resize(static_cast<size_t>(rows_ * vecs_));
  k_loop();

  // The tile is done: to the stack buffer, then row by row.
  const int row_bytes = vecs_ * lanes_ * size_;
  tile_ = cc_.newStack(static_cast<uint32_t>(rows_ * row_bytes), 64);
  for (int r = 0; r < rows_; ++r)
    for (int v = 0; v < vecs_; ++v) {
      ax::Mem m = tile_;
      m.addOffset(r * row_bytes + v * lanes_ * size_);
      cc_.vmovups(m, acc_[r * vecs_ + v]);
    }
  // Constants the epilogue hoists are loaded here, after the k loop, so
  // they never take a register from the tile.
  e_.mark_preamble();
  tile_row_ = cc_.newIntPtr("tile_row");
  cc_.lea(tile_row_, tile_);
  acc_ptr_ = cc_.newIntPtr("acc");
  ldacc_ = cc_.newInt64("ldacc");
  row_ = cc_.newInt64("row");
  rows_valid_ = cc_.newInt64("rows");
  flags_ = cc_.newInt64("flags");
  cc_.mov(acc_ptr_, field(offsetof(GemmTileArgs, acc)));
  cc_.mov(ldacc_, field(offsetof(GemmTileArgs, ldacc)));
  cc_.shl(ldacc_, shift);
  cc_.mov(rows_valid_, field(offsetof(GemmTileArgs, rows)));
  cc_.mov(flags_, field(offsetof(GemmTileArgs, flags)));
  cc_.xor_(row_, row_);
  Label done = cc_.newLabel();
  cc_.test(rows_valid_, rows_valid_);
  cc_.jle(done);

  ax::Gp ptrs = cc_.newIntPtr("ptrs"), strides = cc_.newIntPtr("strides");
  cc_.mov(ptrs, field(offsetof(GemmTileArgs, ptrs)));
  cc_.mov(strides, field(offsetof(GemmTileArgs, row_strides)));
  for (int k = 0; k < operands(); ++k) {
    ptr_.push_back(cc_.newIntPtr("op%d", k));
    stride_.push_back(cc_.newInt64("stride%d", k));
    cc_.mov(ptr_[k], ax::qword_ptr(ptrs, 8 * k));
    cc_.mov(stride_[k], ax::qword_ptr(strides, 8 * k));
    cc_.shl(stride_[k], shift_of(operand_dtype(k)));
  }
  // Values of params and constants only: once per call.
  const auto& instrs = spec_.program.instrs;
  const int n_in = spec_.num_inputs();
  values_.resize(instrs.size());
  per_call_.assign(instrs.size(), false);
  if (spec_.num_params() > 0) {
    params_ = cc_.newIntPtr("params");
    cc_.mov(params_, field(offsetof(GemmTileArgs, params)));
  }
  for (size_t i = 0; i < instrs.size(); ++i) {
    const ScalarInstr& in = instrs[i];
    bool once = in.op == ScalarOp::kInput ? in.index >= n_in : true;
    for (int a = 0; a < scalar_op_arity(in.op); ++a) once = once && per_call_[in.args[a]];
    per_call_[i] = once;
    if (!once) continue;
    if (in.op == ScalarOp::kInput) values_[i] = e_.broadcast_load(in.dtype, ax::ptr(params_, 8 * (in.index - n_in)));
    else values_[i] = emit_value_instr(e_, spec_.program, in, values_);
  }

  Label masked = cc_.newLabel();
  ax::Gp cols = cc_.newInt64("cols");
  cc_.mov(cols, field(offsetof(GemmTileArgs, cols)));
  cc_.cmp(cols, vecs_ * lanes_);
  cc_.jl(masked);
  finish_rows(false);
  cc_.jmp(done);
  cc_.bind(masked);
  // Lanes of vector v valid: those with index < cols - v * lanes.
  const DType lane_int = size_ == 8 ? DType::kInt64 : DType::kInt32;
  ax::Vec index = e_.lane_index(lane_int);
  ax::Gp left = cc_.newInt64("left");
  cc_.mov(left, cols);
  for (int v = 0; v < vecs_; ++v) {
    ax::Vec n = e_.broadcast_gpr(lane_int, left);
    masks_.push_back(e_.cmp(lane_int, Cmp::kLt, index, n));
    if (v + 1 < vecs_) cc_.sub(left, lanes_);
  }
  finish_rows(true);
  cc_.bind(done);
  cc_.endFunc();
}

}  // namespace

void generate_gemm_kernel(const FusedKernelSpec& spec, ax::Compiler& cc, bool avx512) {
  GemmGenerator(spec, cc, avx512).generate();
}

}  // namespace wok::jit::x86
