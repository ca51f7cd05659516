// CPU replay of a plan: PlanRun's buffers and steps, including one long
// row reduced in parallel chunks.
#include <algorithm>
#include <cstring>

#include "wok/jit/plan.h"
#include "wok/jit/gemm_driver.h"
#include "wok/runtime/error.h"
#include "wok/runtime/kernel.h"
#include "wok/runtime/kernel_verify.h"
#include "wok/runtime/observe/events.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/stats.h"
#include "wok/runtime/storage.h"
#include "wok/runtime/thread_pool.h"
#include "wok/runtime/wrapping.h"

namespace wok::jit {

namespace {

// Elements per parallel chunk of a generated kernel.
constexpr int64_t kKernelGrain = 16384;
// A single row at least this long is cut into chunks reduced in parallel.
constexpr int64_t kSplitRowMin = int64_t{1} << 16;
constexpr int kMaxSplitChunks = 64;

// A row kernel whose outputs are all plain reductions of values read in
// one pass: chunks of a row can be reduced separately and combined.
bool splittable(const FusedKernelSpec& spec) {
  if (spec.num_outputs() > 8 || spec.num_inputs() + spec.num_outputs() > 64) return false;  // PlanRun's stack arrays
  const auto& ins = spec.program.instrs;
  std::vector<bool> after_reduce(ins.size(), false);
  for (size_t i = 0; i < ins.size(); ++i)
    for (int a = 0; a < scalar_op_arity(ins[i].op); ++a)
      after_reduce[i] = after_reduce[i] || after_reduce[ins[i].args[a]] || is_reduction(ins[ins[i].args[a]].op);
  for (int o = 0; o < spec.num_outputs(); ++o) {
    const ScalarInstr& out = ins[spec.program.outputs[o]];
    if (!spec.output_row_scalar[o] || !is_reduction(out.op) || after_reduce[spec.program.outputs[o]]) return false;
    if (is_half(out.dtype)) return false;  // a chunk's partial result would be rounded to the half type
  }
  return true;
}

// Combines per-chunk partial results of one reduction into `out`.
template <typename T>
void combine_partials(ScalarOp op, const uint64_t* partials, int chunks, int stride, void* out) {
  auto at = [&](int c) {
    T v;
    std::memcpy(&v, &partials[c * stride], sizeof(T));
    return v;
  };
  T acc = at(0);
  if (op == ScalarOp::kReduceSum && std::is_floating_point_v<T>) {
    double sum = 0;  // few values: add them in double
    for (int c = 0; c < chunks; ++c) sum += static_cast<double>(at(c));
    acc = static_cast<T>(sum);
  } else {
    for (int c = 1; c < chunks; ++c) {
      T v = at(c);
      switch (reduce_kind(op)) {
        case ReduceKind::kSum: acc = wrap_add(acc, v); break;
        case ReduceKind::kProd: acc = wrap_mul(acc, v); break;
        case ReduceKind::kMax: acc = (v != v || v > acc) ? v : acc; break;
        case ReduceKind::kMin: acc = (v != v || v < acc) ? v : acc; break;
        case ReduceKind::kArgmax:  // combine_argmax's
        case ReduceKind::kNone: throw Error("combining partial results of a non-reduction (internal error)");
      }
      if constexpr (std::is_floating_point_v<T>)
        if (acc != acc) break;  // nan stays
    }
  }
  std::memcpy(out, &acc, sizeof(T));
}

// argmax: each chunk's index (absolute in the row) and its winning value;
// the first chunk holding the best value wins, a nan beating every number
// (Note [Generated argmax] in jit/x86/argmax_emitter.h).
template <typename T>
void combine_argmax(const uint64_t* indices, const uint64_t* values, int chunks, int stride, void* out) {
  auto value = [&](int c) {
    T v;
    std::memcpy(&v, &values[c * stride], sizeof(T));
    return v;
  };
  auto is_nan = [](T v) { return v != v; };  // false for integers
  int best = 0;
  for (int c = 1; c < chunks; ++c) {
    T v = value(c), b = value(best);
    if (v > b || (is_nan(v) && !is_nan(b))) best = c;
  }
  std::memcpy(out, &indices[best * stride], sizeof(int64_t));
}

}  // namespace

namespace {
std::vector<uint64_t> params_of(const std::vector<DType>& dtypes, const std::vector<int>& nodes, const Fragment& f) {
  std::vector<uint64_t> params;
  params.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) params.push_back(param_bits(dtypes[i], f.nodes[nodes[i]].attrs->get_scalar("value")));
  return params;
}

// Step `s`'s parameters: its kernel's, or one side's GEMM prologue's (0: A, 1: B).
std::vector<uint64_t> step_params(const LoweredKernel& k, const Fragment& f, int prologue = -1) {
  if (prologue < 0) return params_of(k.spec.param_dtypes, k.param_nodes, f);
  const std::optional<GemmPrologue>& p = prologue == 0 ? k.gemm.a_prologue : k.gemm.b_prologue;
  return p ? params_of(p->spec.param_dtypes, p->param_nodes, f) : std::vector<uint64_t>{};
}
}  // namespace

