// A transformer encoder layer imported from ONNX against the same layer
// written by hand with wok's C++ API (examples/onnx_import/encoder.h: 4
// heads, d_model 128, FFN 512, additive causal mask, layer norms, erf
// GELU), under the JIT, in one run.
//
// Measured: each side's median call (record + run), at sequence lengths 16,
// 64 and 256, and their paired ratio (Note [Timing on a shared machine] in
// bench_util.h). Target (issue "Run the models users already have"): the
// imported layer at most 1.1x the hand-written one.
//
// Run: bench_onnx_encoder [--benchmark_filter=REGEX]
#include <map>

#include "../examples/onnx_import/encoder.h"
#include "bench_util.h"
#include "wok/onnx/model.h"

namespace {

struct Layer {
  encoder::Weights w;
  encoder::Tensors t;
  wok::onnx::Model model;
  wok::Tensor x;
  explicit Layer(int64_t seq)
      : w(encoder::random_weights(seq, 128, 4, 512)),
        t(w),
        model(wok::onnx::load_from_bytes(encoder::onnx_model(w), "encoder.onnx")),
        x(wok::randn({seq, 128}, 3)) {
    wok::eval({x});
  }
  void imported() const { wok::eval({model.run({{"x", x}}).at("y")}); }
  void by_hand() const { wok::eval({encoder::by_hand(x, w, t)}); }
};

}  // namespace

int main(int argc, char** argv) {
  wok_bench::init(&argc, &argv,
                  {"--benchmark_min_time=0.2", "--benchmark_repetitions=2", "--benchmark_enable_random_interleaving=true"});
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  wok::set_backend(wok::Backend::kJit);
  const std::vector<int64_t> seqs = {16, 64, 256};
  std::map<int64_t, std::unique_ptr<Layer>> layers;
  for (int64_t seq : seqs) {
    layers[seq] = std::make_unique<Layer>(seq);
    const Layer* l = layers[seq].get();
    wok_bench::register_warm_timed("encoder/" + std::to_string(seq) + "/imported", [l] { l->imported(); },
                                    benchmark::kMicrosecond);
    wok_bench::register_warm_timed("encoder/" + std::to_string(seq) + "/by_hand", [l] { l->by_hand(); },
                                    benchmark::kMicrosecond);
  }
  wok_bench::run_and_print([&] {
    using wok_bench::fmt;
    std::printf("\n### ONNX-imported encoder layer vs the same layer by hand, JIT, %d threads\n\n", wok::num_threads());
    std::printf("| sequence | imported, us | by hand, us | imported / by hand (paired) |\n|---|---:|---:|---:|\n");
    for (int64_t seq : seqs) {
      const Layer* l = layers[seq].get();
      const std::string base = "encoder/" + std::to_string(seq);
      const double ratio = wok_bench::paired_ratio([l] { l->imported(); }, [l] { l->by_hand(); }, 60);
      std::printf("| %lld | %s | %s | %s |\n", static_cast<long long>(seq),
                  fmt(wok_bench::median_seconds(base + "/imported") * 1e6, 1).c_str(),
                  fmt(wok_bench::median_seconds(base + "/by_hand") * 1e6, 1).c_str(), fmt(ratio, 3).c_str());
    }
  });
  return 0;
}
