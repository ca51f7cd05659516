// A transformer encoder layer two ways: as an ONNX model (built with
// wok::onnx::ModelBuilder) and written by hand with wok's C++ API. Used by
// the onnx_import example, the importer's tests and bench/onnx_encoder.cpp.
//
//   a = softmax(q k^T / sqrt(dh) + causal mask) v, per head
//   h = layer_norm(x + a Wo + bo)
//   y = layer_norm(h + W2 gelu(W1 h + b1) + b2),  gelu(z) = 0.5 z (1 + erf(z / sqrt 2))
#pragma once
#include <cmath>
#include <random>
#include <string>
#include <vector>
#include "wok/onnx/model_builder.h"
#include "wok/wok.h"

namespace encoder {

struct Weights {
  int64_t seq = 0, model = 0, heads = 0, ffn = 0;
  std::vector<float> wq, wk, wv, wo, w1, w2, b1, b2, bo, g1, be1, g2, be2;
  int64_t head() const { return model / heads; }
};

inline std::vector<float> random_values(size_t n, uint32_t seed, float scale, float offset = 0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = offset + dist(gen);
  return v;
}

inline Weights random_weights(int64_t seq, int64_t model, int64_t heads, int64_t ffn, uint32_t seed = 11) {
  Weights w;
  w.seq = seq, w.model = model, w.heads = heads, w.ffn = ffn;
  const size_t dd = static_cast<size_t>(model * model), df = static_cast<size_t>(model * ffn);
  const float s = 1.0f / std::sqrt(static_cast<float>(model));
  w.wq = random_values(dd, seed + 0, s);
  w.wk = random_values(dd, seed + 1, s);
  w.wv = random_values(dd, seed + 2, s);
  w.wo = random_values(dd, seed + 3, s);
  w.w1 = random_values(df, seed + 4, s);
  w.w2 = random_values(df, seed + 5, 1.0f / std::sqrt(static_cast<float>(ffn)));
  w.b1 = random_values(ffn, seed + 6, 0.1f);
  w.b2 = random_values(model, seed + 7, 0.1f);
  w.bo = random_values(model, seed + 8, 0.1f);
  w.g1 = random_values(model, seed + 9, 0.2f, 1.0f);
  w.be1 = random_values(model, seed + 10, 0.1f);
  w.g2 = random_values(model, seed + 11, 0.2f, 1.0f);
  w.be2 = random_values(model, seed + 12, 0.1f);
  return w;
}

// The additive causal mask: -1e9 above the diagonal.
inline std::vector<float> causal_mask(int64_t seq) {
  std::vector<float> mask(static_cast<size_t>(seq * seq), 0.0f);
  for (int64_t i = 0; i < seq; ++i)
    for (int64_t j = i + 1; j < seq; ++j) mask[static_cast<size_t>(i * seq + j)] = -1e9f;
  return mask;
}

// The layer as an ONNX model with input "x" [seq, model] and output "y".
inline std::string onnx_model(const Weights& w) {
  using ::onnx::TensorProto;
  using B = wok::onnx::ModelBuilder;
  const int64_t s = w.seq, d = w.model, f = w.ffn;
  B b;
  b.input("x", TensorProto::FLOAT, {s, d});
  b.initializer("wq", w.wq, {d, d}).initializer("wk", w.wk, {d, d}).initializer("wv", w.wv, {d, d});
  b.initializer("wo", w.wo, {d, d}).initializer("w1", w.w1, {d, f}).initializer("w2", w.w2, {f, d});
  b.initializer("b1", w.b1, {f}).initializer("b2", w.b2, {d}).initializer("bo", w.bo, {d});
  b.initializer("g1", w.g1, {d}).initializer("be1", w.be1, {d});
  b.initializer("g2", w.g2, {d}).initializer("be2", w.be2, {d});
  b.initializer("mask", causal_mask(s), {s, s});
  b.initializer("scale", {1.0f / std::sqrt(static_cast<float>(w.head()))}, {});
  b.initializer("half", {0.5f}, {}).initializer("one", {1.0f}, {}).initializer("sqrt2", {std::sqrt(2.0f)}, {});
  b.int64_initializer("heads_shape", {s, w.heads, w.head()}).int64_initializer("model_shape", {s, d});
  for (const std::string p : {"q", "k", "v"}) {
    b.node("MatMul", {"x", "w" + p}, {p + "0"});
    b.node("Reshape", {p + "0", "heads_shape"}, {p + "1"});
  }
  B::attr(b.node("Transpose", {"q1"}, {"q"}), "perm", std::vector<int64_t>{1, 0, 2});
  B::attr(b.node("Transpose", {"k1"}, {"kt"}), "perm", std::vector<int64_t>{1, 2, 0});
  B::attr(b.node("Transpose", {"v1"}, {"v"}), "perm", std::vector<int64_t>{1, 0, 2});
  b.node("MatMul", {"q", "kt"}, {"s0"});
  b.node("Mul", {"s0", "scale"}, {"s1"});
  b.node("Add", {"s1", "mask"}, {"s"});
  B::attr(b.node("Softmax", {"s"}, {"p"}), "axis", int64_t{-1});
  b.node("MatMul", {"p", "v"}, {"c0"});
  B::attr(b.node("Transpose", {"c0"}, {"c1"}), "perm", std::vector<int64_t>{1, 0, 2});
  b.node("Reshape", {"c1", "model_shape"}, {"c"});
  b.node("MatMul", {"c", "wo"}, {"a0"});
  b.node("Add", {"a0", "bo"}, {"a"});
  b.node("Add", {"x", "a"}, {"r1"});
  b.node("LayerNormalization", {"r1", "g1", "be1"}, {"h"});
  b.node("MatMul", {"h", "w1"}, {"f0"});
  b.node("Add", {"f0", "b1"}, {"f1"});
  b.node("Div", {"f1", "sqrt2"}, {"f2"});
  b.node("Erf", {"f2"}, {"f3"});
  b.node("Add", {"f3", "one"}, {"f4"});
  b.node("Mul", {"f1", "f4"}, {"f5"});
  b.node("Mul", {"f5", "half"}, {"f6"});
  b.node("MatMul", {"f6", "w2"}, {"f7"});
  b.node("Add", {"f7", "b2"}, {"f"});
  b.node("Add", {"h", "f"}, {"r2"});
  b.node("LayerNormalization", {"r2", "g2", "be2"}, {"y"});
  b.output("y", TensorProto::FLOAT, {s, d});
  return b.bytes();
}

// The weights as wok tensors, made once.
struct Tensors {
  wok::Tensor wq, wk, wv, wo, w1, w2, b1, b2, bo, g1, be1, g2, be2, mask;
  explicit Tensors(const Weights& w) {
    const int64_t d = w.model, f = w.ffn;
    wq = wok::from_vector(w.wq, {d, d}), wk = wok::from_vector(w.wk, {d, d}), wv = wok::from_vector(w.wv, {d, d});
    wo = wok::from_vector(w.wo, {d, d}), w1 = wok::from_vector(w.w1, {d, f}), w2 = wok::from_vector(w.w2, {f, d});
    b1 = wok::from_vector(w.b1), b2 = wok::from_vector(w.b2), bo = wok::from_vector(w.bo);
    g1 = wok::from_vector(w.g1), be1 = wok::from_vector(w.be1), g2 = wok::from_vector(w.g2), be2 = wok::from_vector(w.be2);
    mask = wok::from_vector(causal_mask(w.seq), {w.seq, w.seq});
  }
};

// The same layer written by hand with wok's API.
inline wok::Tensor by_hand(const wok::Tensor& x, const Weights& w, const Tensors& t) {
  const int64_t s = w.seq, d = w.model;
  auto heads = [&](const wok::Tensor& m) { return wok::matmul(x, m).reshape({s, w.heads, w.head()}).permute({1, 0, 2}); };
  const wok::Tensor q = heads(t.wq), k = heads(t.wk), v = heads(t.wv);
  const float scale = 1.0f / std::sqrt(static_cast<float>(w.head()));
  const wok::Tensor p = wok::softmax(wok::matmul(q, k.transpose(1, 2)) * scale + t.mask);
  const wok::Tensor c = wok::matmul(p, v).permute({1, 0, 2}).reshape({s, d});
  const wok::Tensor h = wok::layer_norm(x + (wok::matmul(c, t.wo) + t.bo), t.g1, t.be1);
  const wok::Tensor f1 = wok::matmul(h, t.w1) + t.b1;
  const wok::Tensor g = f1 * (wok::erf(f1 / std::sqrt(2.0f)) + 1.0f) * 0.5f;
  return wok::layer_norm(h + (wok::matmul(g, t.w2) + t.b2), t.g2, t.be2);
}

}  // namespace encoder
