// Float64 references for the convolution tests (conv_ops_test.cpp,
// conv_fusion_test.cpp): direct loops for conv2d, conv1d and
// conv_transpose2d written from ONNX's definitions, and the elementwise
// steps that follow a convolution in a network (bias, batch norm as
// x * scale + shift, residual add, relu, relu6, silu, gelu). The reference
// arrays, a + b, the comparison of a tensor with a reference and the bound
// of a convolution output (dot_bound: a sum of K = C / groups * KH * KW
// products, taps in the padding reading zeros) are bounded_reference.h's,
// shared with jit_gemm_test.cpp. The elementwise steps carry that error
// through and add their own rounding.
#pragma once

#include <gtest/gtest.h>
#include <wok/wok.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bounded_reference.h"
#include "test_util.h"
#include "wok/frontend/conv.h"

namespace wct {

using wok::DType;
using wok::Shape;
using wok::Tensor;

using namespace wref;

// ---- reference arrays ---------------------------------------------------------

inline Ref ref_reshape(Ref r, Shape shape) {
  r.shape = std::move(shape);
  return r;
}

// ---- convolution geometry --------------------------------------------------------

// One convolution's operands and attributes. `pad` is {top, left, bottom,
// right}; `four_pads` passes it as four values even when it is symmetric
// (otherwise a symmetric padding is passed as {top, left}).
struct ConvCase {
  int64_t n = 1, c = 1, h = 1, w = 1, o = 1, kh = 1, kw = 1;
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 4> pad{0, 0, 0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
  std::array<int64_t, 2> output_padding{0, 0};  // conv_transpose2d only
  bool four_pads = false;

  int64_t cg() const { return c / groups; }
  int64_t og() const { return o / groups; }
  int64_t k() const { return cg() * kh * kw; }
  // conv2d's output size.
  int64_t oh() const { return (h + pad[0] + pad[2] - dilation[0] * (kh - 1) - 1) / stride[0] + 1; }
  int64_t ow() const { return (w + pad[1] + pad[3] - dilation[1] * (kw - 1) - 1) / stride[1] + 1; }
  // conv_transpose2d's.
  int64_t toh() const { return (h - 1) * stride[0] - pad[0] - pad[2] + dilation[0] * (kh - 1) + output_padding[0] + 1; }
  int64_t tow() const { return (w - 1) * stride[1] - pad[1] - pad[3] + dilation[1] * (kw - 1) + output_padding[1] + 1; }

  Shape x_shape() const { return {n, c, h, w}; }
  Shape w_shape() const { return {o, cg(), kh, kw}; }            // conv2d
  Shape wt_shape() const { return {c, og(), kh, kw}; }           // conv_transpose2d
  std::vector<int64_t> stride_arg() const { return {stride[0], stride[1]}; }
  std::vector<int64_t> dilation_arg() const { return {dilation[0], dilation[1]}; }
  std::vector<int64_t> output_padding_arg() const { return {output_padding[0], output_padding[1]}; }
  std::vector<int64_t> padding_arg() const {
    if (!four_pads && pad[0] == pad[2] && pad[1] == pad[3]) return {pad[0], pad[1]};
    return {pad[0], pad[1], pad[2], pad[3]};
  }

  std::string str() const {
    std::ostringstream s;
    s << "x[" << n << "," << c << "," << h << "," << w << "] O=" << o << " k=" << kh << "x" << kw << " stride={"
      << stride[0] << "," << stride[1] << "} pad(t,l,b,r)={" << pad[0] << "," << pad[1] << "," << pad[2] << ","
      << pad[3] << "}" << (four_pads ? "(4 values)" : "") << " dilation={" << dilation[0] << "," << dilation[1]
      << "} groups=" << groups;
    if (output_padding[0] || output_padding[1])
      s << " output_padding={" << output_padding[0] << "," << output_padding[1] << "}";
    return s.str();
  }
};

// ---- convolution references ---------------------------------------------------------

// ONNX Conv: y[n, o, i, j] = sum over the group's input channels ci and the
// taps (p, q) of x[n, g Cg + ci, i sh - pt + p dh, j sw - pl + q dw] *
// w[o, ci, p, q], g = o / Og, out-of-range taps reading 0.
inline Ref ref_conv2d(const Ref& x, const Ref& w, const ConvCase& p) {
  const int64_t OH = p.oh(), OW = p.ow(), Cg = p.cg(), Og = p.og();
  Ref y{{p.n, p.o, OH, OW}, promoted(x.dtype, w.dtype), {}, {}};
  y.v.assign(static_cast<size_t>(p.n * p.o * OH * OW), 0.0);
  y.err.assign(y.v.size(), 0.0);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t o = 0; o < p.o; ++o) {
      const int64_t g = o / Og;
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double acc = 0, mag = 0;
          for (int64_t ci = 0; ci < Cg; ++ci)
            for (int64_t a = 0; a < p.kh; ++a) {
              const int64_t ih = i * p.stride[0] - p.pad[0] + a * p.dilation[0];
              if (ih < 0 || ih >= p.h) continue;
              for (int64_t b = 0; b < p.kw; ++b) {
                const int64_t iw = j * p.stride[1] - p.pad[1] + b * p.dilation[1];
                if (iw < 0 || iw >= p.w) continue;
                const double xv = x.v[static_cast<size_t>(((n * p.c + g * Cg + ci) * p.h + ih) * p.w + iw)];
                const double wv = w.v[static_cast<size_t>(((o * Cg + ci) * p.kh + a) * p.kw + b)];
                acc += xv * wv;
                mag += std::fabs(xv * wv);
              }
            }
          const size_t at = static_cast<size_t>(((n * p.o + o) * OH + i) * OW + j);
          y.v[at] = acc;
          y.err[at] = dot_bound(y.dtype, p.k(), mag);
        }
    }
  return y;
}

