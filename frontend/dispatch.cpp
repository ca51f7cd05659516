#include "wok/frontend/dispatch.h"

#include <cstring>

#include "wok/frontend/backends.h"
#include "wok/runtime/capture.h"
#include "wok/runtime/evaluator.h"
#include "wok/runtime/observe/call_site.h"
#include "wok/runtime/observe/events.h"
#include "wok/runtime/pool_allocator.h"

namespace wok::detail {

// The scopes' state is the runtime's (runtime/observe/call_site.h): the
// live-tensor registry reads it for tensors created outside an op.
using observe::t_call_site;

CallerScope::CallerScope(const void* return_address) noexcept {
#if WOK_EVENTS
  if (!t_call_site.caller) {
    t_call_site.caller = return_address;
    outermost_ = true;
  }
#endif
}

CallerScope::~CallerScope() {
#if WOK_EVENTS
  if (outermost_) t_call_site.caller = nullptr;
#endif
}

CallSiteScope::CallSiteScope(const std::source_location& site) noexcept {
#if WOK_EVENTS
  if (!t_call_site.site_open) {
    t_call_site.site_open = outermost_ = true;
    t_call_site.site = site;
  }
#endif
}

CallSiteScope::~CallSiteScope() {
#if WOK_EVENTS
  if (outermost_) {
    t_call_site.site_open = false;
    t_call_site.site = std::source_location{};
  }
#endif
}

std::source_location CallSiteScope::current() noexcept {
  return t_call_site.site_open ? t_call_site.site : std::source_location{};
}

std::string describe_inputs(const RegisteredOp& op, std::span<const Tensor> inputs) {
  std::string s;
  const auto& names = op.def().inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i) s += ", ";
    std::string name = names.empty() ? "x" : names[std::min(i, names.size() - 1)];
    if (op.def().variadic_inputs && i + 1 >= names.size()) name += std::to_string(i - (names.size() - 1));
    s += name + " ";
    s += inputs[i].defined() ? std::string(dtype_name(inputs[i].dtype())) + shape_str(inputs[i].shape())
                             : std::string("<undefined>");
  }
  return s;
}

namespace {

[[noreturn]] void rethrow_with_context(const RegisteredOp& op, std::span<const Tensor> inputs, const Error& e) {
  std::string msg = "wok::" + op.name() + ": " + e.what() + " (inputs: " + describe_inputs(op, inputs) + ")";
  if (dynamic_cast<const ShapeError*>(&e)) throw ShapeError(msg);
  if (dynamic_cast<const DTypeError*>(&e)) throw DTypeError(msg);
  if (dynamic_cast<const DeviceError*>(&e)) throw DeviceError(msg);
  if (dynamic_cast<const RegistryError*>(&e)) throw RegistryError(msg);
  if (dynamic_cast<const ArgumentError*>(&e)) throw ArgumentError(msg);
  throw Error(msg);
}

void check_inputs(const RegisteredOp& op, std::span<const Tensor> inputs) {
  const OpDef& def = op.def();
  size_t expected = def.inputs.size();
  bool count_ok = def.variadic_inputs ? inputs.size() >= expected : inputs.size() == expected;
  if (!count_ok)
    throw ArgumentError("expected " + std::string(def.variadic_inputs ? "at least " : "") + std::to_string(expected) +
                        " input(s), got " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined()) throw ArgumentError("input " + std::to_string(i) + " is an undefined tensor");
  for (size_t i = 1; i < inputs.size(); ++i)
    if (inputs[i].device() != inputs[0].device())
      throw DeviceError("inputs are on different devices (" + inputs[0].device().str() + " and " +
                        inputs[i].device().str() + "); move them with to()");
}

void note_recorded(Node& n);

// Checks the inputs, infers the outputs and records the node; its output
// tensors (created by the callers below) share `cost`.
std::shared_ptr<Node> record_node(const RegisteredOp& op, std::span<const Tensor> inputs, Attrs attrs,
                                  PendingCost& cost) {
  // The inputs' shapes and dtypes, for the inference rules: per-thread
  // scratch whose capacity is reused from call to call (recording is the
  // hot path of a traced loop; the rules never record ops themselves).
  install_backends_once();
  thread_local std::vector<Shape> shapes;
  thread_local std::vector<DType> dtypes;
  std::vector<DType> out_dtypes;
  std::vector<Shape> out_shapes;
  Device device = Device::cpu();
  try {
    check_inputs(op, inputs);
    shapes.resize(inputs.size());
    dtypes.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      shapes[i].assign(inputs[i].shape().begin(), inputs[i].shape().end());
      dtypes[i] = inputs[i].dtype();
    }
    if (!inputs.empty()) device = inputs[0].device();
    out_dtypes = op.def().infer_dtype(dtypes, attrs);
    out_shapes = op.def().infer_shape(shapes, attrs);
    if (out_dtypes.size() != op.def().outputs.size() || out_shapes.size() != op.def().outputs.size())
      throw Error("shape or dtype rule returned the wrong number of outputs");
    if (!op.def().output_aliases_input) op.kernel_or_throw(device);
  } catch (const Error& e) {
    rethrow_with_context(op, inputs, e);
  } catch (const std::bad_variant_access&) {
    throw ArgumentError("wok::" + op.name() + ": an attribute has the wrong type (" + attrs.str() + ")");
  }

