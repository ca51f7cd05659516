#include "wok/frontend/compile.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <tuple>
#include <unordered_map>

#include "wok/runtime/backend.h"
#include "wok/runtime/capture.h"
#include "wok/runtime/eval_events.h"
#include "wok/runtime/evaluator.h"
#include "wok/runtime/observe/events.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/stats.h"

namespace wok::detail {

namespace {

std::atomic<int64_t> g_next_function{1};

// Captures kept per function: a function called with ever new sizes keeps
// the most recent ones (memory stays bounded). Likewise for families.
constexpr size_t kMaxCaptures = 64;
constexpr size_t kMaxFamilies = 16;

// What a capture is specialised to (Note [Sizes of a capture] in
// frontend/compile.h).
bool same_input(const TensorMeta& a, const TensorMeta& b) {
  return a.dtype == b.dtype && a.device == b.device && a.shape == b.shape;
}

// Sizes 0, 1 and the rest are told apart by every family: an empty dim or a
// broadcast one changes what the function computes.
int size_class(int64_t size) { return size == 0 ? 0 : size == 1 ? 1 : 2; }

// Everything of an input a family shares: all but its sizes beyond 1.
bool same_family_input(const TensorMeta& a, const TensorMeta& b) {
  if (a.dtype != b.dtype || a.device != b.device || a.shape.size() != b.shape.size()) return false;
  for (size_t d = 0; d < a.shape.size(); ++d)
    if (size_class(a.shape[d]) != size_class(b.shape[d])) return false;
  return true;
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
  bool same_family(const InputSignature& o) const {
    if (backend != o.backend || inputs.size() != o.inputs.size()) return false;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!same_family_input(inputs[i], o.inputs[i])) return false;
    return true;
  }
};

std::string meta_str(const TensorMeta& m) {
  return std::string(dtype_name(m.dtype)) + shape_str(m.shape) + (m.device.is_cpu() ? "" : " on " + m.device.str());
}

std::string signature_str(const InputSignature& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.inputs.size(); ++i) out += (i ? ", " : "") + meta_str(s.inputs[i]);
  return out + ")";
}

// Where a bound value comes from at replay: an argument, or a tensor the
// function closed over (captured as a constant).
struct Source {
  int arg = -1;          // argument position, or -1
  StoragePtr constant;   // when arg < 0
};

// Two traces read the same thing: the same argument, or constants of the
// same bytes (a tensor the function builds from host data is a new buffer
// on each trace).
bool same_source(const Source& a, const Source& b) {
  if (a.arg != b.arg) return false;
  if (a.arg >= 0 || a.constant == b.constant) return true;
  if (!a.constant || !b.constant || a.constant->bytes() != b.constant->bytes()) return false;
  if (!a.constant->device().is_cpu() || !b.constant->device().is_cpu()) return false;
  return std::memcmp(a.constant->data(), b.constant->data(), a.constant->bytes()) == 0;
}

// Where an output comes from: a fragment output, or a value passed through.
struct OutputSource {
  int fragment_output = -1;  // index into fragment.outputs, or -1
  Source passthrough;        // when fragment_output < 0
  TensorMeta meta;
};

// An input dim: (input, dim).
using DimRef = std::pair<size_t, size_t>;

int64_t size_at(const InputSignature& sig, DimRef d) { return sig.inputs[d.first].shape[d.second]; }

// Note [Sizes in attributes]
// An integer attribute can hold a size the function computed from its
// inputs' shapes: reshape(x, {b * s, d}) records [b*s, d] and not the
// arithmetic. The verification trace (Note [Verifying a derivation]) sees
// such an entry change with the sizes, and fits it as `factor` times the
// product of some input dims that changed; a fit that is unique is kept as
// a binding, and derived captures compute the entry from their sizes. An
// entry that fits no product (s - 1, a size baked into a float scalar) or
// several (two dims that changed alike) specialises the dims instead.
struct SizeBinding {
  size_t node = 0, attr = 0;
  int element = -1;  // -1: an int attribute; else the index in an ints one
  int64_t factor = 1;
  std::vector<DimRef> dims;

  int64_t at(const InputSignature& sig) const {
    int64_t v = factor;
    for (DimRef d : dims) v *= size_at(sig, d);
    return v;
  }
};

