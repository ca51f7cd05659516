#include "wok/runtime/eval_events.h"
#include "wok/runtime/evaluator.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "wok/runtime/backend.h"
#include "wok/runtime/capture.h"
#include "wok/runtime/error.h"
#include "wok/runtime/fragment.h"
#include "wok/runtime/observe/events.h"
#include "wok/runtime/observe/live_tensors.h"
#include "wok/runtime/op_registry.h"

namespace wok {

// Note [Evaluation and the graph mutex]
// One mutex guards the pending graph's mutable state: TensorImpl::node and
// publish(), Node::claimed. An evaluation collects and claims its nodes
// under the mutex, runs the fragment without it, then publishes under it.
// A thread that meets a node claimed by another evaluation waits for that
// evaluation to finish and collects again, so shared work runs once.
namespace {

std::mutex g_graph_mu;
std::condition_variable g_graph_cv;

int64_t env_int(const char* name, int64_t fallback) {
  if (const char* s = std::getenv(name)) {
    char* end = nullptr;
    long long v = std::strtoll(s, &end, 10);
    if (end != s && v > 0) return v;
  }
  return fallback;
}

std::atomic<uint64_t> g_next_eval_id{1};

std::atomic<int64_t> g_max_nodes{env_int("WOK_MAX_PENDING_NODES", 4096)};
std::atomic<int64_t> g_max_bytes{env_int("WOK_MAX_PENDING_BYTES", int64_t{1} << 30)};

constexpr int64_t kSaturate = int64_t{1} << 60;
int64_t sat_add(int64_t a, int64_t b) { return std::min(a + b, kSaturate); }

// The pending nodes behind `targets`, inputs before consumers. Returns the
// first node claimed by another evaluation instead, if any.
struct Collected {
  std::vector<std::shared_ptr<Node>> order;
  Node* blocked = nullptr;
};

// `c.order` may come with capacity from an earlier evaluation (Note
// [Reused evaluation buffers]); it is cleared here.
void collect_pending(std::span<const TensorImplPtr> targets, Collected& c) {
  c.order.clear();
  c.blocked = nullptr;
  // A fresh mark per pass (under the graph mutex) tells visited nodes apart.
  static uint64_t last_mark = 0;
  const uint64_t mark = ++last_mark;
  struct Frame {
    std::shared_ptr<Node> node;
    size_t next_input;
  };
  thread_local std::vector<Frame> stack;  // empty between passes
  stack.clear();
  auto visit = [&](const TensorImpl& t) -> bool {
    if (t.ready()) return true;
    Node* n = t.node().get();
    if (n->visit_mark == mark) return true;
    n->visit_mark = mark;
    if (n->claimed) {
      c.blocked = n;
      return false;
    }
    stack.push_back({t.node(), 0});
    return true;
  };
  for (const TensorImplPtr& t : targets) {
    if (!visit(*t)) break;
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next_input < f.node->inputs.size()) {
        const TensorImpl& in = *f.node->inputs[f.next_input++];
        if (!visit(in)) break;
      } else {
        c.order.push_back(std::move(f.node));
        stack.pop_back();
      }
    }
    if (c.blocked) break;
  }
  stack.clear();
}

// Note [Reused evaluation buffers]
// A traced loop evaluates a graph of thousands of nodes per iteration, and
// the fragment's vectors (values, nodes, the collected order) are each
// hundreds of KiB: allocated afresh, they came from mmap or the top of the
// heap and were given back at every evaluation. A synchronous evaluation
// therefore takes its FragmentJob from a per-thread spare and returns it
// emptied, capacity kept; FragmentNode's inline vectors keep theirs too. An
// asynchronous job, or one a runner still holds, is never returned.
struct EvaluationBuffers {
  std::shared_ptr<FragmentJob> job;
  Collected collected;
  std::vector<TensorImplPtr> output_impls;
};

std::shared_ptr<FragmentJob> take_spare_job(EvaluationBuffers& b) {
  if (b.job && b.job.use_count() == 1) return std::move(b.job);
  return std::make_shared<FragmentJob>();
}

void return_spare_job(EvaluationBuffers& b, std::shared_ptr<FragmentJob> job) {
  if (job.use_count() != 1) return;
  Fragment& f = job->fragment;
  f.values.clear();
  f.nodes.clear();
  f.inputs.clear();
  f.outputs.clear();
  f.recorded_key.reset();
  job->nodes.clear();
  job->leaves.clear();
  b.job = std::move(job);
}

