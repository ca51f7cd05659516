// Shape subgraphs folded on the host while a model is recorded (Note
// [Folding shape subgraphs], onnx/host_fold.h): the chains exporters write
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, with Slice, Cast and
// integer arithmetic) record under wok::compile, which refuses any read of
// tensor data, and give the same results as eager runs.
#include <gtest/gtest.h>

#include <vector>

#include "wok/onnx/model.h"
#include "wok/onnx/model_builder.h"
#include "wok/wok.h"

namespace {

using onnx::TensorProto;
using wok::onnx::ModelBuilder;

void scalar_int64(ModelBuilder& b, const std::string& name, int64_t v) {
  auto& n = b.node("Constant", {}, {name});
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(TensorProto::INT64);
  a->mutable_t()->add_int64_data(v);  // no dims: a scalar
}

// torch.flatten(x, 1) as exported: reshape(x, [x.shape[0], -1]).
ModelBuilder flatten_model() {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {-1, 3, 4});
  b.node("Shape", {"x"}, {"s"});
  scalar_int64(b, "zero", 0);
  b.node("Gather", {"s", "zero"}, {"n"});
  b.int64_initializer("axes0", {0});
  b.node("Unsqueeze", {"n", "axes0"}, {"n1"});
  b.int64_initializer("minus_one", {-1});
  ModelBuilder::attr(b.node("Concat", {"n1", "minus_one"}, {"target"}), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"y"});
  b.output("y", TensorProto::FLOAT, {-1, 12});
  return b;
}

TEST(OnnxHostFold, AFlattenChainRecordsUnderCompile) {
  const wok::onnx::Model m = wok::onnx::load_from_bytes(flatten_model().bytes());
  auto f = wok::compile([&](const wok::Tensor& x) { return m.run({x})[0]; });
  for (int64_t batch : {2, 5}) {
    const wok::Tensor x = wok::rand({batch, 3, 4}, 7);
    const wok::Tensor y = f(x);
    EXPECT_EQ(y.shape(), wok::Shape({batch, 12}));
    EXPECT_EQ(y.to_vector<float>(), x.to_vector<float>());
    EXPECT_EQ(m.run({x})[0].shape(), wok::Shape({batch, 12}));  // eager
  }
}

// [n, h * w / 2, 2] from Shape, Slice, Gather, Mul, Div, Cast, Equal and
// Where; the target is also a model output.
TEST(OnnxHostFold, ArithmeticOnShapesAndAShapeOutput) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {-1, -1, -1});
  b.node("Shape", {"x"}, {"s"});
  b.int64_initializer("start", {1});
  b.int64_initializer("end", {3});
  b.node("Slice", {"s", "start", "end"}, {"hw"});           // [h, w]
  scalar_int64(b, "zero", 0);
  scalar_int64(b, "one", 1);
  b.node("Gather", {"hw", "zero"}, {"h"});
  b.node("Gather", {"hw", "one"}, {"w"});
  b.node("Mul", {"h", "w"}, {"hw_prod"});
  scalar_int64(b, "two", 2);
  b.node("Div", {"hw_prod", "two"}, {"half"});
  ModelBuilder::attr(b.node("Cast", {"half"}, {"half_f"}), "to", int64_t{TensorProto::FLOAT});
  ModelBuilder::attr(b.node("Cast", {"half_f"}, {"half_i"}), "to", int64_t{TensorProto::INT64});
  b.node("Equal", {"half_i", "half"}, {"same"});
  b.node("Where", {"same", "half_i", "zero"}, {"cols"});
  b.node("Gather", {"s", "zero"}, {"n"});
  b.int64_initializer("axes0", {0});
  b.node("Unsqueeze", {"n", "axes0"}, {"n1"});
  b.node("Unsqueeze", {"cols", "axes0"}, {"c1"});
  b.int64_initializer("pair", {2});
  ModelBuilder::attr(b.node("Concat", {"n1", "c1", "pair"}, {"target"}), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"y"});
  b.output("y", TensorProto::FLOAT, {-1, -1, 2});
  b.output("target", TensorProto::INT64, {3});
  const wok::onnx::Model m = wok::onnx::load_from_bytes(b.bytes());
  auto f = wok::compile([&](const wok::Tensor& x) { return m.run({x}); });
  const wok::Tensor x = wok::rand({3, 4, 6}, 11);
  const std::vector<wok::Tensor> out = f(x);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), wok::Shape({3, 12, 2}));
  EXPECT_EQ(out[0].to_vector<float>(), x.to_vector<float>());
  EXPECT_EQ(out[1].to_vector<int64_t>(), (std::vector<int64_t>{3, 12, 2}));
}

// A value that depends on tensor data is not folded: outside compile it is
// read (evaluating what computes it), as before.
TEST(OnnxHostFold, DataDependentShapesAreStillRead) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2, 6});
  b.input("shape", TensorProto::INT64, {2});
  b.int64_initializer("one", {1});
  b.node("Add", {"shape", "one"}, {"target"});
  b.node("Reshape", {"x", "target"}, {"y"});
  b.output("y", TensorProto::FLOAT, {-1, -1});
  const wok::onnx::Model m = wok::onnx::load_from_bytes(b.bytes());
  const wok::Tensor x = wok::rand({2, 6}, 3);
  EXPECT_EQ(m.run({{"x", x}, {"shape", wok::from_vector<int64_t>({2, 3})}}).at("y").shape(), wok::Shape({3, 4}));
  auto f = wok::compile([&](const wok::Tensor& t, const wok::Tensor& s) { return m.run(std::vector<wok::Tensor>{t, s})[0]; });
  EXPECT_THROW(f(x, wok::from_vector<int64_t>({2, 3})), wok::CaptureError);
}

}  // namespace
