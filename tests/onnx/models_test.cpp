// Whole models built with the protobuf API, imported, and compared with a
// float64 computation written here: an MLP and a transformer encoder layer
// (multi-head attention with a causal mask, layer norm, erf-GELU
// feed-forward), under both CPU backends.
#include <gtest/gtest.h>
#include <cmath>
#include <random>
#include "model_builder.h"
#include "wok/onnx/model.h"
#include "wok/wok.h"

namespace {

using onnx::TensorProto;
using wok_test::ModelBuilder;

// Row-major float64 matrices for the references.
using Mat = std::vector<double>;

Mat matmul(const Mat& a, const Mat& b, int64_t m, int64_t k, int64_t n) {
  Mat c(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

void add_row(Mat& x, const Mat& bias, int64_t n) {
  for (size_t i = 0; i < x.size(); ++i) x[i] += bias[i % n];
}

std::vector<float> random_values(size_t n, uint32_t seed, float scale) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

Mat to64(const std::vector<float>& v) { return Mat(v.begin(), v.end()); }

void expect_close(const wok::Tensor& got, const Mat& want, double tol) {
  const std::vector<double> g = got.to_vector<double>();
  ASSERT_EQ(g.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(g[i] - want[i]) / (1 + std::abs(want[i])));
  EXPECT_LT(worst, tol);
}

template <typename Fn>
void for_each_backend(Fn&& fn) {
  for (wok::Backend b : {wok::Backend::kJit, wok::Backend::kPrecompiled}) {
    SCOPED_TRACE(b == wok::Backend::kJit ? "jit" : "precompiled");
    wok::set_backend(b);
    fn();
  }
  wok::set_backend(wok::Backend::kJit);
}

TEST(OnnxModels, MlpMatchesFloat64) {
  const int64_t batch = 5, in = 12, hidden = 16, out = 3;
  const auto w1 = random_values(in * hidden, 1, 0.3f), b1 = random_values(hidden, 2, 0.1f);
  const auto w2 = random_values(hidden * out, 3, 0.3f), b2 = random_values(out, 4, 0.1f);
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {-1, in});
  b.initializer("w1", w1, {in, hidden}).initializer("b1", b1, {hidden});
  b.initializer("w2", w2, {out, hidden}).initializer("b2", b2, {out});  // Gemm with transB
  b.node("MatMul", {"x", "w1"}, {"h0"});
  b.node("Add", {"h0", "b1"}, {"h1"});
  b.node("Relu", {"h1"}, {"h"});
  ModelBuilder::attr(b.node("Gemm", {"h", "w2", "b2"}, {"y"}), "transB", int64_t{1});
  b.output("y", TensorProto::FLOAT, {-1, out});
  const wok::onnx::Model m = wok::onnx::load_from_bytes(b.bytes(), "mlp.onnx");

  const auto x = random_values(batch * in, 5, 1.0f);
  Mat h = matmul(to64(x), to64(w1), batch, in, hidden);
  add_row(h, to64(b1), hidden);
  for (double& v : h) v = std::max(v, 0.0);
  Mat w2t(hidden * out);
  for (int64_t o = 0; o < out; ++o)
    for (int64_t k = 0; k < hidden; ++k) w2t[k * out + o] = w2[o * hidden + k];
  Mat y = matmul(h, w2t, batch, hidden, out);
  add_row(y, to64(b2), out);
  for_each_backend([&] {
    const auto result = m.run({{"x", wok::from_vector(x, {batch, in})}});
    expect_close(result.at("y"), y, 1e-5);
  });
}

// One pre-LN-free encoder layer, the shape of BERT's:
//   a = softmax(q k^T / sqrt(dh) + causal) v, per head; h = LN(x + a Wo + bo)
//   y = LN(h + W2 gelu(W1 h + b1) + b2), gelu(z) = 0.5 z (1 + erf(z / sqrt 2))
struct Encoder {
  static constexpr int64_t kSeq = 6, kModel = 16, kHeads = 2, kHead = kModel / kHeads, kFfn = 32;
  std::vector<float> wq = random_values(kModel * kModel, 11, 0.3f), wk = random_values(kModel * kModel, 12, 0.3f),
                     wv = random_values(kModel * kModel, 13, 0.3f), wo = random_values(kModel * kModel, 14, 0.3f),
                     w1 = random_values(kModel * kFfn, 15, 0.3f), w2 = random_values(kFfn * kModel, 16, 0.3f),
                     b1 = random_values(kFfn, 17, 0.1f), b2 = random_values(kModel, 18, 0.1f),
                     bo = random_values(kModel, 19, 0.1f), g1 = random_values(kModel, 20, 0.2f),
                     be1 = random_values(kModel, 21, 0.1f), g2 = random_values(kModel, 22, 0.2f),
                     be2 = random_values(kModel, 23, 0.1f);
  Encoder() {
    for (float& g : g1) g += 1;
    for (float& g : g2) g += 1;
  }

  std::string model() const {
    ModelBuilder b;
    b.input("x", TensorProto::FLOAT, {kSeq, kModel});
    for (auto [name, v, dims] : std::initializer_list<std::tuple<const char*, const std::vector<float>*, std::vector<int64_t>>>{
             {"wq", &wq, {kModel, kModel}}, {"wk", &wk, {kModel, kModel}}, {"wv", &wv, {kModel, kModel}},
             {"wo", &wo, {kModel, kModel}}, {"w1", &w1, {kModel, kFfn}},   {"w2", &w2, {kFfn, kModel}},
             {"b1", &b1, {kFfn}},           {"b2", &b2, {kModel}},          {"bo", &bo, {kModel}},
             {"g1", &g1, {kModel}},         {"be1", &be1, {kModel}},        {"g2", &g2, {kModel}},
             {"be2", &be2, {kModel}}})
      b.initializer(name, *v, dims);
    std::vector<float> mask(kSeq * kSeq);
    for (int64_t i = 0; i < kSeq; ++i)
      for (int64_t j = 0; j < kSeq; ++j) mask[i * kSeq + j] = j > i ? -1e9f : 0.0f;
    b.initializer("mask", mask, {kSeq, kSeq});
    b.initializer("scale", {1.0f / std::sqrt(static_cast<float>(kHead))}, {});
    b.initializer("half", {0.5f}, {}).initializer("one", {1.0f}, {}).initializer("sqrt2", {std::sqrt(2.0f)}, {});
    b.int64_initializer("heads_shape", {kSeq, kHeads, kHead}).int64_initializer("model_shape", {kSeq, kModel});
    for (const char* p : {"q", "k", "v"}) {
      b.node("MatMul", {"x", std::string("w") + p}, {std::string(p) + "0"});
      b.node("Reshape", {std::string(p) + "0", "heads_shape"}, {std::string(p) + "1"});
    }
    ModelBuilder::attr(b.node("Transpose", {"q1"}, {"q"}), "perm", std::vector<int64_t>{1, 0, 2});
    ModelBuilder::attr(b.node("Transpose", {"k1"}, {"kt"}), "perm", std::vector<int64_t>{1, 2, 0});
    ModelBuilder::attr(b.node("Transpose", {"v1"}, {"v"}), "perm", std::vector<int64_t>{1, 0, 2});
    b.node("MatMul", {"q", "kt"}, {"s0"});
    b.node("Mul", {"s0", "scale"}, {"s1"});
    b.node("Add", {"s1", "mask"}, {"s"});
    ModelBuilder::attr(b.node("Softmax", {"s"}, {"p"}), "axis", int64_t{-1});
    b.node("MatMul", {"p", "v"}, {"c0"});
    ModelBuilder::attr(b.node("Transpose", {"c0"}, {"c1"}), "perm", std::vector<int64_t>{1, 0, 2});
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
    b.output("y", TensorProto::FLOAT, {kSeq, kModel});
    return b.bytes();
  }

  static Mat layer_norm(const Mat& x, const std::vector<float>& g, const std::vector<float>& b) {
    Mat y(x.size());
    for (int64_t i = 0; i < kSeq; ++i) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < kModel; ++j) mean += x[i * kModel + j] / kModel;
      for (int64_t j = 0; j < kModel; ++j) var += (x[i * kModel + j] - mean) * (x[i * kModel + j] - mean) / kModel;
      for (int64_t j = 0; j < kModel; ++j) y[i * kModel + j] = (x[i * kModel + j] - mean) / std::sqrt(var + 1e-5) * g[j] + b[j];
    }
    return y;
  }

