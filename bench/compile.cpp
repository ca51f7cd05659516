// wok::compile against eager tracing, under the JIT, in one run.
//
// Measured (median iteration):
//  - chain2000: x = x * 1.0001f + 0.0001f, 1,000 times (2,000 ops), on 16
//    and on 2^20 float32 elements: eager (record, hash, look up, run) and
//    captured (one replay), in microseconds per op.
//  - program64: a 64-op elementwise program on 16 elements, one call.
//  - replay overhead: a captured one-op function on 16 elements, one call.
//  - encoder: a transformer encoder layer (4 heads of 32, d_model 128, FFN
//    512, additive causal mask, layer norms, GELU) at sequence lengths 1,
//    16, 128 and 512: eager, captured with symbolic sizes (one function
//    called at every length: 128 and 512 derive their plans from the trace
//    at 16, Note [Sizes of a capture] in frontend/compile.h), and captured
//    with {.static_shapes = true} (a trace per length).
// Targets (issue "Capture once, replay for free"): captured chain2000 on 16
// elements at most 0.005 us/op; a captured program64 call at most 2 us;
// eager chain2000 at most 0.3 us/op; a shape-polymorphic replay at most
// 1.05x a shape-specialised one on the encoder layer.
//
// Timing: Note [Timing on a shared machine] in bench_util.h.
// Run: bench_compile [--benchmark_filter=REGEX]
#include <functional>

#include "bench_util.h"

namespace {

using wok::Tensor;

constexpr int kChainSteps = 1000;  // 2 ops each
constexpr int kChainOps = 2 * kChainSteps;

Tensor chain(Tensor x) {
  for (int i = 0; i < kChainSteps; ++i) x = x * 1.0001f + 0.0001f;
  return x;
}

// 64 ops: 16 rounds of mul, add, tanh-or-exp-free arithmetic and max.
Tensor program64(const Tensor& x, const Tensor& y) {
  Tensor t = x;
  for (int i = 0; i < 16; ++i) {
    t = t * y;
    t = t + 0.5f;
    t = wok::maximum(t, x);
    t = i % 4 == 0 ? wok::tanh(t) : t - 0.25f;
  }
  return t;
}

struct Encoder {
  int64_t d = 128, heads = 4, ffn = 512;
  Tensor wq, wk, wv, wo, w1, b1, w2, b2, g1, be1, g2, be2;

  Encoder() {
    uint64_t seed = 1;
    auto w = [&](int64_t r, int64_t c) { return wok::rand({r, c}, seed++) * 0.05f - 0.025f; };
    wq = w(d, d), wk = w(d, d), wv = w(d, d), wo = w(d, d);
    w1 = w(d, ffn), w2 = w(ffn, d);
    b1 = wok::rand({ffn}, seed++) * 0.01f, b2 = wok::rand({d}, seed++) * 0.01f;
    g1 = wok::full({d}, 1.0f), be1 = wok::full({d}, 0.0f), g2 = wok::full({d}, 1.0f), be2 = wok::full({d}, 0.0f);
    wok::eval({wq, wk, wv, wo, w1, b1, w2, b2, g1, be1, g2, be2});
  }

  // x: [seq, d]; mask: [seq, seq], 0 on and below the diagonal, -1e9 above.
  Tensor operator()(const Tensor& x, const Tensor& mask) const {
    const int64_t seq = x.size(0), hd = d / heads;
    auto split = [&](const Tensor& t) { return wok::permute(wok::reshape(t, {seq, heads, hd}), {1, 0, 2}); };
    Tensor q = split(wok::matmul(x, wq)), k = split(wok::matmul(x, wk)), v = split(wok::matmul(x, wv));
    Tensor scores = wok::matmul(q, wok::permute(k, {0, 2, 1})) * (1.0f / std::sqrt(static_cast<float>(hd))) + mask;
    Tensor attn = wok::matmul(wok::softmax(scores, -1), v);  // [heads, seq, hd]
    Tensor merged = wok::reshape(wok::permute(attn, {1, 0, 2}), {seq, d});
    Tensor h = wok::layer_norm(x + wok::matmul(merged, wo), g1, be1);
    Tensor f = wok::matmul(wok::gelu(wok::matmul(h, w1) + b1), w2) + b2;
    return wok::layer_norm(h + f, g2, be2);
  }
};

Tensor causal_mask(int64_t seq) {
  std::vector<float> m(static_cast<size_t>(seq * seq));
  for (int64_t i = 0; i < seq; ++i)
    for (int64_t j = 0; j < seq; ++j) m[i * seq + j] = j > i ? -1e9f : 0.0f;
  return wok::from_vector(m, {seq, seq});
}

}  // namespace

