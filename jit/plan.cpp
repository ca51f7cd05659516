#include "wok/jit/plan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <cstring>
#include <mutex>
#include <queue>

#include "wok/jit/graphviz.h"
#include "wok/jit/passes/passes.h"
#include "wok/jit/union_find.h"
#include "wok/runtime/dump.h"
#include "wok/runtime/error.h"
#include "wok/runtime/executor.h"
#include "wok/runtime/kernel.h"
#include "wok/runtime/observe/events.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/stats.h"
#include "wok/runtime/thread_pool.h"
#include "wok/runtime/wrapping.h"

namespace wok::jit {

namespace {

constexpr int64_t kArenaAlign = 64;
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
      switch (op) {
        case ScalarOp::kReduceSum: acc = wrap_add(acc, v); break;
        case ScalarOp::kReduceProd: acc = wrap_mul(acc, v); break;
        case ScalarOp::kReduceMax: acc = (v != v || v > acc) ? v : acc; break;
        default: acc = (v != v || v < acc) ? v : acc; break;
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

struct StepDraft {
  PlanStep step;
  int order_hint;  // first node of the step, for a stable order
};

// The steps of the plan, unordered: fused groups, materialized constants,
// and nodes left to precompiled kernels.
std::vector<StepDraft> draft_steps(const PlanGraph& g) {
  const Fragment& f = g.fragment;
  std::vector<StepDraft> drafts;
  std::map<int, std::vector<int>> groups;  // group id -> members
  for (size_t n = 0; n < f.nodes.size(); ++n)
    if (g.alive[n] && g.group[n] >= 0) groups[g.group[n]].push_back(static_cast<int>(n));

  // Who reads each value, outside of constants (which are inlined).
  std::vector<std::vector<int>> readers(f.values.size());
  for (size_t n = 0; n < f.nodes.size(); ++n) {
    if (!g.alive[n] || g.constant[n]) continue;
    for (int v : g.inputs_of(static_cast<int>(n))) readers[v].push_back(static_cast<int>(n));
  }
  auto needed_outside = [&](int v, int group) {
    if (g.is_output(v)) return true;
    for (int r : readers[v])
      if (g.group[r] != group || group < 0) return true;
    return false;
  };

  for (auto& [id, members] : groups) {
    std::vector<int> outs;
    for (int n : members)
      for (int v : f.nodes[n].outputs)
        if (g.canonical[v] == v && needed_outside(v, id)) outs.push_back(v);
    if (outs.empty()) continue;
    StepDraft d{{PlanStep::Kind::kKernel}, members.front()};
    std::optional<ReduceSpace> row;
    for (int n : members)
      if (!row) row = reduction_space(g, n);
    d.step.lowered = row ? lower_reduction_group(g, members, outs, *row) : lower_group(g, members, outs);
    for (int n : members) d.step.group += (d.step.group.empty() ? "" : "+") + f.nodes[n].op->name();
    drafts.push_back(std::move(d));
  }
  for (size_t n = 0; n < f.nodes.size(); ++n) {
    if (!g.alive[n]) continue;
    if (g.constant[n]) {
      // A constant someone needs in memory gets a kernel of its own.
      for (int v : f.nodes[n].outputs) {
        if (g.canonical[v] != v) continue;
        bool materialize = g.is_output(v);
        for (int r : readers[v]) materialize = materialize || g.group[r] < 0;
        if (!materialize) continue;
        StepDraft d{{PlanStep::Kind::kKernel}, static_cast<int>(n)};
        d.step.lowered = lower_group(g, {}, {v});
        d.step.group = "constant";
        drafts.push_back(std::move(d));
      }
    } else if (g.group[n] < 0) {
      StepDraft d{{PlanStep::Kind::kNode}, static_cast<int>(n)};
      d.step.node = static_cast<int>(n);
      drafts.push_back(std::move(d));
    }
  }
  for (StepDraft& d : drafts) {
    if (d.step.kind == PlanStep::Kind::kKernel) {
      d.step.reads = d.step.lowered.input_values;
      d.step.writes = d.step.lowered.output_values;
    } else {
      d.step.reads = g.inputs_of(d.step.node);
      for (int v : f.nodes[d.step.node].outputs) d.step.writes.push_back(g.canonical[v]);
    }
  }
  return drafts;
}

// Orders steps so each runs after the steps that write what it reads
// (Kahn's algorithm, ties broken by the fragment's own order).
std::vector<PlanStep> order_steps(std::vector<StepDraft> drafts, size_t num_values) {
  std::vector<int> writer(num_values, -1);
  for (size_t s = 0; s < drafts.size(); ++s)
    for (int v : drafts[s].step.writes) writer[v] = static_cast<int>(s);
  std::vector<std::vector<int>> users(drafts.size());
  std::vector<int> pending(drafts.size(), 0);
  for (size_t s = 0; s < drafts.size(); ++s) {
    std::vector<int> deps;
    for (int v : drafts[s].step.reads)
      if (int w = writer[v]; w >= 0 && w != static_cast<int>(s)) deps.push_back(w);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (int w : deps) users[w].push_back(static_cast<int>(s));
    pending[s] = static_cast<int>(deps.size());
    drafts[s].step.deps = deps;  // draft indices for now
  }
  using Item = std::pair<int, int>;  // (order hint, draft)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  for (size_t s = 0; s < drafts.size(); ++s)
    if (pending[s] == 0) ready.push({drafts[s].order_hint, static_cast<int>(s)});
  std::vector<int> position(drafts.size(), -1);
  std::vector<PlanStep> steps;
  while (!ready.empty()) {
    int s = ready.top().second;
    ready.pop();
    position[s] = static_cast<int>(steps.size());
    steps.push_back(std::move(drafts[s].step));
    for (int u : users[s])
      if (--pending[u] == 0) ready.push({drafts[u].order_hint, u});
  }
  if (steps.size() != drafts.size()) throw Error("wok JIT: fused groups form a cycle (internal error)");
  for (PlanStep& st : steps)
    for (int& d : st.deps) d = position[d];
  return steps;
}


void plan_memory(Plan& plan, const PlanGraph& g) {
  const Fragment& f = g.fragment;
  const size_t nv = f.values.size();
  UnionFind cls(nv);
  for (const PlanStep& st : plan.steps)
    if (st.kind == PlanStep::Kind::kNode && f.nodes[st.node].op->def().output_aliases_input)
      cls.join(st.writes[0], st.reads[0]);

  std::vector<bool> used(nv, false);
  for (const PlanStep& st : plan.steps) {
    for (int v : st.reads) used[v] = true;
    for (int v : st.writes) used[v] = true;
  }
  for (int v : g.outputs()) used[v] = true;

  // Where each class lives: an input's storage, an output storage, or the arena.
  std::map<int, Placement> where;
  for (size_t i = 0; i < f.inputs.size(); ++i)
    where[cls.find(f.inputs[i])] = {Placement::Where::kInput, static_cast<int>(i), 0};
  for (int v : g.outputs()) {
    int c = cls.find(v);
    if (where.count(c)) continue;
    where[c] = {Placement::Where::kOutput, static_cast<int>(plan.output_storage_bytes.size()), 0};
    plan.output_storage_bytes.push_back(f.values[v].nbytes());
  }
  // Arena classes: live from their first write to their last read.
  std::map<int, std::pair<int, int>> life;
  std::map<int, int64_t> bytes;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (int v : plan.steps[s].writes) {
      int c = cls.find(v);
      if (where.count(c)) continue;
      auto [it, fresh] = life.try_emplace(c, static_cast<int>(s), static_cast<int>(s));
      if (!fresh) it->second.first = std::min(it->second.first, static_cast<int>(s));
      bytes[c] = std::max<int64_t>(bytes[c], static_cast<int64_t>(f.values[v].nbytes()));
    }
    for (int v : plan.steps[s].reads) {
      int c = cls.find(v);
      if (auto it = life.find(c); it != life.end()) it->second.second = std::max(it->second.second, static_cast<int>(s));
    }
  }
  // Largest first, each at the lowest offset not overlapping a placed
  // class that is alive at the same time.
  std::vector<int> order;
  for (auto& [c, l] : life) order.push_back(c);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return bytes[a] > bytes[b]; });
  struct Placed {
    int64_t offset, size;
    int first, last;
  };
  std::vector<Placed> placed;
  for (int c : order) {
    int64_t size = (bytes[c] + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
    auto [first, last] = life[c];
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (const Placed& p : placed)
      if (p.first <= last && first <= p.last) busy.push_back({p.offset, p.offset + p.size});
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (auto [b, e] : busy) {
      if (offset + size <= b) break;
      offset = std::max(offset, e);
    }
    placed.push_back({offset, size, first, last});
    where[c] = {Placement::Where::kArena, -1, offset};
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
  }
  plan.placement.assign(nv, Placement{});
  for (size_t v = 0; v < nv; ++v)
    if (used[v])
      if (auto it = where.find(cls.find(static_cast<int>(v))); it != where.end()) plan.placement[v] = it->second;
}

// Splits the steps into chains: a step continues the lane of a dependency
// that was the last step of its lane, else opens a new lane (up to
// kMaxLanes). Steps read across lanes through events.
void assign_lanes(Plan& plan, const Fragment& f) {
  constexpr int kMaxLanes = 4;
  std::vector<int> tail;  // last step of each lane
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    PlanStep& st = plan.steps[s];
    int lane = -1;
    for (int d : st.deps)
      if (tail[plan.steps[d].lane] == d) {
        lane = plan.steps[d].lane;
        break;
      }
    if (lane < 0) {
      if (static_cast<int>(tail.size()) < kMaxLanes) {
        lane = static_cast<int>(tail.size());
        tail.push_back(-1);
      } else {
        lane = st.deps.empty() ? static_cast<int>(s % kMaxLanes) : plan.steps[st.deps[0]].lane;
      }
    }
    st.lane = lane;
    tail[lane] = static_cast<int>(s);
    for (int d : st.deps)
      if (plan.steps[d].lane != lane) plan.steps[d].signals = true;
    for (int v : st.writes) plan.work_elements += f.values[v].numel();
  }
  plan.lanes = std::max<int>(1, static_cast<int>(tail.size()));
}

}  // namespace