  Mat reference(const Mat& x) const {
    const Mat q = matmul(x, to64(wq), kSeq, kModel, kModel), k = matmul(x, to64(wk), kSeq, kModel, kModel),
              v = matmul(x, to64(wv), kSeq, kModel, kModel);
    Mat ctx(kSeq * kModel, 0.0);
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t i = 0; i < kSeq; ++i) {
        std::vector<double> s(kSeq);
        double top = -1e300, z = 0;
        for (int64_t j = 0; j < kSeq; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < kHead; ++e) dot += q[i * kModel + h * kHead + e] * k[j * kModel + h * kHead + e];
          s[j] = dot / std::sqrt(static_cast<double>(kHead)) + (j > i ? -1e9 : 0.0);
          top = std::max(top, s[j]);
        }
        for (double& e : s) z += (e = std::exp(e - top));
        for (int64_t j = 0; j < kSeq; ++j)
          for (int64_t e = 0; e < kHead; ++e) ctx[i * kModel + h * kHead + e] += s[j] / z * v[j * kModel + h * kHead + e];
      }
    Mat a = matmul(ctx, to64(wo), kSeq, kModel, kModel);
    add_row(a, to64(bo), kModel);
    for (size_t i = 0; i < a.size(); ++i) a[i] += x[i];
    const Mat h = layer_norm(a, g1, be1);
    Mat f = matmul(h, to64(w1), kSeq, kModel, kFfn);
    add_row(f, to64(b1), kFfn);
    for (double& z : f) z = 0.5 * z * (1 + std::erf(z / std::sqrt(2.0)));
    Mat f2 = matmul(f, to64(w2), kSeq, kFfn, kModel);
    add_row(f2, to64(b2), kModel);
    for (size_t i = 0; i < f2.size(); ++i) f2[i] += h[i];
    return layer_norm(f2, g2, be2);
  }
};

TEST(OnnxModels, TransformerEncoderLayerMatchesFloat64) {
  const Encoder enc;
  const wok::onnx::Model m = wok::onnx::load_from_bytes(enc.model(), "encoder.onnx");
  const auto x = random_values(Encoder::kSeq * Encoder::kModel, 31, 1.0f);
  const Mat want = enc.reference(to64(x));
  for_each_backend([&] {
    const auto result = m.run({{"x", wok::from_vector(x, {Encoder::kSeq, Encoder::kModel})}});
    expect_close(result.at("y"), want, 2e-5);
  });
}

}  // namespace