PlanParams plan_params(const Plan& plan, const Fragment& f) {
  PlanParams out;
  out.kernel.resize(plan.steps.size());
  for (auto& side : out.prologue) side.resize(plan.steps.size());
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep& st = plan.steps[s];
    if (st.kind != PlanStep::Kind::kKernel) continue;
    out.kernel[s] = step_params(st.lowered, f);
    if (st.lowered.spec.is_gemm())
      for (int side = 0; side < 2; ++side) out.prologue[side][s] = step_params(st.lowered, f, side);
  }
  return out;
}

PlanRun::PlanRun(const Plan& plan, const Fragment& f, std::vector<StoragePtr> inputs, const PlanParams* params)
    : plan_(plan), fragment_(f), params_(params), inputs_(std::move(inputs)) {
  Device device = f.values[f.outputs[0]].device;
  if (plan.arena_bytes > 0) arena_ = Storage::allocate(static_cast<size_t>(plan.arena_bytes), device);
  outputs_.reserve(plan.output_storage_bytes.size());
  for (size_t bytes : plan.output_storage_bytes) outputs_.push_back(Storage::allocate(bytes, device));
}

namespace {
void* empty_buffer_address() {
  alignas(kArenaAlign) static char empty[kArenaAlign];
  return empty;
}
}  // namespace

void* placement_address(const Plan& plan, int v, std::span<const StoragePtr> inputs,
                        std::span<const StoragePtr> outputs, const Storage* arena) {
  const Placement& p = plan.placement[v];
  switch (p.where) {
    case Placement::Where::kInput: return inputs[p.index]->data();
    case Placement::Where::kOutput: return outputs[p.index]->data();
    case Placement::Where::kArena:
      // A plan whose intermediates are all empty has no arena; nothing reads
      // or writes through these addresses, but kernels still take one.
      if (!arena) return empty_buffer_address();
      return static_cast<char*>(arena->data()) + p.offset;
    case Placement::Where::kNone: break;
  }
  throw Error("wok JIT: value %" + std::to_string(v) + " has no buffer (internal error)");
}

void* PlanRun::address(int v) const { return placement_address(plan_, v, inputs_, outputs_, arena_.get()); }

void PlanRun::run_step(size_t s) {
  if (!WOK_OBSERVING(observe::EventKind::kLaunchEnd) && !WOK_OBSERVING(observe::EventKind::kLaunchBegin)) {
    run_step_impl(s);
    return;
  }
  const PlanStep& st = plan_.steps[s];
  const Fragment& f = fragment_;
  observe::Event e;
  if (st.kind == PlanStep::Kind::kKernel) {
    if (st.lowered.numel == 0) return;
    e.name = st.kernel->name;
    e.detail = st.group;
    e.count = st.lowered.numel;
    for (int v : st.lowered.input_values) e.bytes += static_cast<int64_t>(f.values[v].nbytes());
    for (int v : st.lowered.output_values) e.bytes += static_cast<int64_t>(f.values[v].nbytes());
  } else {
    const FragmentNode& node = f.nodes[st.node];
    if (node.op->def().output_aliases_input) return;
    e.name = node.op->name() + " (precompiled)";
    for (int v : node.inputs) e.bytes += static_cast<int64_t>(f.values[plan_.canonical[v]].nbytes());
    for (int v : node.outputs) {
      e.bytes += static_cast<int64_t>(f.values[plan_.canonical[v]].nbytes());
      e.count += f.values[plan_.canonical[v]].numel();
    }
  }
  observe::emit_timed_launch(std::move(e), [&] { run_step_impl(s); });
}

