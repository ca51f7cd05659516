// More than one process: collectives as lazy ops (wok::dist).
//
//   wok::dist::init();                           // from mpirun's environment, or a group of one
//   wok::Tensor g = wok::dist::all_reduce(grad, wok::dist::ReduceOp::kMean);
//   wok::eval({g});                              // the all_reduce runs with the rest of the plan
//
// A collective is recorded like any other op and runs when its result is
// needed, on the plan's communication stream, so compute that does not
// depend on it runs while it is in flight (Note [The communication lane] in
// jit/plan_lanes.cpp). Every rank of a group must evaluate the same
// collectives in the same order. Over a group of one each collective returns
// its input and records nothing.
//
// On CPU tensors collectives run over MPI (Open MPI, opened at run time:
// runtime/dist/mpi_loader.h), on CUDA tensors over NCCL
// (runtime/dist/nccl_loader.h). Neither is needed to build wok or to run a
// single process; init() under mpirun without Open MPI's library raises
// wok::DistError naming what is missing.
//
// Faults (Note [Arrive, then exchange] in runtime/dist/collective.cpp): a
// rank that dies or never arrives makes the others raise wok::DistError
// within WOK_DIST_TIMEOUT seconds (default 300), naming the collective, the
// group and the missing ranks; ranks that call different collectives, or
// the same one on different shapes or dtypes, get an error listing each
// rank's call. After such an error every group is broken: every later
// collective raises at once. These checks are made for CPU tensors: on CUDA
// tensors a collective is queued on the tensor's stream and nothing on the
// host waits for it, so only NCCL's own errors are reported (Note [NCCL
// communicators] in runtime/dist/nccl_collective.cpp).
#pragma once

#include <string>
#include <vector>

#include "wok/frontend/tensor.h"
#include "wok/runtime/dist/collective.h"  // ReduceOp

namespace wok::dist {

using ReduceOp = wok::dist::ReduceOp;

// A set of processes that run collectives together. Cheap to copy.
class Group {
 public:
  int rank() const;  // this process's rank in the group
  int size() const;
  const std::string& name() const;  // "world", or "world/split(color=1)"
  // Splits the group like MPI_Comm_split: the processes that pass the same
  // color form a new group, ranked by `key` (then by rank here). Every
  // process of this group must call it, in the same order as its other
  // collectives. A negative color joins no group and returns a group of one.
  Group split(int color, int key = 0) const;
  int id() const { return id_; }

 private:
  friend Group world();
  friend Group group_from_id(int id);
  explicit Group(int id) : id_(id) {}
  int id_ = 0;
};

// Starts wok::dist: under mpirun (or any launcher that sets Open MPI's or
// PMIx's environment) the world is every process of the job, else this
// process alone. Idempotent; the collectives call it on first use.
void init();
bool initialized();
// Ends MPI use (MPI_Finalize). Called at exit if the program does not;
// skipped when a collective failed, since peers may be gone.
void finalize();

Group world();
int rank();  // world().rank()
int size();  // world().size()

// Seconds a collective waits for every rank before it fails (the default
// is WOK_DIST_TIMEOUT, else 300).
void set_timeout(double seconds);
double timeout();

// Every rank gets the elementwise reduction of every rank's `x` (same shape
// and dtype on each). kMean needs a floating dtype; on bool, kSum and kMax
// are "or", kProd and kMin are "and".
Tensor all_reduce(const Tensor& x, ReduceOp op = ReduceOp::kSum, const Group& group = world());
// Every rank's `x` (same shape on each), concatenated along axis 0 in rank
// order: [size * n, ...] for x of [n, ...] (a 0-d x gives [size]).
Tensor all_gather(const Tensor& x, const Group& group = world());
// Reduces like all_reduce, then rank r keeps the r-th of `size` equal slices
// along axis 0 (x.shape[0] must divide by size).
Tensor reduce_scatter(const Tensor& x, ReduceOp op = ReduceOp::kSum, const Group& group = world());
// Every rank gets `root`'s x (same shape and dtype on each).
Tensor broadcast(const Tensor& x, int root = 0, const Group& group = world());
// x's axis 0 split in `size` equal slices: slice j goes to rank j, and the
// result's slice j is what rank j sent here.
Tensor all_to_all(const Tensor& x, const Group& group = world());
// Sends x to rank `dst` when the result is evaluated; the result equals x.
// The receiver's recv must name the same shape and dtype. A send is
// buffered: it returns once MPI holds a copy, without waiting for the
// receiver, so a ring (every rank sends, then receives) works in one eval.
// A send nobody receives is reported (by a later collective, or at
// finalize) only when it is too large for MPI to deliver eagerly (tens of
// KiB over shared memory); a mismatched one is reported by the receiver.
Tensor send(const Tensor& x, int dst, const Group& group = world());
// A tensor of `shape` and `dtype` received from rank `src`.
Tensor recv(const Shape& shape, DType dtype, int src, const Group& group = world());

}  // namespace wok::dist