// The fragment of the nodes in `c.order` (Note [Which values a fragment
// writes]): its outputs are the pending targets, then, with
// `live_intermediates`, the intermediates referred to from outside it.
// `output_impls` gets the tensor behind each output. Under the graph mutex.
// With `live_intermediates` (an evaluation) it also sets the fragment's
// recorded key (Note [Signatures hashed while recording] in
// runtime/fragment.h): the nodes' content hashes, the wiring, the leaves'
// metas and the outputs, in the order the fragment lists them.
void build_fragment(Collected& c, std::span<const TensorImplPtr> targets, FragmentJob& job,
                    std::vector<TensorImplPtr>& output_impls, bool live_intermediates) {
  Fragment& fragment = job.fragment;
  thread_local std::vector<uint64_t> key_words;  // scratch
  key_words.clear();
  auto word = [](uint64_t w) { key_words.push_back(w); };
  auto set_key = [&] {
    word(fragment.values.size());
    for (int v : fragment.outputs) word(static_cast<uint64_t>(v));
    fragment.recorded_key.set(
        hash128({reinterpret_cast<const char*>(key_words.data()), key_words.size() * sizeof(uint64_t)}));
  };
  {
    std::unordered_map<const TensorImpl*, int> leaf_value;
    thread_local std::vector<int> internal_refs;  // scratch (Note [Reused evaluation buffers])
    internal_refs.clear();
    size_t n_values = 0;
    for (const auto& node : c.order) n_values += node->output_meta.size();
    fragment.values.reserve(n_values + 8);
    fragment.nodes.reserve(c.order.size());
    internal_refs.reserve(n_values + 8);
    auto first_value = [](const Node* n) { return n->fragment_value; };
    for (const auto& node : c.order) {
      node->fragment_value = static_cast<int>(fragment.values.size());
      // Dead outputs get a value too: the kernel writes all of them.
      for (const TensorMeta& meta : node->output_meta) {
        fragment.values.push_back(meta);
        internal_refs.push_back(0);
      }
    }
    for (const auto& node : c.order) {
      FragmentNode fn{node->op, &node->attrs, {}, {}, node->site, node->caller};
      fn.inputs.reserve(node->inputs.size());
      fn.outputs.reserve(node->outputs.size());
      word(node->content_hash);
      word(node->inputs.size());
      for (const TensorImplPtr& in : node->inputs) {
        int v;
        if (in->ready()) {
          auto [it, inserted] = leaf_value.try_emplace(in.get(), static_cast<int>(fragment.values.size()));
          if (inserted) {
            fragment.values.push_back(in->meta());
            internal_refs.push_back(0);
            fragment.inputs.push_back(it->second);
            job.leaves.push_back(in);
            word(~uint64_t{0});  // a new leaf, then its meta
            put_meta_words(in->meta(), word);
          }
          v = it->second;
        } else {
          v = first_value(in->node().get()) + in->output_index();
          ++internal_refs[v];
        }
        fn.inputs.push_back(v);
        word(static_cast<uint64_t>(v));
      }
      int base = first_value(node.get());
      for (size_t k = 0; k < node->outputs.size(); ++k) fn.outputs.push_back(base + static_cast<int>(k));
      word(static_cast<uint64_t>(base));
      fragment.nodes.push_back(std::move(fn));
    }
    // Outputs: targets first, in the caller's order, then live intermediates.
    thread_local std::vector<char> is_output;
    is_output.assign(fragment.values.size(), 0);
    auto add_output = [&](const TensorImplPtr& t, int v) {
      if (!is_output[v]) {
        is_output[v] = 1;
        fragment.outputs.push_back(v);
        output_impls.push_back(t);
      }
    };
    for (const TensorImplPtr& t : targets)
      if (!t->ready()) add_output(t, first_value(t->node().get()) + t->output_index());
    if (!live_intermediates) return;
    for (const auto& node : c.order) {
      // A scalar constant read elsewhere stays pending: each reader's
      // fragment computes it (Note [Shared scalar constants] in
      // frontend/dispatch.cpp).
      if (node->inputs.empty() && node->op->def().fills_constant && node->output_meta[0].shape.empty()) continue;
      int base = first_value(node.get());
      for (size_t k = 0; k < node->outputs.size(); ++k) {
        TensorImplPtr o = node->outputs[k].lock();
        if (!o) continue;
        int v = base + static_cast<int>(k);
        // -1 for the reference `o` itself.
        if (o.use_count() - 1 - internal_refs[v] > 0) add_output(o, v);
      }
    }
    set_key();
  }
}

}  // namespace

std::mutex& graph_mutex() { return g_graph_mu; }

void count_evaluation(EvalReason reason, int64_t nodes) {
  auto& counters = detail::counters();
  counters.evaluations.fetch_add(1, std::memory_order_relaxed);
  counters.evaluations_by_reason[static_cast<int>(reason)].fetch_add(1, std::memory_order_relaxed);
  counters.nodes_evaluated.fetch_add(nodes, std::memory_order_relaxed);
}