void run_node_step(const PlanStep& st, const Plan& plan, const Fragment& f, std::span<const StoragePtr> inputs,
                   std::span<const StoragePtr> outputs, const Storage* arena) {
  const FragmentNode& node = f.nodes[st.node];
  const RegisteredOp& op = *node.op;
  if (op.def().output_aliases_input) return;  // same bytes, planned as one buffer
  std::vector<TensorRef> refs;
  refs.reserve(node.inputs.size() + node.outputs.size());
  for (std::span<const int> values : {std::span<const int>(node.inputs), std::span<const int>(node.outputs)})
    for (int v : values) {
      int c = plan.canonical[v];
      refs.push_back({placement_address(plan, c, inputs, outputs, arena), &f.values[c].shape, f.values[c].dtype});
    }
  Device device = f.values[plan.canonical[node.outputs[0]]].device;
  std::span<const TensorRef> all(refs);
  KernelContext ctx{op, *node.attrs, all.first(node.inputs.size()), all.subspan(node.inputs.size()), device};
  const wok::KernelFn& kernel = op.kernel_or_throw(device);  // not jit::KernelFn, a generated kernel
  // Note [Verifying kernel outputs] in runtime/kernel_verify.h.
  if (device.is_cpu() && verify_kernels_enabled()) run_kernel_verified(kernel, ctx, &node);
  else kernel(ctx);
  detail::counters().kernel_launches.fetch_add(1, std::memory_order_relaxed);
}

void PlanRun::run_step_impl(size_t s) {
  const PlanStep& st = plan_.steps[s];
  const Fragment& f = fragment_;
  auto& counters = detail::counters();
  if (st.kind == PlanStep::Kind::kKernel) {
    const LoweredKernel& k = st.lowered;
    if (k.numel == 0) return;
    std::vector<void*> ptrs;
    ptrs.reserve(k.input_values.size() + k.output_values.size());
    for (int v : k.input_values) ptrs.push_back(address(v));
    for (int v : k.output_values) ptrs.push_back(address(v));
    std::vector<uint64_t> own_params;
    if (!params_) own_params = step_params(k, f);
    const std::vector<uint64_t>& params = params_ ? params_->kernel[s] : own_params;
    KernelArgs args{ptrs.data(), params.data(), k.shape.data(), k.strides.data()};
    KernelFn fn = st.kernel->fn;
    counters.kernel_launches.fetch_add(1, std::memory_order_relaxed);
    if (k.spec.is_gemm()) {
      std::vector<uint64_t> own_prologue[2];
      if (!params_)
        for (int side = 0; side < 2; ++side) own_prologue[side] = step_params(k, f, side);
      const std::vector<uint64_t>& pa = params_ ? params_->prologue[0][s] : own_prologue[0];
      const std::vector<uint64_t>& pb = params_ ? params_->prologue[1][s] : own_prologue[1];
      run_gemm(k.spec, k.gemm, ptrs.data(), params.data(), pa.data(), pb.data(),
               reinterpret_cast<GemmTileFn>(reinterpret_cast<void*>(fn)));
      return;
    }
    if (k.spec.kind == KernelKind::kElementwise) {
      if (k.numel <= kKernelGrain) fn(&args, 0, k.numel);  // no std::function for small work
      else parallel_for(k.numel, kKernelGrain, [&](int64_t b, int64_t e) { fn(&args, b, e); });
      return;
    }
    if (k.spec.is_column()) {
      // Tiles: one vector of columns of one p each. A kernel of over 8
      // tiles per p streams rows across a thread's consecutive tiles (Note
      // [Streaming column kernel] in jit/x86/column_codegen.cpp); threads
      // take whole p's of it. Splitting one p's columns between two threads
      // ran slower than one thread alone (sum(exp(x)) over axis 0 of
      // [65536, 256]: 9 GB/s at 2 threads, 17 at 1; both halves of every
      // row stream through two cores' prefetchers). Splitting rows, with a
      // merge of the partial results, is what would use both (not built).
      const int64_t lanes = st.kernel->lanes;
      const int64_t tiles_per_p = (k.shape[2] + lanes - 1) / lanes;
      const int64_t tiles = k.rows * tiles_per_p;
      int64_t grain = std::max<int64_t>(1, kKernelGrain / std::max<int64_t>(1, k.row_length * lanes));
      if (k.shape[2] > 8 * lanes) grain = tiles_per_p;
      if (tiles <= grain) fn(&args, 0, tiles);
      else parallel_for(tiles, grain, [&](int64_t b, int64_t e) { fn(&args, b, e); });
      return;
    }
    args.col_end = k.row_length;
    const int threads = num_threads();
    if (k.rows == 1 && k.row_length >= kSplitRowMin && threads > 1 && splittable(k.spec)) {
      run_split_row(st, args, ptrs);
      return;
    }
    int64_t grain = std::max<int64_t>(1, kKernelGrain / std::max<int64_t>(1, k.row_length));
    const int64_t scratch_bytes = st.kernel->row_scratch_per_column * k.row_length;
    auto rows = [&](int64_t b, int64_t e) {
      if (scratch_bytes == 0) return fn(&args, b, e);
      // Each call its own scratch rows (Note [Spilled values] in
      // jit/x86/row_schedule.h); the caching allocator hands back the same
      // warm block call after call.
      ScratchBuffer<std::byte> scratch(scratch_bytes);
      KernelArgs own = args;
      own.row_scratch = scratch.get();
      fn(&own, b, e);
    };
    if (k.rows <= grain) rows(0, k.rows);
    else parallel_for(k.rows, grain, rows);
    return;
  }
  run_node_step(st, plan_, f, inputs_, outputs_, arena_.get());
}