// ONNX ConvTranspose (the adjoint of Conv): every input x[n, c, i, j]
// adds x * w[c, oc, p, q] to y[n, g Og + oc, i sh - pt + p dh, j sw - pl + q dw]
// for c in group g, when that lands inside the output.
inline Ref ref_conv_transpose2d(const Ref& x, const Ref& w, const ConvCase& p) {
  const int64_t OH = p.toh(), OW = p.tow(), Cg = p.cg(), Og = p.og();
  Ref y{{p.n, p.o, OH, OW}, promoted(x.dtype, w.dtype), {}, {}};
  y.v.assign(static_cast<size_t>(p.n * p.o * OH * OW), 0.0);
  std::vector<double> mag(y.v.size(), 0.0);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t c = 0; c < p.c; ++c) {
      const int64_t g = c / Cg;
      for (int64_t i = 0; i < p.h; ++i)
        for (int64_t j = 0; j < p.w; ++j) {
          const double xv = x.v[static_cast<size_t>(((n * p.c + c) * p.h + i) * p.w + j)];
          for (int64_t oc = 0; oc < Og; ++oc)
            for (int64_t a = 0; a < p.kh; ++a) {
              const int64_t oh = i * p.stride[0] - p.pad[0] + a * p.dilation[0];
              if (oh < 0 || oh >= OH) continue;
              for (int64_t b = 0; b < p.kw; ++b) {
                const int64_t ow = j * p.stride[1] - p.pad[1] + b * p.dilation[1];
                if (ow < 0 || ow >= OW) continue;
                const double wv = w.v[static_cast<size_t>(((c * Og + oc) * p.kh + a) * p.kw + b)];
                const size_t at = static_cast<size_t>(((n * p.o + g * Og + oc) * OH + oh) * OW + ow);
                y.v[at] += xv * wv;
                mag[at] += std::fabs(xv * wv);
              }
            }
        }
    }
  // Each output sums at most Cg * KH * KW products.
  y.err.resize(y.v.size());
  for (size_t i = 0; i < y.v.size(); ++i) y.err[i] = dot_bound(y.dtype, p.k(), mag[i]);
  return y;
}

