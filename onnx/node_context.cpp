#include "wok/onnx/node_context.h"

#include "wok/onnx/model.h"
#include "wok/onnx/tensor_proto.h"

namespace wok::onnx {

using ::onnx::AttributeProto;

std::string node_label(const ::onnx::NodeProto& node) {
  if (!node.name().empty()) return node.name();
  for (const std::string& out : node.output())
    if (!out.empty()) return out;
  return "";
}

std::string describe_node(const ::onnx::NodeProto& node) {
  return "node '" + node_label(node) + "' (" + node.op_type() + ")";
}

std::string NodeContext::describe() const { return describe_node(node_); }

void NodeContext::fail(const std::string& why) const { throw ModelError("onnx " + describe() + ": " + why); }

const Tensor& NodeContext::input(size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is required but not given");
  return inputs_[i];
}

std::vector<int64_t> NodeContext::int_values(size_t i) const {
  const Tensor& t = input(i);
  if (i < known_.size() && known_[i] && !is_floating(t.dtype()) && t.dtype() != DType::kBool) return known_[i]->ints;
  if (is_floating(t.dtype()) || t.dtype() == DType::kBool)
    fail("input " + std::to_string(i) + " must be an integer tensor, got " + std::string(dtype_name(t.dtype())));
  return t.to_vector<int64_t>();
}

std::vector<double> NodeContext::double_values(size_t i) const {
  if (i < known_.size() && known_[i] && has_input(i)) return known_[i]->doubles;
  return input(i).to_vector<double>();
}

const AttributeProto* NodeContext::find_attr(const std::string& name) const {
  for (const AttributeProto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

const AttributeProto& NodeContext::typed_attr(const std::string& name, AttributeProto::AttributeType type) const {
  const AttributeProto* a = find_attr(name);
  if (!a) fail("attribute '" + name + "' is required");
  if (a->type() != type && a->type() != AttributeProto::UNDEFINED)
    fail("attribute '" + name + "' has type " + AttributeProto::AttributeType_Name(a->type()) + ", expected " +
         AttributeProto::AttributeType_Name(type));
  return *a;
}

int64_t NodeContext::attr_int(const std::string& name, int64_t fallback) const {
  return has_attr(name) ? typed_attr(name, AttributeProto::INT).i() : fallback;
}

double NodeContext::attr_float(const std::string& name, double fallback) const {
  return has_attr(name) ? typed_attr(name, AttributeProto::FLOAT).f() : fallback;
}

std::string NodeContext::attr_string(const std::string& name, const std::string& fallback) const {
  return has_attr(name) ? typed_attr(name, AttributeProto::STRING).s() : fallback;
}

std::vector<int64_t> NodeContext::attr_ints(const std::string& name, std::vector<int64_t> fallback) const {
  if (!has_attr(name)) return fallback;
  const auto& values = typed_attr(name, AttributeProto::INTS).ints();
  return {values.begin(), values.end()};
}

std::vector<float> NodeContext::attr_floats(const std::string& name, std::vector<float> fallback) const {
  if (!has_attr(name)) return fallback;
  const auto& values = typed_attr(name, AttributeProto::FLOATS).floats();
  return {values.begin(), values.end()};
}

Tensor NodeContext::attr_tensor(const std::string& name) const {
  return tensor_from_proto(typed_attr(name, AttributeProto::TENSOR).t(), base_dir_,
                           "onnx " + describe() + " attribute '" + name + "'");
}

}  // namespace wok::onnx
