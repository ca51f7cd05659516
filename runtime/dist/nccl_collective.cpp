#include "wok/runtime/dist/nccl_collective.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "wok/runtime/cuda/cuda_driver.h"
#include "wok/runtime/cuda/cuda_stream.h"
#include "wok/runtime/dist/comm_state.h"
#include "wok/runtime/dist/group_table.h"
#include "wok/runtime/dist/nccl_loader.h"
#include "wok/runtime/error.h"
#include "wok/runtime/kernel.h"
#include "wok/runtime/op_registry.h"

namespace wok::dist {

// Note [NCCL communicators]
// A group's CUDA collectives run over an NCCL communicator of its own, one
// per (group, CUDA device) of this process, made by the group's first CUDA
// collective: that call is at the same point of every rank's collective
// order, so every member makes the communicator together. Making one takes
// two exchanges over the group's MPI communicators, each under the arrival
// handshake and its timeout (runtime/dist/collective.cpp):
//   1. every rank says whether it could load NCCL (all_gather), so that a
//      rank without NCCL fails everyone at once instead of leaving the
//      others waiting in ncclCommInitRank, which cannot time out;
//   2. rank 0 makes the unique id (ncclGetUniqueId) and broadcasts it with
//      its result, so a failure there is reported on every rank too;
// then ncclCommInitRank. Afterwards collectives are enqueued on the
// caller's stream without touching MPI: there is no arrival handshake on
// this path, so ranks that disagree about a call, or a peer that dies
// while NCCL waits for it, are not caught by WOK_DIST_TIMEOUT (NCCL's own
// errors are, through ncclCommGetAsyncError before each call). Every NCCL
// call of the process is made under one mutex, in the order calls arrive.
// Communicators are never destroyed: collectives may still be in flight
// at exit, and NCCL's teardown then can hang (as MLX leaks its caches).
// A group of one runs over NCCL too (nranks 1: no exchange), except send
// and recv, which have no peer and copy like the CPU path.

namespace {

using nccl_abi::Comm;
using nccl_abi::Result;

struct NcclComm {
  Comm comm = nullptr;
};

struct Comms {
  std::mutex mu;  // every NCCL call of the process is made under it
  std::map<std::pair<int, int>, NcclComm> all;  // (group id, device)
};

Comms& comms() {
  static Comms* c = new Comms();  // leaked: Note [NCCL communicators]
  return *c;
}

// One call's context, for its errors.
struct Context {
  const CollectiveCall& call;
  const GroupInfo& g;
  int device;