// The integer at an attribute entry, or false when it holds none.
bool int_entry(const AttrValue& v, int element, int64_t& out) {
  if (element < 0) {
    if (const int64_t* x = std::get_if<int64_t>(&v)) return out = *x, true;
    return false;
  }
  const auto* xs = std::get_if<std::vector<int64_t>>(&v);
  if (!xs || element >= static_cast<int>(xs->size())) return false;
  out = (*xs)[element];
  return true;
}

AttrValue with_entry(AttrValue v, int element, int64_t x) {
  if (element < 0) return AttrValue{x};
  std::get<std::vector<int64_t>>(v)[element] = x;
  return v;
}

// One traced function for one input signature, prepared to replay. A
// capture derived for new sizes shares the traced graph (its ops and
// attributes) and has a fragment of its own, with the new sizes and the
// attributes its size bindings gave (Note [Sizes in attributes]).
struct Capture {
  InputSignature signature;
  std::shared_ptr<const OwnedFragment> graph;  // null when nothing is computed
  Fragment fragment;                           // graph's, at this signature's sizes
  std::vector<std::unique_ptr<Attrs>> attrs;   // nodes whose bound sizes differ from graph's
  std::vector<Source> leaves;                  // per fragment input
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
    const int64_t nodes = static_cast<int64_t>(fragment.nodes.size());
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

void prepare(Capture& c) {
  if (!c.graph) return;
  FragmentRunner& runner = runner_for(c.fragment.values[c.fragment.outputs[0]].device);
  c.runner = std::string(runner.name());
  c.prepared = runner.prepare(c.fragment);
}

// Note [Deriving a capture for new sizes]
// A traced graph is a list of ops with their attributes over numbered
// values; the sizes are only in the values' metas. For a signature of the
// same family (Note [Sizes of a capture] in frontend/compile.h), the graph
// is taken as it is, its argument values get the new metas, the attribute
// entries bound to sizes are computed from them (Note [Sizes in
// attributes]), and every node runs its op's shape and dtype rules again,
// in order: the shape arithmetic of the traced function, evaluated for the
// new sizes without calling it. The result is prepared like a traced
// fragment (the runner plans memory, fusion and launches for these sizes;
// the fused kernels are shape-generic, so nothing compiles). This is exact
// when the graph depends on the sizes only through its bindings;
// Family::verify checks that once per dim. A rule that rejects the new
// sizes is returned as the reason, and the caller traces instead.
struct Derivation {
  std::shared_ptr<Capture> capture;
  std::string failure;  // why not, when capture is null
};

Derivation derive(const Capture& from, const InputSignature& sig, const std::vector<SizeBinding>& bindings) {
  auto c = std::make_shared<Capture>();
  c->signature = sig;
  c->graph = from.graph;
  c->leaves = from.leaves;
  if (from.graph) {
    Fragment f = from.fragment;
    for (const SizeBinding& b : bindings) {
      FragmentNode& node = f.nodes[b.node];
      if (c->attrs.empty() || c->attrs.back().get() != node.attrs)
        node.attrs = c->attrs.emplace_back(std::make_unique<Attrs>(*node.attrs)).get();
      Attrs& a = *c->attrs.back();
      a = a.with_value(b.attr, with_entry(a.at(b.attr), b.element, b.at(sig)));
    }
    for (size_t i = 0; i < f.inputs.size(); ++i)
      if (c->leaves[i].arg >= 0) f.values[f.inputs[i]] = sig.inputs[c->leaves[i].arg];
    std::vector<Shape> shapes;
    std::vector<DType> dtypes;
    for (size_t n = 0; n < f.nodes.size(); ++n) {
      const FragmentNode& node = f.nodes[n];
      const OpDef& def = node.op->def();
      shapes.clear();
      dtypes.clear();
      for (int v : node.inputs) {
        shapes.push_back(f.values[v].shape);
        dtypes.push_back(f.values[v].dtype);
      }
      std::vector<DType> out_dtypes;
      std::vector<Shape> out_shapes;
      try {
        out_dtypes = def.infer_dtype(dtypes, *node.attrs);
        out_shapes = def.infer_shape(shapes, *node.attrs);
      } catch (const Error& e) {
        return {nullptr, "node " + std::to_string(n) + " (" + node.op->name() + ") rejects the new sizes: " + e.what()};
      }
      if (out_dtypes.size() != node.outputs.size() || out_shapes.size() != node.outputs.size())
        return {nullptr, "node " + std::to_string(n) + " (" + node.op->name() + "): its rules gave the wrong outputs"};
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        TensorMeta& out = f.values[node.outputs[k]];
        out.shape = std::move(out_shapes[k]);
        out.dtype = out_dtypes[k];
      }
    }
    c->fragment = std::move(f);
  }
  for (const OutputSource& o : from.outputs) {
    OutputSource out = o;
    if (o.fragment_output >= 0) out.meta = c->fragment.values[c->fragment.outputs[o.fragment_output]];
    else if (o.passthrough.arg >= 0) out.meta = sig.inputs[o.passthrough.arg];
    c->outputs.push_back(std::move(out));
  }
  return {std::move(c), {}};
}