void observed_evaluation(EvalReason reason, int64_t nodes, std::string_view runner, bool async,
                         absl::FunctionRef<void()> run) {
  if (!WOK_OBSERVING(observe::EventKind::kEvalBegin) && !WOK_OBSERVING(observe::EventKind::kEvalEnd)) {
    run();
    return;
  }
  observe::Event ev;
  ev.kind = observe::EventKind::kEvalBegin;
  ev.id = g_next_eval_id.fetch_add(1, std::memory_order_relaxed);
  ev.reason = static_cast<int>(reason);
  ev.count = nodes;
  ev.name = std::string(runner);
  if (async) ev.detail = "async";
  take_fragment_delegate();
  ev.t_ns = observe::now_ns();
  if (WOK_OBSERVING(observe::EventKind::kEvalBegin)) observe::emit(ev);
  run();
  if (!WOK_OBSERVING(observe::EventKind::kEvalEnd)) return;
  ev.kind = observe::EventKind::kEvalEnd;
  int64_t now = observe::now_ns();
  ev.dur_ns = now - ev.t_ns;
  ev.t_ns = now;
  // Which runner really ran it: the JIT may have handed it to the
  // precompiled kernels (async compile).
  if (std::string_view ran = take_fragment_delegate(); !ran.empty()) ev.name = std::string(ran);
  observe::emit(std::move(ev));
}

// Note [Which values a fragment writes]
// A fragment writes its targets, and every intermediate that something
// outside the fragment still refers to: a user's handle, or a pending node
// that was not part of this evaluation. The test is the reference count of
// the intermediate's TensorImpl against the references the fragment's own
// nodes hold. Everything else stays inside the fragment, which is what lets
// the JIT fuse it away. An intermediate that is not written stays pending
// and can be recomputed if it is ever read.
void evaluate(std::span<const TensorImplPtr> targets, EvalReason reason, bool async) {
  if (capturing())
    for (const TensorImplPtr& t : targets)
      if (!t->ready())
        refuse_during_capture("evaluating a pending " + std::string(dtype_name(t->meta().dtype)) +
                              shape_str(t->meta().shape) + " tensor (" + std::string(eval_reason_name(reason)) + ")");
  // Reentrant use (a runner that evaluates) finds the buffers taken and
  // allocates its own.
  thread_local EvaluationBuffers t_buffers;
  thread_local bool t_buffers_taken = false;
  EvaluationBuffers local;
  EvaluationBuffers& buffers = t_buffers_taken ? local : t_buffers;
  struct Taken {
    bool& flag;
    bool was;
    ~Taken() { flag = was; }
  } taken{t_buffers_taken, t_buffers_taken};
  t_buffers_taken = true;

  std::unique_lock lock(g_graph_mu);
  Collected& c = buffers.collected;
  for (;;) {
    collect_pending(targets, c);
    if (!c.blocked) break;
    c.order.clear();
    g_graph_cv.wait(lock);
  }
  if (c.order.empty()) {
    lock.unlock();
    if (!async)
      for (const TensorImplPtr& t : targets) t->storage();  // waits for any in flight
    return;
  }

  std::shared_ptr<FragmentJob> job = take_spare_job(buffers);
  Fragment& fragment = job->fragment;
  std::vector<TensorImplPtr>& output_impls = buffers.output_impls;
  output_impls.clear();
  for (const auto& node : c.order) node->claimed = true;
  build_fragment(c, targets, *job, output_impls, /*live_intermediates=*/true);
  job->nodes.swap(c.order);  // keeps the attributes the fragment points to alive
  lock.unlock();

  auto release_claims = [&] {
    for (const auto& node : job->nodes) node->claimed = false;
  };
  count_evaluation(reason, static_cast<int64_t>(fragment.nodes.size()));

  std::vector<StoragePtr> results;
  std::shared_ptr<AsyncResult> pending;
  try {
    FragmentRunner& runner = runner_for(fragment.values[fragment.outputs[0]].device);
    observed_evaluation(reason, static_cast<int64_t>(fragment.nodes.size()), runner.name(), async, [&] {
      if (async) {
        pending = std::make_shared<AsyncResult>();
        runner.run_async(job, pending);
      } else {
        results = runner.run(fragment, job->input_storage());
      }
    });
  } catch (...) {
    lock.lock();
    output_impls.clear();
    release_claims();
    g_graph_cv.notify_all();
    throw;
  }

  lock.lock();
  for (size_t i = 0; i < output_impls.size(); ++i) {
    if (pending) output_impls[i]->publish_async(pending, static_cast<int>(i));
    else output_impls[i]->publish(std::move(results[i]));
  }
  release_claims();
  g_graph_cv.notify_all();
  // Drop our references to the nodes with the lock held: freeing a node
  // reads the inputs' node pointers, which publish() writes. An async job
  // keeps its nodes until it has run.
  if (!pending) job->nodes.clear();
  output_impls.clear();
  lock.unlock();
  // Note [Live tensors by call site]: the growth check, while tracking.
  if (observe::tracking_live_tensors()) observe::note_evaluation(fragment);
  if (!pending) {
    results.clear();
    return_spare_job(buffers, std::move(job));
  }
}

