// Note [Arrive, then exchange]
// MPI's collectives cannot time out: a blocking MPI_Allreduce whose peer
// died waits forever, and one whose peers pass a different count reads or
// writes the wrong bytes. So every group collective here runs in two
// phases, both on nonblocking MPI calls polled against a deadline:
//  1. Arrival: the ranks agree that they are all at the same call, by a
//     dissemination exchange (ceil(log2 size) rounds of one small message
//     to rank+2^k, from rank-2^k) of the minimum and maximum of a 64-bit
//     signature of the call (collective, reduction, root, dtype, shape,
//     group). When the exchange ends every rank knows whether all
//     signatures were equal. If they were not, the ranks gather each
//     other's descriptions and raise an error listing every rank's call.
//  2. Exchange: the collective itself (MPI_Iallreduce, ...), which now
//     cannot see mismatched buffers.
// A wait that passes its deadline (70% of the timeout for the arrival, the
// whole timeout for the exchange) asks who is missing: each waiting rank
// sends every peer a note of the call it waits in, on a communicator of
// its own, and listens for the others' notes for the rest of the timeout;
// the peers it did not hear from are named as missing (dead, or stuck
// elsewhere), and a peer heard from in a different call is named with
// that call. The group is then broken (MPI cannot cancel a posted
// collective), and so is every other group: the peer may be gone.
//
// The arrival costs one small message per round; bench/dist.cpp measures
// all_reduce with it against MPI_Allreduce without it. send and recv
// check their signatures too (see point_to_point).
#include "wok/runtime/dist/collective.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <memory>
#include <cstring>
#include <thread>
#include <vector>

#include "wok/runtime/dist/comm_state.h"
#include "wok/runtime/error.h"
#include "wok/runtime/kernel.h"

namespace wok::dist {

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kProd: return "prod";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
    case ReduceOp::kMean: return "mean";
  }
  return "?";
}

std::string_view collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kBroadcast: return "broadcast";
    case CollectiveKind::kAllToAll: return "all_to_all";
    case CollectiveKind::kSend: return "send";
    case CollectiveKind::kRecv: return "recv";
  }
  return "?";
}

std::string collective_op_name(CollectiveKind kind) { return "dist." + std::string(collective_name(kind)); }

namespace {

bool reduces(CollectiveKind k) { return k == CollectiveKind::kAllReduce || k == CollectiveKind::kReduceScatter; }

// What must be equal on every rank: the call, without the buffers' addresses.
std::string call_key(const CollectiveCall& c, bool p2p_side_neutral = false) {
  std::string s(collective_name(c.kind));
  if (p2p_side_neutral) s = "send/recv";
  if (reduces(c.kind)) s += "(" + std::string(reduce_op_name(c.reduce)) + ")";
  if (c.kind == CollectiveKind::kBroadcast) s += "(root=" + std::to_string(c.peer) + ")";
  s += " " + std::string(dtype_name(c.dtype)) + shape_str(*c.in_shape);
  return s;
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

using Clock = std::chrono::steady_clock;

struct Deadline {
  Clock::time_point at;
  static Deadline after(double seconds) {
    return {Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds))};
  }
  bool passed() const { return Clock::now() >= at; }
};