  NodeInputs in_impls;
  in_impls.reserve(inputs.size());
  for (const Tensor& t : inputs) in_impls.push_back(t.impl());
  cost = pending_cost_of(in_impls);

  NodeOutputMetas metas;
  metas.reserve(out_shapes.size());
  for (size_t i = 0; i < out_shapes.size(); ++i) metas.push_back({std::move(out_shapes[i]), out_dtypes[i], device});
  auto node = std::allocate_shared<Node>(PoolAllocator<Node>(), &op, std::move(attrs), std::move(in_impls),
                                        std::move(metas));
  note_recorded(*node);
  return node;
}

// What every recorded node carries beyond its op: the capture that
// recorded it, the user's call site, and the kOpRecorded event.
void note_recorded(Node& n) {
  if (const CaptureScope* capture = current_capture()) n.capture = capture->id();
#if WOK_EVENTS
  if (t_call_site.site_open) n.site = t_call_site.site;
  else n.caller = t_call_site.caller;
  if (WOK_OBSERVING(observe::EventKind::kOpRecorded)) {
    observe::Event e;
    e.kind = observe::EventKind::kOpRecorded;
    e.name = n.op->name();
    e.site = n.site;
    e.caller = n.caller;
    e.id = n.id;
    observe::emit(std::move(e));
  }
#endif
}

TensorImplPtr make_output(const std::shared_ptr<Node>& node, size_t i, PendingCost cost) {
  auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>(), node->output_meta[i], node,
                                               static_cast<int>(i), cost);
  node->outputs[i] = impl;
  return impl;
}

}  // namespace

std::vector<Tensor> record(const RegisteredOp& op, std::span<const Tensor> inputs, Attrs attrs) {
  PendingCost cost;
  std::shared_ptr<Node> node = record_node(op, inputs, std::move(attrs), cost);
  std::vector<Tensor> outs;
  outs.reserve(node->output_meta.size());
  for (size_t i = 0; i < node->output_meta.size(); ++i) outs.emplace_back(make_output(node, i, cost));
  enforce_pending_limits(outs[0].impl());
  return outs;
}

// The first output only: the others, never referenced, are dead values the
// kernel still writes (as when record()'s caller drops them).
Tensor record1(const RegisteredOp& op, std::span<const Tensor> inputs, Attrs attrs) {
  PendingCost cost;
  std::shared_ptr<Node> node = record_node(op, inputs, std::move(attrs), cost);
  Tensor out(make_output(node, 0, cost));
  enforce_pending_limits(out.impl());
  return out;
}

Tensor record1(const RegisteredOp& op, std::initializer_list<Tensor> inputs, Attrs attrs) {
  return record1(op, std::span<const Tensor>(inputs.begin(), inputs.size()), std::move(attrs));
}

