// Float64 references that carry their own error bound, shared by the GEMM
// and the convolution tests (jit_gemm_test.cpp, conv_reference.h).
//
// A reference (Ref) holds, per element, the exact float64 value and how far
// a correct result of its dtype may lie from it. Here: the bound of a sum
// of K products (dot_bound), the steps every such test needs to carry a
// bound along (broadcasting, a + b, an elementwise function), and the
// comparison of a tensor with a reference (matches), of two results of one
// program (agree), and of a program's results under the two backends
// (expect_backends_agree). Each test file adds the steps of its own ops;
// `using namespace wref;` brings these in.
#pragma once

#include <gtest/gtest.h>
#include <wok/wok.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "test_util.h"

namespace wref {

using wt::eps_of;
using wt::tiny_of;

constexpr wok::DType kF32 = wok::DType::kFloat32;
constexpr wok::DType kF64 = wok::DType::kFloat64;
constexpr wok::DType kFloatTypes[] = {kF32, kF64};

// Allowed |y - exact| of one output of dtype `t` that is a sum of `k`
// products whose magnitudes sum to `abs_sum` (sum_p |a_p b_p|): a GEMM
// output, or a convolution's (k = C / groups * KH * KW taps, those in the
// padding reading zeros).
//
// Why proportional to K: each output is a sum of K rounded (or fused)
// products, and the kernel may add them in any order (K split into cache
// blocks, partial sums in several register lanes, FMA or not; a direct
// convolution loop over channels then taps). Whatever the order, each of
// the at most K roundings of a partial sum errs by at most eps times that
// partial sum, and every partial sum is at most abs_sum, so the total is at
// most about K * eps * abs_sum. The factor 4 covers the products' own
// rounding and the float64 reference's error; `tiny` covers underflow in
// products of small values.
inline double dot_bound(wok::DType t, int64_t k, double abs_sum) {
  return static_cast<double>(k) * eps_of(t) * 4 * abs_sum + tiny_of(t);
}

// The rounding a transcendental step may add, in ulps of its result (and,
// for gelu and silu, of its argument, since 0.5 x (1 + tanh) cancels for
// negative x).
constexpr double kTranscendentalUlps = 8;

// ---- reference arrays ---------------------------------------------------------

// A row-major array of float64 values and, per element, how far a correct
// `dtype` result may lie from it. Inputs have err 0: their values are
// exactly representable in their dtype.
struct Ref {
  wok::Shape shape;
  wok::DType dtype = kF32;
  std::vector<double> v, err;
};

// Uniform in [lo, hi], rounded to t (so the values are exact inputs).
inline Ref random_ref(wok::DType t, wok::Shape shape, uint32_t seed, double lo = -1, double hi = 1) {
  const size_t n = static_cast<size_t>(wok::numel(shape));
  Ref r{std::move(shape), t, {}, std::vector<double>(n, 0.0)};
  if (t == kF32) {
    std::vector<float> v = wt::random_values<float>(n, lo, hi, seed);
    r.v.assign(v.begin(), v.end());
  } else {
    r.v = wt::random_values<double>(n, lo, hi, seed);
  }
  return r;
}

inline wok::Tensor tensor_of(const Ref& r) {
  if (r.dtype == kF32) return wok::from_vector(std::vector<float>(r.v.begin(), r.v.end()), r.shape);
  return wok::from_vector(r.v, r.shape);
}

inline wok::DType promoted(wok::DType a, wok::DType b) { return a == kF64 || b == kF64 ? kF64 : kF32; }

// out[i] = in[offset + sum_d idx_d * strides_d]: the reference side of
// permute, slice and broadcast_to.
inline Ref gather(const Ref& in, wok::Shape shape, const wok::Strides& strides, int64_t offset) {
  const int64_t n = wok::numel(shape);
  Ref out{shape, in.dtype, std::vector<double>(static_cast<size_t>(n)), std::vector<double>(static_cast<size_t>(n))};
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = offset;
    for (size_t d = 0; d < shape.size(); ++d) src += idx[d] * strides[d];
    out.v[static_cast<size_t>(i)] = in.v[static_cast<size_t>(src)];
    out.err[static_cast<size_t>(i)] = in.err[static_cast<size_t>(src)];
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

inline Ref ref_broadcast(const Ref& r, const wok::Shape& shape) {
  return gather(r, shape, wok::broadcast_strides(r.shape, shape), 0);
}

// ---- elementwise steps -----------------------------------------------------------------

// a + b with broadcasting: the errors add, plus one rounding of the sum
// (bounded by eps (|a| + |b|), doubled for slack).
inline Ref ref_add(const Ref& a, const Ref& b) {
  const wok::Shape shape = *wok::broadcast_shapes(a.shape, b.shape);
  const Ref x = ref_broadcast(a, shape), y = ref_broadcast(b, shape);
  Ref out{shape, promoted(a.dtype, b.dtype), x.v, x.err};
  const double eps = eps_of(out.dtype);
  for (size_t i = 0; i < out.v.size(); ++i) {
    out.v[i] = x.v[i] + y.v[i];
    out.err[i] = x.err[i] + y.err[i] + 2 * eps * (std::fabs(x.v[i]) + std::fabs(y.v[i]));
  }
  return out;
}

// f applied elementwise: an error e in the argument moves f by at most
// lipschitz * e; then f's own rounding, up to `ulps` of its result (and of
// its argument when `arg_ulps`).
template <typename F>
Ref ref_unary(Ref r, F f, double lipschitz, double ulps, bool arg_ulps) {
  const double eps = eps_of(r.dtype), tiny = tiny_of(r.dtype);
  for (size_t i = 0; i < r.v.size(); ++i) {
    const double x = r.v[i], y = f(x);
    r.v[i] = y;
    r.err[i] = lipschitz * r.err[i] + ulps * eps * (std::fabs(y) + (arg_ulps ? std::fabs(x) : 0)) + tiny;
  }
  return r;
}

inline double gelu_ref(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
inline double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// ---- comparing ---------------------------------------------------------------------

// "[n, c, h, w]" of flat index i in `shape`.
inline std::string index_str(const wok::Shape& shape, size_t i) {
  std::vector<int64_t> idx(shape.size());
  int64_t rem = static_cast<int64_t>(i);
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? rem % shape[d] : 0;
    rem = shape[d] ? rem / shape[d] : 0;
  }
  return wok::shape_str(idx);
}

// The tensor's dtype and shape are r's, and every element lies within
// r.err of r.v. Up to 8 offending elements are listed with their index.
inline ::testing::AssertionResult matches(const wok::Tensor& t, const Ref& r, const std::string& what) {
  if (t.dtype() != r.dtype)
    return ::testing::AssertionFailure() << what << ": dtype " << wt::dname(t.dtype()) << ", want "
                                         << wt::dname(r.dtype);
  if (t.shape() != r.shape)
    return ::testing::AssertionFailure() << what << ": shape " << wok::shape_str(t.shape()) << ", want "
                                         << wok::shape_str(r.shape);
  const std::vector<double> got = t.to_vector<double>();
  auto fail = ::testing::AssertionFailure();
  int bad = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double diff = std::fabs(got[i] - r.v[i]);
    if (diff <= r.err[i]) continue;  // false for nan
    worst = std::isnan(diff) ? diff : std::max(worst, diff / r.err[i]);
    if (++bad <= 8)
      fail << "\n  " << what << " element " << i << " at " << index_str(r.shape, i) << ": got " << wt::fmt(got[i])
           << " want " << wt::fmt(r.v[i]) << " |diff| " << diff << " > bound " << r.err[i];
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return fail << "\n  " << what << ": " << bad << " of " << got.size() << " elements outside the bound (worst " << worst
              << "x the bound), output " << wok::shape_str(r.shape);
}

// Two results of the same program (e.g. under the two backends) agree
// within the sum of their bounds.
inline ::testing::AssertionResult agree(const wok::Tensor& x, const wok::Tensor& y, const Ref& r,
                                        const std::string& what) {
  if (x.shape() != y.shape() || x.dtype() != y.dtype())
    return ::testing::AssertionFailure() << what << ": " << wt::dname(x.dtype()) << wok::shape_str(x.shape()) << " vs "
                                         << wt::dname(y.dtype()) << wok::shape_str(y.shape());
  const std::vector<double> a = x.to_vector<double>(), b = y.to_vector<double>();
  auto fail = ::testing::AssertionFailure();
  int bad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::fabs(a[i] - b[i]) <= 2 * r.err[i]) continue;
    if (++bad <= 8)
      fail << "\n  " << what << " element " << i << " at " << index_str(r.shape, i) << ": " << wt::fmt(a[i]) << " vs "
           << wt::fmt(b[i]) << ", bound 2 x " << r.err[i];
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return fail << "\n  " << what << ": " << bad << " of " << a.size() << " elements disagree";
}

// ---- both backends --------------------------------------------------------------

// A program (recorded anew by each call of `run`) and its reference.
struct Program {
  std::string name;
  std::function<wok::Tensor()> run;
  Ref ref;
};

// Each program under set_backend(kJit) and set_backend(kPrecompiled) (what
// WOK_BACKEND=jit|precompiled selects; the variable is read once per
// process, so this switches in process): each result within the bound of
// the reference, and the two within twice the bound of each other.
// Failures name the program and `suffix`. The backend in effect is
// restored afterwards.
inline void expect_backends_agree(const std::vector<Program>& programs, const std::string& suffix) {
  const wok::Backend saved = wok::backend();
  for (const Program& prog : programs) {
    const std::string what = prog.name + suffix;
    wok::set_backend(wok::Backend::kJit);
    wok::Tensor jit = prog.run();
    wok::eval({jit});
    wok::set_backend(wok::Backend::kPrecompiled);
    wok::Tensor pre = prog.run();
    wok::eval({pre});
    EXPECT_TRUE(matches(jit, prog.ref, what + " (jit)"));
    EXPECT_TRUE(matches(pre, prog.ref, what + " (precompiled)"));
    EXPECT_TRUE(agree(jit, pre, prog.ref, what + " jit vs precompiled"));
  }
  wok::set_backend(saved);
}

}  // namespace wref