std::string seconds_str(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

// One call's context, for its waits and its errors.
struct Context {
  const Mpi& m;
  CommState& g;
  const CollectiveCall& call;
  double timeout;
  Clock::time_point start = Clock::now();

  std::string where() const {
    return "wok::dist::" + call.str() + " in group " + g.info.name + " (size " + std::to_string(g.info.size) +
           ", this is rank " + std::to_string(g.info.rank) + ")";
  }
  [[noreturn]] void fail(const std::string& what) const {
    std::string message = where() + ": " + what;
    mark_all_broken(message);
    throw DistError(message);
  }
  void check(int code, const char* mpi_call) const {
    if (code != mpi::kSuccess) fail(m.error_text(mpi_call, code));
  }
  // Polls `reqs` until all complete (true) or the deadline passes (false).
  // Spins first, then yields: on a machine with more ranks than cores the
  // peers need the CPU to arrive.
  bool wait(mpi::Request* reqs, int n, Deadline d) const {
    int spins = 0;
    for (;;) {
      int done = 0;
      check(m.api.Testall(n, reqs, &done, mpi::kStatusesIgnore), "MPI_Testall");
      if (done) return true;
      if ((++spins & 63) == 0) {
        if (d.passed()) return false;
        if (spins > 4096) std::this_thread::yield();
      }
    }
  }
  [[noreturn]] void timed_out(const char* phase) const;
};

// Notes the waiting ranks exchange after a timeout (Note [Arrive, then exchange]).
struct AliveNote {
  uint64_t seq;
  char call[112];
};
constexpr int kAliveTag = 7;
constexpr int kPairTag = 30001, kPayloadTag = 30003;

void Context::timed_out(const char* phase) const {
  const int n = g.info.size, me = g.info.rank;
  // Left allocated: the requests on them may never complete.
  AliveNote& mine = *new AliveNote{};
  mine.seq = g.seq;
  std::snprintf(mine.call, sizeof mine.call, "%s", call.str().c_str());
  AliveNote* theirs = new AliveNote[static_cast<size_t>(n)]();
  std::vector<mpi::Request> reqs;
  std::vector<int> peer_of;
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    mpi::Request s = nullptr, r = nullptr;
    m.api.Isend(&mine, sizeof mine, m.h.byte, p, kAliveTag, g.alive, &s);
    m.api.Irecv(&theirs[p], sizeof(AliveNote), m.h.byte, p, kAliveTag, g.alive, &r);
    reqs.push_back(r);
    peer_of.push_back(p);
    // The send completes on its own (a small message); its request is dropped.
    (void)s;
  }
  std::vector<bool> heard(static_cast<size_t>(n), false);
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  Deadline until = Deadline::after(std::max(0.2, timeout - elapsed));
  int spins = 0;
  while (!until.passed()) {
    bool all = true;
    for (size_t i = 0; i < reqs.size(); ++i) {
      if (heard[peer_of[i]]) continue;
      int done = 0;
      m.api.Test(&reqs[i], &done, mpi::kStatusIgnore);
      if (done) heard[peer_of[i]] = true;
      else all = false;
    }
    if (all) break;
    if (++spins > 64) std::this_thread::yield();
  }
  std::string missing, elsewhere;
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    if (!heard[p]) {
      missing += (missing.empty() ? "" : ", ") + std::to_string(p);
    } else if (theirs[p].seq != g.seq || std::string(theirs[p].call) != mine.call) {
      theirs[p].call[sizeof theirs[p].call - 1] = 0;
      elsewhere += "; rank " + std::to_string(p) + " waits in collective #" + std::to_string(theirs[p].seq) + " " +
                   theirs[p].call;
    }
  }
  std::string what = "timed out after " + seconds_str(timeout) + " (" + phase + ", collective #" +
                     std::to_string(g.seq) + " of the group)";
  if (!missing.empty())
    what += ": missing rank(s): " + missing + " (dead, or never arrived)";
  else if (elsewhere.empty())
    what += ": every rank answered, but the exchange did not complete";
  what += elsewhere;
  what += ". Set WOK_DIST_TIMEOUT (seconds) if ranks are only slow.";
  fail(what);
}

// MPI has no half-precision types: float16 and bfloat16 travel as 16-bit
// words, which is exact for the collectives that only move data; one that
// reduces them would add bit patterns, so it is refused by name.
mpi::Datatype mpi_type(const Context& c, DType t, bool reduces_values) {
  const MpiHandles& h = c.m.h;
  switch (t) {
    case DType::kBool: return h.c_bool;
    case DType::kInt8: return h.int8;
    case DType::kUInt8: return h.uint8;
    case DType::kInt16: return h.int16;
    case DType::kUInt16: return h.uint16;
    case DType::kInt32: return h.int32;
    case DType::kUInt32: return h.uint32;
    case DType::kInt64: return h.int64;
    case DType::kUInt64: return h.uint64;
    case DType::kFloat32: return h.float32;
    case DType::kFloat64: return h.float64;
    case DType::kFloat16:
    case DType::kBFloat16:
      if (reduces_values)
        c.fail("MPI cannot reduce " + std::string(dtype_name(t)) +
               " tensors; cast to float32 first (reducing in float32 also avoids rounding every partial sum)");
      return h.uint16;
  }
  c.fail("no MPI type for dtype " + std::string(dtype_name(t)));
}

mpi::Op mpi_op(const Mpi& m, ReduceOp op, DType t) {
  if (t == DType::kBool) return op == ReduceOp::kSum || op == ReduceOp::kMax ? m.h.lor : m.h.land;
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean: return m.h.sum;
    case ReduceOp::kProd: return m.h.prod;
    case ReduceOp::kMax: return m.h.max;
    case ReduceOp::kMin: return m.h.min;
  }
  return m.h.sum;
}