std::string node_str(const Fragment& f, size_t n) {
  const FragmentNode& node = f.nodes[n];
  std::string s = "node " + std::to_string(n) + " (" + node.op->name();
  if (node.attrs->size() != 0) s += " " + node.attrs->str();
  return s + ")";
}

// Empty when `traced` (a fresh trace at some sizes) is what `derived`
// computes at the same sizes; else the first difference, for the reason of
// later re-traces.
std::string difference(const Capture& traced, const Capture& derived) {
  if (!traced.graph != !derived.graph) return "the function computes something at some sizes only";
  const Fragment& a = traced.fragment;
  const Fragment& b = derived.fragment;
  if (traced.graph) {
    if (a.nodes.size() != b.nodes.size())
      return "the trace has " + std::to_string(a.nodes.size()) + " nodes at these sizes, " +
             std::to_string(b.nodes.size()) + " at the captured ones";
    for (size_t n = 0; n < a.nodes.size(); ++n) {
      const FragmentNode& x = a.nodes[n];
      const FragmentNode& y = b.nodes[n];
      if (x.op != y.op || x.inputs != y.inputs || x.outputs != y.outputs)
        return node_str(a, n) + " is " + node_str(b, n) + " at the captured sizes";
      if (!(*x.attrs == *y.attrs))
        return "a size is used as a constant: " + node_str(a, n) + " has " + y.attrs->str() + " at the captured sizes";
    }
    if (a.values.size() != b.values.size() || a.inputs != b.inputs || a.outputs != b.outputs)
      return "the trace reads or returns other values at these sizes";
    for (size_t v = 0; v < a.values.size(); ++v)
      if (!same_input(a.values[v], b.values[v]))
        return "value " + std::to_string(v) + " is " + meta_str(a.values[v]) + ", the captured shape rules give " +
               meta_str(b.values[v]);
    if (traced.leaves.size() != derived.leaves.size()) return "the trace reads other inputs at these sizes";
    for (size_t i = 0; i < traced.leaves.size(); ++i)
      if (!same_source(traced.leaves[i], derived.leaves[i]))
        return "input value " + std::to_string(a.inputs[i]) + " (" + meta_str(a.values[a.inputs[i]]) +
               ") is a different constant at these sizes";
  }
  if (traced.outputs.size() != derived.outputs.size()) return "the function returns other outputs at these sizes";
  for (size_t k = 0; k < traced.outputs.size(); ++k) {
    const OutputSource& x = traced.outputs[k];
    const OutputSource& y = derived.outputs[k];
    if (x.fragment_output != y.fragment_output || !same_input(x.meta, y.meta) ||
        (x.fragment_output < 0 && !same_source(x.passthrough, y.passthrough)))
      return "output " + std::to_string(k) + " is " + meta_str(x.meta) + ", derived as " + meta_str(y.meta);
  }
  return {};
}

// A binding of one attribute entry that gives `was` at `before` and `want`
// at `after`: `base` (the entry's binding so far, or none) times the product
// of some of the classes of dims that changed. The one fit, or the one with
// factor 1 among several (two dims that changed by one ratio fit alike; an
// entry that is a size itself is the likelier reading); none when no
// product fits or the fit is ambiguous.
struct Fit {
  SizeBinding binding;
  std::vector<size_t> classes;  // which classes it reads
};
std::optional<Fit> fit_binding(const SizeBinding& base, int64_t was, int64_t want,
                               const std::vector<std::vector<DimRef>>& classes, const InputSignature& before,
                               const InputSignature& after) {
  std::vector<Fit> fits;
  const size_t nc = std::min<size_t>(classes.size(), 6);
  for (uint32_t mask = 1; mask < (1u << nc); ++mask) {
    Fit fit{base, {}};
    bool overlaps = false;
    for (size_t c = 0; c < nc; ++c) {
      if (!(mask & (1u << c))) continue;
      for (DimRef member : classes[c])
        overlaps |= std::find(base.dims.begin(), base.dims.end(), member) != base.dims.end();
      fit.binding.dims.push_back(classes[c][0]);
      fit.classes.push_back(c);
    }
    if (overlaps) continue;
    fit.binding.factor = 1;
    const int64_t then = fit.binding.at(before);
    if (then == 0 || was % then != 0) continue;
    fit.binding.factor = was / then;
    if (fit.binding.at(after) == want) fits.push_back(std::move(fit));
  }
  if (fits.size() > 1) {
    auto plain = [](const Fit& f) { return f.binding.factor == 1; };
    if (std::count_if(fits.begin(), fits.end(), plain) != 1) return std::nullopt;
    return *std::find_if(fits.begin(), fits.end(), plain);
  }
  if (fits.empty()) return std::nullopt;
  return std::move(fits[0]);
}

