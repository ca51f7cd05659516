#include "wok/jit/x86/x86_codegen.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "wok/jit/x86/instr_emitter.h"
#include "wok/jit/x86/interleave.h"
#include "wok/jit/x86/row_schedule.h"
#include "wok/jit/x86/vec_emitter.h"
#include "wok/runtime/compute_program.h"

namespace wok::jit::x86 {

namespace {

using asmjit::Label;

// Records asmjit's first error instead of aborting.
class ErrorCollector : public asmjit::ErrorHandler {
 public:
  void handleError(asmjit::Error err, const char* message, asmjit::BaseEmitter*) override {
    if (!failed) {
      failed = true;
      text = std::string(asmjit::DebugUtils::errorAsString(err)) + ": " + message;
    }
  }
  bool failed = false;
  std::string text;
};

// When an instruction's value is computed: once per call (constants,
// params), once per run along the inner dim (inputs broadcast along it),
// or per element.
enum Level { kPerCall = 0, kPerRow = 1, kPerElement = 2 };

// How many exp-sized chains one instruction emits (0 for plain arithmetic),
// for choosing the unroll factor.
int transcendental_weight(ScalarOp op) {
  if (!is_transcendental(op)) return 0;
  switch (op) {
    case ScalarOp::kErf:  // a polynomial, a division and an exp
    case ScalarOp::kSin:  // float32 computes in float64
    case ScalarOp::kCos:
      return 2;
    case ScalarOp::kPow:  // a log and an exp, in float64
      return 3;
    default:
      return 1;
  }
}


// Note [Generated kernel layout]
// void kernel(const KernelArgs* args, int64 begin, int64 end):
//   per-call values (constants, params)
//   rank 1:  one run over [begin, end)
//   rank >1: split begin into a multi-index once, then walk runs along the
//            inner dim, advancing an odometer over the outer dims
//   each run: per-row values (inner-broadcast inputs), then an unrolled
//   vector loop, a one-vector loop, and a tail that goes through stack
//   "bounce" buffers so loads and stores never touch memory past the end.
class KernelGenerator {
 public:
  KernelGenerator(const FusedKernelSpec& spec, ax::Compiler& cc, bool avx512)
      : spec_(spec), cc_(cc), e_(cc, avx512, choose_lanes(spec, avx512)) {}

  void generate();

 private:
  void classify();
  int num_operands() const { return spec_.num_inputs() + spec_.num_outputs(); }
  DType operand_dtype(int k) const {
    return k < spec_.num_inputs() ? spec_.input_dtypes[k] : spec_.output_dtype(k - spec_.num_inputs());
  }
  bool streams(int k) const { return k >= spec_.num_inputs() || !spec_.inner_broadcast(k); }

  bool bfloat16_pairs() const;
  void emit_level(Level level, const ax::Gp& j, int offset, bool bounce);
  ax::Vec emit_instr(const ScalarInstr& in, const ax::Gp& j, int offset, bool bounce);
  void store_outputs(const ax::Gp& j, int offset, bool bounce);
  void emit_pair(const ax::Gp& j, int offset, CopyRecorder& copies);
  void emit_run(const ax::Gp& len);
  void point_operands(const ax::Gp& pos, const ax::Gp& col, const std::vector<ax::Gp>& row_off);

