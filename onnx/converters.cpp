#include "wok/onnx/converters.h"

namespace wok::onnx {

void ConverterTable::add(const std::string& op_type, ConvertFn convert, CheckFn check) {
  rows_[op_type] = Converter{convert, check};
}

const Converter* ConverterTable::find(const std::string& op_type) const {
  auto it = rows_.find(op_type);
  return it == rows_.end() ? nullptr : &it->second;
}

std::vector<std::string> ConverterTable::op_types() const {
  std::vector<std::string> names;
  for (const auto& [name, row] : rows_) names.push_back(name);
  return names;
}

const ConverterTable& converters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    add_elementwise_converters(t);
    add_reduction_converters(t);
    add_shape_converters(t);
    add_nn_converters(t);
    add_recurrent_converters(t);
    add_indexing_converters(t);
    return t;
  }();
  return table;
}

int64_t normalize_axis(const NodeContext& ctx, int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    ctx.fail("axis " + std::to_string(axis) + " is out of range for a tensor of rank " + std::to_string(rank));
  return a;
}

std::vector<int64_t> normalize_axes(const NodeContext& ctx, std::vector<int64_t> axes, int64_t rank) {
  for (int64_t& a : axes) a = normalize_axis(ctx, a, rank);
  return axes;
}

int64_t proto_attr_int(const ::onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

std::string proto_attr_string(const ::onnx::NodeProto& node, const std::string& name, const std::string& fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.s();
  return fallback;
}

}  // namespace wok::onnx
