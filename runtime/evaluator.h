// Turns pending tensors into ready ones: collects the pending graph behind
// them into a Fragment, runs it on the chosen backend, publishes results.
#pragma once

#include <cstdint>
#include <mutex>
#include <span>

#include "wok/runtime/fragment.h"
#include "wok/runtime/graph.h"
#include "wok/runtime/stats.h"

namespace wok {

// Makes every tensor in `targets` ready. Safe to call from several threads;
// work two calls share runs once. With `async`, returns once the work is
// started; reading the tensors' data waits for it.
void evaluate(std::span<const TensorImplPtr> targets, EvalReason reason, bool async = false);

// The fragment behind `targets` as recorded by capture `capture`
// (runtime/capture.h), for wok::compile: nothing is claimed or run. Pending
// tensors it reads that the capture did not record are evaluated first and
// become inputs, like every ready tensor it reads (job->leaves, in
// fragment.inputs order). Its outputs are the pending targets alone, each
// once, in order. Call it with no capture in progress on this thread.
std::shared_ptr<FragmentJob> capture_fragment(std::span<const TensorImplPtr> targets, uint64_t capture);

// The graph mutex (Note [Evaluation and the graph mutex] in evaluator.cpp);
// the live-memory report holds it to read pending tensors' nodes. Take it
// before any lock that a TensorImpl's constructor or destructor takes.
std::mutex& graph_mutex();

// Limits on the pending work a tensor may keep, beyond which recording an
// op evaluates at once (Note [Pending limits] in evaluator.cpp).
struct PendingLimits {
  int64_t max_nodes;         // WOK_MAX_PENDING_NODES, default 4096
  int64_t max_pinned_bytes;  // WOK_MAX_PENDING_BYTES, default 1 GiB
};
PendingLimits pending_limits();
void set_pending_limits(PendingLimits limits);

// Cost of a new pending tensor with these inputs, as upper bounds.
PendingCost pending_cost_of(std::span<const TensorImplPtr> inputs);

// Called after recording an op: evaluates `t` if its pending work is past a
// limit.
void enforce_pending_limits(const TensorImplPtr& t);

}  // namespace wok
