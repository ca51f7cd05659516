// The random-program reference's ops over shapes: reductions, matmul,
// movement and the normalizations, on reference values with their bounds
// (Note [Reference values and bounds] in random_program_reference.h).
#pragma once

#include <wok/wok.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <optional>
#include <vector>

#include "random_program_ref_elementwise.h"
#include "random_program_reference.h"

namespace rp {

// ---- reductions -----------------------------------------------------------------
enum class R { kSum, kMean, kMax, kMin, kProd, kArgmax };
inline const char* name(R r) {
  static const char* n[] = {"sum", "mean", "max", "min", "prod", "argmax"};
  return n[static_cast<int>(r)];
}

// Depth of the summation tree either backend may use for n values
// (docs/numerics.md: JIT accumulators add at most 1024 / lanes values of a
// block (lanes >= 4 here), blocks fold in order, lanes and partial rows
// combine at the end; precompiled lanes of <= 32 values merge pairwise).
inline double sum_depth(int64_t n) {
  return static_cast<double>(std::min<int64_t>(std::max<int64_t>(n - 1, 0), 256 + 96 + n / 512));
}

// axes: canonical (sorted, non-negative; every axis when the caller gave none).
inline Val ref_reduce(R kind, const Val& x, const std::vector<int64_t>& axes, bool keepdims, DType t) {
  const int rank = static_cast<int>(x.shape.size());
  std::vector<bool> red(rank, false);
  for (int64_t a : axes) red[a] = true;
  Shape out_shape, kept, rdims;
  for (int d = 0; d < rank; ++d) {
    if (!red[d]) out_shape.push_back(x.shape[d]), kept.push_back(d);
    else {
      rdims.push_back(d);
      if (keepdims) out_shape.push_back(1);
    }
  }
  Val o = make_val(t, out_shape);
  const bool float_acc = is_f(t) && kind != R::kArgmax && kind != R::kMax && kind != R::kMin;
  o.bitwise = x.bitwise && !(float_acc || kind == R::kMean);
  std::vector<int64_t> stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * x.shape[d + 1];
  int64_t n = 1;
  for (int64_t d : rdims) n *= x.shape[d];
  std::vector<int64_t> idx;
  idx.reserve(n);
  const bool xf = x.floating();
  for (int64_t k = 0; k < o.size(); ++k) {
    int64_t base = 0, rem = k;
    for (int j = static_cast<int>(kept.size()) - 1; j >= 0; --j) {
      int64_t d = kept[j];
      base += (rem % x.shape[d]) * stride[d];
      rem /= x.shape[d];
    }
    idx.clear();
    for (int64_t m = 0; m < n; ++m) {
      int64_t off = base, rm = m;
      for (int j = static_cast<int>(rdims.size()) - 1; j >= 0; --j) {
        int64_t d = rdims[j];
        off += (rm % x.shape[d]) * stride[d];
        rm /= x.shape[d];
      }
      idx.push_back(off);
    }
    El e;
    double rin = 0;  // sum of the inputs' bounds
    bool unknown = false, exact = true;
    for (int64_t f : idx) {
      rin += x.r[f];
      unknown = unknown || !(x.r[f] < kInf);
      exact = exact && x.r[f] == 0;
    }
    switch (kind) {
      case R::kSum:
      case R::kMean: {
        const bool wide_int = wok::compute_dtype(x.dtype) == DType::kInt64 || x.dtype == DType::kUInt64;
        if (!is_f(t) || (kind == R::kMean && !xf && !wide_int)) {
          // Integers sum exactly in int64, wrapping; the means of those computing in int32 divide that sum.
          int64_t s = 0;
          for (int64_t f : idx) s = wadd(s, x.i[f]);
          if (kind == R::kSum) {
            e.i = wrap(t, s);
            e.r = unknown ? kInf : 0;
          } else {
            e.f = rnd(t, static_cast<double>(s) / static_cast<double>(n));
            // JIT: sum * (1 / n) in t, up to 2 roundings.
            e.r = n == 0 ? 0 : unknown ? kInf : 2 * eps(t) * std::abs(e.f);
          }
          break;
        }
        // Floats (and the means of 64-bit integers, which the precompiled kernel sums in double).
        // Half types accumulate in float32; int64 means in float64.
        const DType at = xf ? wok::compute_dtype(x.dtype) : DType::kFloat64;
        long double s = 0, mag = 0;
        bool has_nan = false, pinf = false, ninf = false;
        for (int64_t f : idx) {
          double v = num(x.dtype, get(x, f));
          if (std::isnan(v)) has_nan = true;
          else if (std::isinf(v)) (v > 0 ? pinf : ninf) = true;
          else s += v, mag += std::abs(static_cast<long double>(v));
        }
        double y;
        if (has_nan || (pinf && ninf)) y = kNaN;
        else if (pinf || ninf) y = pinf ? kInf : -kInf;
        else y = rnd(at, static_cast<double>(s));
        double r;
        if (has_nan || pinf || ninf) r = exact ? 0 : kInf;
        else if (unknown || !std::isfinite(y)) r = kInf;
        else {
          r = rin + unit(at) * sum_depth(n) * static_cast<double>(mag) + unit(at) * std::abs(y);
          if (y == 0 || r > 0) r = std::max(r, kTiny);  // the sign of a zero sum depends on the order
          // One value is exact, but the JIT adds it to +0 (a -0 comes back +0).
          if (exact && n <= 1 && y != 0) r = 0;

        }
        if (kind == R::kSum) {
          e.f = y;
          e.r = r;
          if (is_half(t)) e = to_half(t, e);
        } else {
          e.f = n == 0 ? kNaN : rnd(t, std::isfinite(y) ? static_cast<double>(s / n) : y);
          e.r = n == 0 ? 0 : r < kInf ? std::max(kTiny, r / static_cast<double>(n) + 2 * eps(t) * std::abs(e.f) + underflow(t)) : r;
          if (n == 1 && r == 0 && e.f != 0) e.r = 0;
        }
        break;
      }
      case R::kProd: {
        if (!is_f(t)) {
          int64_t p = 1;
          for (int64_t f : idx) p = wmul(p, x.i[f]);
          e.i = wrap(t, p);
          e.r = unknown ? kInf : 0;
          break;
        }
        long double p = 1, big = 1, small = 1;  // the product; of the factors >= 1 and < 1 in magnitude
        bool nonfinite = false, zero = false;
        for (int64_t f : idx) {
          const double v = x.f[f];
          p *= v;
          nonfinite = nonfinite || !std::isfinite(v);
          zero = zero || v == 0;
          if (std::isfinite(v) && v != 0) (std::abs(v) >= 1 ? big : small) *= std::abs(v);
        }
        // Some order of multiplication (wok's are unspecified) may overflow or
        // underflow a partial product in the type it computes in, where the
        // reference's long double does not: inf * 0 is nan, 0 * inf too.
        const DType ct = wok::compute_dtype(t);
        const long double top = ct == DType::kFloat32 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
        const long double bottom = ct == DType::kFloat32 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
        const bool partial_range = n > 1 && (big > top || (small < bottom && (!zero || nonfinite)));
        e.f = rnd(t, static_cast<double>(p));
        if (exact && n <= 1) e.r = 0;
        else if (partial_range) e.r = kInf;
        else if (unknown || nonfinite || !std::isfinite(e.f)) e.r = exact && nonfinite ? 0 : kInf;
        else {
          // sum_i r_i prod_{j != i} |x_j|, plus one rounding per factor.
          double prop = 0;
          for (size_t a = 0; a < idx.size(); ++a) {
            if (x.r[idx[a]] == 0) continue;
            long double q = x.r[idx[a]];
            for (size_t b = 0; b < idx.size(); ++b)
              if (b != a) q *= std::abs(x.f[idx[b]]);
            prop += static_cast<double>(q);
          }
          e.r = prop + unit(t) * static_cast<double>(n) * std::abs(e.f);
          if (is_half(t)) e.r += eps(t) * std::abs(e.f) + underflow(t);  // in float32, rounded once or not at all
          e.r = std::max(e.r, kTiny);
          if (!std::isfinite(e.r)) e.r = kInf;
        }
        break;
      }
      case R::kMax:
      case R::kMin: {
        const bool mx = kind == R::kMax;
        if (idx.empty()) {  // the identity: -inf / +inf, an integer's lowest / highest, false / true
          if (xf) e.f = mx ? -kInf : kInf;
          else e.i = mx ? ilowest(t) : ihighest(t);
          e.r = 0;
          break;
        }
        if (!xf) {
          int64_t m = x.i[idx[0]];
          for (int64_t f : idx) m = mx ? imax(x.dtype, m, x.i[f]) : imin(x.dtype, m, x.i[f]);
          e.i = m;
          e.r = unknown ? kInf : 0;
          break;
        }
        double m = x.f[idx[0]], rm = 0;
        bool nan = false, pz = false, nz = false;
        for (int64_t f : idx) {
          double v = x.f[f];
          if (std::isnan(v)) nan = true;
          else m = mx ? std::max(m, v) : std::min(m, v);
          rm = std::max(rm, x.r[f]);
          if (v == 0) (std::signbit(v) ? nz : pz) = true;
        }
        e.f = nan ? kNaN : m;
        e.r = rm;  // max and min are 1-Lipschitz in the largest input bound
        if (m == 0 && pz && nz) e.r = std::max(e.r, kTiny);
        break;
      }
      case R::kArgmax: {
        // First index of the maximum; nan counts as the maximum (the first nan wins).
        int64_t w = 0;
        for (int64_t m = 1; m < n; ++m) {
          if (!xf) {
            if (ilt(x.dtype, x.i[idx[w]], x.i[idx[m]])) w = m;
            continue;
          }
          double best = x.f[idx[w]], v = x.f[idx[m]];
          if (std::isnan(best)) break;
          if (std::isnan(v) || v > best) w = m;
        }
        e.i = w;
        if (exact) e.r = 0;
        else if (unknown) e.r = kInf;
        else {
          // Certain when the winner's lower end beats every other's upper end.
          double lo = x.f[idx[w]] - x.r[idx[w]];
          bool certain = std::isfinite(x.f[idx[w]]);
          for (int64_t m = 0; m < n && certain; ++m)
            if (m != w) certain = x.f[idx[m]] + x.r[idx[m]] < lo;
          e.r = certain ? 0 : kInf;
        }
        break;
      }
    }
    put(o, k, e);
  }
  return o;
}

// ---- matmul ------------------------------------------------------------------------
inline Val ref_matmul(const Val& a0, const Val& b0, DType t) {
  // NumPy: 1-D operands become matrices and the added dim is removed.
  Val a = a0, b = b0;
  const bool va = a.shape.size() == 1, vb = b.shape.size() == 1;
  if (va) a.shape = {1, a.shape[0]};
  if (vb) b.shape = {b.shape[0], 1};
  const int64_t n = a.shape[a.shape.size() - 2], K = a.shape.back(), m = b.shape.back();
  Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  Shape batch = bshape(ba, bb);
  Shape os = batch;
  os.push_back(n);
  os.push_back(m);
  Val o = make_val(t, os);
  merge_bitwise(o, {&a0, &b0});
  // The generated GEMM and the precompiled kernel sum in different orders
  // (docs/numerics.md): float products agree within the bound only.
  if (is_f(t)) o.bitwise = false;
  const int64_t nb = wok::numel(batch);
  for (int64_t bi = 0; bi < nb; ++bi) {
    const int64_t oa = bindex(ba, batch, bi) * n * K, ob = bindex(bb, batch, bi) * K * m;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < m; ++c) {
        El e;
        if (!is_f(t)) {
          int64_t s = 0;
          double rr = 0;
          for (int64_t p = 0; p < K; ++p) {
            El x = conv(get(a, oa + r * K + p), a.dtype, t), y = conv(get(b, ob + p * m + c), b.dtype, t);
            s = wrap(t, wadd(s, wmul(x.i, y.i)));
            rr = std::max({rr, x.r, y.r});
          }
          e.i = s;
          e.r = rr;
        } else {
          long double s = 0, mag = 0;
          double prop = 0;
          bool exact = true, finite = true;
          for (int64_t p = 0; p < K; ++p) {
            El x = conv(get(a, oa + r * K + p), a.dtype, t), y = conv(get(b, ob + p * m + c), b.dtype, t);
            s += static_cast<long double>(x.f) * y.f;
            mag += std::abs(static_cast<long double>(x.f) * y.f);
            prop += std::abs(y.f) * x.r + std::abs(x.f) * y.r + x.r * y.r;
            exact = exact && x.r == 0 && y.r == 0;
            finite = finite && std::isfinite(x.f) && std::isfinite(y.f);
          }
          // One product rounds once: in double (exact for float32, correctly
          // rounded for float64), not through long double (a double rounding).
          if (K == 1) {
            const El x = conv(get(a, oa + r * K), a.dtype, t), y = conv(get(b, ob + c), b.dtype, t);
            e.f = rnd(t, x.f * y.f);
          } else {
            e.f = rnd(t, static_cast<double>(s));
          }
          if (!finite || !std::isfinite(e.f) || !(prop < kInf)) e.r = kInf;
          // No product, or one rounded once; a zero product's sign may be lost to
          // an accumulator that starts at +0 (+0 + -0 is +0).
          else if (K <= 1 && exact) e.r = e.f == 0 && K == 1 ? kTiny : 0;
          else e.r = std::max(kTiny, prop + unit(t) * static_cast<double>(K + 1) * static_cast<double>(mag) + underflow(t));
        }
        put(o, (bi * n + r) * m + c, e);
      }
  }
  if (va || vb) {
    Shape s = o.shape;
    if (vb) s.erase(s.end() - 1);
    if (va) s.erase(s.end() - 1 - (vb ? 0 : 1));
    o.shape = s;
  }
  return o;
}