// What a family knows of each input dim (Note [Sizes of a capture]).
enum class DimState : uint8_t { kUnverified, kSymbolic, kStatic };
struct Dim {
  DimState state = DimState::kUnverified;
  std::string why_static;  // the verification's difference, when kStatic
};

// The captures whose signatures differ in sizes beyond 1 only: the first
// trace, which the others derive from, and what is known of each dim.
struct Family {
  std::shared_ptr<const Capture> origin;
  std::vector<std::vector<Dim>> dims;       // per input, per dim
  std::vector<SizeBinding> bindings;        // by node, attribute, element
  std::vector<std::vector<DimRef>> equal;   // dims a binding reads as one size: they must stay equal

  // Empty when `sig` keeps the equalities the bindings rest on.
  std::string broken_equality(const InputSignature& sig) const {
    for (const auto& group : equal)
      for (DimRef d : group)
        if (size_at(sig, d) != size_at(sig, group[0]))
          return "input " + std::to_string(d.first) + " dim " + std::to_string(d.second) + " (" +
                 std::to_string(size_at(sig, d)) + ") and input " + std::to_string(group[0].first) + " dim " +
                 std::to_string(group[0].second) + " (" + std::to_string(size_at(sig, group[0])) +
                 ") were one size when verified";
    return {};
  }

  // Note [Verifying a derivation]: compares a trace at `sig` with what the
  // family derives for it, fitting attribute entries that follow the sizes
  // (Note [Sizes in attributes]). Empty and the bindings kept when they
  // agree; else the first difference.
  std::string verify(const Capture& traced, const InputSignature& sig) {
    // The dims that changed, in classes of equal sizes (before and after):
    // a sequence length that sizes two inputs is one size.
    const InputSignature& before = origin->signature;
    std::vector<std::vector<DimRef>> classes;
    for (size_t i = 0; i < sig.inputs.size(); ++i)
      for (size_t d = 0; d < sig.inputs[i].shape.size(); ++d) {
        const DimRef ref{i, d};
        if (size_at(sig, ref) == size_at(before, ref)) continue;
        auto same = [&](const std::vector<DimRef>& c) {
          return size_at(sig, c[0]) == size_at(sig, ref) && size_at(before, c[0]) == size_at(before, ref);
        };
        auto it = std::find_if(classes.begin(), classes.end(), same);
        if (it == classes.end()) classes.push_back({ref});
        else it->push_back(ref);
      }
    std::vector<SizeBinding> bound = bindings;
    std::vector<size_t> used_classes;
    if (traced.graph && origin->graph) {
      const Fragment& a = traced.fragment;
      const Fragment& o = origin->fragment;
      if (a.nodes.size() != o.nodes.size())
        return "the trace has " + std::to_string(a.nodes.size()) + " nodes at these sizes, " +
               std::to_string(o.nodes.size()) + " at the captured ones";
      for (size_t n = 0; n < a.nodes.size(); ++n) {
        if (a.nodes[n].op != o.nodes[n].op || a.nodes[n].attrs->size() != o.nodes[n].attrs->size())
          return node_str(a, n) + " is " + node_str(o, n) + " at the captured sizes";
        for (size_t k = 0; k < a.nodes[n].attrs->size(); ++k) {
          const AttrValue& got = a.nodes[n].attrs->at(k);
          const AttrValue& had = o.nodes[n].attrs->at(k);
          // The integer entries, when both hold integers alike: -1 for an
          // int attribute, else each index of an ints one.
          std::vector<int> entries;
          const auto* got_ints = std::get_if<std::vector<int64_t>>(&got);
          const auto* had_ints = std::get_if<std::vector<int64_t>>(&had);
          if (std::holds_alternative<int64_t>(got) && std::holds_alternative<int64_t>(had)) entries = {-1};
          else if (got_ints && had_ints && got_ints->size() == had_ints->size())
            for (size_t e = 0; e < got_ints->size(); ++e) entries.push_back(static_cast<int>(e));
          const std::string constant = "a size is used as a constant: " + node_str(a, n) + " has " +
                                       o.nodes[n].attrs->str() + " at the captured sizes";
          if (entries.empty()) {
            if (!(got == had)) return constant;
            continue;
          }
          for (int e : entries) {
            int64_t want = 0, was = 0;
            int_entry(got, e, want);
            int_entry(had, e, was);
            auto existing = std::find_if(bound.begin(), bound.end(), [&](const SizeBinding& b) {
              return b.node == n && b.attr == k && b.element == e;
            });
            const int64_t derived = existing != bound.end() ? existing->at(sig) : was;
            if (derived == want) continue;
            std::optional<Fit> fit =
                fit_binding({n, k, e, 1, existing != bound.end() ? existing->dims : std::vector<DimRef>{}}, was, want,
                            classes, before, sig);
            if (!fit) return constant;
            if (existing != bound.end()) *existing = std::move(fit->binding);
            else bound.push_back(std::move(fit->binding));
            used_classes.insert(used_classes.end(), fit->classes.begin(), fit->classes.end());
          }
        }
      }
    }
    std::sort(bound.begin(), bound.end(), [](const SizeBinding& x, const SizeBinding& y) {
      return std::tie(x.node, x.attr, x.element) < std::tie(y.node, y.attr, y.element);
    });
    Derivation d = derive(*origin, sig, bound);
    if (!d.capture) return d.failure;
    if (std::string diff = difference(traced, *d.capture); !diff.empty()) return diff;
    bindings = std::move(bound);
    for (size_t c : used_classes)
      if (classes[c].size() > 1) equal.push_back(classes[c]);
    return {};
  }
};

}  // namespace

