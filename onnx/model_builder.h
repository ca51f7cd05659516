// wok::onnx::ModelBuilder: writes ONNX models from C++ with the protobuf
// API (a node at a time), for tests, examples and small exporters:
//
//   ModelBuilder b;
//   b.input("x", ::onnx::TensorProto::FLOAT, {-1, 4});   // -1: a symbolic dim
//   b.initializer("w", values, {4, 3});
//   b.node("MatMul", {"x", "w"}, {"y"});
//   b.output("y", ::onnx::TensorProto::FLOAT, {-1, 3});
//   wok::onnx::Model m = wok::onnx::load_from_bytes(b.bytes());
#pragma once
#include <string>
#include <vector>
#include "onnx/onnx_pb.h"

namespace wok::onnx {

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17) {
    model_.set_ir_version(8);
    model_.set_producer_name("wok tests");
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model_.mutable_graph()->set_name("g");
  }
  // dims: -1 is a symbolic dim named "d<i>".
  ModelBuilder& input(const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
    value(model_.mutable_graph()->add_input(), name, elem_type, dims);
    return *this;
  }
  ModelBuilder& output(const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
    value(model_.mutable_graph()->add_output(), name, elem_type, dims);
    return *this;
  }
  ModelBuilder& initializer(const std::string& name, const std::vector<float>& values, const std::vector<int64_t>& dims) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return *this;
  }
  ModelBuilder& int64_initializer(const std::string& name, const std::vector<int64_t>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }
  ::onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(model_.graph().node_size()) : name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  static void attr(::onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(::onnx::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(::onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  const ::onnx::ModelProto& proto() const { return model_; }
  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  static void value(::onnx::ValueInfoProto* v, const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem_type);
    auto* shape = t->mutable_shape();
    for (size_t i = 0; i < dims.size(); ++i) {
      auto* d = shape->add_dim();
      if (dims[i] >= 0) d->set_dim_value(dims[i]);
      else d->set_dim_param(std::string(1, 'd').append(std::to_string(i)));  // not "d" + ...: GCC 12's -Wrestrict false positive
    }
  }
  ::onnx::ModelProto model_;
};

}  // namespace wok::onnx