// conv1d: x [N, C, L], w [O, C / groups, K]; `p` describes it as the
// conv2d over [N, C, 1, L] (h = kh = 1, pad top/bottom 0).
inline Ref ref_conv1d(const Ref& x, const Ref& w, const ConvCase& p) {
  Ref y = ref_conv2d(ref_reshape(x, {p.n, p.c, 1, p.w}), ref_reshape(w, {p.o, p.cg(), 1, p.kw}), p);
  return ref_reshape(std::move(y), {p.n, p.o, p.ow()});
}

// ---- elementwise steps -----------------------------------------------------------------

// a - b.
inline Ref ref_sub(const Ref& a, Ref b) {
  for (double& v : b.v) v = -v;
  return ref_add(a, b);
}

// a * b with broadcasting: e_a |b| + |a| e_b + e_a e_b, plus one rounding.
inline Ref ref_mul(const Ref& a, const Ref& b) {
  const Shape shape = *wok::broadcast_shapes(a.shape, b.shape);
  const Ref x = ref_broadcast(a, shape), y = ref_broadcast(b, shape);
  Ref out{shape, promoted(a.dtype, b.dtype), x.v, x.err};
  const double eps = eps_of(out.dtype), tiny = tiny_of(out.dtype);
  for (size_t i = 0; i < out.v.size(); ++i) {
    out.v[i] = x.v[i] * y.v[i];
    out.err[i] = x.err[i] * std::fabs(y.v[i]) + std::fabs(x.v[i]) * y.err[i] + x.err[i] * y.err[i] +
                 2 * eps * std::fabs(out.v[i]) + tiny;
  }
  return out;
}

// a / b for b bounded away from 0 (|b| > e_b).
inline Ref ref_div(const Ref& a, const Ref& b) {
  const Shape shape = *wok::broadcast_shapes(a.shape, b.shape);
  const Ref x = ref_broadcast(a, shape), y = ref_broadcast(b, shape);
  Ref out{shape, promoted(a.dtype, b.dtype), x.v, x.err};
  const double eps = eps_of(out.dtype), tiny = tiny_of(out.dtype);
  for (size_t i = 0; i < out.v.size(); ++i) {
    const double q = x.v[i] / y.v[i];
    out.v[i] = q;
    out.err[i] = (x.err[i] + std::fabs(q) * y.err[i]) / (std::fabs(y.v[i]) - y.err[i]) + 2 * eps * std::fabs(q) + tiny;
  }
  return out;
}

// r + s for a plain number s (rounded to r's dtype first: weakly typed).
inline Ref ref_add_scalar(Ref r, double s) {
  const double eps = eps_of(r.dtype);
  for (size_t i = 0; i < r.v.size(); ++i) {
    r.v[i] += s;
    r.err[i] += 2 * eps * (std::fabs(r.v[i]) + 2 * std::fabs(s));
  }
  return r;
}

// relu and clamp are exact on their argument.
inline Ref ref_relu(Ref r) { return ref_unary(std::move(r), [](double x) { return std::max(x, 0.0); }, 1, 0, false); }
inline Ref ref_relu6(Ref r) {
  return ref_unary(std::move(r), [](double x) { return std::clamp(x, 0.0, 6.0); }, 1, 0, false);
}
// |silu'| <= 1.1, |gelu'| <= 1.13.
inline Ref ref_silu(Ref r) {
  return ref_unary(std::move(r), [](double x) { return x * sigmoid_ref(x); }, 1.2, kTranscendentalUlps, true);
}
inline Ref ref_gelu(Ref r) { return ref_unary(std::move(r), gelu_ref, 1.2, kTranscendentalUlps, true); }
// sqrt of values >= some positive floor: |sqrt'| = 1 / (2 sqrt(x)).
inline Ref ref_sqrt(Ref r) {
  const double eps = eps_of(r.dtype);
  for (size_t i = 0; i < r.v.size(); ++i) {
    const double x = r.v[i], y = std::sqrt(x);
    r.v[i] = y;
    r.err[i] = r.err[i] / (2 * std::sqrt(x - r.err[i])) + 2 * eps * y;
  }
  return r;
}

