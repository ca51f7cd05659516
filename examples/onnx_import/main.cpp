// Imports a transformer encoder layer from ONNX and runs it through wok,
// beside the same layer written by hand with wok's C++ API.
//
//   onnx_import [out_dir]   writes encoder.onnx there (default: .), for
//                           wok-run out_dir/encoder.onnx --bench 100
#include <chrono>
#include <cstdio>
#include <fstream>
#include "encoder.h"
#include "wok/onnx/model.h"

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  const encoder::Weights w = encoder::random_weights(/*seq=*/64, /*model=*/128, /*heads=*/4, /*ffn=*/512);
  const std::string path = dir + "/encoder.onnx";
  std::ofstream(path, std::ios::binary) << encoder::onnx_model(w);

  wok::onnx::Model model = wok::onnx::load(path);
  std::printf("%s: %zu nodes, opset %lld, input %s\n", path.c_str(), model.node_count(),
              static_cast<long long>(model.opset()), model.inputs()[0].name.c_str());

  const wok::Tensor x = wok::randn({w.seq, w.model}, 7);
  const encoder::Tensors t(w);
  const wok::Tensor imported = model.run({{"x", x}}).at("y");  // recorded lazily, like hand-written code
  const wok::Tensor by_hand = encoder::by_hand(x, w, t);
  const float diff = wok::max(wok::abs(imported - by_hand)).item<float>();
  std::printf("output %s, max |imported - by hand| = %.3g\n", wok::shape_str(imported.shape()).c_str(), diff);

  auto time_ms = [](auto&& fn) {
    for (int i = 0; i < 3; ++i) fn();  // compile and warm up
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) fn();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / 20;
  };
  const double t_imported = time_ms([&] { wok::eval({model.run({{"x", x}}).at("y")}); });
  const double t_hand = time_ms([&] { wok::eval({encoder::by_hand(x, w, t)}); });
  std::printf("per call: imported %.3f ms, by hand %.3f ms\n", t_imported, t_hand);
  return diff < 1e-4f ? 0 : 1;
}