// ---- movement -----------------------------------------------------------------------
inline Val ref_reshape(const Val& x, Shape s) {
  Val o = x;
  int64_t known = 1, infer = -1;
  for (size_t d = 0; d < s.size(); ++d)
    if (s[d] == -1) infer = static_cast<int64_t>(d);
    else known *= s[d];
  if (infer >= 0) s[infer] = known == 0 ? 0 : x.size() / known;
  o.shape = s;
  return o;
}
inline Val gather(const Val& x, Shape s, const std::function<int64_t(const std::vector<int64_t>&)>& src) {
  Val o = make_val(x.dtype, s);
  o.bitwise = x.bitwise;
  std::vector<int64_t> c(s.size());
  for (int64_t k = 0; k < o.size(); ++k) {
    int64_t rem = k;
    for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) c[d] = rem % s[d], rem /= s[d];
    put(o, k, get(x, src(c)));
  }
  return o;
}
inline int64_t flat(const Shape& s, const std::vector<int64_t>& c) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); ++d) f = f * s[d] + c[d];
  return f;
}
inline Val ref_permute(const Val& x, const std::vector<int64_t>& dims) {
  Shape s;
  for (int64_t d : dims) s.push_back(x.shape[d]);
  std::vector<int64_t> ic(x.shape.size());
  return gather(x, s, [&](const std::vector<int64_t>& c) {
    for (size_t j = 0; j < dims.size(); ++j) ic[dims[j]] = c[j];
    return flat(x.shape, ic);
  });
}
inline Val ref_broadcast_to(const Val& x, const Shape& s) {
  Val o = make_val(x.dtype, s);
  o.bitwise = x.bitwise;
  for (int64_t k = 0; k < o.size(); ++k) put(o, k, get(x, bindex(x.shape, s, k)));
  return o;
}
// Python's slice.indices(), as wok::slice documents.
inline Val ref_slice(const Val& x, int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) {
  const int a = static_cast<int>(axis < 0 ? axis + static_cast<int64_t>(x.shape.size()) : axis);
  const int64_t n = x.shape[a];
  auto bound = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t i = *v < 0 ? *v + n : *v;
    return step > 0 ? std::clamp<int64_t>(i, 0, n) : std::clamp<int64_t>(i, -1, n - 1);
  };
  const int64_t b = bound(start, step > 0 ? 0 : n - 1), e = bound(stop, step > 0 ? n : -1);
  const int64_t len = step > 0 ? std::max<int64_t>(0, (e - b + step - 1) / step) : std::max<int64_t>(0, (b - e - step - 1) / -step);
  Shape s = x.shape;
  s[a] = len;
  std::vector<int64_t> ic;
  return gather(x, s, [&](const std::vector<int64_t>& c) {
    ic = c;
    ic[a] = b + c[a] * step;
    return flat(x.shape, ic);
  });
}
inline Val ref_concat(const std::vector<const Val*>& xs, int64_t axis, DType t) {
  const int a = static_cast<int>(axis < 0 ? axis + static_cast<int64_t>(xs[0]->shape.size()) : axis);
  Shape s = xs[0]->shape;
  s[a] = 0;
  for (const Val* x : xs) s[a] += x->shape[a];
  Val o = make_val(t, s);
  o.bitwise = true;
  for (const Val* x : xs) o.bitwise = o.bitwise && x->bitwise;
  std::vector<int64_t> c(s.size());
  for (int64_t k = 0; k < o.size(); ++k) {
    int64_t rem = k;
    for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) c[d] = rem % s[d], rem /= s[d];
    size_t j = 0;
    while (c[a] >= xs[j]->shape[a]) c[a] -= xs[j]->shape[a], ++j;
    put(o, k, conv(get(*xs[j], flat(xs[j]->shape, c)), xs[j]->dtype, t));
  }
  return o;
}

