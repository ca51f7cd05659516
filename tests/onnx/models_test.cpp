// Whole models built with the protobuf API, imported, and compared with a
// float64 computation written here: an MLP and a transformer encoder layer
// (multi-head attention with a causal mask, layer norm, erf-GELU
// feed-forward), under both CPU backends.
#include <gtest/gtest.h>
#include <cmath>
#include <random>
#include "../../examples/onnx_import/encoder.h"
#include "wok/onnx/model_builder.h"
#include "wok/onnx/model.h"
#include "wok/wok.h"

namespace {

using onnx::TensorProto;
using wok::onnx::ModelBuilder;

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

using encoder::random_values;

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

// A small CNN: Conv 3x3 (pad 1) + Relu, MaxPool 2x2, Conv 3x3 stride 2 with
// uneven SAME_UPPER padding + Relu, GlobalAveragePool, Flatten, Gemm.
TEST(OnnxModels, SmallCnnMatchesFloat64) {
  const int64_t n = 2, c0 = 3, hw = 8, c1 = 4, c2 = 6, classes = 5;
  const auto w1 = random_values(c1 * c0 * 9, 41, 0.3f), b1 = random_values(c1, 42, 0.1f);
  const auto w2 = random_values(c2 * c1 * 9, 43, 0.3f), b2 = random_values(c2, 44, 0.1f);
  const auto wf = random_values(c2 * classes, 45, 0.3f), bf = random_values(classes, 46, 0.1f);
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {-1, c0, hw, hw});
  b.initializer("w1", w1, {c1, c0, 3, 3}).initializer("b1", b1, {c1});
  b.initializer("w2", w2, {c2, c1, 3, 3}).initializer("b2", b2, {c2});
  b.initializer("wf", wf, {c2, classes}).initializer("bf", bf, {classes});
  ModelBuilder::attr(b.node("Conv", {"x", "w1", "b1"}, {"c1"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"});
  auto& pool = b.node("MaxPool", {"r1"}, {"p1"});
  ModelBuilder::attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  ModelBuilder::attr(pool, "strides", std::vector<int64_t>{2, 2});
  auto& conv2 = b.node("Conv", {"p1", "w2", "b2"}, {"c2"});
  ModelBuilder::attr(conv2, "strides", std::vector<int64_t>{2, 2});
  auto* same = conv2.add_attribute();
  same->set_name("auto_pad");
  same->set_type(onnx::AttributeProto::STRING);
  same->set_s("SAME_UPPER");
  b.node("Relu", {"c2"}, {"r2"});
  b.node("GlobalAveragePool", {"r2"}, {"g"});
  b.node("Flatten", {"g"}, {"f"});
  b.node("Gemm", {"f", "wf", "bf"}, {"y"});
  b.output("y", TensorProto::FLOAT, {-1, classes});
  const wok::onnx::Model m = wok::onnx::load_from_bytes(b.bytes(), "cnn.onnx");

  const auto x = random_values(n * c0 * hw * hw, 47, 1.0f);
  // float64 reference; conv with per-side padding [top, left, bottom, right].
  auto conv = [](const Mat& in, int64_t batch, int64_t cin, int64_t h, int64_t w, const std::vector<float>& k,
                 const std::vector<float>& bias, int64_t cout, int64_t stride, int64_t top, int64_t left, int64_t oh,
                 int64_t ow) {
    Mat out(batch * cout * oh * ow);
    for (int64_t b0 = 0; b0 < batch; ++b0)
      for (int64_t o = 0; o < cout; ++o)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            double acc = bias[o];
            for (int64_t ci = 0; ci < cin; ++ci)
              for (int64_t ki = 0; ki < 3; ++ki)
                for (int64_t kj = 0; kj < 3; ++kj) {
                  const int64_t y = i * stride + ki - top, xx = j * stride + kj - left;
                  if (y < 0 || y >= h || xx < 0 || xx >= w) continue;
                  acc += in[((b0 * cin + ci) * h + y) * w + xx] * k[((o * cin + ci) * 3 + ki) * 3 + kj];
                }
            out[((b0 * cout + o) * oh + i) * ow + j] = std::max(acc, 0.0);
          }
    return out;
  };
  const Mat r1 = conv(to64(x), n, c0, hw, hw, w1, b1, c1, 1, 1, 1, hw, hw);
  const int64_t ph = hw / 2;
  Mat p1(n * c1 * ph * ph);
  for (int64_t b0 = 0; b0 < n * c1; ++b0)
    for (int64_t i = 0; i < ph; ++i)
      for (int64_t j = 0; j < ph; ++j) {
        double best = -1e300;
        for (int64_t a = 0; a < 2; ++a)
          for (int64_t d = 0; d < 2; ++d) best = std::max(best, r1[(b0 * hw + 2 * i + a) * hw + 2 * j + d]);
        p1[(b0 * ph + i) * ph + j] = best;
      }
  // SAME_UPPER on 4 with stride 2, kernel 3: output 2, total padding 1, all at the end.
  const Mat r2 = conv(p1, n, c1, ph, ph, w2, b2, c2, 2, 0, 0, 2, 2);
  Mat g(n * c2);
  for (int64_t i = 0; i < n * c2; ++i) g[i] = (r2[i * 4] + r2[i * 4 + 1] + r2[i * 4 + 2] + r2[i * 4 + 3]) / 4;
  Mat y = matmul(g, to64(wf), n, c2, classes);
  add_row(y, to64(bf), classes);
  for_each_backend([&] {
    const auto result = m.run({{"x", wok::from_vector(x, {n, c0, hw, hw})}});
    expect_close(result.at("y"), y, 1e-5);
  });
}

// The float64 reference of examples/onnx_import/encoder.h's layer.
Mat layer_norm_ref(const Mat& x, const std::vector<float>& g, const std::vector<float>& b, int64_t rows, int64_t n) {
  Mat y(x.size());
  for (int64_t i = 0; i < rows; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mean += x[i * n + j] / n;
    for (int64_t j = 0; j < n; ++j) var += (x[i * n + j] - mean) * (x[i * n + j] - mean) / n;
    for (int64_t j = 0; j < n; ++j) y[i * n + j] = (x[i * n + j] - mean) / std::sqrt(var + 1e-5) * g[j] + b[j];
  }
  return y;
}

Mat encoder_reference(const Mat& x, const encoder::Weights& w) {
  const int64_t s = w.seq, d = w.model, dh = w.head(), f = w.ffn;
  const Mat q = matmul(x, to64(w.wq), s, d, d), k = matmul(x, to64(w.wk), s, d, d), v = matmul(x, to64(w.wv), s, d, d);
  Mat ctx(s * d, 0.0);
  for (int64_t h = 0; h < w.heads; ++h)
    for (int64_t i = 0; i < s; ++i) {
      std::vector<double> e(s);
      double top = -1e300, z = 0;
      for (int64_t j = 0; j < s; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < dh; ++c) dot += q[i * d + h * dh + c] * k[j * d + h * dh + c];
        e[j] = dot / std::sqrt(static_cast<double>(dh)) + (j > i ? -1e9 : 0.0);
        top = std::max(top, e[j]);
      }
      for (double& p : e) z += (p = std::exp(p - top));
      for (int64_t j = 0; j < s; ++j)
        for (int64_t c = 0; c < dh; ++c) ctx[i * d + h * dh + c] += e[j] / z * v[j * d + h * dh + c];
    }
  Mat a = matmul(ctx, to64(w.wo), s, d, d);
  add_row(a, to64(w.bo), d);
  for (size_t i = 0; i < a.size(); ++i) a[i] += x[i];
  const Mat h = layer_norm_ref(a, w.g1, w.be1, s, d);
  Mat f1 = matmul(h, to64(w.w1), s, d, f);
  add_row(f1, to64(w.b1), f);
  for (double& z : f1) z = 0.5 * z * (1 + std::erf(z / std::sqrt(2.0)));
  Mat f2 = matmul(f1, to64(w.w2), s, f, d);
  add_row(f2, to64(w.b2), d);
  for (size_t i = 0; i < f2.size(); ++i) f2[i] += h[i];
  return layer_norm_ref(f2, w.g2, w.be2, s, d);
}

TEST(OnnxModels, TransformerEncoderLayerMatchesFloat64AndTheHandWrittenLayer) {
  const encoder::Weights w = encoder::random_weights(6, 16, 2, 32);
  const encoder::Tensors t(w);
  const wok::onnx::Model m = wok::onnx::load_from_bytes(encoder::onnx_model(w), "encoder.onnx");
  const auto x = random_values(static_cast<size_t>(w.seq * w.model), 31, 1.0f);
  const Mat want = encoder_reference(to64(x), w);
  for_each_backend([&] {
    const wok::Tensor xt = wok::from_vector(x, {w.seq, w.model});
    const wok::Tensor y = m.run({{"x", xt}}).at("y");
    expect_close(y, want, 2e-5);
    expect_close(encoder::by_hand(xt, w, t), y.to_vector<double>(), 1e-6);
  });
}

}  // namespace