std::shared_ptr<const Plan> build_plan(const Fragment& fragment, CpuIsa isa) {
  std::shared_ptr<Plan> plan = plan_structure(fragment);
  for (PlanStep& st : plan->steps) {
    if (st.kind != PlanStep::Kind::kKernel) continue;
    absl::StatusOr<std::shared_ptr<const CompiledKernel>> k = KernelCache::global().get(st.lowered.spec, isa);
    if (!k.ok()) throw Error("wok JIT: cannot compile a fused kernel: " + std::string(k.status().message()));
    st.kernel = *k;
  }
  return plan;
}

std::shared_ptr<Plan> plan_structure(const Fragment& fragment, const Target& target) {
  PlanGraph g(fragment, target);
  std::vector<PassRecord> records = run_passes(g, dump_enabled());
  auto plan = std::make_shared<Plan>();
  plan->canonical = g.canonical;
  plan->steps = order_steps(draft_steps(g), fragment.values.size());
  assign_lanes(*plan, fragment);
  for (const PlanStep& st : plan->steps) plan->kernels += st.kind == PlanStep::Kind::kKernel;
  plan_memory(*plan, g);
  plan->graph_text = g.str();
  if (dump_enabled()) {
    std::string text = fragment.str();
    for (const PassRecord& r : records) text += "\n-- after " + r.name + ":\n" + r.after;
    std::string stem = "fragment_" + hash128(text).hex().substr(0, 8);
    write_dump(stem + ".passes.txt", text);
    write_dump(stem + ".dot", to_graphviz(g));
  }
  return plan;
}

