// A Fragment is the unit of work handed to a backend: the pending nodes
// behind some tensors, in dependency order, over numbered values.
#pragma once

#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "wok/runtime/attrs.h"
#include "wok/runtime/graph.h"
#include "wok/runtime/signature.h"
#include "wok/runtime/storage.h"
#include "wok/runtime/stream.h"

namespace wok {

class RegisteredOp;

struct FragmentNode {
  const RegisteredOp* op;
  const Attrs* attrs;          // owned by the graph node, alive during evaluation
  absl::InlinedVector<int, 4> inputs;   // value ids
  absl::InlinedVector<int, 2> outputs;  // value ids
  std::source_location site{};  // the user's call that recorded it; empty when unknown
  const void* caller = nullptr; // or the return address into it (runtime/observe/symbolize.h)
};

// Note [Signatures hashed while recording]
// Looking a traced fragment's plan up used to serialise the whole fragment
// (every value's meta, every node's op name, attributes and wiring) into a
// signature string and hash it: for a traced loop of 2,000 ops, about 100
// KB per evaluation. Now each graph node hashes its own content (op,
// attributes, output metas) once, when it is recorded (Node::content_hash),
// and the evaluator folds those hashes with the wiring into the fragment's
// key while it builds the fragment, a few words per node. The plan cache
// (jit/plan_cache.cpp) finds the plan by that key, then checks the
// fragment against the one the plan was built for by a plain comparison
// of the two (same_signature in runtime/fragment_signature.h), so a hash
// collision can cost a lookup but never run the wrong plan. The signature
// string is built only on a miss. The key is the evaluator's: a copy of a
// fragment has none, because a copy may be edited (a derived capture's
// fragment is a copy with new sizes) and would otherwise keep a stale key.
class RecordedKey {
 public:
  RecordedKey() = default;
  RecordedKey(const RecordedKey&) {}
  RecordedKey& operator=(const RecordedKey&) {
    reset();
    return *this;
  }
  void set(Key128 key) {
    key_ = key;
    set_ = true;
  }
  void reset() { set_ = false; }
  const Key128* get() const { return set_ ? &key_ : nullptr; }

 private:
  Key128 key_;
  bool set_ = false;
};

struct Fragment {
  std::vector<TensorMeta> values;
  std::vector<FragmentNode> nodes;  // topological order
  std::vector<int> inputs;          // values that are ready tensors, bound at run time
  std::vector<int> outputs;         // values the caller needs materialized
  RecordedKey recorded_key;         // set by the evaluator only (Note [Signatures hashed while recording])

  std::string str() const;          // readable listing, for dumps and errors
};

// A fragment that owns the attributes its nodes point to, for one that
// outlives the graph nodes it was collected from (a background build, a
// fragment read from a manifest, a captured function).
struct OwnedFragment {
  Fragment fragment;
  std::vector<std::unique_ptr<Attrs>> attrs;
};
std::unique_ptr<OwnedFragment> own_fragment(const Fragment& f);

// Per value, the index of the last node that reads it: nodes.size() for
// the fragment's outputs (never freed by an executor), -1 for values no
// node reads.
std::vector<int> last_uses(const Fragment& fragment);

// Everything an evaluation in flight needs kept alive: the fragment, the
// graph nodes whose attributes it points to, and its input tensors (which
// may themselves still be in flight).
struct FragmentJob {
  Fragment fragment;
  std::vector<std::shared_ptr<Node>> nodes;
  std::vector<TensorImplPtr> leaves;  // backs fragment.inputs, in order

  // The leaves' storage, waiting for any still in flight.
  std::vector<StoragePtr> input_storage() const;
};

// The outcome of an asynchronous run.
struct AsyncResult {
  Event done;                       // completes (or fails) when outputs are written
  std::vector<StoragePtr> outputs;  // one per fragment output, valid once done
};

// When a runner hands a fragment to another (the JIT to the precompiled
// executor while its kernels compile in the background), it names the one
// that ran it here; the evaluator takes it for its events. Per thread.
void set_fragment_delegate(std::string_view runner);
std::string_view take_fragment_delegate();

// A fragment a runner has readied to run many times on new inputs of the
// same shapes (wok::compile): whatever the runner would look up per run
// (a plan, launch parameters) is looked up once. Safe to run from several
// threads at once.
class PreparedFragment {
 public:
  virtual ~PreparedFragment() = default;
  // As FragmentRunner::run for the fragment it was prepared from.
  virtual std::vector<StoragePtr> run(std::span<const StoragePtr> input_storage) = 0;
};

// Runs fragments. The precompiled executor is one; the JIT is another.
class FragmentRunner {
 public:
  virtual ~FragmentRunner() = default;
  virtual std::string_view name() const = 0;
  // input_storage[i] backs values[fragment.inputs[i]]; returns one storage
  // per fragment.outputs, in order.
  virtual std::vector<StoragePtr> run(const Fragment& fragment, std::span<const StoragePtr> input_storage) = 0;
  // Starts `job` and returns at once. The default runs run() on a stream
  // from the pool.
  virtual void run_async(std::shared_ptr<FragmentJob> job, std::shared_ptr<AsyncResult> result);
  // Readies `fragment`, which outlives the result, for many runs. The
  // default runs run() each time.
  virtual std::unique_ptr<PreparedFragment> prepare(const Fragment& fragment);
};

}  // namespace wok