// Note [Shared scalar constants]
// `x * 2.0f` reads a 0-d constant. Recorded afresh at every use, constants
// were half the nodes of a traced loop (`x = x * a + b`: four nodes per two
// ops), each allocated, inferred, collected and freed. Instead each thread
// keeps its recent constants in a few slots, by value and dtype, and a
// constant still pending on this thread is shared by every op that reads
// it. Sharing is safe because a constant is never written as an
// intermediate output of a fragment (Note [Which values a fragment writes]
// in runtime/evaluator.cpp): it stays pending, and every fragment that
// reads it computes it as its own launch parameter, whichever runs first.
// The slots hold weak references (a constant lives as long as an op that
// reads it), and a constant is shared only within the capture that
// recorded it (runtime/capture.h), so a capture never reads one recorded
// before it began.
namespace {
struct ConstantSlot {
  Scalar value;
  uint64_t capture = 0;
  std::weak_ptr<TensorImpl> tensor;
};
constexpr size_t kConstantSlots = 16;
thread_local ConstantSlot t_constants[kConstantSlots];

size_t constant_slot(const Scalar& v) {
  uint64_t bits;
  if (is_floating(v.dtype())) {
    double d = v.to<double>();
    std::memcpy(&bits, &d, sizeof bits);
  } else {
    bits = static_cast<uint64_t>(v.to<int64_t>());
  }
  bits ^= static_cast<uint64_t>(v.dtype()) * 0x9e3779b97f4a7c15ull;
  bits ^= bits >> 29;
  bits *= 0xbf58476d1ce4e5b9ull;
  return static_cast<size_t>(bits >> 60) % kConstantSlots;
}
}  // namespace

Tensor record_constant(const RegisteredOp& full, Scalar value) {
  const CaptureScope* capture = current_capture();
  const uint64_t capture_id = capture ? capture->id() : 0;
  ConstantSlot& slot = t_constants[constant_slot(value)];
  if (slot.value == value && slot.capture == capture_id)
    if (TensorImplPtr shared = slot.tensor.lock(); shared && !shared->ready()) return Tensor(std::move(shared));
  install_backends_once();
  NodeOutputMetas metas(1);
  metas[0].dtype = value.dtype();
  std::vector<AttrValue> values;
  values.reserve(2);
  values.emplace_back(value);
  values.emplace_back(Shape{});
  auto node = std::allocate_shared<Node>(PoolAllocator<Node>(), &full, Attrs(&full.def().attrs, std::move(values)),
                                        NodeInputs{}, std::move(metas));
  note_recorded(*node);
  TensorImplPtr impl = make_output(node, 0, pending_cost_of({}));
  slot.value = value;
  slot.capture = capture_id;
  slot.tensor = impl;
  return Tensor(std::move(impl));
}

Attrs positional_attrs(const RegisteredOp& op, std::vector<AttrValue> values) {
  const auto& specs = op.def().attrs;
  for (size_t i = values.size(); i < specs.size(); ++i) values.push_back(*specs[i].default_value);
  return Attrs(&specs, std::move(values));
}

}  // namespace wok::detail

namespace wok {

std::vector<Tensor> call(std::string_view op_name, const std::vector<Tensor>& inputs, const AttrMap& attrs,
                         std::source_location site) {
  detail::CallSiteScope scope(site);
  const RegisteredOp& op = OpRegistry::global().get(op_name);
  Attrs bound;
  try {
    bound = bind_attrs(op.name(), op.def().attrs, attrs);
  } catch (const ArgumentError& e) {
    throw ArgumentError("wok::call: " + std::string(e.what()));
  }
  return detail::record(op, inputs, std::move(bound));
}

Tensor call1(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs,
             std::source_location site) {
  std::vector<Tensor> outs = call(op, inputs, attrs, site);
  if (outs.size() != 1)
    throw ArgumentError("wok::call1: op '" + std::string(op) + "' has " + std::to_string(outs.size()) + " outputs");
  return std::move(outs[0]);
}

}  // namespace wok