  const FusedKernelSpec& spec_;
  ax::Compiler& cc_;
  VecEmitter e_;
  std::vector<Level> levels_;
  std::vector<ax::Vec> values_;
  std::vector<ax::Gp> base_;      // per operand: its buffer
  std::vector<ax::Gp> run_ptr_;   // per operand: element 0 of the current run
  std::vector<ax::Mem> bounce_;   // per streamed operand: stack buffer for tails
  ax::Gp params_;
  int unroll_ = 1;
  int heavy_ = 0;  // transcendental weight of the per-element body
  // Note [bfloat16 pairs]: whether the unrolled loop takes its copies two
  // at a time, and which of a pair's two bodies is being emitted.
  enum class PairPart { kNone, kEven, kOdd };
  bool pairs_ = false;
  PairPart pair_part_ = PairPart::kNone;
  std::vector<ax::Vec> pair_odd_;  // per input instruction: its odd elements
};

void KernelGenerator::classify() {
  const auto& instrs = spec_.program.instrs;
  levels_.assign(instrs.size(), kPerCall);
  int heavy = 0;
  for (size_t i = 0; i < instrs.size(); ++i) {
    const ScalarInstr& in = instrs[i];
    if (in.op == ScalarOp::kInput) {
      if (in.index >= spec_.num_inputs()) levels_[i] = kPerCall;
      else levels_[i] = spec_.inner_broadcast(in.index) ? kPerRow : kPerElement;
      continue;
    }
    Level l = kPerCall;
    for (int a = 0; a < scalar_op_arity(in.op); ++a) l = std::max(l, levels_[in.args[a]]);
    levels_[i] = l;
    if (l == kPerElement) heavy += transcendental_weight(in.op);
  }
  // Note [Unrolling transcendental bodies]
  // The unrolled copies of a body with a transcendental are interleaved
  // (Note [Interleaved copies]), so unrolling is what gives the CPU
  // independent work beside a long dependency chain. Cheap bodies (no
  // transcendental) take 4 copies, not interleaved. One exp or tanh per
  // element takes 4 on AVX2: measured on Zen 4, a GELU or sigmoid kernel
  // runs 10-20% faster with 4 copies than with 2, although 16 registers make
  // it spill a little; with AVX-512's 32 registers 2 and 4 run alike (the
  // body is nearer the memory bound), so it keeps 2. Bodies of about two
  // transcendentals take 2; longer ones (erf, pow, several functions) spill
  // more than they gain and take 1.
  heavy_ = heavy;
  if (heavy == 0) unroll_ = 4;
  else if (heavy == 1) unroll_ = e_.avx512() ? 2 : 4;
  else if (heavy == 2) unroll_ = 2;
  else unroll_ = 1;
  pairs_ = bfloat16_pairs();
}

// Note [bfloat16 pairs]
// On AVX2 a bfloat16 vector costs two instructions to load (vpmovzxwd,
// vpslld) and, after its eight of rounding, three to pack and store
// (vextracti128, vpackusdw, vmovdqu), where float16 has vcvtph2ps and
// vcvtps2ph. Sixteen bfloat16 values loaded as one 32-byte register hold
// the even elements' bits in the low word of each dword and the odd ones'
// in the high word, so vpslld 16 gives the even elements as float32 and
// vpand 0xFFFF0000 the odd ones, exactly; rounded back to their high
// words, vpsrld 16 and vpblendw put the two vectors into one register in
// element order. Every 16 values: three instructions to load where there
// were four, seventeen to round and store where there were twenty-two (the
// rounding's shift down is done once; the extracts and packs go).
//
// The lanes are then elements 0, 2, .., 14 and 1, 3, .., 15, which no
// elementwise instruction can tell: each lane computes its own element's
// value, with the same bits as in element order. What could tell is
// excluded: an operand of another dtype (its lanes would be in element
// order) and a reduction (row and column kernels, other generators). So
// the pairs are taken on AVX2 with 8 lanes (every value 32 bits wide), an
// even unroll (the copies go two by two), and every streamed input and
// every output bfloat16; the one-vector loop and the tail keep element
// order.
//
// On a Zen 3 EPYC (AVX2), in bench_half_programs, time(float32) /
// time(bfloat16) at 1 / 2 threads went, for p1, from 1.73 / 1.69 and
// 1.69 / 1.71 in two runs before to 1.94 / 1.89, 1.73 / 1.99 and
// 1.66 / 1.90 in three after (memory bound: the host's noise is most of
// the spread); for the compute-bound p2 (exp, tanh) from 0.89-0.90 /
// 0.89-0.92 to 1.01-1.05 / 1.15-1.51, and p3 (gelu) from 0.84-0.91 /
// 0.92-0.94 to 1.07-1.21 / 1.16-1.41. A first version that emitted a
// pair's two halves as one copy lost the interleaving of p2's and p3's two
// copies (p2 0.82 / 0.91): the halves are separate copies now.
bool KernelGenerator::bfloat16_pairs() const {
  if (e_.avx512() || e_.lanes() != 8 || unroll_ % 2 != 0) return false;
  for (int k = 0; k < num_operands(); ++k)
    if (streams(k) && operand_dtype(k) != DType::kBFloat16) return false;
  return true;
}

ax::Vec KernelGenerator::emit_instr(const ScalarInstr& in, const ax::Gp& j, int offset, bool bounce) {
  if (in.op != ScalarOp::kInput) return emit_value_instr(e_, spec_.program, in, values_);
  const DType t = in.dtype;
  if (in.index >= spec_.num_inputs()) return e_.broadcast_load(t, ax::ptr(params_, 8 * (in.index - spec_.num_inputs())));
  if (spec_.inner_broadcast(in.index)) return e_.broadcast_load(t, ax::ptr(run_ptr_[in.index]));
  if (bounce) return e_.load(t, bounce_[in.index]);
  const ax::Mem m = ax::ptr(run_ptr_[in.index], j, shift_of(t), offset * static_cast<int>(itemsize(t)));
  const size_t i = static_cast<size_t>(&in - spec_.program.instrs.data());
  switch (pair_part_) {
    case PairPart::kNone: break;
    case PairPart::kEven: {
      ax::Vec even;
      e_.load_bfloat16_pair(m, &even, &pair_odd_[i]);
      return even;
    }
    case PairPart::kOdd: return pair_odd_[i];
  }
  return e_.load(t, m);
}

void KernelGenerator::emit_level(Level level, const ax::Gp& j, int offset, bool bounce) {
  const auto& instrs = spec_.program.instrs;
  for (size_t i = 0; i < instrs.size(); ++i)
    if (levels_[i] == level) values_[i] = emit_instr(instrs[i], j, offset, bounce);
}

void KernelGenerator::store_outputs(const ax::Gp& j, int offset, bool bounce) {
  for (int o = 0; o < spec_.num_outputs(); ++o) {
    int k = spec_.num_inputs() + o;
    DType t = operand_dtype(k);
    ax::Vec v = values_[spec_.program.outputs[o]];
    if (bounce) e_.store(t, bounce_[k], v);
    else e_.store(t, ax::ptr(run_ptr_[k], j, shift_of(t), offset * static_cast<int>(itemsize(t))), v);
  }
}

// Note [bfloat16 pairs]: 2 * lanes elements from `offset`: the even
// ones' body, the odd ones', then the outputs put back in element order,
// recorded as three copies, so that a body with a transcendental has its
// two halves interleaved (Note [Interleaved copies]; the later parts read
// the earlier ones' registers, which the interleaving waits for).
void KernelGenerator::emit_pair(const ax::Gp& j, int offset, CopyRecorder& copies) {
  pair_odd_.assign(spec_.program.instrs.size(), ax::Vec());
  std::vector<ax::Vec> even;
  for (PairPart part : {PairPart::kEven, PairPart::kOdd}) {
    pair_part_ = part;
    copies.begin_copy();
    emit_level(kPerElement, j, offset, false);
    copies.end_copy();
    if (part == PairPart::kEven)
      for (int32_t v : spec_.program.outputs) even.push_back(values_[v]);
  }
  pair_part_ = PairPart::kNone;
  copies.begin_copy();
  for (int o = 0; o < spec_.num_outputs(); ++o) {
    const ax::Mem m = ax::ptr(run_ptr_[spec_.num_inputs() + o], j, shift_of(DType::kBFloat16), 2 * offset);
    e_.store_bfloat16_pair(m, even[o], values_[spec_.program.outputs[o]]);
  }
  copies.end_copy();
}

void KernelGenerator::emit_run(const ax::Gp& len) {
  const int lanes = e_.lanes();
  emit_level(kPerRow, ax::Gp(), 0, false);
  ax::Gp j = cc_.newInt64("j");
  ax::Gp limit = cc_.newInt64("limit");
  cc_.xor_(j, j);
  if (unroll_ > 1) {
    Label loop = cc_.newLabel(), exit = cc_.newLabel();
    cc_.mov(limit, len);
    cc_.sub(limit, unroll_ * lanes);
    cc_.bind(loop);
    cc_.cmp(j, limit);
    cc_.jg(exit);
    // Note [Interleaved copies] in jit/x86/interleave.cpp; only bodies with
    // a transcendental: a cheap, memory-bound body ran 10-25% slower
    // interleaved (P1 of bench_jit_programs, AVX-512: 4 copies' loads up
    // front, then their stores together).
    CopyRecorder copies(cc_);
    for (int u = 0; u < unroll_; u += pairs_ ? 2 : 1) {
      if (pairs_) {
        emit_pair(j, u * lanes, copies);  // Note [bfloat16 pairs]: copies u and u + 1
        continue;
      }
      copies.begin_copy();
      emit_level(kPerElement, j, u * lanes, false);
      store_outputs(j, u * lanes, false);
      copies.end_copy();
    }
    if (heavy_ > 0) copies.interleave();
    cc_.add(j, unroll_ * lanes);
    cc_.jmp(loop);
    cc_.bind(exit);
  }
  {
    Label loop = cc_.newLabel(), exit = cc_.newLabel();
    cc_.mov(limit, len);
    cc_.sub(limit, lanes);
    cc_.bind(loop);
    cc_.cmp(j, limit);
    cc_.jg(exit);
    emit_level(kPerElement, j, 0, false);
    store_outputs(j, 0, false);
    cc_.add(j, lanes);
    cc_.jmp(loop);
    cc_.bind(exit);
  }
  // Tail: fewer than `lanes` elements left.
  Label skip = cc_.newLabel();
  ax::Gp rem = cc_.newInt64("rem");
  cc_.mov(rem, len);
  cc_.sub(rem, j);
  cc_.jle(skip);
  auto copy = [&](BounceCopy direction, int k) {
    DType t = operand_dtype(k);
    emit_bounce_copy(cc_, direction, bounce_[k], ax::ptr(run_ptr_[k], j, shift_of(t)), rem, t);
  };
  for (int k = 0; k < spec_.num_inputs(); ++k)
    if (streams(k)) copy(BounceCopy::kIn, k);
  emit_level(kPerElement, j, 0, true);
  store_outputs(j, 0, true);
  for (int k = spec_.num_inputs(); k < num_operands(); ++k) copy(BounceCopy::kOut, k);
  cc_.bind(skip);
}

// Points run_ptr_ at element (row offset + col) of each input, and at
// element `pos` of each (contiguous) output.
void KernelGenerator::point_operands(const ax::Gp& pos, const ax::Gp& col, const std::vector<ax::Gp>& row_off) {
  ax::Gp t = cc_.newInt64("t");
  for (int k = 0; k < num_operands(); ++k) {
    int sh = shift_of(operand_dtype(k));
    if (k >= spec_.num_inputs()) {
      cc_.lea(run_ptr_[k], ax::ptr(base_[k], pos, sh));
    } else if (row_off.empty()) {
      // rank 1: pos is the element; broadcast inputs stay at element 0.
      if (streams(k)) cc_.lea(run_ptr_[k], ax::ptr(base_[k], pos, sh));
      else cc_.mov(run_ptr_[k], base_[k]);
    } else {
      cc_.mov(t, row_off[k]);
      if (streams(k)) cc_.add(t, col);
      cc_.lea(run_ptr_[k], ax::ptr(base_[k], t, sh));
    }
  }
}

void KernelGenerator::generate() {
  classify();
  const int rank = spec_.rank;
  const int n_in = spec_.num_inputs();
  asmjit::FuncNode* fn = cc_.addFunc(asmjit::FuncSignatureT<void, const void*, int64_t, int64_t>());
  ax::Gp args = cc_.newIntPtr("args"), begin = cc_.newInt64("begin"), end = cc_.newInt64("end");
  // Tell the register allocator which moves it may use for spills: without
  // this it moves zmm registers with SSE instructions, losing upper lanes.
  fn->frame().setAvxEnabled();
  if (e_.avx512()) fn->frame().setAvx512Enabled();
  fn->setArg(0, args);
  fn->setArg(1, begin);
  fn->setArg(2, end);
  e_.mark_preamble();
  Label done = cc_.newLabel();
  cc_.cmp(begin, end);
  cc_.jge(done);

  ax::Gp ptrs = cc_.newIntPtr("ptrs");
  cc_.mov(ptrs, ax::ptr(args, offsetof(KernelArgs, ptrs)));
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
  emit_level(kPerCall, ax::Gp(), 0, false);

  if (rank == 1) {
    ax::Gp len = cc_.newInt64("len");
    point_operands(begin, ax::Gp(), {});
    cc_.mov(len, end);
    cc_.sub(len, begin);
    emit_run(len);
    cc_.bind(done);
    cc_.endFunc();
    return;
  }

  ax::Gp shape = cc_.newIntPtr("shape"), strides = cc_.newIntPtr("strides");
  cc_.mov(shape, ax::ptr(args, offsetof(KernelArgs, shape)));
  cc_.mov(strides, ax::ptr(args, offsetof(KernelArgs, strides)));
  auto stride_of = [&](int k, int d) { return ax::qword_ptr(strides, 8 * (k * rank + d)); };
  auto dim = [&](int d) { return ax::qword_ptr(shape, 8 * d); };

  // Split `begin` into a multi-index: idx[d] for the outer dims, col inner.
  std::vector<ax::Gp> idx(rank);
  ax::Gp quot = cc_.newInt64("quot"), remd = cc_.newInt64("remd");
  cc_.mov(quot, begin);
  for (int d = rank - 1; d >= 0; --d) {
    idx[d] = cc_.newInt64("idx%d", d);
    cc_.xor_(remd, remd);
    cc_.div(remd, quot, dim(d));  // quot = quot / n, remd = quot % n
    cc_.mov(idx[d], remd);
  }
  ax::Gp col = idx[rank - 1];
  // Row offsets of each input: sum over outer dims of idx[d] * stride.
  std::vector<ax::Gp> row_off(n_in);
  ax::Gp t = cc_.newInt64("t");
  for (int k = 0; k < n_in; ++k) {
    row_off[k] = cc_.newInt64("row_off%d", k);
    cc_.xor_(row_off[k], row_off[k]);
    for (int d = 0; d < rank - 1; ++d) {
      cc_.mov(t, idx[d]);
      cc_.imul(t, stride_of(k, d));
      cc_.add(row_off[k], t);
    }
  }
  ax::Gp pos = cc_.newInt64("pos");
  cc_.mov(pos, begin);

  Label row = cc_.newLabel();
  cc_.bind(row);
  ax::Gp len = cc_.newInt64("len"), left = cc_.newInt64("left");
  cc_.mov(len, dim(rank - 1));
  cc_.sub(len, col);
  cc_.mov(left, end);
  cc_.sub(left, pos);
  cc_.cmp(len, left);
  cc_.cmovg(len, left);
  point_operands(pos, col, row_off);
  emit_run(len);
  cc_.add(pos, len);
  cc_.cmp(pos, end);
  cc_.jge(done);
  cc_.xor_(col, col);
  // Odometer over the outer dims; pos < end guarantees it stays in range.
  for (int d = rank - 2; d >= 0; --d) {
    cc_.inc(idx[d]);
    for (int k = 0; k < n_in; ++k) cc_.add(row_off[k], stride_of(k, d));
    if (d == 0) {
      cc_.jmp(row);
      break;
    }
    cc_.cmp(idx[d], dim(d));
    cc_.jl(row);
    cc_.xor_(idx[d], idx[d]);
    for (int k = 0; k < n_in; ++k) {
      cc_.mov(t, dim(d));
      cc_.imul(t, stride_of(k, d));
      cc_.sub(row_off[k], t);
    }
  }
  cc_.bind(done);
  cc_.endFunc();
}

}  // namespace

namespace {

// Whether `in`, of a half type, compiles: inputs, constants and float32
// work (Note [Half types in registers]); a cast to it only from float32,
// bool or the other half type, since one from float64 or a wide integer
// would round twice (to float32, then to the half type).
bool half_instr_compiles(const ScalarProgram& program, const ScalarInstr& in) {
  switch (in.op) {
    case ScalarOp::kInput:
    case ScalarOp::kConst: return true;
    case ScalarOp::kCast: {
      const DType from = program.instrs[in.args[0]].dtype;
      return from == DType::kFloat32 || from == DType::kBool || is_half(from) || is_narrow_int(from);
    }
    case ScalarOp::kReduceArgmax: return false;
    default: return emits(in.op, DType::kFloat32);
  }
}

}  // namespace

bool can_compile(const ScalarProgram& program) {
  for (const ScalarInstr& in : program.instrs) {
    if (is_half(in.dtype)) {
      if (!half_instr_compiles(program, in)) return false;
      continue;
    }
    if (is_widened_int(in.dtype)) {
      // Note [Narrow integers in registers]: what int32 (uint32: int64)
      // compiles, but for reductions, which would accumulate past the
      // type's range before the wrap (their int32 forms are max and min
      // only: no gain).
      if (in.op == ScalarOp::kInput || in.op == ScalarOp::kConst) continue;
      if (is_reduction(in.op) || in.op == ScalarOp::kRowLength || !emits(in.op, compute_dtype(in.dtype))) return false;
      continue;
    }
    if (!in_mask(kComputeDTypeMask, in.dtype)) return false;
    if (!emits(in.op, in.dtype)) return false;
    if (!is_reduction(in.op)) continue;
    // Reductions the generators emit: float sums, products, max and min;
    // int64 sums; int32 max and min; argmax of every dtype.
    if (in.op == ScalarOp::kReduceArgmax) continue;
    DType t = in.dtype;
    bool ok = is_floating(t);
    ok = ok || (t == DType::kInt64 && in.op == ScalarOp::kReduceSum);
    ok = ok || (t == DType::kInt32 && (in.op == ScalarOp::kReduceMax || in.op == ScalarOp::kReduceMin));
    if (!ok) return false;
  }
  return true;
}

namespace {

// spec with the program the generators emit (compute_program), when that
// differs from spec's own: when it has a half-typed or narrow integer value.
std::optional<FusedKernelSpec> compute_spec(const FusedKernelSpec& spec) {
  // Notes [Half types in registers] and [Narrow integers in registers]
  if (!has_storage_dtype(spec.program)) return std::nullopt;
  FusedKernelSpec computed = spec;
  computed.program = compute_program(spec.program);
  return computed;
}

}  // namespace

bool uses_avx512_bf16(const FusedKernelSpec& spec, CpuIsa isa) {
  if (isa != CpuIsa::kAvx512 || !host_has_avx512_bf16()) return false;
  for (const ScalarInstr& in : spec.program.instrs)
    if (in.dtype == DType::kBFloat16) return true;
  return false;
}

int row_scratch_bytes_per_column(const FusedKernelSpec& spec) {
  if (!spec.is_row()) return 0;
  const std::optional<FusedKernelSpec> computed = compute_spec(spec);
  const RowSchedule sched(computed ? *computed : spec);
  // Note [Rows in flight]: each row in flight its scratch rows, and a
  // dummy row (8 bytes a column) for the slots without one.
  if (sched.rows_in_flight() == 1) return sched.scratch_bytes_per_column();
  return sched.scratch_bytes_per_column() * sched.rows_in_flight() + 8;
}

absl::StatusOr<MachineCode> generate_x86(const FusedKernelSpec& spec, CpuIsa isa, bool want_listing) {
  if (isa == CpuIsa::kBaseline) return absl::FailedPreconditionError("the x86 JIT needs AVX2+FMA or AVX-512");
  if (spec.rank < 1 || spec.rank > kMaxRank)
    return absl::InvalidArgumentError("iteration rank " + std::to_string(spec.rank) + " outside [1, 8]");
  if (!can_compile(spec.program)) return absl::UnimplementedError("program has an op the x86 JIT does not emit");

  asmjit::CodeHolder code;
  code.init(asmjit::Environment::host());
  asmjit::StringLogger logger;
  if (want_listing) code.setLogger(&logger);
  ErrorCollector errors;
  code.setErrorHandler(&errors);
  ax::Compiler cc(&code);
  const std::optional<FusedKernelSpec> computed = compute_spec(spec);
  const FusedKernelSpec& s = computed ? *computed : spec;
  if (s.is_row()) generate_row_kernel(s, cc, isa == CpuIsa::kAvx512);
  else if (s.is_column()) generate_column_kernel(s, cc, isa == CpuIsa::kAvx512);
  else if (s.is_gemm()) generate_gemm_kernel(s, cc, isa == CpuIsa::kAvx512);
  else KernelGenerator(s, cc, isa == CpuIsa::kAvx512).generate();
  cc.finalize();
  if (errors.failed) return absl::InternalError("asmjit: " + errors.text + "\nwhile generating:\n" + spec.str());

  code.flatten();
  code.resolveUnresolvedLinks();
  code.relocateToBase(0);
  for (const asmjit::RelocEntry* re : code.relocEntries())
    if (re->relocType() != asmjit::RelocType::kNone)
      return absl::InternalError("generated code is not position-independent (relocation of type " +
                                 std::to_string(static_cast<int>(re->relocType())) + ")");
  MachineCode out;
  out.bytes.resize(code.codeSize());
  code.copyFlattenedData(out.bytes.data(), out.bytes.size(), asmjit::CopySectionFlags::kPadTargetBuffer);
  if (want_listing) out.listing = logger.data();
  return out;
}

absl::StatusOr<KernelFn> load_machine_code(const std::vector<uint8_t>& bytes) {
  // Leaked on purpose: kernels may run until the process exits.
  static asmjit::JitAllocator* allocator = new asmjit::JitAllocator();
  void* rx = nullptr;
  void* rw = nullptr;
  if (asmjit::Error err = allocator->alloc(&rx, &rw, bytes.size()))
    return absl::ResourceExhaustedError(std::string("cannot allocate executable memory: ") +
                                        asmjit::DebugUtils::errorAsString(err));
  std::memcpy(rw, bytes.data(), bytes.size());
  asmjit::VirtMem::flushInstructionCache(rx, bytes.size());
  return reinterpret_cast<KernelFn>(rx);
}

}  // namespace wok::jit::x86