void PlanRun::run_split_row(const PlanStep& st, const KernelArgs& args, const std::vector<void*>& ptrs) {
  const LoweredKernel& k = st.lowered;
  // A splittable kernel has one phase, so nothing to spill.
  if (st.kernel->row_scratch_per_column != 0)
    throw Error("wok JIT: a split row kernel with scratch rows (internal error)");
  const int n_out = k.spec.num_outputs();
  const int n_in = k.spec.num_inputs();
  const int chunks = static_cast<int>(std::min<int64_t>(kMaxSplitChunks, std::max<int64_t>(2, k.row_length / kSplitRowMin)));
  const int64_t per = (k.row_length + chunks - 1) / chunks;
  // Partial results on the stack: chunks x outputs, one 8-byte slot each.
  uint64_t partials[kMaxSplitChunks * 8];
  uint64_t values[kMaxSplitChunks * 8];  // argmax outputs: the winning values
  void* chunk_ptrs[kMaxSplitChunks][kMaxSplitPtrs];
  KernelArgs chunk_args[kMaxSplitChunks];
  for (int c = 0; c < chunks; ++c) {
    for (int p = 0; p < n_in; ++p) chunk_ptrs[c][p] = ptrs[p];
    for (int o = 0; o < n_out; ++o) chunk_ptrs[c][n_in + o] = &partials[c * n_out + o];
    chunk_args[c] = args;
    chunk_args[c].ptrs = chunk_ptrs[c];
    chunk_args[c].partial_values = &values[c * n_out];
    chunk_args[c].col_begin = std::min<int64_t>(k.row_length, c * per);
    chunk_args[c].col_end = std::min<int64_t>(k.row_length, (c + 1) * per);
  }
  KernelFn fn = st.kernel->fn;
  parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) fn(&chunk_args[c], 0, 1);
  });
  for (int o = 0; o < n_out; ++o) {
    const ScalarInstr& red = k.spec.program.instrs[k.spec.program.outputs[o]];
    if (red.op == ScalarOp::kReduceArgmax) {
      visit_dtype(k.spec.program.instrs[red.args[0]].dtype, [&](auto tag) {
        combine_argmax<decltype(tag)>(&partials[o], &values[o], chunks, n_out, ptrs[n_in + o]);
      });
      continue;
    }
    visit_dtype(red.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, bool>)
        combine_partials<T>(red.op, &partials[o], chunks, n_out, ptrs[n_in + o]);
    });
  }
}

std::vector<StoragePtr> PlanRun::results() const {
  std::vector<StoragePtr> result;
  result.reserve(fragment_.outputs.size());
  for (int v : fragment_.outputs) {
    const Placement& p = plan_.placement[plan_.canonical[v]];
    if (p.where == Placement::Where::kOutput) result.push_back(outputs_[p.index]);
    else if (p.where == Placement::Where::kInput) result.push_back(inputs_[p.index]);
    else throw Error("wok JIT: fragment output not planned (internal error)");
  }
  return result;
}

std::vector<StoragePtr> replay_plan(const Plan& plan, const Fragment& f, std::span<const StoragePtr> inputs,
                                    const PlanParams* params) {
  PlanRun run(plan, f, std::vector<StoragePtr>(inputs.begin(), inputs.end()), params);
  for (size_t s = 0; s < plan.steps.size(); ++s) run.run_step(s);
  return run.results();
}
}  // namespace wok::jit
