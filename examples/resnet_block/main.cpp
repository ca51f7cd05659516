// A small ResNet on random weights: three basic blocks, then global average
// pooling and a linear layer. A basic block is
//   relu(bn(conv3x3(relu(bn(conv3x3(x))))) + shortcut(x))
// where the shortcut is x itself, or a strided 1x1 convolution with its own
// batch_norm when the block halves the resolution and widens the channels.
//
// wok records the network lazily and runs it when the output is read; under
// the JIT each batch_norm (a multiply-add per element once its statistics
// are folded), relu and residual add run in the epilogue of the convolution
// before them. The example computes the same network in float64 with plain
// loops and prints the largest difference, the number of kernels one forward
// pass launched and how long a pass takes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <wok/wok.h>

namespace {

constexpr double kEps = 1e-5;  // batch_norm's

// ---- parameters ------------------------------------------------------------------

// Random float32 values, kept on the host for the reference and as a tensor.
struct Param {
  std::vector<float> host;
  wok::Tensor tensor;
};

Param random_param(std::mt19937& rng, wok::Shape shape, double lo, double hi) {
  std::uniform_real_distribution<float> dist(static_cast<float>(lo), static_cast<float>(hi));
  Param p;
  p.host.resize(static_cast<size_t>(wok::numel(shape)));
  for (float& v : p.host) v = dist(rng);
  p.tensor = wok::from_vector(p.host, std::move(shape));
  return p;
}

// A convolution without bias followed by batch_norm, as in ResNet.
struct ConvBN {
  int64_t out = 0, in = 0, k = 0, stride = 1;
  Param weight, mean, var, gamma, beta;
};

ConvBN make_conv_bn(std::mt19937& rng, int64_t in, int64_t out, int64_t k, int64_t stride) {
  // Uniform weights with He initialisation's variance (2 / fan_in), so that
  // activations keep their size from block to block.
  const double bound = std::sqrt(6.0 / static_cast<double>(in * k * k));
  ConvBN l{out, in, k, stride};
  l.weight = random_param(rng, {out, in, k, k}, -bound, bound);
  l.mean = random_param(rng, {out}, -0.1, 0.1);
  l.var = random_param(rng, {out}, 0.5, 1.5);
  l.gamma = random_param(rng, {out}, 0.5, 1.5);
  l.beta = random_param(rng, {out}, -0.1, 0.1);
  return l;
}

struct Block {
  ConvBN conv1, conv2;
  std::optional<ConvBN> projection;  // the shortcut, when the shape changes
};

Block make_block(std::mt19937& rng, int64_t in, int64_t out, int64_t stride) {
  Block b{make_conv_bn(rng, in, out, 3, stride), make_conv_bn(rng, out, out, 3, 1), std::nullopt};
  if (stride != 1 || in != out) b.projection = make_conv_bn(rng, in, out, 1, stride);
  return b;
}

struct Net {
  std::vector<Block> blocks;
  Param fc_weight, fc_bias;  // [channels, classes], [classes]
};

// ---- the network in wok ----------------------------------------------------------------

wok::Tensor conv_bn(const wok::Tensor& x, const ConvBN& l) {
  const int64_t pad = l.k / 2;  // "same" padding for odd kernels
  wok::Tensor y = wok::conv2d(x, l.weight.tensor, {}, {l.stride, l.stride}, {pad, pad});
  return wok::batch_norm(y, l.mean.tensor, l.var.tensor, l.gamma.tensor, l.beta.tensor, kEps);
}

wok::Tensor basic_block(const wok::Tensor& x, const Block& b) {
  wok::Tensor y = wok::relu(conv_bn(x, b.conv1));
  y = conv_bn(y, b.conv2);
  wok::Tensor shortcut = b.projection ? conv_bn(x, *b.projection) : x;
  return wok::relu(y + shortcut);
}

wok::Tensor forward(const wok::Tensor& x, const Net& net) {
  wok::Tensor y = x;
  for (const Block& b : net.blocks) y = basic_block(y, b);
  wok::Tensor pooled = wok::mean(y, {2, 3});  // global average pooling: [N, C]
  return wok::matmul(pooled, net.fc_weight.tensor) + net.fc_bias.tensor;
}

// ---- the same network in float64 loops ------------------------------------------------

// An NCHW array of float64 values.
struct Array {
  int64_t n = 0, c = 0, h = 0, w = 0;
  std::vector<double> v;
  Array(int64_t n_, int64_t c_, int64_t h_, int64_t w_)
      : n(n_), c(c_), h(h_), w(w_), v(static_cast<size_t>(n_ * c_ * h_ * w_)) {}
  size_t index(int64_t i, int64_t j, int64_t y, int64_t x) const {
    return static_cast<size_t>(((i * c + j) * h + y) * w + x);
  }
  double& at(int64_t i, int64_t j, int64_t y, int64_t x) { return v[index(i, j, y, x)]; }
  double at(int64_t i, int64_t j, int64_t y, int64_t x) const { return v[index(i, j, y, x)]; }
};

Array ref_conv_bn(const Array& x, const ConvBN& l) {
  const int64_t pad = l.k / 2, s = l.stride;
  Array y(x.n, l.out, (x.h + 2 * pad - l.k) / s + 1, (x.w + 2 * pad - l.k) / s + 1);
  for (int64_t n = 0; n < y.n; ++n)
    for (int64_t o = 0; o < y.c; ++o) {
      const double scale = l.gamma.host[o] / std::sqrt(l.var.host[o] + kEps);
      for (int64_t i = 0; i < y.h; ++i)
        for (int64_t j = 0; j < y.w; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < l.in; ++c)
            for (int64_t ki = 0; ki < l.k; ++ki)
              for (int64_t kj = 0; kj < l.k; ++kj) {
                const int64_t yi = i * s + ki - pad, xj = j * s + kj - pad;
                if (yi < 0 || yi >= x.h || xj < 0 || xj >= x.w) continue;  // zero padding
                acc += x.at(n, c, yi, xj) * l.weight.host[((o * l.in + c) * l.k + ki) * l.k + kj];
              }
          y.at(n, o, i, j) = (acc - l.mean.host[o]) * scale + l.beta.host[o];
        }
    }
  return y;
}