// 1 / sqrt(x) for x >= some positive floor: |rsqrt'| = 1 / (2 x^1.5), and
// the rounding of an rsqrt (or of a sqrt then a division).
inline Ref ref_rsqrt(Ref r) {
  const double eps = eps_of(r.dtype);
  for (size_t i = 0; i < r.v.size(); ++i) {
    const double x = r.v[i], lo = x - r.err[i], y = 1 / std::sqrt(x);
    r.v[i] = y;
    r.err[i] = r.err[i] / (2 * lo * std::sqrt(lo)) + kTranscendentalUlps * eps * y;
  }
  return r;
}

// Batch norm in inference from running statistics, as a network writes it:
// scale = gamma / sqrt(var + eps), shift = beta - mean * scale (each [C, 1, 1]).
struct BatchNormRef {
  Ref scale, shift;
};
inline BatchNormRef ref_batch_norm_params(const Ref& gamma, const Ref& beta, const Ref& mean, const Ref& var,
                                          double eps) {
  BatchNormRef bn;
  bn.scale = ref_div(gamma, ref_sqrt(ref_add_scalar(var, eps)));
  bn.shift = ref_sub(beta, ref_mul(mean, bn.scale));
  return bn;
}
// As wok::batch_norm (frontend/nn.h) folds them: scale = rsqrt(var + eps) *
// gamma, shift = beta - mean * scale.
inline BatchNormRef ref_batch_norm_op_params(const Ref& gamma, const Ref& beta, const Ref& mean, const Ref& var,
                                             double eps) {
  BatchNormRef bn;
  bn.scale = ref_mul(ref_rsqrt(ref_add_scalar(var, eps)), gamma);
  bn.shift = ref_sub(beta, ref_mul(mean, bn.scale));
  return bn;
}

// ---- running the ops on a case ------------------------------------------------------------

// Random operands for a case, from `seed`: x, the weight and a bias.
struct ConvOperands {
  Ref x, w, bias;
};
inline ConvOperands conv2d_operands(DType t, const ConvCase& p, uint32_t seed) {
  return {random_ref(t, p.x_shape(), seed), random_ref(t, p.w_shape(), seed + 1), random_ref(t, {p.o}, seed + 2)};
}
inline ConvOperands conv_transpose2d_operands(DType t, const ConvCase& p, uint32_t seed) {
  return {random_ref(t, p.x_shape(), seed), random_ref(t, p.wt_shape(), seed + 1), random_ref(t, {p.o}, seed + 2)};
}

inline Tensor run_conv2d(const ConvOperands& in, const ConvCase& p, bool with_bias) {
  return wok::conv2d(tensor_of(in.x), tensor_of(in.w), with_bias ? tensor_of(in.bias) : Tensor{}, p.stride_arg(),
                     p.padding_arg(), p.dilation_arg(), p.groups);
}
inline Ref expected_conv2d(const ConvOperands& in, const ConvCase& p, bool with_bias) {
  Ref y = ref_conv2d(in.x, in.w, p);
  return with_bias ? ref_add(y, ref_reshape(in.bias, {p.o, 1, 1})) : y;
}

inline Tensor run_conv_transpose2d(const ConvOperands& in, const ConvCase& p, bool with_bias) {
  return wok::conv_transpose2d(tensor_of(in.x), tensor_of(in.w), with_bias ? tensor_of(in.bias) : Tensor{},
                               p.stride_arg(), p.padding_arg(), p.output_padding_arg(), p.groups, p.dilation_arg());
}
inline Ref expected_conv_transpose2d(const ConvOperands& in, const ConvCase& p, bool with_bias) {
  Ref y = ref_conv_transpose2d(in.x, in.w, p);
  return with_bias ? ref_add(y, ref_reshape(in.bias, {p.o, 1, 1})) : y;
}

}  // namespace wct