PlanRun::PlanRun(const Plan& plan, const Fragment& f, std::vector<StoragePtr> inputs)
    : plan_(plan), fragment_(f), inputs_(std::move(inputs)) {
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
    std::vector<uint64_t> params;
    params.reserve(k.param_nodes.size());
    for (size_t i = 0; i < k.param_nodes.size(); ++i)
      params.push_back(param_bits(k.spec.param_dtypes[i], f.nodes[k.param_nodes[i]].attrs->get_scalar("value")));
    KernelArgs args{ptrs.data(), params.data(), k.shape.data(), k.strides.data()};
    KernelFn fn = st.kernel->fn;
    counters.kernel_launches.fetch_add(1, std::memory_order_relaxed);
    if (k.spec.kind == KernelKind::kElementwise) {
      if (k.numel <= kKernelGrain) fn(&args, 0, k.numel);  // no std::function for small work
      else parallel_for(k.numel, kKernelGrain, [&](int64_t b, int64_t e) { fn(&args, b, e); });
      return;
    }
    if (k.spec.is_column()) {
      // Tiles: one vector of columns of one p each.
      const int64_t lanes = st.kernel->lanes;
      const int64_t tiles = k.rows * ((k.shape[2] + lanes - 1) / lanes);
      const int64_t grain = std::max<int64_t>(1, kKernelGrain / std::max<int64_t>(1, k.row_length * lanes));
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
    if (k.rows <= grain) fn(&args, 0, k.rows);
    else parallel_for(k.rows, grain, [&](int64_t b, int64_t e) { fn(&args, b, e); });
    return;
  }
  const FragmentNode& node = f.nodes[st.node];
  const RegisteredOp& op = *node.op;
  if (op.def().output_aliases_input) return;  // same bytes, planned as one buffer
  std::vector<TensorRef> refs;
  refs.reserve(node.inputs.size() + node.outputs.size());
  for (int v : node.inputs) {
    int c = plan_.canonical[v];
    refs.push_back({address(c), &f.values[c].shape, f.values[c].dtype});
  }
  for (int v : node.outputs) {
    int c = plan_.canonical[v];
    refs.push_back({address(c), &f.values[c].shape, f.values[c].dtype});
  }
  Device device = f.values[plan_.canonical[node.outputs[0]]].device;
  std::span<const TensorRef> all(refs);
  KernelContext ctx{op, *node.attrs, all.first(node.inputs.size()), all.subspan(node.inputs.size()), device};
  op.kernel_or_throw(device)(ctx);
  counters.kernel_launches.fetch_add(1, std::memory_order_relaxed);
}

