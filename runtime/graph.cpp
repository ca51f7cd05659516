#include "wok/runtime/graph.h"

#include "wok/runtime/fragment.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/signature.h"

namespace wok {

namespace {
std::atomic<uint64_t> g_next_node_id{1};
std::atomic<int64_t> g_live_nodes{0};

void put_word(std::string& s, uint64_t x) { s.append(reinterpret_cast<const char*>(&x), sizeof x); }

uint64_t content_hash_of(const RegisteredOp* op, const Attrs& attrs, const NodeOutputMetas& metas) {
  thread_local std::string bytes;  // capacity reused
  bytes.clear();
  put_word(bytes, reinterpret_cast<uintptr_t>(op));
  if (op && op->def().kind != OpKind::kCreation) attrs.append_signature(bytes);
  for (const TensorMeta& m : metas) put_meta_words(m, [](uint64_t w) { put_word(bytes, w); });
  return hash64(bytes);
}
}  // namespace

Node::Node(const RegisteredOp* op, Attrs attrs, NodeInputs inputs, NodeOutputMetas output_meta)
    : op(op), attrs(std::move(attrs)), inputs(std::move(inputs)), output_meta(std::move(output_meta)),
      outputs(this->output_meta.size()),
      id(g_next_node_id.fetch_add(1, std::memory_order_relaxed)),
      content_hash(content_hash_of(op, this->attrs, this->output_meta)) {
  g_live_nodes.fetch_add(1, std::memory_order_relaxed);
}

Node::~Node() {
  g_live_nodes.fetch_sub(1, std::memory_order_relaxed);
  // Long chains would otherwise free recursively, one stack frame per node;
  // unlink pending inputs iteratively instead.
  std::vector<std::shared_ptr<Node>> chain;
  for (auto& in : inputs)
    if (in && in.use_count() == 1 && in->node()) chain.push_back(in->node());
  inputs.clear();
  while (!chain.empty()) {
    std::shared_ptr<Node> n = std::move(chain.back());
    chain.pop_back();
    if (n.use_count() != 1) continue;  // still owned elsewhere
    for (auto& in : n->inputs)
      if (in && in.use_count() == 1 && in->node()) chain.push_back(in->node());
    n->inputs.clear();
  }
}

int64_t live_node_count() { return g_live_nodes.load(std::memory_order_relaxed); }

// Note [Live tensors by call site] in runtime/observe/live_tensors.h: one
// relaxed load per tensor while tracking is off.
TensorImpl::TensorImpl(TensorMeta meta, StoragePtr storage)
    : meta_(std::move(meta)), storage_(std::move(storage)), ready_(true) {
  if (observe::tracking_live_tensors()) live_slot_ = observe::register_live_tensor(this, {}, nullptr);
}

TensorImpl::TensorImpl(TensorMeta meta, std::shared_ptr<Node> node, int output_index, PendingCost cost)
    : meta_(std::move(meta)), node_(std::move(node)), output_index_(output_index), cost_(cost) {
  if (observe::tracking_live_tensors() && node_)
    live_slot_ = observe::register_live_tensor(this, node_->site, node_->caller);
}

bool TensorImpl::in_flight() const {
  std::lock_guard lock(async_mu_);
  return async_ != nullptr;
}

const StoragePtr& TensorImpl::storage() const {
  std::shared_ptr<AsyncResult> pending;
  {
    std::lock_guard lock(async_mu_);
    pending = async_;
  }
  if (pending) {
    pending->done.wait();  // rethrows the evaluation's failure
    std::lock_guard lock(async_mu_);
    if (async_) {
      storage_ = async_->outputs[async_index_];
      async_.reset();
    }
  }
  return storage_;
}

const Storage* TensorImpl::storage_if_done() const {
  std::lock_guard lock(async_mu_);
  if (!async_) return storage_.get();
  if (!async_->done.query() || static_cast<size_t>(async_index_) >= async_->outputs.size()) return nullptr;
  return async_->outputs[async_index_].get();
}

void TensorImpl::publish_async(std::shared_ptr<AsyncResult> result, int index) {
  {
    std::lock_guard lock(async_mu_);
    async_ = std::move(result);
    async_index_ = index;
  }
  ready_.store(true, std::memory_order_release);
  node_.reset();
}

void TensorImpl::publish(StoragePtr storage) {
  storage_ = std::move(storage);
  ready_.store(true, std::memory_order_release);
  node_.reset();
}

}  // namespace wok
