// What an op converter sees of one ONNX node: its inputs as wok tensors,
// its attributes, and the model's opset, with errors that name the node.
#pragma once
#include <string>
#include <vector>
#include "onnx/onnx_pb.h"
#include "wok/frontend/tensor.h"

namespace wok::onnx {

// The values of a small constant (an initializer or a Constant node's
// output), read once at load, so that a shape, axes or pads input is known
// without reading tensor data while the model is recorded (which a
// wok::compile capture refuses).
struct HostValues {
  std::vector<int64_t> ints;  // empty for floating tensors
  std::vector<double> doubles;
};

class NodeContext {
 public:
  NodeContext(const ::onnx::NodeProto& node, std::vector<Tensor> inputs, std::vector<const HostValues*> known,
              int64_t opset, const std::string& base_dir)
      : node_(node), inputs_(std::move(inputs)), known_(std::move(known)), opset_(opset), base_dir_(base_dir) {}

  const ::onnx::NodeProto& node() const { return node_; }
  int64_t opset() const { return opset_; }
  // "node 'name' (OpType)", or the output's name when the node has none.
  std::string describe() const;
  [[noreturn]] void fail(const std::string& why) const;

  // Inputs: an optional input may be absent (past the end or named "").
  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i].defined(); }
  const Tensor& input(size_t i) const;
  const std::vector<Tensor>& inputs() const { return inputs_; }
  // An input whose values the conversion needs (a shape, axes, pads): known
  // at load for a constant, else read now, which evaluates what computes it.
  std::vector<int64_t> int_values(size_t i) const;
  std::vector<double> double_values(size_t i) const;
  // Input i's values when known without reading the tensor (a constant, or
  // folded shape arithmetic: onnx/host_fold.h), else null.
  const HostValues* known(size_t i) const { return i < known_.size() && has_input(i) ? known_[i] : nullptr; }
  // The number of outputs the node names (trailing optional ones included).
  int num_outputs() const { return node_.output_size(); }
  bool wants_output(int i) const { return i < node_.output_size() && !node_.output(i).empty(); }

  // Attributes, with the operator's documented defaults.
  bool has_attr(const std::string& name) const { return find_attr(name) != nullptr; }
  int64_t attr_int(const std::string& name, int64_t fallback) const;
  double attr_float(const std::string& name, double fallback) const;
  std::string attr_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> attr_floats(const std::string& name, std::vector<float> fallback = {}) const;
  Tensor attr_tensor(const std::string& name) const;  // fails when absent

  const ::onnx::AttributeProto* find_attr(const std::string& name) const;

 private:
  const ::onnx::AttributeProto& typed_attr(const std::string& name, ::onnx::AttributeProto::AttributeType type) const;
  const ::onnx::NodeProto& node_;
  std::vector<Tensor> inputs_;
  std::vector<const HostValues*> known_;
  int64_t opset_;
  const std::string& base_dir_;
};

// How messages name a node: its name, else its first named output.
std::string node_label(const ::onnx::NodeProto& node);
// "node 'label' (OpType)", without a NodeContext.
std::string describe_node(const ::onnx::NodeProto& node);

}  // namespace wok::onnx