class CaptureTable {
 public:
  explicit CaptureTable(CompileOptions options) : options_(std::move(options)) {
    if (options_.name.empty()) options_.name = "function #" + std::to_string(g_next_function.fetch_add(1));
  }

  std::vector<Tensor> call(const std::vector<Tensor>& given, CompiledCore::Trace trace, void* fn);
  CompileStats stats() const {
    std::shared_lock lock(mu_);
    return {traces_.load(), replays_.load(), static_cast<int64_t>(captures_.size()), derived_.load()};
  }

 private:
  std::shared_ptr<const Capture> find(const InputSignature& sig) const {
    std::shared_lock lock(mu_);
    for (const auto& c : captures_)
      if (c->signature == sig) return c;
    return nullptr;
  }
  std::shared_ptr<const Capture> trace_or_derive(const InputSignature& sig, const std::vector<Tensor>& args,
                                                 CompiledCore::Trace trace, void* fn);
  std::shared_ptr<Capture> trace_capture(const InputSignature& sig, const std::vector<Tensor>& given,
                                         CompiledCore::Trace trace, void* fn);
  std::string why(const InputSignature& sig) const;
  Family* family_of(const InputSignature& sig);
  void emit_capture(const Capture& c, bool derived, const std::string& reason, int64_t start) const;