int count_or_fail(const Context& c, int64_t n) {
  if (n > INT_MAX)
    throw ArgumentError(c.where() + ": " + std::to_string(n) + " elements per message is more than MPI's int count allows; split the tensor");
  return static_cast<int>(n);
}

void divide_by(void* out, int64_t n, DType t, int size) {
  if (t == DType::kFloat32) {
    float* p = static_cast<float*>(out);
    for (int64_t i = 0; i < n; ++i) p[i] /= static_cast<float>(size);
  } else if (t == DType::kFloat64) {
    double* p = static_cast<double*>(out);
    for (int64_t i = 0; i < n; ++i) p[i] /= static_cast<double>(size);
  }
}

// Phase 1 of Note [Arrive, then exchange] for a group collective.
void arrive(const Context& c) {
  const int n = c.g.info.size, me = c.g.info.rank;
  const std::string key = call_key(c.call) + " @" + c.g.info.name;
  const uint64_t sig = fnv1a(key);
  uint64_t lo = sig, hi = sig;
  const Deadline d = Deadline::after(0.7 * c.timeout);
  const int tag_base = static_cast<int>(c.g.seq % 900) * 32;
  // Buffers of requests that may still be pending after a timeout are
  // left allocated on that path: MPI may write to them later.
  uint64_t* scratch = new uint64_t[4];
  uint64_t* out = scratch;
  uint64_t* in = scratch + 2;
  int round = 0;
  for (int dist = 1; dist < n; dist *= 2, ++round) {
    out[0] = lo, out[1] = hi, in[0] = in[1] = 0;
    mpi::Request reqs[2];
    c.check(c.m.api.Irecv(in, 2, c.m.h.int64, (me - dist + n) % n, tag_base + round, c.g.control, &reqs[0]), "MPI_Irecv");
    c.check(c.m.api.Isend(out, 2, c.m.h.int64, (me + dist) % n, tag_base + round, c.g.control, &reqs[1]), "MPI_Isend");
    if (!c.wait(reqs, 2, d)) c.timed_out("waiting for every rank to arrive");
    lo = std::min(lo, in[0]);
    hi = std::max(hi, in[1]);
  }
  delete[] scratch;
  if (lo == hi) return;
  // Ranks disagree: gather every rank's description for the message (the
  // buffers stay allocated: the group is broken after this).
  constexpr size_t kLine = 112;
  char* mine = new char[kLine]();
  std::snprintf(mine, kLine, "%s", call_key(c.call).c_str());
  char* all = new char[kLine * static_cast<size_t>(n)]();
  mpi::Request req;
  c.check(c.m.api.Iallgather(mine, kLine, c.m.h.byte, all, kLine, c.m.h.byte, c.g.control, &req), "MPI_Iallgather");
  if (!c.wait(&req, 1, Deadline::after(0.3 * c.timeout))) c.timed_out("gathering the ranks' calls");
  std::string list;
  for (int r = 0; r < n; ++r) {
    all[(r + 1) * kLine - 1] = 0;
    list += (r ? "; " : "") + std::string("rank ") + std::to_string(r) + ": " + (all + r * kLine);
  }
  c.fail("the ranks called different collectives, or the same one on different shapes or dtypes: " + list);
}

// Phase 2: the collective itself.
void exchange(const Context& c) {
  const CollectiveCall& call = c.call;
  const Mpi& m = c.m;
  const int n = c.g.info.size;
  const mpi::Datatype type = mpi_type(c, call.dtype, reduces(call.kind));
  const int64_t in_count = numel(*call.in_shape), out_count = numel(*call.out_shape);
  mpi::Request req = nullptr;
  switch (call.kind) {
    case CollectiveKind::kAllReduce:
      c.check(m.api.Iallreduce(call.in, call.out, count_or_fail(c, in_count), type, mpi_op(m, call.reduce, call.dtype),
                               c.g.data, &req),
              "MPI_Iallreduce");
      break;
    case CollectiveKind::kAllGather:
      c.check(m.api.Iallgather(call.in, count_or_fail(c, in_count), type, call.out, count_or_fail(c, in_count), type,
                               c.g.data, &req),
              "MPI_Iallgather");
      break;
    case CollectiveKind::kReduceScatter:
      c.check(m.api.Ireduce_scatter_block(call.in, call.out, count_or_fail(c, out_count), type,
                                          mpi_op(m, call.reduce, call.dtype), c.g.data, &req),
              "MPI_Ireduce_scatter_block");
      break;
    case CollectiveKind::kBroadcast:
      if (c.g.info.rank == call.peer && call.in != call.out)
        std::memcpy(call.out, call.in, static_cast<size_t>(in_count) * itemsize(call.dtype));
      c.check(m.api.Ibcast(call.out, count_or_fail(c, out_count), type, call.peer, c.g.data, &req), "MPI_Ibcast");
      break;
    case CollectiveKind::kAllToAll:
      c.check(m.api.Ialltoall(call.in, count_or_fail(c, in_count / n), type, call.out, count_or_fail(c, in_count / n),
                              type, c.g.data, &req),
              "MPI_Ialltoall");
      break;
    case CollectiveKind::kSend:
    case CollectiveKind::kRecv: break;
  }
  if (!c.wait(&req, 1, Deadline::after(c.timeout))) c.timed_out("exchanging data");
  if (call.reduce == ReduceOp::kMean && reduces(call.kind)) divide_by(call.out, out_count, call.dtype, n);
}

