#include "wok/frontend/compile.h"

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "wok/runtime/backend.h"
#include "wok/runtime/capture.h"
#include "wok/runtime/eval_events.h"
#include "wok/runtime/evaluator.h"
#include "wok/runtime/observe/events.h"
#include "wok/runtime/stats.h"

namespace wok::detail {

namespace {

std::atomic<int64_t> g_next_function{1};

// Captures kept per function: a function called with ever new sizes keeps
// the most recent ones (memory stays bounded).
constexpr size_t kMaxCaptures = 64;

// What a capture is specialised to (Note [Sizes of a capture] in
// frontend/compile.h).
bool same_input(const TensorMeta& a, const TensorMeta& b) {
  return a.dtype == b.dtype && a.device == b.device && a.shape == b.shape;
}

struct InputSignature {
  Backend backend = Backend::kJit;
  std::vector<TensorMeta> inputs;

  bool operator==(const InputSignature& o) const {
    if (backend != o.backend || inputs.size() != o.inputs.size()) return false;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!same_input(inputs[i], o.inputs[i])) return false;
    return true;
  }
};

std::string meta_str(const TensorMeta& m) {
  return std::string(dtype_name(m.dtype)) + shape_str(m.shape) + (m.device.is_cpu() ? "" : " on " + m.device.str());
}

// Where a bound value comes from at replay: an argument, or a tensor the
// function closed over (captured as a constant).
struct Source {
  int arg = -1;          // argument position, or -1
  StoragePtr constant;   // when arg < 0
};

// Where an output comes from: a fragment output, or a value passed through.
struct OutputSource {
  int fragment_output = -1;  // index into fragment.outputs, or -1
  Source passthrough;        // when fragment_output < 0
  TensorMeta meta;
};

// One traced function for one input signature, prepared to replay.
struct Capture {
  InputSignature signature;
  std::unique_ptr<OwnedFragment> owned;
  std::vector<Source> leaves;  // per fragment input
  std::vector<OutputSource> outputs;
  std::unique_ptr<PreparedFragment> prepared;  // null when nothing is computed
  std::string runner;

  std::vector<Tensor> run(const std::vector<Tensor>& args) const;
};

StoragePtr bound(const Source& s, const std::vector<Tensor>& args) {
  return s.arg >= 0 ? args[s.arg].impl()->storage() : s.constant;
}

std::vector<Tensor> Capture::run(const std::vector<Tensor>& args) const {
  std::vector<StoragePtr> results;
  if (prepared) {
    std::vector<StoragePtr> inputs;
    inputs.reserve(leaves.size());
    for (const Source& s : leaves) inputs.push_back(bound(s, args));
    const int64_t nodes = static_cast<int64_t>(owned->fragment.nodes.size());
    count_evaluation(EvalReason::kCompiledCall, nodes);
    observed_evaluation(EvalReason::kCompiledCall, nodes, runner, /*async=*/false,
                        [&] { results = prepared->run(inputs); });
  }
  std::vector<Tensor> outs;
  outs.reserve(outputs.size());
  for (const OutputSource& o : outputs) {
    StoragePtr storage = o.fragment_output >= 0 ? results[o.fragment_output] : bound(o.passthrough, args);
    outs.emplace_back(std::make_shared<TensorImpl>(o.meta, std::move(storage)));
  }
  return outs;
}

}  // namespace

class CaptureTable {
 public:
  explicit CaptureTable(CompileOptions options) : options_(std::move(options)) {
    if (options_.name.empty()) options_.name = "function #" + std::to_string(g_next_function.fetch_add(1));
  }

  std::vector<Tensor> call(const std::vector<Tensor>& given, CompiledCore::Trace trace, void* fn);
  CompileStats stats() const {
    std::shared_lock lock(mu_);
    return {traces_.load(), replays_.load(), static_cast<int64_t>(captures_.size())};
  }

 private:
  std::shared_ptr<const Capture> find(const InputSignature& sig) const {
    std::shared_lock lock(mu_);
    for (const auto& c : captures_)
      if (c->signature == sig) return c;
    return nullptr;
  }
  std::shared_ptr<const Capture> trace_for(const InputSignature& sig, const std::vector<Tensor>& args,
                                           CompiledCore::Trace trace, void* fn);
  std::string why(const InputSignature& sig) const;

  CompileOptions options_;
  mutable std::shared_mutex mu_;
  std::vector<std::shared_ptr<const Capture>> captures_;  // oldest first
  std::mutex trace_mu_;  // one trace at a time per function
  std::atomic<int64_t> traces_{0}, replays_{0};
};

std::vector<Tensor> CaptureTable::call(const std::vector<Tensor>& given, CompiledCore::Trace trace, void* fn) {
  if (const CaptureScope* outer = current_capture())
    throw CaptureError("calling " + options_.name + " while wok::compile traces another function (" +
                       outer->function() + "): call the inner function itself, and its ops join the outer capture");
  InputSignature sig;
  sig.backend = backend();
  sig.inputs.reserve(given.size());
  std::vector<TensorImplPtr> pending;
  for (size_t i = 0; i < given.size(); ++i) {
    if (!given[i].defined())
      throw ArgumentError("wok::compile: argument " + std::to_string(i) + " of " + options_.name +
                          " is an undefined tensor");
    sig.inputs.push_back(given[i].impl()->meta());
    if (!given[i].impl()->ready()) pending.push_back(given[i].impl());
  }
  // Arguments are bound by their storage: pending ones run first.
  if (!pending.empty()) evaluate(pending, EvalReason::kEvalCall);
  std::shared_ptr<const Capture> capture = find(sig);
  if (capture) {
    replays_.fetch_add(1, std::memory_order_relaxed);
  } else {
    capture = trace_for(sig, given, trace, fn);
  }
  return capture->run(given);
}