  std::string where() const {
    return "wok::dist::" + call.str() + " on cuda:" + std::to_string(device) + " in group " + g.name + " (size " +
           std::to_string(g.size) + ", this is rank " + std::to_string(g.rank) + ")";
  }
  [[noreturn]] void fail(const std::string& what, bool breaks_groups) const {
    std::string message = where() + ": " + what;
    if (breaks_groups) mark_all_broken(message);
    throw DistError(message);
  }
};

int nccl_type(const Context& c, DType t) {
  switch (t) {
    case DType::kBool: return nccl_abi::kUint8;  // 0 or 1 per byte: max is "or", min is "and"
    case DType::kInt32: return nccl_abi::kInt32;
    case DType::kInt64: return nccl_abi::kInt64;
    case DType::kFloat32: return nccl_abi::kFloat32;
    case DType::kFloat64: return nccl_abi::kFloat64;
    case DType::kInt8: return nccl_abi::kInt8;
    case DType::kUInt8: return nccl_abi::kUint8;
    case DType::kUInt32: return nccl_abi::kUint32;
    case DType::kUInt64: return nccl_abi::kUint64;
    case DType::kFloat16: return nccl_abi::kFloat16;
    case DType::kBFloat16: return nccl_abi::kBfloat16;  // NCCL 2.10 and newer
    case DType::kInt16:
    case DType::kUInt16: break;  // NCCL has no 16-bit integers
  }
  c.fail("NCCL has no type for dtype " + std::string(dtype_name(t)), false);
}

int nccl_op(ReduceOp op, DType t) {
  if (t == DType::kBool) return op == ReduceOp::kSum || op == ReduceOp::kMax ? nccl_abi::kMax : nccl_abi::kMin;
  switch (op) {
    case ReduceOp::kSum: return nccl_abi::kSum;
    case ReduceOp::kProd: return nccl_abi::kProd;
    case ReduceOp::kMax: return nccl_abi::kMax;
    case ReduceOp::kMin: return nccl_abi::kMin;
    case ReduceOp::kMean: return nccl_abi::kAvg;
  }
  return nccl_abi::kSum;
}

// What rank 0 broadcasts in step 2 of Note [NCCL communicators].
struct IdMessage {
  nccl_abi::UniqueId id;
  int32_t result;  // of ncclGetUniqueId; -1 when rank 0 has no NCCL
  char text[380];  // why, when result != 0
};
static_assert(sizeof(IdMessage) == 512);

void copy_text(char (&to)[380], const std::string& from) {
  std::memset(to, 0, sizeof to);
  std::memcpy(to, from.data(), std::min(from.size(), sizeof to - 1));
}

// Step 1 of Note [NCCL communicators]: throws on every rank, naming the
// ranks without NCCL, unless all of them have it.
void agree_on_nccl(const Context& c, const absl::StatusOr<const Nccl*>& here) {
  std::vector<int32_t> ok(static_cast<size_t>(c.g.size));
  int32_t mine = here.ok() ? 1 : 0;
  Shape in_shape = {1}, out_shape = {c.g.size};
  CollectiveCall call;
  call.kind = CollectiveKind::kAllGather;
  call.group = c.call.group;
  call.dtype = DType::kInt32;
  call.in = &mine;
  call.out = ok.data();
  call.in_shape = &in_shape;
  call.out_shape = &out_shape;
  try {
    run_collective(call);
  } catch (const DistError& e) {
    c.fail(std::string("making the NCCL communicator: ") + e.what(), false);
  }
  std::string lacking;
  for (int r = 0; r < c.g.size; ++r)
    if (!ok[static_cast<size_t>(r)]) lacking += (lacking.empty() ? "" : ", ") + std::to_string(r);
  if (lacking.empty()) return;
  if (!here.ok()) c.fail(std::string(here.status().message()), false);
  c.fail("NCCL is not available on rank(s) " + lacking + " of the group (see the error there)", false);
}

Comm make_comm(const Context& c) {
  absl::StatusOr<const Nccl*> loaded = nccl();
  if (c.g.size > 1) agree_on_nccl(c, loaded);
  if (!loaded.ok()) c.fail(std::string(loaded.status().message()), false);
  const Nccl& n = **loaded;
  IdMessage msg{};
  if (c.g.rank == 0) {
    msg.result = n.api.ncclGetUniqueId(&msg.id);
    if (msg.result != nccl_abi::kSuccess) copy_text(msg.text, n.error_text("ncclGetUniqueId", msg.result));
  }
  if (c.g.size > 1) {
    try {
      broadcast_bytes(c.call.group, &msg, sizeof msg, 0, "NCCL unique id");
    } catch (const DistError& e) {
      c.fail(std::string("making the NCCL communicator: ") + e.what(), false);
    }
  }
  if (msg.result != nccl_abi::kSuccess)
    c.fail(std::string(c.g.rank == 0 ? "" : "on rank 0: ") + msg.text, false);
  Comm comm = nullptr;
  Result r = n.api.ncclCommInitRank(&comm, c.g.size, msg.id, c.g.rank);
  if (r != nccl_abi::kSuccess) c.fail(n.error_text("ncclCommInitRank", r), c.g.size > 1);
  return comm;
}

void check(const Nccl& n, const Context& c, Result r, const char* call, Comm comm) {
  if (r != nccl_abi::kSuccess) c.fail(n.error_text(call, r, comm), true);
}

// Enqueues c.call on `stream` over `comm`.
void issue(const Nccl& n, const Context& c, Comm comm, void* stream) {
  const CollectiveCall& call = c.call;
  const int type = nccl_type(c, call.dtype);
  const int op = nccl_op(call.reduce, call.dtype);
  const size_t in_n = static_cast<size_t>(numel(*call.in_shape)), out_n = static_cast<size_t>(numel(*call.out_shape));
  switch (call.kind) {
    case CollectiveKind::kAllReduce:
      return check(n, c, n.api.ncclAllReduce(call.in, call.out, in_n, type, op, comm, stream), "ncclAllReduce", comm);
    case CollectiveKind::kAllGather:
      return check(n, c, n.api.ncclAllGather(call.in, call.out, in_n, type, comm, stream), "ncclAllGather", comm);
    case CollectiveKind::kReduceScatter:
      return check(n, c, n.api.ncclReduceScatter(call.in, call.out, out_n, type, op, comm, stream),
                   "ncclReduceScatter", comm);
    case CollectiveKind::kBroadcast:
      return check(n, c, n.api.ncclBroadcast(call.in, call.out, in_n, type, call.peer, comm, stream),
                   "ncclBroadcast", comm);
    case CollectiveKind::kAllToAll: {
      // Slice p of the input to rank p, slice p of the output from it, as
      // one NCCL group so that the sends and receives cannot deadlock.
      const size_t chunk = in_n / static_cast<size_t>(c.g.size), bytes = chunk * itemsize(call.dtype);
      check(n, c, n.api.ncclGroupStart(), "ncclGroupStart", comm);
      Result r = nccl_abi::kSuccess;
      const char* failed = nullptr;
      for (int p = 0; p < c.g.size && r == nccl_abi::kSuccess; ++p) {
        r = n.api.ncclSend(static_cast<const char*>(call.in) + p * bytes, chunk, type, p, comm, stream);
        failed = "ncclSend";
        if (r != nccl_abi::kSuccess) break;
        r = n.api.ncclRecv(static_cast<char*>(call.out) + p * bytes, chunk, type, p, comm, stream);
        failed = "ncclRecv";
      }
      const Result end = n.api.ncclGroupEnd();  // closes the group even after a failure
      if (r != nccl_abi::kSuccess) check(n, c, r, failed, comm);
      return check(n, c, end, "ncclGroupEnd", comm);
    }
    case CollectiveKind::kSend:
      check(n, c, n.api.ncclSend(call.in, in_n, type, call.peer, comm, stream), "ncclSend", comm);
      break;
    case CollectiveKind::kRecv:
      return check(n, c, n.api.ncclRecv(call.out, out_n, type, call.peer, comm, stream), "ncclRecv", comm);
  }
}

// send's result is its input (frontend/dist.h).
void copy_input(const CollectiveCall& call, void* stream) {
  const size_t bytes = static_cast<size_t>(numel(*call.in_shape)) * itemsize(call.dtype);
  if (bytes == 0 || call.out == call.in) return;
  cuda::check(cuda::driver().cuMemcpyAsync(reinterpret_cast<cuda::CUdeviceptr>(call.out),
                                           reinterpret_cast<cuda::CUdeviceptr>(call.in), bytes,
                                           static_cast<cuda::CUstream>(stream)),
              "cuMemcpyAsync (wok::dist::send's result)");
}

void nccl_kernel(CollectiveKind kind, const KernelContext& ctx) {
  const CollectiveCall call = collective_call(kind, ctx);
  const int device = ctx.device.index;
  run_nccl_collective(call, device, cuda::current_stream(device).handle());
}

}  // namespace

void run_nccl_collective(const CollectiveCall& call, int device, void* cuda_stream) {
  const GroupInfo& g = group_info(call.group);
  const Context c{call, g, device};
  const bool p2p = call.kind == CollectiveKind::kSend || call.kind == CollectiveKind::kRecv;
  if (std::string why = broken_reason(); !why.empty())
    c.fail("the groups are broken by an earlier failure: " + why, false);
  // Shapes agree on every rank, so every rank skips together.
  if (numel(*call.in_shape) == 0 && numel(*call.out_shape) == 0) return;
  cuda::require_device(device);
  cuda::set_device(device);  // NCCL works on the calling thread's current device
  if (g.size == 1 && p2p) {
    if (call.kind == CollectiveKind::kSend) copy_input(call, cuda_stream);
    return;
  }
  Comms& all = comms();
  std::lock_guard lock(all.mu);
  NcclComm& entry = all.all[{call.group, device}];
  if (!entry.comm) entry.comm = make_comm(c);
  const Nccl& n = **nccl();
  // An earlier collective's failure, reported by NCCL's proxy after its
  // enqueue returned.
  Result async = nccl_abi::kSuccess;
  check(n, c, n.api.ncclCommGetAsyncError(entry.comm, &async), "ncclCommGetAsyncError", entry.comm);
  if (async != nccl_abi::kSuccess && async != nccl_abi::kInProgress)
    c.fail("an earlier NCCL collective on this communicator failed: " + n.error_text("NCCL", async, entry.comm),
           true);
  issue(n, c, entry.comm, cuda_stream);
  if (call.kind == CollectiveKind::kSend) copy_input(call, cuda_stream);
}

void register_nccl_collective_kernels(OpRegistry& r) {
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                              CollectiveKind::kBroadcast, CollectiveKind::kAllToAll, CollectiveKind::kSend,
                              CollectiveKind::kRecv})
    r.add_kernel(collective_op_name(kind), DeviceType::kCUDA,
                 [kind](const KernelContext& ctx) { nccl_kernel(kind, ctx); });
}

}  // namespace wok::dist
