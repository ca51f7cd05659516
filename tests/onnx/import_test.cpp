// wok::onnx's loading and validation: what is refused, and how.
#include <gtest/gtest.h>
#include <cmath>
#include <fstream>
#include "wok/onnx/model_builder.h"
#include "wok/onnx/model.h"
#include "wok/runtime/cpu_features.h"
#include "wok/wok.h"

namespace {

using onnx::TensorProto;
using wok::onnx::ModelBuilder;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const wok::Error& e) {
    return e.what();
  }
  return "";
}

TEST(OnnxImport, UnsupportedOpsAreListedTogetherWithTheirNodes) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2});
  b.node("Relu", {"x"}, {"a"});
  b.node("NonMaxSuppression", {"a", "a"}, {"b"}, "nms_first");
  b.node("NonMaxSuppression", {"b", "a"}, {"c"}, "nms_second");
  b.node("Bernoulli", {"c"}, {"y"}, "coin");
  b.output("y", TensorProto::FLOAT, {2});
  const std::string msg = error_of([&] { wok::onnx::load_from_bytes(b.bytes(), "two_bad.onnx"); });
  EXPECT_NE(msg.find("two_bad.onnx: wok cannot import this model"), std::string::npos) << msg;
  EXPECT_NE(msg.find("op Bernoulli: 'coin'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("op NonMaxSuppression: 'nms_first', 'nms_second'"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("Relu"), std::string::npos) << msg;
}

TEST(OnnxImport, DTypesWokLacksAreRefusedAtLoad) {
  ModelBuilder b;
  b.input("x", TensorProto::COMPLEX64, {2});
  b.node("Identity", {"x"}, {"y"});
  b.output("y", TensorProto::COMPLEX64, {2});
  const std::string msg = error_of([&] { wok::onnx::load_from_bytes(b.bytes(), "c64.onnx"); });
  EXPECT_NE(msg.find("dtype COMPLEX64: input 'x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("output 'y'"), std::string::npos) << msg;
}

TEST(OnnxImport, AttributeValuesWokLacksAreRefusedAtLoad) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2});
  ModelBuilder::attr(b.node("Cast", {"x"}, {"y"}, "to_complex"), "to", int64_t{TensorProto::COMPLEX128});
  b.output("y", TensorProto::COMPLEX128, {2});
  const std::string msg = error_of([&] { wok::onnx::load_from_bytes(b.bytes(), "complex.onnx"); });
  EXPECT_NE(msg.find("op Cast with casts to COMPLEX128"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'to_complex'"), std::string::npos) << msg;
}

TEST(OnnxImport, CorruptAndMissingFilesNameThemselves) {
  EXPECT_THROW(wok::onnx::load("/nonexistent/model.onnx"), wok::onnx::ModelError);
  const std::string path = testing::TempDir() + "/corrupt.onnx";
  std::ofstream(path) << "this is not a protobuf \xff\xff\xff";
  const std::string msg = error_of([&] { wok::onnx::load(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST(OnnxImport, TheCheckerRejectsAnInvalidGraph) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2});
  b.node("Relu", {"not_defined"}, {"y"});
  b.output("y", TensorProto::FLOAT, {2});
  const std::string msg = error_of([&] { wok::onnx::load_from_bytes(b.bytes(), "bad_graph.onnx"); });
  EXPECT_NE(msg.find("onnx checker"), std::string::npos) << msg;
}

ModelBuilder add_one_model() {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {-1, 3});
  b.initializer("one", {1.0f}, {});
  b.node("Add", {"x", "one"}, {"y"});
  b.output("y", TensorProto::FLOAT, {-1, 3});
  return b;
}

TEST(OnnxImport, InputsAreCheckedAgainstTheDeclaredTypes) {
  const wok::onnx::Model m = wok::onnx::load_from_bytes(add_one_model().bytes(), "add.onnx");
  ASSERT_EQ(m.inputs().size(), 1u);
  EXPECT_EQ(m.inputs()[0].shape, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(m.inputs()[0].dim_names[0], "d0");
  EXPECT_THROW(m.run({{"x", wok::zeros({2, 3}, wok::DType::kFloat64)}}), wok::DTypeError);
  const std::string shape_msg = error_of([&] { m.run({{"x", wok::zeros({2, 4})}}); });
  EXPECT_NE(shape_msg.find("input 'x' has shape [2, 4], the model declares [d0, 3]"), std::string::npos) << shape_msg;
  EXPECT_THROW(m.run(std::map<std::string, wok::Tensor>{}), wok::ArgumentError);
  const std::string name_msg = error_of([&] { m.run({{"x", wok::zeros({2, 3})}, {"z", wok::zeros({1})}}); });
  EXPECT_NE(name_msg.find("no input 'z'"), std::string::npos) << name_msg;
  // Any size along the symbolic dim.
  const auto y = m.run({{"x", wok::zeros({5, 3})}});
  EXPECT_EQ(y.at("y").shape(), wok::Shape({5, 3}));
  EXPECT_EQ(y.at("y").to_vector<float>()[14], 1.0f);
}

TEST(OnnxImport, RunRecordsLazilyAndFuses) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {64});
  b.initializer("two", {2.0f}, {});
  b.node("Mul", {"x", "two"}, {"a"});
  b.node("Sigmoid", {"a"}, {"s"});
  b.node("Mul", {"a", "s"}, {"y"});
  b.output("y", TensorProto::FLOAT, {64});
  const wok::onnx::Model m = wok::onnx::load_from_bytes(b.bytes());
  wok::set_backend(wok::Backend::kJit);
  wok::Tensor x = wok::rand({64}, 7);
  wok::eval({x});
  wok::Tensor y = m.run({{"x", x}}).at("y");
  EXPECT_FALSE(y.is_ready());
  const auto before = wok::stats();
  const std::vector<float> got = y.to_vector<float>(), in = x.to_vector<float>();
  const auto after = wok::stats();
  if (wok::host_cpu_isa() != wok::CpuIsa::kBaseline) {
    EXPECT_EQ(after.kernel_launches - before.kernel_launches, 1) << "the three nodes run as one fused kernel";
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const double a = 2.0 * in[i];
    EXPECT_NEAR(got[i], a / (1 + std::exp(-a)), 1e-6);
  }
}

TEST(OnnxImport, ANodeErrorNamesTheNode) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2, 3});
  b.input("w", TensorProto::FLOAT, {4, 5});
  b.node("MatMul", {"x", "w"}, {"y"}, "proj");
  b.output("y", TensorProto::FLOAT, {2, 5});
  const wok::onnx::Model m = wok::onnx::load_from_bytes(b.bytes());
  try {
    m.run({{"x", wok::zeros({2, 3})}, {"w", wok::zeros({4, 5})}});
    FAIL() << "expected a shape error";
  } catch (const wok::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("onnx node 'proj' (MatMul)"), std::string::npos) << e.what();
  }
}