std::shared_ptr<FragmentJob> capture_fragment(std::span<const TensorImplPtr> targets, uint64_t capture) {
  // Pending tensors from before the capture: evaluated now, read as inputs.
  for (;;) {
    std::vector<TensorImplPtr> outer;
    {
      std::lock_guard lock(g_graph_mu);
      std::unordered_set<const Node*> seen;
      std::vector<const TensorImpl*> stack;
      for (const TensorImplPtr& t : targets) stack.push_back(t.get());
      while (!stack.empty()) {
        const TensorImpl* x = stack.back();
        stack.pop_back();
        if (x->ready() || !seen.insert(x->node().get()).second) continue;
        const Node& n = *x->node();
        if (n.capture != capture) {
          if (TensorImplPtr o = n.outputs[x->output_index()].lock()) outer.push_back(std::move(o));
          continue;
        }
        for (const TensorImplPtr& in : n.inputs) stack.push_back(in.get());
      }
    }
    if (outer.empty()) break;
    CaptureSuspend suspend;
    evaluate(outer, EvalReason::kEvalCall);
  }
  std::lock_guard lock(g_graph_mu);
  Collected c;
  collect_pending(targets, c);
  if (c.blocked) throw Error("wok::compile: a node of the capture is being evaluated elsewhere (internal error)");
  auto job = std::make_shared<FragmentJob>();
  std::vector<TensorImplPtr> output_impls;
  build_fragment(c, targets, *job, output_impls, /*live_intermediates=*/false);
  job->nodes = std::move(c.order);
  return job;
}

// Note [Pending limits]
// A lazy graph keeps its leaf buffers alive until it runs; a long loop that
// never reads its result would grow the graph and pin memory without bound.
// Each pending tensor carries upper bounds on the nodes and pinned bytes
// behind it (sums over its inputs, which over-count shared subgraphs). Only
// when a bound passes its limit is the exact figure computed by a walk of
// the graph; if that passes the limit too, the tensor is evaluated there.
PendingLimits pending_limits() { return {g_max_nodes.load(), g_max_bytes.load()}; }

void set_pending_limits(PendingLimits limits) {
  g_max_nodes.store(std::max<int64_t>(1, limits.max_nodes));
  g_max_bytes.store(std::max<int64_t>(1, limits.max_pinned_bytes));
}

PendingCost pending_cost_of(std::span<const TensorImplPtr> inputs) {
  PendingCost cost{1, 0};
  for (const TensorImplPtr& in : inputs) {
    if (in->ready()) {
      cost.pinned_bytes = sat_add(cost.pinned_bytes, static_cast<int64_t>(in->meta().nbytes()));
    } else {
      cost.nodes = sat_add(cost.nodes, in->cost().nodes);
      cost.pinned_bytes = sat_add(cost.pinned_bytes, in->cost().pinned_bytes);
    }
  }
  return cost;
}

namespace {
PendingCost exact_cost(const TensorImplPtr& t) {
  std::lock_guard lock(g_graph_mu);
  PendingCost cost;
  std::unordered_set<const Node*> nodes;
  std::unordered_set<const TensorImpl*> leaves;
  std::vector<const TensorImpl*> stack{t.get()};
  while (!stack.empty()) {
    const TensorImpl* x = stack.back();
    stack.pop_back();
    if (x->ready()) {
      if (leaves.insert(x).second) cost.pinned_bytes += static_cast<int64_t>(x->meta().nbytes());
      continue;
    }
    if (!nodes.insert(x->node().get()).second) continue;
    for (const TensorImplPtr& in : x->node()->inputs) stack.push_back(in.get());
  }
  cost.nodes = static_cast<int64_t>(nodes.size());
  return cost;
}
}  // namespace

void enforce_pending_limits(const TensorImplPtr& t) {
  if (t->ready() || capturing()) return;  // Note [What a capture refuses]
  PendingLimits limits = pending_limits();
  const PendingCost& bound = t->cost();
  if (bound.nodes <= limits.max_nodes && bound.pinned_bytes <= limits.max_pinned_bytes) return;
  PendingCost exact = exact_cost(t);
  if (exact.nodes > limits.max_nodes) {
    evaluate({&t, 1}, EvalReason::kNodeLimit);
  } else if (exact.pinned_bytes > limits.max_pinned_bytes) {
    evaluate({&t, 1}, EvalReason::kByteLimit);
  } else {
    t->set_cost(exact);
  }
}

}  // namespace wok
