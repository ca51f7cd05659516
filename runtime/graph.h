// The lazy graph behind wok::Tensor.
//
// A TensorImpl is either ready (it holds a Storage) or pending (it holds the
// Node that will produce it). Nodes hold their inputs, so a pending tensor
// keeps alive exactly what is needed to compute it. Evaluation
// (runtime/evaluator.h) turns the pending part of the graph into a Fragment,
// runs it, and cuts the links so the graph behind a ready tensor is freed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <source_location>
#include <vector>

#include "wok/runtime/attrs.h"
#include "wok/runtime/device.h"
#include "wok/runtime/dtype.h"
#include "wok/runtime/observe/live_tensors.h"
#include "wok/runtime/shape.h"
#include "wok/runtime/storage.h"

#include <mutex>

namespace wok {

class RegisteredOp;
class TensorImpl;
struct AsyncResult;

struct TensorMeta {
  Shape shape;
  DType dtype = DType::kFloat32;
  Device device = Device::cpu();

  int64_t numel() const { return wok::numel(shape); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * itemsize(dtype); }
};

// A node's inputs and outputs, inline for the usual few (Note [Shapes live
// inline] in runtime/shape.h: the same holds for the vectors of a node).
using NodeInputs = absl::InlinedVector<std::shared_ptr<TensorImpl>, 3>;
using NodeOutputMetas = absl::InlinedVector<TensorMeta, 1>;

// The words a recorded key reads of a meta, through `put(uint64_t)`: the
// node content hashes and the fragment keys built from them (Note
// [Signatures hashed while recording] in runtime/fragment.h).
template <typename Put>
void put_meta_words(const TensorMeta& m, Put&& put) {
  put(static_cast<uint64_t>(m.dtype) | static_cast<uint64_t>(m.device.type) << 8 |
      static_cast<uint64_t>(static_cast<uint32_t>(m.device.index)) << 16);
  put(static_cast<uint64_t>(m.shape.size()));
  for (int64_t d : m.shape) put(static_cast<uint64_t>(d));
}

class Node {
 public:
  Node(const RegisteredOp* op, Attrs attrs, NodeInputs inputs, NodeOutputMetas output_meta);
  ~Node();

  const RegisteredOp* op;
  Attrs attrs;
  NodeInputs inputs;
  NodeOutputMetas output_meta;
  absl::InlinedVector<std::weak_ptr<TensorImpl>, 1> outputs;  // same length as output_meta
  uint64_t id;  // creation order; ties in traversals break by it
  std::source_location site{};  // the user's call that recorded it (frontend/dispatch.h)
  const void* caller = nullptr; // or the return address into it (Note [Call sites])
  uint64_t capture = 0;         // the capture that recorded it (runtime/capture.h); 0: none
  // Op, attributes (not a creation op's: its value is a launch parameter)
  // and output metas, hashed when recorded (Note [Signatures hashed while
  // recording] in runtime/fragment.h).
  uint64_t content_hash = 0;

  // Set while an evaluation owns this node; guarded by the graph mutex.
  bool claimed = false;
  // Scratch of the evaluator, guarded by the graph mutex: the collection
  // pass that last visited this node, and the node's first value id in the
  // fragment being built (no hash tables on the dispatch path).
  uint64_t visit_mark = 0;
  int fragment_value = -1;
};

// Upper bounds on the pending work behind a tensor, kept cheap to update at
// every op; see Note [Pending limits] in runtime/evaluator.cpp.
struct PendingCost {
  int64_t nodes = 0;
  int64_t pinned_bytes = 0;
};

class TensorImpl {
 public:
  // A ready tensor over `storage`.
  TensorImpl(TensorMeta meta, StoragePtr storage);
  // A pending tensor: output `output_index` of `node`.
  TensorImpl(TensorMeta meta, std::shared_ptr<Node> node, int output_index, PendingCost cost);
  // One load of a member when live-tensor tracking was off at construction.
  ~TensorImpl() {
    if (live_slot_) observe::unregister_live_tensor(this, live_slot_);
  }

  const TensorMeta& meta() const { return meta_; }
  // No longer pending: its data exists or is being computed (in flight).
  bool ready() const { return ready_.load(std::memory_order_acquire); }
  // Being computed by an asynchronous evaluation.
  bool in_flight() const;

  // Valid once ready(); waits for an evaluation in flight (and rethrows its
  // failure).
  const StoragePtr& storage() const;
  // The storage if the data exists now, without waiting: null while an
  // asynchronous evaluation is still computing it. Valid once ready(); for
  // reports (runtime/observe/live_tensors.h).
  const Storage* storage_if_done() const;
  // Valid while pending; read under the graph mutex.
  const std::shared_ptr<Node>& node() const { return node_; }
  int output_index() const { return output_index_; }
  // Meaningful while pending. Written only before the tensor is shared (by
  // its constructor and set_cost), never by publish: other threads read it
  // without the graph mutex after a ready() check that may already be stale.
  const PendingCost& cost() const { return cost_; }

  // Called by the evaluator, under the graph mutex.
  void publish(StoragePtr storage);
  void publish_async(std::shared_ptr<AsyncResult> result, int index);
  // Tightens the cost bound; only by the thread that just created `this`.
  void set_cost(PendingCost cost) { cost_ = cost; }

 private:
  TensorMeta meta_;
  mutable StoragePtr storage_;
  mutable std::shared_ptr<AsyncResult> async_;  // until resolved by storage()
  int async_index_ = 0;
  mutable std::mutex async_mu_;
  std::shared_ptr<Node> node_;
  int output_index_ = 0;
  uint32_t live_slot_ = 0;  // entry in the live-tensor registry; 0: not tracked
  PendingCost cost_;
  std::atomic<bool> ready_{false};
};

using TensorImplPtr = std::shared_ptr<TensorImpl>;

// Live pending nodes in the process; a test reads it to prove that
// recording runs nothing and evaluation frees the graph.
int64_t live_node_count();

}  // namespace wok