// ---- normalizations: wok's compositions (frontend/nn.cpp), in reference ops ----------
inline int64_t canon_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

inline Val ref_softmax(const Val& x0, int64_t axis, bool log) {
  const DType t = wok::float_result_type(x0.dtype);
  Val x = ref_cast(x0, t);
  std::vector<int64_t> ax = {canon_axis(axis, x.shape.size())};
  Val m = ref_reduce(R::kMax, x, ax, true, t);
  if (log) {
    Val sh = ref_binary(B::kSub, x, m, t);
    Val s = ref_reduce(R::kSum, ref_unary(U::kExp, sh, t), ax, true, t);
    return ref_binary(B::kSub, sh, ref_unary(U::kLog, s, t), t);
  }
  Val e = ref_unary(U::kExp, ref_binary(B::kSub, x, m, t), t);
  Val s = ref_reduce(R::kSum, e, ax, true, t);
  return ref_binary(B::kMul, e, ref_unary(U::kReciprocal, s, t), t);
}
inline Val ref_layer_norm(const Val& x0, const Val* w, const Val* b, double eps_) {
  DType t = wok::float_result_type(x0.dtype);
  Val x = ref_cast(x0, t);
  std::vector<int64_t> ax = {static_cast<int64_t>(x.shape.size()) - 1};
  Val c = ref_binary(B::kSub, x, ref_reduce(R::kMean, x, ax, true, t), t);
  Val var = ref_reduce(R::kMean, ref_binary(B::kMul, c, c, t), ax, true, t);
  Val y = ref_binary(B::kMul, c, ref_unary(U::kRsqrt, ref_binary(B::kAdd, var, ref_scalar(t, eps_), t), t), t);
  if (w) t = wok::promote_types(t, w->dtype), y = ref_binary(B::kMul, y, *w, t);
  if (b) t = wok::promote_types(t, b->dtype), y = ref_binary(B::kAdd, y, *b, t);
  return y;
}
inline Val ref_rms_norm(const Val& x0, const Val* w, double eps_) {
  DType t = wok::float_result_type(x0.dtype);
  Val x = ref_cast(x0, t);
  std::vector<int64_t> ax = {static_cast<int64_t>(x.shape.size()) - 1};
  Val ms = ref_reduce(R::kMean, ref_binary(B::kMul, x, x, t), ax, true, t);
  Val y = ref_binary(B::kMul, x, ref_unary(U::kRsqrt, ref_binary(B::kAdd, ms, ref_scalar(t, eps_), t), t), t);
  if (w) t = wok::promote_types(t, w->dtype), y = ref_binary(B::kMul, y, *w, t);
  return y;
}

}  // namespace rp