std::string CaptureTable::why(const InputSignature& sig) const {
  std::shared_lock lock(mu_);
  if (captures_.empty()) return "first call";
  // The latest capture with the same backend and ranks names what changed.
  for (auto it = captures_.rbegin(); it != captures_.rend(); ++it) {
    const InputSignature& old = (*it)->signature;
    if (old.inputs.size() != sig.inputs.size()) continue;
    if (old.backend != sig.backend)
      return "backend " + std::string(backend_name(sig.backend)) + ", captured for " +
             std::string(backend_name(old.backend));
    for (size_t i = 0; i < sig.inputs.size(); ++i)
      if (!same_input(sig.inputs[i], old.inputs[i]))
        return "input " + std::to_string(i) + " is " + meta_str(sig.inputs[i]) + ", captured as " +
               meta_str(old.inputs[i]);
  }
  return "new input signature";
}

std::shared_ptr<const Capture> CaptureTable::trace_for(const InputSignature& sig, const std::vector<Tensor>& given,
                                                       CompiledCore::Trace trace, void* fn) {
  std::lock_guard trace_lock(trace_mu_);
  if (std::shared_ptr<const Capture> c = find(sig)) {  // another thread traced it meanwhile
    replays_.fetch_add(1, std::memory_order_relaxed);
    return c;
  }
  const int64_t start = observe::now_ns();
  const std::string reason = why(sig);
  // Each argument gets a handle of its own over the caller's data, so that
  // two arguments given the same tensor stay two inputs of the capture.
  std::vector<Tensor> args;
  args.reserve(given.size());
  for (const Tensor& t : given) args.emplace_back(std::make_shared<TensorImpl>(t.impl()->meta(), t.impl()->storage()));
  std::vector<Tensor> outs;
  uint64_t capture_id = 0;
  {
    CaptureScope scope(options_.name);
    capture_id = scope.id();
    outs = trace(fn, args);
  }
  traces_.fetch_add(1, std::memory_order_relaxed);

  auto arg_of = [&](const TensorImpl* impl) {
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].impl().get() == impl) return static_cast<int>(i);
    return -1;
  };
  auto source_of = [&](const TensorImplPtr& impl) {
    Source s;
    s.arg = arg_of(impl.get());
    if (s.arg < 0) s.constant = impl->storage();  // waits for one in flight
    return s;
  };

  std::vector<TensorImplPtr> targets;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].defined())
      throw ArgumentError("wok::compile: " + options_.name + " returned an undefined tensor (output " +
                          std::to_string(i) + ")");
    if (!outs[i].impl()->ready()) targets.push_back(outs[i].impl());
  }
  auto capture = std::make_shared<Capture>();
  capture->signature = sig;
  std::shared_ptr<FragmentJob> job;
  if (!targets.empty()) job = capture_fragment(targets, capture_id);
  // capture_fragment may have evaluated tensors the function closed over:
  // an output can be ready now that was pending at the call. The pending
  // ones are the fragment's outputs, in order, each once.
  std::unordered_map<const TensorImpl*, int> fragment_output;
  for (const TensorImplPtr& t : targets)
    if (!t->ready()) fragment_output.try_emplace(t.get(), static_cast<int>(fragment_output.size()));
  if (job && fragment_output.size() != job->fragment.outputs.size())
    throw Error("wok::compile: the capture's outputs and its fragment's disagree (internal error)");
  for (const Tensor& o : outs) {
    OutputSource out;
    out.meta = o.impl()->meta();
    if (auto it = fragment_output.find(o.impl().get()); it != fragment_output.end()) out.fragment_output = it->second;
    else out.passthrough = source_of(o.impl());
    capture->outputs.push_back(std::move(out));
  }
  int64_t nodes = 0;
  if (job && !job->fragment.nodes.empty()) {
    for (const TensorImplPtr& leaf : job->leaves) capture->leaves.push_back(source_of(leaf));
    capture->owned = own_fragment(job->fragment);
    const Fragment& f = capture->owned->fragment;
    nodes = static_cast<int64_t>(f.nodes.size());
    FragmentRunner& runner = runner_for(f.values[f.outputs[0]].device);
    capture->runner = std::string(runner.name());
    job.reset();  // the graph and the first call's arguments are not kept
    capture->prepared = runner.prepare(f);
  }
  if (WOK_OBSERVING(observe::EventKind::kCapture)) {
    observe::Event e;
    e.kind = observe::EventKind::kCapture;
    e.name = options_.name;
    e.count = nodes;
    e.detail = reason;
    e.t_ns = observe::now_ns();
    e.dur_ns = e.t_ns - start;
    observe::emit(std::move(e));
  }
  std::unique_lock lock(mu_);
  if (captures_.size() >= kMaxCaptures) captures_.erase(captures_.begin());
  captures_.push_back(capture);
  return capture;
}

CompiledCore::CompiledCore(CompileOptions options) : table_(std::make_shared<CaptureTable>(std::move(options))) {}

std::vector<Tensor> CompiledCore::call(const std::vector<Tensor>& args, Trace trace, void* fn) const {
  return table_->call(args, trace, fn);
}

CompileStats CompiledCore::stats() const { return table_->stats(); }

}  // namespace wok::detail
