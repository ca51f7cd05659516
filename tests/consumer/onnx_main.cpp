// Uses wok::onnx from the installed package: builds a two-node model,
// imports it and checks its output.
#include <cstdio>
#include <wok/onnx/model.h>
#include <wok/onnx/model_builder.h>
#include <wok/wok.h>

int main() {
  wok::onnx::ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {3});
  b.initializer("two", {2.0f}, {});
  b.node("Mul", {"x", "two"}, {"h"});
  b.node("Relu", {"h"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {3});
  const wok::onnx::Model m = wok::onnx::load_from_bytes(b.bytes(), "consumer.onnx");
  const std::vector<float> y = m.run({{"x", wok::from_vector<float>({-1.0f, 0.5f, 2.0f})}}).at("y").to_vector<float>();
  std::printf("consumer_onnx: y = [%g, %g, %g]\n", y[0], y[1], y[2]);
  return y[0] == 0.0f && y[1] == 1.0f && y[2] == 4.0f ? 0 : 1;
}
