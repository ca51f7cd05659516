// The collectives wok::dist records as ops, and the engine that runs one
// over a group's MPI communicators (CPU buffers). The op definitions are in
// runtime/ops/collective_ops.cpp, the frontend in frontend/dist.h.
#pragma once

#include <cstdint>
#include <string>

#include "wok/runtime/dtype.h"
#include "wok/runtime/shape.h"

namespace wok {
struct KernelContext;
}

namespace wok::dist {

enum class ReduceOp : uint8_t { kSum, kProd, kMax, kMin, kMean };
std::string_view reduce_op_name(ReduceOp op);  // "sum", ...

enum class CollectiveKind : uint8_t { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kAllToAll, kSend, kRecv };
std::string_view collective_name(CollectiveKind kind);  // "all_reduce", ...
// The op name a kind is registered under ("dist.all_reduce").
std::string collective_op_name(CollectiveKind kind);

// One collective call as a kernel sees it: contiguous buffers, their
// shapes, and the op's attributes.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  ReduceOp reduce = ReduceOp::kSum;
  int group = 0;   // id in the group table (runtime/dist/group_table.h)
  int peer = -1;   // broadcast: root; send: destination; recv: source (ranks of `group`)
  DType dtype = DType::kFloat32;
  const void* in = nullptr;  // null for recv
  void* out = nullptr;
  const Shape* in_shape = nullptr;  // recv: the output's shape
  const Shape* out_shape = nullptr;

  // "all_reduce(sum) float32[4, 3]": what errors show of a call.
  std::string str() const;
};

// The call a collective op's kernel makes, from the kernel's context (the
// op's attributes "group", "reduce", "peer"): the CPU and CUDA kernels alike.
CollectiveCall collective_call(CollectiveKind kind, const KernelContext& ctx);

// Runs `call` on the calling thread over the group's MPI communicators;
// returns when the output is complete. Throws wok::DistError on a timeout,
// a peer that disagrees about the call, or a broken group.
void run_collective(const CollectiveCall& call);

}  // namespace wok::dist