// send is buffered: it copies the tensor, posts the signature and the
// payload, and returns without waiting for the receiver, so that every
// rank of a ring may send before it receives (one plan, one lane). The
// posted sends are polled by every later call and by finalize; one the
// receiver has not taken within the timeout fails the call that notices
// it. (MPI completes a small send eagerly, receiver or not: only a send
// too large for that can be seen waiting.) recv checks the signature before it takes the
// payload; on a mismatch it drains the payload into scratch (so that the
// sender's request completes) and raises, naming both tensors.
struct PendingSend {
  mpi::Request reqs[2] = {nullptr, nullptr};
  std::unique_ptr<char[]> payload;
  struct Header {
    uint64_t sig;
    uint64_t bytes;
    char call[112];
  } header{};
  int peer = -1;
  std::string what;
  Clock::time_point posted;
};

std::vector<std::unique_ptr<PendingSend>>& pending_sends() {
  static auto* list = new std::vector<std::unique_ptr<PendingSend>>();  // under mpi_mutex()
  return *list;
}

// Drops the sends that completed; fails `c` if one has waited a whole
// timeout. `drain`: wait for all (finalize), under the same limit.
void poll_pending_sends(const Context* c, const Mpi& m, bool drain) {
  auto& list = pending_sends();
  for (;;) {
    for (size_t i = 0; i < list.size();) {
      int done = 0;
      m.api.Testall(2, list[i]->reqs, &done, mpi::kStatusesIgnore);
      if (done) {
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      double waited = std::chrono::duration<double>(Clock::now() - list[i]->posted).count();
      if (waited > collective_timeout()) {
        std::string what = "an earlier " + list[i]->what + " was not received by rank " +
                           std::to_string(list[i]->peer) + " within " + seconds_str(collective_timeout()) +
                           " (dead, or never called recv)";
        list[i].release();  // MPI may still read it
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
        if (c) c->fail(what);
        mark_all_broken(what);
        throw DistError("wok::dist::finalize: " + what);
      }
      ++i;
    }
    if (!drain || list.empty()) return;
    std::this_thread::yield();
  }
}

void point_to_point(const Context& c) {
  const CollectiveCall& call = c.call;
  const Mpi& m = c.m;
  const int peer = call.peer;
  const uint64_t sig = fnv1a(call_key(call, /*p2p_side_neutral=*/true));
  const int64_t count = numel(*call.in_shape);
  const size_t bytes = static_cast<size_t>(count) * itemsize(call.dtype);
  if (call.kind == CollectiveKind::kSend) {
    auto send = std::make_unique<PendingSend>();
    send->header.sig = sig;
    send->header.bytes = bytes;
    std::snprintf(send->header.call, sizeof send->header.call, "%s", call_key(call).c_str());
    send->payload.reset(new char[std::max<size_t>(bytes, 1)]);
    if (bytes) std::memcpy(send->payload.get(), call.in, bytes);
    send->peer = peer;
    send->what = call.str();
    send->posted = Clock::now();
    c.check(m.api.Isend(&send->header, sizeof send->header, m.h.byte, peer, kPairTag, c.g.control, &send->reqs[0]),
            "MPI_Isend");
    c.check(m.api.Isend(send->payload.get(), count_or_fail(c, static_cast<int64_t>(bytes)), m.h.byte, peer,
                        kPayloadTag, c.g.data, &send->reqs[1]),
            "MPI_Isend");
    pending_sends().push_back(std::move(send));
    if (call.out != call.in && bytes) std::memcpy(call.out, call.in, bytes);
    return;
  }
  // Left allocated when a wait fails: MPI may still write to it.
  auto* h = new PendingSend::Header{};
  mpi::Request req;
  const Deadline d = Deadline::after(c.timeout);
  auto peer_missing = [&](const char* what) {
    c.fail("timed out after " + seconds_str(c.timeout) + ": rank " + std::to_string(peer) + " " + what +
           " (dead, or never arrived). Set WOK_DIST_TIMEOUT (seconds) if ranks are only slow.");
  };
  c.check(m.api.Irecv(h, sizeof *h, m.h.byte, peer, kPairTag, c.g.control, &req), "MPI_Irecv");
  if (!c.wait(&req, 1, d)) peer_missing("did not send");
  if (h->sig != sig) {
    // Take the payload anyway, so that the sender's request completes.
    char* scratch = new char[std::max<uint64_t>(h->bytes, 1)];
    c.check(m.api.Irecv(scratch, count_or_fail(c, static_cast<int64_t>(h->bytes)), m.h.byte, peer, kPayloadTag,
                        c.g.data, &req),
            "MPI_Irecv");
    if (c.wait(&req, 1, d)) delete[] scratch;
    h->call[sizeof h->call - 1] = 0;
    c.fail("rank " + std::to_string(peer) + " sent " + h->call + ", but this rank receives " + call_key(call));
  }
  delete h;
  c.check(m.api.Irecv(call.out, count_or_fail(c, static_cast<int64_t>(bytes)), m.h.byte, peer, kPayloadTag, c.g.data,
                      &req),
          "MPI_Irecv");
  if (!c.wait(&req, 1, d)) peer_missing("stopped sending");
}

}  // namespace