  CompileOptions options_;
  mutable std::shared_mutex mu_;
  std::vector<std::shared_ptr<const Capture>> captures_;  // oldest first
  std::mutex trace_mu_;  // one trace or derivation at a time per function
  std::vector<Family> families_;  // oldest first; guarded by trace_mu_
  std::atomic<int64_t> traces_{0}, replays_{0}, derived_{0};
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
    capture = trace_or_derive(sig, given, trace, fn);
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

Family* CaptureTable::family_of(const InputSignature& sig) {
  for (Family& fam : families_)
    if (fam.origin->signature.same_family(sig)) return &fam;
  return nullptr;
}

void CaptureTable::emit_capture(const Capture& c, bool derived, const std::string& reason, int64_t start) const {
  if (!WOK_OBSERVING(observe::EventKind::kCapture)) return;
  observe::Event e;
  e.kind = observe::EventKind::kCapture;
  e.name = options_.name;
  e.count = static_cast<int64_t>(c.fragment.nodes.size());
  e.detail = reason;
  e.hit = derived;
  e.t_ns = observe::now_ns();
  e.dur_ns = e.t_ns - start;
  observe::emit(std::move(e));
}

std::shared_ptr<const Capture> CaptureTable::trace_or_derive(const InputSignature& sig,
                                                             const std::vector<Tensor>& given,
                                                             CompiledCore::Trace trace, void* fn) {
  std::lock_guard trace_lock(trace_mu_);
  if (std::shared_ptr<const Capture> c = find(sig)) {  // another thread made it meanwhile
    replays_.fetch_add(1, std::memory_order_relaxed);
    return c;
  }
  const int64_t start = observe::now_ns();
  std::string reason = why(sig);
  std::shared_ptr<Capture> capture;
  bool derived = false;
  Family* fam = options_.static_shapes ? nullptr : family_of(sig);
  if (fam) {
    // The dims whose sizes differ from the family's first trace, and what
    // is known of them.
    const InputSignature& origin = fam->origin->signature;
    std::vector<std::pair<size_t, size_t>> unverified;
    std::string static_dim;
    for (size_t i = 0; i < sig.inputs.size(); ++i)
      for (size_t d = 0; d < sig.inputs[i].shape.size(); ++d) {
        if (sig.inputs[i].shape[d] == origin.inputs[i].shape[d]) continue;
        const Dim& dim = fam->dims[i][d];
        if (dim.state == DimState::kUnverified) unverified.emplace_back(i, d);
        if (dim.state == DimState::kStatic && static_dim.empty())
          static_dim = "input " + std::to_string(i) + " dim " + std::to_string(d) + " is specialised (" +
                       dim.why_static + ")";
      }
    const std::string from = "from the capture for " + signature_str(origin);
    if (static_dim.empty() && unverified.empty()) static_dim = fam->broken_equality(sig);
    if (!static_dim.empty()) {
      reason += "; " + static_dim;
    } else if (unverified.empty()) {
      Derivation d = derive(*fam->origin, sig, fam->bindings);
      if (d.capture) {
        capture = std::move(d.capture);
        prepare(*capture);
        derived = true;
        reason = "derived " + from + ": " + reason;
      } else {
        reason += "; not derived " + from + ": " + d.failure;
      }
    } else {
      capture = trace_capture(sig, given, trace, fn);
      const std::string diff = fam->verify(*capture, sig);
      for (auto [i, d] : unverified) fam->dims[i][d] = {diff.empty() ? DimState::kSymbolic : DimState::kStatic, diff};
      reason += diff.empty() ? "; verified: later sizes derive " + from : "; specialised: " + diff;
    }
  }
  if (!capture) capture = trace_capture(sig, given, trace, fn);
  if (derived) derived_.fetch_add(1, std::memory_order_relaxed);
  if (!options_.static_shapes && !family_of(sig)) {
    if (families_.size() >= kMaxFamilies) families_.erase(families_.begin());
    Family fam_new;
    fam_new.origin = capture;
    for (const TensorMeta& m : sig.inputs) fam_new.dims.emplace_back(m.shape.size());
    families_.push_back(std::move(fam_new));
  }
  emit_capture(*capture, derived, reason, start);
  std::unique_lock lock(mu_);
  if (captures_.size() >= kMaxCaptures) captures_.erase(captures_.begin());
  captures_.push_back(capture);
  return capture;
}

std::shared_ptr<Capture> CaptureTable::trace_capture(const InputSignature& sig, const std::vector<Tensor>& given,
                                                     CompiledCore::Trace trace, void* fn) {
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
  if (job && !job->fragment.nodes.empty()) {
    for (const TensorImplPtr& leaf : job->leaves) capture->leaves.push_back(source_of(leaf));
    std::shared_ptr<const OwnedFragment> graph = own_fragment(job->fragment);
    capture->graph = graph;
    capture->fragment = graph->fragment;
    job.reset();  // the graph and the first call's arguments are not kept
    prepare(*capture);
  }
  return capture;
}

CompiledCore::CompiledCore(CompileOptions options) : table_(std::make_shared<CaptureTable>(std::move(options))) {}

std::vector<Tensor> CompiledCore::call(const std::vector<Tensor>& args, Trace trace, void* fn) const {
  return table_->call(args, trace, fn);
}

CompileStats CompiledCore::stats() const { return table_->stats(); }

}  // namespace wok::detail