Array ref_block(const Array& x, const Block& b) {
  Array y = ref_conv_bn(x, b.conv1);
  for (double& v : y.v) v = std::max(v, 0.0);
  y = ref_conv_bn(y, b.conv2);
  const Array shortcut = b.projection ? ref_conv_bn(x, *b.projection) : x;
  for (size_t i = 0; i < y.v.size(); ++i) y.v[i] = std::max(y.v[i] + shortcut.v[i], 0.0);
  return y;
}

// Returns [N, classes], row-major.
std::vector<double> ref_forward(Array x, const Net& net) {
  for (const Block& b : net.blocks) x = ref_block(x, b);
  const auto classes = static_cast<int64_t>(net.fc_bias.host.size());
  std::vector<double> out;
  for (int64_t n = 0; n < x.n; ++n)
    for (int64_t k = 0; k < classes; ++k) {
      double acc = net.fc_bias.host[k];
      for (int64_t c = 0; c < x.c; ++c) {
        double pooled = 0;
        for (int64_t i = 0; i < x.h; ++i)
          for (int64_t j = 0; j < x.w; ++j) pooled += x.at(n, c, i, j);
        acc += pooled / static_cast<double>(x.h * x.w) * net.fc_weight.host[c * classes + k];
      }
      out.push_back(acc);
    }
  return out;
}

}  // namespace

int main() {
  const int64_t batch = 2, channels = 16, size = 32, classes = 10;
  std::mt19937 rng(2024);
  Net net;
  net.blocks.push_back(make_block(rng, channels, channels, 1));
  net.blocks.push_back(make_block(rng, channels, 2 * channels, 2));  // 32x32 -> 16x16, projection
  net.blocks.push_back(make_block(rng, 2 * channels, 2 * channels, 1));
  net.fc_weight = random_param(rng, {2 * channels, classes}, -0.3, 0.3);
  net.fc_bias = random_param(rng, {classes}, -0.1, 0.1);
  const Param input = random_param(rng, {batch, channels, size, size}, -1, 1);

  // The first pass compiles its kernels under the JIT (or loads them from
  // the disk cache); later passes reuse them.
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  wok::reset_stats();
  wok::Tensor y = forward(input.tensor, net);
  const std::vector<float> got = y.to_vector<float>();
  const int64_t launches = wok::stats().kernel_launches;
  const double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  double best_ms = 1e300;
  for (int run = 0; run < 5; ++run) {
    t0 = Clock::now();
    wok::eval({forward(input.tensor, net)});
    best_ms = std::min(best_ms, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }

  Array x(batch, channels, size, size);
  x.v.assign(input.host.begin(), input.host.end());
  const std::vector<double> want = ref_forward(x, net);

  // Differences relative to the largest output: an output near zero has no
  // meaningful relative error of its own.
  double max_diff = 0, max_want = 0;
  for (size_t i = 0; i < std::min(want.size(), got.size()); ++i) {
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(got[i]) - want[i]));
    max_want = std::max(max_want, std::fabs(want[i]));
  }
  const double rel = max_diff / max_want;
  // A float32 sum of K products errs by at most about K * eps (eps = 2^-23)
  // relative to its terms, in whatever order the kernel adds them; errors
  // pass from one convolution to the next. So the bound is the deepest sum
  // times the convolutions in a row times eps: about 2e-4 here. Typical
  // errors are far smaller (they grow like sqrt(K), with mixed signs).
  int64_t depth = 0;
  for (const Block& b : net.blocks)
    for (const ConvBN* l : {&b.conv1, &b.conv2}) depth = std::max(depth, l->in * l->k * l->k);
  const double tolerance = static_cast<double>(depth * 2 * std::ssize(net.blocks)) * 0x1p-23;
  const bool ok = y.shape() == wok::Shape{batch, classes} && want.size() == got.size() && rel <= tolerance;

  std::printf("backend:        %s\n", std::string(wok::backend_name(wok::backend())).c_str());
  std::printf("input:          %s\n", wok::shape_str(input.tensor.shape()).c_str());
  std::printf("output:         %s\n", wok::shape_str(y.shape()).c_str());
  std::printf("max rel. error: %.3g (vs float64 loops; tolerance %.1e)\n", rel, tolerance);
  std::printf("kernel launches per forward pass: %lld\n", static_cast<long long>(launches));
  std::printf("time:           first pass %.2f ms (with compiling), then best of 5: %.2f ms\n", first_ms, best_ms);
  std::printf("%s\n", ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}
