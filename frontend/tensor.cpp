#include "wok/frontend/tensor.h"

#include <functional>
#include <sstream>

#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"
#include "wok/runtime/cuda/cuda_copy.h"
#include "wok/runtime/cuda/cuda_driver.h"
#include "wok/runtime/capture.h"
#include "wok/runtime/evaluator.h"
#include "wok/runtime/op_registry.h"

namespace wok {

const TensorMeta& Tensor::undefined_error() { throw Error("operation on an undefined wok::Tensor"); }

int64_t Tensor::size(int64_t axis) const {
  std::optional<int> a = normalize_axis(axis, ndim());
  if (!a)
    throw ShapeError("size(" + std::to_string(axis) + "): axis out of range for shape " + shape_str(shape()));
  return shape()[*a];
}

namespace {
std::string described(const std::string& call, const Tensor& t) {
  return call + " of a " + std::string(dtype_name(t.dtype())) + shape_str(t.shape()) + " tensor";
}
}  // namespace

const void* Tensor::host_data() const {
  meta();
  refuse_during_capture(described("reading the data (data<T>, to_vector, item or str)", *this));
  if (!device().is_cpu())
    throw DeviceError("data<T>() of a tensor on " + device().str() +
                      ": its memory is on the GPU; use to_vector<T>() or item<T>(), which copy, or to(Device::cpu())");
  if (!impl_->ready()) evaluate({&impl_, 1}, EvalReason::kDataRead);
  return impl_->storage()->data();
}

Tensor::HostBytes Tensor::host_bytes() const {
  meta();
  refuse_during_capture(described("reading the data (to_vector, item or str)", *this));
  if (device().is_cpu()) return {nullptr, host_data()};
  if (!impl_->ready()) evaluate({&impl_, 1}, EvalReason::kDataRead);
  const StoragePtr& src = impl_->storage();
  StoragePtr host = Storage::allocate(nbytes(), Device::cpu());
  cuda::copy_bytes(host->data(), Device::cpu(), src->data(), device(), nbytes());
  return {host, host->data()};
}

Scalar Tensor::item_scalar() const {
  refuse_during_capture(described("Tensor::item()", *this));
  if (numel() != 1)
    throw ShapeError("item() needs exactly one element, tensor has shape " + shape_str(shape()));
  const HostBytes bytes = host_bytes();
  const void* p = bytes.data;
  return visit_any_dtype(dtype(), [&](auto tag) { return Scalar::of(*static_cast<const decltype(tag)*>(p)); });
}

Tensor Tensor::reshape(Shape s) const {
  WOK_CALLER_SCOPE();
  return wok::reshape(*this, std::move(s));
}
Tensor Tensor::permute(std::vector<int64_t> dims) const {
  WOK_CALLER_SCOPE();
  return wok::permute(*this, std::move(dims));
}
Tensor Tensor::transpose() const {
  WOK_CALLER_SCOPE();
  return wok::transpose(*this);
}
Tensor Tensor::transpose(int64_t a, int64_t b) const {
  WOK_CALLER_SCOPE();
  return wok::transpose(*this, a, b);
}
Tensor Tensor::broadcast_to(Shape s) const {
  WOK_CALLER_SCOPE();
  return wok::broadcast_to(*this, std::move(s));
}
Tensor Tensor::astype(DType t) const {
  WOK_CALLER_SCOPE();
  return dtype() == t ? *this : wok::cast(*this, t);
}

// Note [Copies between devices]
// to() copies at once (through pinned staging buffers for host <-> GPU),
// except for a pending constant (a `full` with no inputs, which is how
// scalars in expressions are recorded): that is recorded again on the
// target device, so it stays a launch parameter of the kernels that read
// it instead of becoming a copy. (Its node is read without the graph mutex:
// such constants are fresh tensors that no other thread evaluates.)
Tensor Tensor::to(Device d) const {
  if (device() == d) return *this;
  if (d.is_cuda()) cuda::require_device(d.index);  // names what is missing
  if (!impl_->ready()) {
    std::shared_ptr<Node> node = impl_->node();
    if (node && node->inputs.empty() && node->op->def().kind == OpKind::kCreation && node->output_meta.size() == 1) {
      TensorMeta m = meta();
      m.device = d;
      auto moved = std::make_shared<Node>(node->op, node->attrs, NodeInputs{}, NodeOutputMetas{m});
      moved->capture = node->capture;
      auto impl = std::make_shared<TensorImpl>(m, moved, 0, pending_cost_of({}));
      moved->outputs[0] = impl;
      return Tensor(std::move(impl));
    }
  }
  // A copy is made now, not recorded: inside a capture it would copy the
  // first call's data for every call.
  refuse_during_capture(described("Tensor::to(" + d.str() + ")", *this));
  if (!impl_->ready()) evaluate({&impl_, 1}, EvalReason::kDataRead);
  const StoragePtr& src = impl_->storage();
  StoragePtr dst = Storage::allocate(nbytes(), d);
  cuda::copy_bytes(dst->data(), d, src->data(), device(), nbytes());
  return Tensor(std::make_shared<TensorImpl>(TensorMeta{shape(), dtype(), d}, std::move(dst)));
}

namespace {

// Tensors with more elements than this print only kEdgeItems at each end of
// every longer dimension, as NumPy does.
constexpr int64_t kSummaryThreshold = 1000;
constexpr int64_t kEdgeItems = 3;

// NumPy-style nested rows on one line: [[1, 2, 3], [4, 5, 6]].
void print_nested(std::ostream& out, const Shape& shape, const Strides& strides, size_t dim, int64_t offset,
                  bool summarise, const std::function<void(int64_t)>& element) {
  if (dim == shape.size()) {
    element(offset);
    return;
  }
  out << "[";
  const int64_t n = shape[dim];
  const bool cut = summarise && n > 2 * kEdgeItems;
  for (int64_t i = 0; i < n; ++i) {
    if (cut && i == kEdgeItems) {
      out << "..., ";
      i = n - kEdgeItems;
    }
    print_nested(out, shape, strides, dim + 1, offset + i * strides[dim], summarise, element);
    if (i + 1 < n) out << ", ";
  }
  out << "]";
}

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  std::ostringstream out;
  out << dtype_name(dtype()) << shape_str(shape()) << " ";
  const Shape& s = shape();
  const bool summarise = numel() > kSummaryThreshold;
  std::function<void(int64_t)> element;
  std::vector<double> f;
  std::vector<int64_t> i;
  std::vector<uint64_t> u;
  if (dtype() == DType::kUInt64) {
    u = to_vector<uint64_t>();
    element = [&](int64_t k) { out << u[k]; };
  } else if (dtype() == DType::kBool) {
    i = to_vector<int64_t>();
    element = [&](int64_t k) { out << (i[k] ? "true" : "false"); };
  } else if (is_floating(dtype())) {
    f = to_vector<double>();
    element = [&](int64_t k) { out << f[k]; };
  } else {
    i = to_vector<int64_t>();
    element = [&](int64_t k) { out << i[k]; };
  }
  print_nested(out, s, contiguous_strides(s), 0, 0, summarise, element);
  return out.str();
}

namespace {
std::vector<TensorImplPtr> impls_of(const std::vector<Tensor>& tensors, const char* fn) {
  std::vector<TensorImplPtr> impls;
  impls.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    if (!t.defined()) throw Error(std::string(fn) + ": an undefined tensor was passed");
    impls.push_back(t.impl());
  }
  return impls;
}
}  // namespace

void eval(const std::vector<Tensor>& tensors) {
  refuse_during_capture("wok::eval");
  evaluate(impls_of(tensors, "wok::eval"), EvalReason::kEvalCall);
}

void eval_async(const std::vector<Tensor>& tensors) {
  refuse_during_capture("wok::eval_async");
  evaluate(impls_of(tensors, "wok::eval_async"), EvalReason::kEvalCall, /*async=*/true);
}

}  // namespace wok