TEST(OnnxImport, SupportedOpTypesAreListed) {
  const auto ops = wok::onnx::supported_op_types();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  EXPECT_NE(std::find(ops.begin(), ops.end(), "MatMul"), ops.end());
  EXPECT_NE(std::find(ops.begin(), ops.end(), "LayerNormalization"), ops.end());
}

}  // namespace

namespace {

TEST(OnnxImport, AnImportedModelCanBeCaptured) {
  // Reshape reads its shape (an initializer) while the model is recorded.
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2, 6});
  b.int64_initializer("shape", {3, 4});
  b.node("Reshape", {"x", "shape"}, {"r"});
  b.node("Tanh", {"r"}, {"y"});
  b.output("y", TensorProto::FLOAT, {3, 4});
  const wok::onnx::Model m = wok::onnx::load_from_bytes(b.bytes());
  auto f = wok::compile([&](const wok::Tensor& x) { return m.run({x})[0]; });
  const wok::Tensor x = wok::rand({2, 6}, 3);
  const std::vector<float> got = f(x).to_vector<float>(), in = x.to_vector<float>();
  ASSERT_EQ(got.size(), 12u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], std::tanh(in[i]), 1e-6);
  EXPECT_EQ(f(x).shape(), wok::Shape({3, 4}));
}

}  // namespace

namespace {

TEST(OnnxImport, AnInitializerThatDoublesAsAnInputCanBeReplaced) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2, 6});
  b.input("shape", TensorProto::INT64, {2});
  b.int64_initializer("shape", {3, 4});  // the default of input "shape"
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y", TensorProto::FLOAT, {-1, -1});
  const wok::onnx::Model m = wok::onnx::load_from_bytes(b.bytes());
  ASSERT_EQ(m.inputs().size(), 1u) << "an input with an initializer is optional";
  const wok::Tensor x = wok::rand({2, 6}, 3);
  EXPECT_EQ(m.run({{"x", x}}).at("y").shape(), wok::Shape({3, 4}));
  const wok::Tensor shape = wok::from_vector<int64_t>({6, 2});
  EXPECT_EQ(m.run({{"x", x}, {"shape", shape}}).at("y").shape(), wok::Shape({6, 2}));
}

}  // namespace