void PlanRun::run_split_row(const PlanStep& st, const KernelArgs& args, const std::vector<void*>& ptrs) {
  const LoweredKernel& k = st.lowered;
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

std::vector<StoragePtr> replay_plan(const Plan& plan, const Fragment& f, std::span<const StoragePtr> inputs) {
  PlanRun run(plan, f, std::vector<StoragePtr>(inputs.begin(), inputs.end()));
  for (size_t s = 0; s < plan.steps.size(); ++s) run.run_step(s);
  return run.results();
}

namespace {
// State shared by the tasks of one run on streams.
struct StreamRun {
  std::shared_ptr<const Plan> plan;
  std::shared_ptr<FragmentJob> job;
  std::shared_ptr<AsyncResult> result;
  std::unique_ptr<PlanRun> run;
  std::mutex mu;
  std::exception_ptr error;

  void fail(std::exception_ptr e) {
    std::lock_guard lock(mu);
    if (!error) error = std::move(e);
  }
  bool failed() {
    std::lock_guard lock(mu);
    return error != nullptr;
  }
};
}  // namespace

void replay_plan_on_streams(std::shared_ptr<const Plan> plan, std::shared_ptr<FragmentJob> job,
                            std::shared_ptr<AsyncResult> result, std::shared_ptr<std::vector<StoragePtr>> inputs) {
  auto state = std::make_shared<StreamRun>();
  state->plan = plan;
  state->job = job;
  state->result = result;
  StreamPool& pool = StreamPool::global();
  const int lanes = std::min(plan->lanes, pool.size());
  Stream& first = pool.next();
  std::vector<Stream*> stream(lanes);
  for (int l = 0; l < lanes; ++l) stream[l] = &pool.at(first.id() + l);

  // Lane 0 waits for the inputs and allocates the buffers; the others wait for it.
  stream[0]->enqueue([state, inputs] {
    try {
      state->run = std::make_unique<PlanRun>(*state->plan, state->job->fragment,
                                             inputs ? *inputs : state->job->input_storage());
    } catch (...) {
      state->fail(std::current_exception());
    }
  });
  if (lanes > 1) {
    EventPtr ready = stream[0]->record();
    for (int l = 1; l < lanes; ++l) stream[l]->wait_event(ready);
  }
  std::vector<EventPtr> done(plan->steps.size());
  for (size_t s = 0; s < plan->steps.size(); ++s) {
    const PlanStep& st = plan->steps[s];
    Stream& on = *stream[st.lane % lanes];
    for (int d : st.deps)
      if (done[d]) on.wait_event(done[d]);
    on.enqueue([state, s] {
      if (state->failed()) return;
      try {
        state->run->run_step(s);
      } catch (...) {
        state->fail(std::current_exception());
      }
    });
    if (st.signals) done[s] = on.record();
  }
  for (int l = 1; l < lanes; ++l) stream[0]->wait_event(stream[l]->record());
  stream[0]->enqueue([state] {
    std::exception_ptr error;
    {
      std::lock_guard lock(state->mu);
      error = state->error;
    }
    if (!error) {
      try {
        state->result->outputs = state->run->results();
      } catch (...) {
        error = std::current_exception();
      }
    }
    state->run.reset();
    state->result->done.complete(error);
  });
}

}  // namespace wok::jit