CollectiveCall collective_call(CollectiveKind kind, const KernelContext& ctx) {
  CollectiveCall call;
  call.kind = kind;
  call.group = static_cast<int>(ctx.attrs.get_int("group"));
  call.reduce = static_cast<ReduceOp>(ctx.attrs.get_int("reduce"));
  call.peer = static_cast<int>(ctx.attrs.get_int("peer"));
  call.dtype = ctx.outputs[0].dtype;
  call.out = ctx.outputs[0].data;
  call.out_shape = ctx.outputs[0].shape;
  call.in = kind == CollectiveKind::kRecv ? nullptr : ctx.inputs[0].data;
  call.in_shape = kind == CollectiveKind::kRecv ? ctx.outputs[0].shape : ctx.inputs[0].shape;
  return call;
}

void drain_pending_sends() {
  try {
    poll_pending_sends(nullptr, mpi_api(), /*drain=*/true);
  } catch (const DistError& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
}

std::string CollectiveCall::str() const {
  std::string s(collective_name(kind));
  if (reduces(kind)) s += "(" + std::string(reduce_op_name(reduce)) + ")";
  if (kind == CollectiveKind::kBroadcast) s += "(root=" + std::to_string(peer) + ")";
  if (kind == CollectiveKind::kSend) s += "(dst=" + std::to_string(peer) + ")";
  if (kind == CollectiveKind::kRecv) s += "(src=" + std::to_string(peer) + ")";
  return s + " " + std::string(dtype_name(dtype)) + shape_str(*in_shape);
}

void run_collective(const CollectiveCall& call) {
  CommState& g = comm_state(call.group);
  const int64_t in_bytes = numel(*call.in_shape) * static_cast<int64_t>(itemsize(call.dtype));
  if (g.info.size == 1) {
    // A group of one (the frontend records nothing for it; a kernel may
    // still meet one, from a plan built for a split group): the input.
    if (call.kind != CollectiveKind::kRecv && call.out != call.in && in_bytes > 0)
      std::memcpy(call.out, call.in, static_cast<size_t>(in_bytes));
    return;
  }
  const Mpi& m = mpi_api();
  std::lock_guard lock(mpi_mutex());
  if (std::string why = broken_reason(); !why.empty())
    throw DistError("wok::dist::" + call.str() + " in group " + g.info.name +
                    ": the groups are broken by an earlier failure: " + why);
  Context c{m, g, call, collective_timeout()};
  poll_pending_sends(&c, m, /*drain=*/false);
  if (call.kind == CollectiveKind::kSend || call.kind == CollectiveKind::kRecv) {
    point_to_point(c);
    return;
  }
  arrive(c);
  exchange(c);
  ++g.seq;
}

}  // namespace wok::dist