int main(int argc, char** argv) {
  wok_bench::init(&argc, &argv,
                  {"--benchmark_min_time=0.2", "--benchmark_repetitions=2", "--benchmark_enable_random_interleaving=true"});
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  wok::set_backend(wok::Backend::kJit);

  static const Tensor small = wok::rand({16}, 1), big = wok::rand({int64_t{1} << 20}, 2);
  static const Tensor y16 = wok::rand({16}, 3);
  wok::eval({small, big, y16});
  static auto chain_c = wok::compile([](const Tensor& x) { return chain(x); });
  static auto p64_c = wok::compile([](const Tensor& x, const Tensor& y) { return program64(x, y); });
  static auto one_c = wok::compile([](const Tensor& x) { return x + 1.0f; });
  for (const auto& [label, input] : {std::pair{"16", &small}, std::pair{"2^20", &big}}) {
    const Tensor* in = input;
    wok_bench::register_warm_timed(std::string("chain2000/") + label + "/eager", [in] { wok::eval({chain(*in)}); },
                   benchmark::kMicrosecond);
    wok_bench::register_warm_timed(std::string("chain2000/") + label + "/captured", [in] { benchmark::DoNotOptimize(chain_c(*in)); },
                   benchmark::kMicrosecond);
  }
  wok_bench::register_warm_timed("program64/eager", [] { wok::eval({program64(small, y16)}); }, benchmark::kMicrosecond);
  wok_bench::register_warm_timed("program64/captured", [] { benchmark::DoNotOptimize(p64_c(small, y16)); }, benchmark::kMicrosecond);
  wok_bench::register_warm_timed("replay1/captured", [] { benchmark::DoNotOptimize(one_c(small)); }, benchmark::kMicrosecond);

  static const Encoder enc;
  static auto enc_c = wok::compile([](const Tensor& x, const Tensor& mask) { return enc(x, mask); });
  static auto enc_s =
      wok::compile([](const Tensor& x, const Tensor& mask) { return enc(x, mask); }, {.static_shapes = true});
  static std::map<int64_t, std::pair<Tensor, Tensor>> enc_in;
  const int64_t seqs[] = {1, 16, 128, 512};
  // The polymorphic function meets its lengths in this order before the
  // timing: 16 traces, 24 traces once more to verify the length, and 128
  // and 512 derive (1 is a family of its own: a broadcast dim).
  for (int64_t seq : {int64_t{16}, int64_t{24}, int64_t{128}, int64_t{512}, int64_t{1}}) {
    Tensor x = wok::rand({seq, enc.d}, 10 + static_cast<uint64_t>(seq)), m = causal_mask(seq);
    wok::eval({x});
    enc_in[seq] = {x, m};
    enc_c(x, m);
  }
  const wok::CompileStats enc_stats = enc_c.stats();
  for (int64_t seq : seqs) {
    const auto* io = &enc_in[seq];
    const std::string name = "encoder/" + std::to_string(seq);
    wok_bench::register_warm_timed(name + "/eager", [io] { wok::eval({enc(io->first, io->second)}); }, benchmark::kMicrosecond);
    wok_bench::register_warm_timed(name + "/captured", [io] { benchmark::DoNotOptimize(enc_c(io->first, io->second)); },
                   benchmark::kMicrosecond);
    wok_bench::register_warm_timed(name + "/static", [io] { benchmark::DoNotOptimize(enc_s(io->first, io->second)); },
                   benchmark::kMicrosecond);
  }

  wok_bench::run_and_print([&] {
    using wok_bench::fmt;
    using wok_bench::median_seconds;
    const double us = 1e6;
    std::printf("\n### wok::compile vs eager, JIT, %d threads (median iteration)\n\n", wok::num_threads());
    std::printf("| measurement | eager | captured | eager / captured |\n|---|---:|---:|---:|\n");
    for (const char* label : {"16", "2^20"}) {
      double e = median_seconds(std::string("chain2000/") + label + "/eager");
      double c = median_seconds(std::string("chain2000/") + label + "/captured");
      std::printf("| chain of 2,000 ops on %s elements, us per op | %s | %s | %s |\n", label,
                  fmt(e * us / kChainOps, 4).c_str(), fmt(c * us / kChainOps, 4).c_str(), fmt(e / c, 1).c_str());
    }
    double e64 = median_seconds("program64/eager"), c64 = median_seconds("program64/captured");
    std::printf("| 64-op program on 16 elements, us per call | %s | %s | %s |\n", fmt(e64 * us, 2).c_str(),
                fmt(c64 * us, 2).c_str(), fmt(e64 / c64, 1).c_str());
    std::printf("| one-op function on 16 elements, us per call | - | %s | - |\n",
                fmt(median_seconds("replay1/captured") * us, 2).c_str());
    for (int64_t seq : seqs) {
      double e = median_seconds("encoder/" + std::to_string(seq) + "/eager");
      double c = median_seconds("encoder/" + std::to_string(seq) + "/captured");
      std::printf("| encoder layer, sequence %lld, us per call | %s | %s | %s |\n", static_cast<long long>(seq),
                  fmt(e * us, 1).c_str(), fmt(c * us, 1).c_str(), fmt(e / c, 2).c_str());
    }
    std::printf("\n### Encoder layer: symbolic sizes vs {.static_shapes = true} (%lld traces, %lld derived plans)\n\n",
                static_cast<long long>(enc_stats.traces), static_cast<long long>(enc_stats.derived));
    std::printf("| sequence | symbolic, us per call | static, us per call | symbolic / static |\n|---|---:|---:|---:|\n");
    for (int64_t seq : seqs) {
      double c = median_seconds("encoder/" + std::to_string(seq) + "/captured");
      double st = median_seconds("encoder/" + std::to_string(seq) + "/static");
      std::printf("| %lld | %s | %s | %s |\n", static_cast<long long>(seq), fmt(c * us, 1).c_str(),
                  fmt(st * us, 1).c_str(), fmt(c / st, 3).c_str());
    }
  });
  return 0;
}
