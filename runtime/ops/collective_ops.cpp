// The collectives of wok::dist as ops: shape and dtype rules, and the CPU
// kernel that hands a call to the engine (runtime/dist/collective.cpp).
// The CUDA kernels are NCCL's (runtime/dist/nccl_collective.cpp).
#include "wok/runtime/dist/collective.h"
#include "wok/runtime/dist/nccl_collective.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/ops/op_rules.h"

namespace wok::ops {

namespace {

using dist::CollectiveKind;

// Attributes every collective carries: the group's id and size (shape
// rules need the size; the id selects the communicators), the reduction
// and the peer rank (root, destination or source).
std::vector<AttrSpec> collective_attrs(CollectiveKind kind) {
  std::vector<AttrSpec> a = {{"group", AttrType::kInt, std::nullopt},
                             {"size", AttrType::kInt, std::nullopt},
                             {"reduce", AttrType::kInt, int64_t{0}},
                             {"peer", AttrType::kInt, int64_t{-1}}};
  if (kind == CollectiveKind::kRecv) {
    a.push_back({"shape", AttrType::kInts, std::nullopt});
    a.push_back({"dtype", AttrType::kDType, std::nullopt});
  }
  return a;
}

Shape first_axis_times(const Shape& in, int64_t size, bool divide) {
  Shape out = in.empty() ? Shape{1} : in;
  if (!divide) {
    out[0] *= size;
    return out;
  }
  if (in.empty() || in[0] % size != 0)
    throw ShapeError("axis 0 (" + (in.empty() ? std::string("a 0-d tensor has none") : std::to_string(in[0])) +
                     ") must divide into " + std::to_string(size) + " equal slices, one per rank");
  out[0] /= size;
  return out;
}

void check_peer(const Attrs& a, const char* what) {
  int64_t peer = a.get_int("peer"), size = a.get_int("size");
  if (peer < 0 || peer >= size)
    throw ArgumentError(std::string(what) + " rank " + std::to_string(peer) + " is not in the group (size " +
                        std::to_string(size) + ")");
}

OpDef collective_def(CollectiveKind kind, const char* doc) {
  OpDef def;
  def.name = dist::collective_op_name(kind);
  def.inputs = kind == CollectiveKind::kRecv ? std::vector<std::string>{} : std::vector<std::string>{"x"};
  def.kind = OpKind::kOpaque;
  def.communicates = true;
  if (kind == CollectiveKind::kSend) def.schedule_priority = -1;
  def.attrs = collective_attrs(kind);
  def.doc = doc;
  def.infer_shape = [kind](std::span<const Shape> in, const Attrs& a) {
    const int64_t size = a.get_int("size");
    switch (kind) {
      case CollectiveKind::kAllGather: return std::vector<Shape>{first_axis_times(in[0], size, false)};
      case CollectiveKind::kReduceScatter: return std::vector<Shape>{first_axis_times(in[0], size, true)};
      case CollectiveKind::kAllToAll:
        first_axis_times(in[0], size, true);
        return std::vector<Shape>{in[0]};
      case CollectiveKind::kBroadcast: check_peer(a, "root"); return std::vector<Shape>{in[0]};
      case CollectiveKind::kSend: check_peer(a, "destination"); return std::vector<Shape>{in[0]};
      case CollectiveKind::kRecv: {
        check_peer(a, "source");
        const Shape& s = a.get_ints("shape");
        for (int64_t d : s)
          if (d < 0) throw ShapeError("shape " + shape_str(s) + " has a negative dimension");
        return std::vector<Shape>{s};
      }
      case CollectiveKind::kAllReduce: break;
    }
    return std::vector<Shape>{in[0]};
  };
  def.infer_dtype = [kind](std::span<const DType> in, const Attrs& a) {
    if (kind == CollectiveKind::kRecv) return one(a.get_dtype("dtype"));
    DType t = in[0];
    if ((kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter) &&
        static_cast<dist::ReduceOp>(a.get_int("reduce")) == dist::ReduceOp::kMean && !is_floating(t))
      throw DTypeError("mean needs a floating dtype, got " + std::string(dtype_name(t)) +
                       " (reduce with sum, or cast first)");
    return one(t);
  };
  return def;
}

void collective_kernel(CollectiveKind kind, const KernelContext& ctx) {
  dist::run_collective(dist::collective_call(kind, ctx));
}

}  // namespace

void register_collective_ops(OpRegistry& r) {
  const std::pair<CollectiveKind, const char*> kinds[] = {
      {CollectiveKind::kAllReduce, "every rank gets the reduction of every rank's x (wok::dist::all_reduce)"},
      {CollectiveKind::kAllGather, "every rank's x, concatenated along axis 0 in rank order"},
      {CollectiveKind::kReduceScatter, "the reduction of every rank's x; rank r keeps slice r of axis 0"},
      {CollectiveKind::kBroadcast, "every rank gets the root's x"},
      {CollectiveKind::kAllToAll, "slice j of x's axis 0 goes to rank j; slice j of the result came from rank j"},
      {CollectiveKind::kSend, "sends x to a rank; the result equals x"},
      {CollectiveKind::kRecv, "a tensor received from a rank"},
  };
  for (auto [kind, doc] : kinds) {
    r.add(collective_def(kind, doc));
    r.add_kernel(dist::collective_op_name(kind), DeviceType::kCPU,
                 [kind](const KernelContext& ctx) { collective_kernel(kind, ctx); });
  }
  dist::register_nccl_collective_kernels(r);
}

}  // namespace wok::ops
