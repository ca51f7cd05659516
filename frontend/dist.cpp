#include "wok/frontend/dist.h"

#include "wok/frontend/dispatch.h"
#include "wok/runtime/dist/group_table.h"
#include "wok/runtime/error.h"

namespace wok::dist {

namespace {

const RegisteredOp& collective_op(CollectiveKind kind) {
  static const RegisteredOp* ops[7] = {};
  const RegisteredOp*& op = ops[static_cast<int>(kind)];
  if (!op) op = &OpRegistry::global().get(collective_op_name(kind));
  return *op;
}

Tensor record_collective(CollectiveKind kind, std::span<const Tensor> inputs, const Group& group, ReduceOp reduce,
                         int peer, std::vector<AttrValue> extra = {}) {
  std::vector<AttrValue> values = {int64_t{group.id()}, int64_t{group.size()}, int64_t{static_cast<int>(reduce)},
                                   int64_t{peer}};
  for (AttrValue& v : extra) values.push_back(std::move(v));
  const RegisteredOp& op = collective_op(kind);
  return detail::record1(op, inputs, detail::positional_attrs(op, std::move(values)));
}

void require_other_rank(const char* what, int peer, const Group& group) {
  if (peer == group.rank())
    throw ArgumentError(std::string("wok::dist::") + what + ": rank " + std::to_string(peer) +
                        " is this process itself (group " + group.name() + ")");
  if (peer < 0 || peer >= group.size())
    throw ArgumentError(std::string("wok::dist::") + what + ": rank " + std::to_string(peer) +
                        " is not in group " + group.name() + " (size " + std::to_string(group.size()) + ")");
}

// A group of one records nothing: each collective is its input (after the
// same checks its op's rules make, so a program that is wrong for a larger
// group fails here too).
bool alone(const Group& group) { return group.size() == 1; }

}  // namespace

Group group_from_id(int id) { return Group(id); }

int Group::rank() const { return group_info(id_).rank; }
int Group::size() const { return group_info(id_).size; }
const std::string& Group::name() const { return group_info(id_).name; }
Group Group::split(int color, int key) const { return group_from_id(split_group(id_, color, key)); }

void init() { ensure_initialized(); }
bool initialized() { return is_initialized(); }
void finalize() { finalize_groups(); }

Group world() {
  ensure_initialized();
  return Group(0);
}
int rank() { return world().rank(); }
int size() { return world().size(); }

void set_timeout(double seconds) { set_collective_timeout(seconds); }
double timeout() { return collective_timeout(); }

Tensor all_reduce(const Tensor& x, ReduceOp op, const Group& group) {
  WOK_CALLER_SCOPE();
  if (alone(group) && x.defined()) {
    if (op == ReduceOp::kMean && !is_floating(x.dtype()))
      throw DTypeError("wok::dist::all_reduce: mean needs a floating dtype, got " + std::string(dtype_name(x.dtype())));
    return x;
  }
  return record_collective(CollectiveKind::kAllReduce, {&x, 1}, group, op, -1);
}

Tensor all_gather(const Tensor& x, const Group& group) {
  WOK_CALLER_SCOPE();
  if (alone(group) && x.defined()) return x.ndim() == 0 ? x.reshape({1}) : x;
  return record_collective(CollectiveKind::kAllGather, {&x, 1}, group, ReduceOp::kSum, -1);
}

Tensor reduce_scatter(const Tensor& x, ReduceOp op, const Group& group) {
  WOK_CALLER_SCOPE();
  if (alone(group) && x.defined()) {
    if (x.ndim() == 0) throw ShapeError("wok::dist::reduce_scatter: a 0-d tensor has no axis 0 to scatter");
    if (op == ReduceOp::kMean && !is_floating(x.dtype()))
      throw DTypeError("wok::dist::reduce_scatter: mean needs a floating dtype, got " +
                       std::string(dtype_name(x.dtype())));
    return x;
  }
  return record_collective(CollectiveKind::kReduceScatter, {&x, 1}, group, op, -1);
}

Tensor broadcast(const Tensor& x, int root, const Group& group) {
  WOK_CALLER_SCOPE();
  if (alone(group) && x.defined()) {
    if (root != 0)
      throw ArgumentError("wok::dist::broadcast: root rank " + std::to_string(root) + " is not in group " +
                          group.name() + " (size 1)");
    return x;
  }
  return record_collective(CollectiveKind::kBroadcast, {&x, 1}, group, ReduceOp::kSum, root);
}

Tensor all_to_all(const Tensor& x, const Group& group) {
  WOK_CALLER_SCOPE();
  if (alone(group) && x.defined()) {
    if (x.ndim() == 0) throw ShapeError("wok::dist::all_to_all: a 0-d tensor has no axis 0 to split");
    return x;
  }
  return record_collective(CollectiveKind::kAllToAll, {&x, 1}, group, ReduceOp::kSum, -1);
}

Tensor send(const Tensor& x, int dst, const Group& group) {
  WOK_CALLER_SCOPE();
  require_other_rank("send", dst, group);
  return record_collective(CollectiveKind::kSend, {&x, 1}, group, ReduceOp::kSum, dst);
}

Tensor recv(const Shape& shape, DType dtype, int src, const Group& group) {
  WOK_CALLER_SCOPE();
  require_other_rank("recv", src, group);
  return record_collective(CollectiveKind::kRecv, {}, group, ReduceOp::kSum, src, {shape, dtype});
}

}  // namespace wok::dist
