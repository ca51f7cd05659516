// The table of ONNX op converters: op type -> a function that records the
// node as wok ops. Each convert_*.cpp file adds its rows from an explicit
// function (wok is a static library: self-registering objects in files
// nobody references would be dropped by the linker).
#pragma once
#include <map>
#include <string>
#include <vector>
#include "wok/onnx/node_context.h"

namespace wok::onnx {

using Outputs = std::vector<Tensor>;
using ConvertFn = Outputs (*)(const NodeContext&);
// Checked at load, before anything runs: "" when wok imports the node as
// written, else the reason it cannot (an attribute value wok lacks).
using CheckFn = std::string (*)(const ::onnx::NodeProto& node, int64_t opset);

struct Converter {
  ConvertFn convert = nullptr;
  CheckFn check = nullptr;
};

class ConverterTable {
 public:
  void add(const std::string& op_type, ConvertFn convert, CheckFn check = nullptr);
  const Converter* find(const std::string& op_type) const;
  std::vector<std::string> op_types() const;

 private:
  std::map<std::string, Converter> rows_;
};

const ConverterTable& converters();

void add_elementwise_converters(ConverterTable& table);
void add_reduction_converters(ConverterTable& table);
void add_shape_converters(ConverterTable& table);
void add_nn_converters(ConverterTable& table);
void add_recurrent_converters(ConverterTable& table);
void add_indexing_converters(ConverterTable& table);

// An axis attribute or value made non-negative for a tensor of `rank`
// dims; out of range fails naming the node.
int64_t normalize_axis(const NodeContext& ctx, int64_t axis, int64_t rank);
std::vector<int64_t> normalize_axes(const NodeContext& ctx, std::vector<int64_t> axes, int64_t rank);
// The attribute's int value read as a node attribute before a converter
// runs (for CheckFns).
int64_t proto_attr_int(const ::onnx::NodeProto& node, const std::string& name, int64_t fallback);
std::string proto_attr_string(const ::onnx::NodeProto& node, const std::string& name, const std::string& fallback);

}  // namespace wok::onnx
