// The reference of the random-program test (tests/jit_random_program_test.cpp):
// every op of wok re-implemented on plain vectors, with a first-order bound
// on how far wok's result may be from it.
//
// Note [Reference values and bounds]
// A reference value holds, per element, the value `v` (a double for float
// dtypes, an int64 for ints and bools) and a bound `r` on |wok - v|:
//  - r == 0: exact. Float ops that IEEE rounds correctly (+ - * / sqrt,
//    conversions, min/max, movement) are emulated with the same rounding
//    (a float32 op is computed in double and rounded to float32, which is
//    the correctly rounded result), so a chain of them on exact inputs stays
//    exact and wok must match it bit for bit (docs/numerics.md promises
//    both backends compute these ops the same way).
//  - 0 < r < inf: wok's value lies within r. Each op adds to the bound what
//    its inputs' bounds propagate to (|f(x +- r) - f(x)| for monotone f,
//    a Lipschitz constant otherwise, |b| ra + |a| rb + ra rb for a product)
//    and its own rounding (eps * |y| when its inputs were not exact; the
//    documented ulp error plus the reference's own for transcendentals).
//    Sums: the first-order bound of any summation tree,
//    u * depth * sum |x_i| (u = eps / 2), with the depth bounded by what
//    docs/numerics.md says both backends do (blocks of <= 1024 / lanes
//    values, then block folding and a pairwise cascade), never more than
//    n - 1; matmul: (K + 1) * u * sum |a_k b_k| (one fused multiply-add per
//    k); products: n * u * |y|.
//  - r == inf: unknown (a comparison of values closer than their bounds,
//    a cast that may truncate either way, an overflow): not checked, and
//    everything computed from it is unknown too. The test counts checked
//    elements and fails if too few are, so it cannot silently check nothing.
// r == kTiny (the smallest subnormal) marks "equal in value but maybe not
// in sign" (-0 vs +0 from a max of ties or a sum), so that a later division
// by it or a sign-sensitive op becomes unknown while comparisons of values
// still pass.
// `bitwise` says whether the JIT and the precompiled kernels must agree
// bitwise: false downstream of a float sum, mean or product (they add in
// different orders, docs/numerics.md).
#pragma once

#include <wok/wok.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace rp {

using wok::DType;
using wok::Shape;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kTiny = std::numeric_limits<double>::denorm_min();

inline bool is_f(DType t) { return wok::is_floating(t); }
inline double eps(DType t) { return t == DType::kFloat32 ? 0x1p-23 : t == DType::kFloat64 ? 0x1p-52 : 0; }
inline double unit(DType t) { return eps(t) / 2; }
inline double rnd(DType t, double v) { return t == DType::kFloat32 ? static_cast<double>(static_cast<float>(v)) : v; }
inline int64_t wrap(DType t, int64_t v) {
  if (t == DType::kInt32) return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
  if (t == DType::kBool) return v != 0;
  return v;
}
inline int64_t wadd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
inline int64_t wsub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
inline int64_t wmul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

struct Val {
  DType dtype = DType::kFloat32;
  Shape shape;
  std::vector<double> f;   // float dtypes
  std::vector<int64_t> i;  // int and bool dtypes
  std::vector<double> r;   // bound on |wok - value| per element (Note [Reference values and bounds])
  bool bitwise = true;
  bool floating() const { return is_f(dtype); }
  int64_t size() const { return static_cast<int64_t>(r.size()); }
};

inline Val make_val(DType t, Shape s) {
  Val v;
  v.dtype = t;
  v.shape = std::move(s);
  int64_t n = wok::numel(v.shape);
  if (is_f(t)) v.f.assign(n, 0);
  else v.i.assign(n, 0);
  v.r.assign(n, 0);
  return v;
}

// One element: f for floats, i for ints and bools.
struct El {
  double f = 0;
  int64_t i = 0;
  double r = 0;
};
inline El get(const Val& v, int64_t k) { return v.floating() ? El{v.f[k], 0, v.r[k]} : El{0, v.i[k], v.r[k]}; }
inline void put(Val& v, int64_t k, const El& e) {
  if (v.floating()) v.f[k] = e.f;
  else v.i[k] = e.i;
  v.r[k] = e.r;
}
inline double num(DType t, const El& e) { return is_f(t) ? e.f : static_cast<double>(e.i); }

// The bound of a correctly rounded op whose inputs were off by `prop`.
inline double rounded_r(DType t, double y, double prop) {
  if (prop == 0) return 0;
  if (!(prop < kInf) || !std::isfinite(y)) return kInf;
  return prop + eps(t) * std::abs(y);
}
// The bound of an approximated op (ulps: its documented error plus the
// reference's own). Special values of exact inputs follow libm (checked by
// tests/elementwise_ops_test.cpp), so they stay exact.
inline double approx_r(DType t, double x, double y, double prop, double ulps) {
  if (!(prop < kInf)) return kInf;
  if (!std::isfinite(y) || !std::isfinite(x)) return prop == 0 ? 0 : kInf;
  return prop + ulps * eps(t) * std::abs(y);
}

// Casts (and the conversions of promotion): C++ conversions, float to int
// truncating, nan / inf / out of range giving the most negative integer.
inline int64_t float_to_int(DType to, double x) {
  const double lo = to == DType::kInt32 ? -2147483648.0 : -9223372036854775808.0;
  if (!(x >= lo && x < -lo)) return to == DType::kInt32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(std::trunc(x));
}
inline El conv(const El& e, DType from, DType to) {
  if (from == to) return e;
  El o;
  if (is_f(to)) {
    o.f = rnd(to, num(from, e));
    o.r = e.r == 0 ? 0 : rounded_r(to, o.f, e.r);
  } else if (to == DType::kBool) {
    if (is_f(from)) {
      o.i = e.f != 0;
      o.r = (e.r == 0 || std::abs(e.f) > e.r) ? 0 : kInf;
    } else {
      o.i = e.i != 0;
      o.r = e.r;
    }
  } else if (!is_f(from)) {
    o.i = wrap(to, e.i);
    o.r = e.r;
  } else {
    o.i = float_to_int(to, e.f);
    if (e.r == 0) o.r = 0;
    else if (!(e.r < kInf) || !std::isfinite(e.f)) o.r = kInf;
    else o.r = float_to_int(to, e.f - e.r) == float_to_int(to, e.f + e.r) ? 0 : kInf;
  }
  return o;
}
inline bool truth(DType t, const El& e, double* r) {
  El b = conv(e, t, DType::kBool);
  *r = b.r;
  return b.i != 0;
}

// ---- shapes ---------------------------------------------------------------------
inline int64_t bindex(const Shape& in, const Shape& out, int64_t k) {
  // k indexes `out`; the element of `in` (right-aligned, dims of 1 broadcast).
  int64_t idx = 0, stride = 1;
  const int off = static_cast<int>(out.size() - in.size());
  for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) {
    int64_t c = k % out[d];
    k /= out[d];
    if (d < off) continue;
    int64_t n = in[d - off];
    if (n != 1) idx += c * stride;
    stride *= n;
  }
  return idx;
}
inline Shape bshape(const Shape& a, const Shape& b) { return *wok::broadcast_shapes(a, b); }

// ---- elementwise ----------------------------------------------------------------
enum class U { kNeg, kAbs, kExp, kLog, kSqrt, kRsqrt, kSin, kCos, kTanh, kErf, kSigmoid, kRelu, kGelu, kSilu,
               kFloor, kCeil, kRound, kReciprocal, kSquare, kLogicalNot };
inline const char* name(U u) {
  static const char* n[] = {"neg",  "abs",  "exp",  "log",  "sqrt",  "rsqrt", "sin",   "cos",        "tanh",   "erf",
                            "sigmoid", "relu", "gelu", "silu", "floor", "ceil",  "round", "reciprocal", "square", "logical_not"};
  return n[static_cast<int>(u)];
}
enum class B { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr };
inline const char* name(B b) {
  static const char* n[] = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq",
                            "ne",  "lt",  "le",  "gt",  "ge",  "logical_and", "logical_or"};
  return n[static_cast<int>(b)];
}

inline double sigmoid_d(double x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }
inline double gelu_d(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

// |f(w) - f(x)| over |w - x| <= r, f monotone on [x - r, x + r].
template <typename F>
double mono(F f, double x, double r) {
  if (r == 0) return 0;
  if (!(r < kInf)) return kInf;  // bounded f (tanh, erf) would give a finite answer
  double y = f(x), d = std::max(std::abs(f(x - r) - y), std::abs(f(x + r) - y));
  return std::isfinite(d) ? d : kInf;
}

inline El unary_el(U op, DType in_t, DType t, El x0) {
  El o;
  if (op == U::kLogicalNot) {
    double r;
    o.i = !truth(in_t, x0, &r);
    o.r = r;
    return o;
  }
  El x = conv(x0, in_t, t);
  if (!is_f(t)) {
    int64_t v = x.i;
    switch (op) {
      case U::kNeg: o.i = wrap(t, wsub(0, v)); break;
      case U::kAbs: o.i = wrap(t, v < 0 ? wsub(0, v) : v); break;
      case U::kRelu: o.i = std::max<int64_t>(v, 0); break;
      case U::kSquare: o.i = wrap(t, wmul(v, v)); break;
      default: o.i = v; break;  // floor, ceil, round of an integer
    }
    o.r = x.r;
    return o;
  }
  const double v = x.f, r = x.r;
  const bool exact = r == 0;
  auto lip = [&](double l) { return r * l; };
  double y = 0, prop = 0;
  constexpr double kUlps = 5;  // documented <= 3.05 ulp (docs/numerics.md) + the reference's own
  switch (op) {
    case U::kNeg: o.f = -v; o.r = r; return o;
    case U::kAbs: o.f = std::abs(v); o.r = r; return o;
    case U::kRelu:
      o.f = std::isnan(v) ? v : v > 0 ? v : 0.0;
      o.r = v == 0 && std::signbit(v) ? std::max(r, kTiny) : r;
      if (v - r > 0 || v + r < 0) o.r = v > 0 ? r : 0;
      return o;
    case U::kSquare:
      o.f = rnd(t, v * v);
      o.r = exact ? 0 : rounded_r(t, o.f, 2 * std::abs(v) * r + r * r);
      return o;
    case U::kSqrt:
      o.f = rnd(t, std::sqrt(v));
      o.r = exact ? 0 : v - r < 0 ? kInf : rounded_r(t, o.f, mono([](double z) { return std::sqrt(z); }, v, r));
      return o;
    case U::kRsqrt: {
      double s = rnd(t, std::sqrt(v));
      o.f = rnd(t, 1 / s);
      o.r = exact ? 0 : v - r <= 0 ? kInf : rounded_r(t, o.f, mono([](double z) { return 1 / std::sqrt(z); }, v, r) + eps(t) * std::abs(o.f));
      return o;
    }
    case U::kReciprocal:
      o.f = rnd(t, 1 / v);
      o.r = exact ? 0 : (v - r) * (v + r) <= 0 ? kInf : rounded_r(t, o.f, mono([](double z) { return 1 / z; }, v, r));
      return o;
    case U::kFloor:
    case U::kCeil:
    case U::kRound: {
      auto f = [op](double z) { return op == U::kFloor ? std::floor(z) : op == U::kCeil ? std::ceil(z) : std::nearbyint(z); };
      o.f = f(v);
      o.r = exact ? 0 : (r < kInf && f(v - r) == f(v + r)) ? 0 : kInf;
      return o;
    }
    case U::kExp: y = std::exp(v); prop = mono([](double z) { return std::exp(z); }, v, r); break;
    case U::kLog: y = std::log(v); prop = exact ? 0 : v - r <= 0 ? kInf : mono([](double z) { return std::log(z); }, v, r); break;
    case U::kTanh: y = std::tanh(v); prop = mono([](double z) { return std::tanh(z); }, v, r); break;
    case U::kErf: y = std::erf(v); prop = mono([](double z) { return std::erf(z); }, v, r); break;
    case U::kSigmoid: y = sigmoid_d(v); prop = mono(sigmoid_d, v, r); break;
    case U::kSin:
    case U::kCos:
      y = op == U::kSin ? std::sin(v) : std::cos(v);
      prop = lip(1);
      if (std::abs(v) + r > 1e8) prop = kInf;  // beyond 2.1e8 wok's is nan (no Payne-Hanek reduction)
      break;
    case U::kSilu: y = v * sigmoid_d(v); prop = lip(1.1); break;  // max |silu'| = 1.0998
    case U::kGelu: {
      // Rounded at each of its steps in t: 0.5 x (1 + tanh(c (x + 0.044715 x^3))); the sum 1 + tanh
      // cancels for negative x, so its error is relative to |x|, not |y| (a few eps each of
      // tanh and the roundings, times 0.5 |x|).
      y = gelu_d(v);
      prop = lip(1.13);  // max |gelu'| = 1.1289
      o.f = rnd(t, y);
      o.r = approx_r(t, v, o.f, prop, kUlps);
      if (o.r < kInf && std::isfinite(v)) o.r += 6 * eps(t) * std::abs(v);
      return o;
    }
    default: break;
  }
  o.f = rnd(t, y);
  o.r = approx_r(t, v, o.f, prop, kUlps);
  return o;
}

inline int64_t ipow(DType t, int64_t a, int64_t b, double* r) {
  *r = 0;
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b & 1) ? -1 : 1;
    if (a == 0) *r = kInf;  // 1 / 0
    return 0;
  }
  uint64_t base = static_cast<uint64_t>(a), res = 1;
  for (uint64_t e = static_cast<uint64_t>(b); e; e >>= 1) {
    if (e & 1) res *= base;
    base *= base;
  }
  return wrap(t, static_cast<int64_t>(res));
}

// ct: the dtype the op computes in (its result's, or the inputs' common one for comparisons).
inline El binary_el(B op, DType ta, DType tb, DType t, El a0, El b0) {
  El o;
  if (op == B::kAnd || op == B::kOr) {
    double ra, rb;
    bool x = truth(ta, a0, &ra), z = truth(tb, b0, &rb);
    o.i = op == B::kAnd ? (x && z) : (x || z);
    // A certain false (and) or true (or) decides alone.
    if (op == B::kAnd) o.r = (ra == 0 && !x) || (rb == 0 && !z) ? 0 : std::max(ra, rb);
    else o.r = (ra == 0 && x) || (rb == 0 && z) ? 0 : std::max(ra, rb);
    return o;
  }
  const bool cmp = op >= B::kEq;
  const DType ct = cmp ? wok::promote_types(ta, tb) : t;
  El a = conv(a0, ta, ct), b = conv(b0, tb, ct);
  if (cmp) {
    auto c = [op](auto x, auto z) {
      switch (op) {
        case B::kEq: return x == z;
        case B::kNe: return x != z;
        case B::kLt: return x < z;
        case B::kLe: return x <= z;
        case B::kGt: return x > z;
        default: return x >= z;
      }
    };
    if (is_f(ct)) {
      o.i = c(a.f, b.f);
      if (a.r == 0 && b.r == 0) o.r = 0;
      else if (a.r < kInf && b.r < kInf && std::isfinite(a.f) && std::isfinite(b.f) && std::abs(a.f - b.f) > a.r + b.r)
        o.r = 0;
      else o.r = kInf;
    } else {
      o.i = c(a.i, b.i);
      o.r = std::max(a.r, b.r);
    }
    return o;
  }
  if (!is_f(ct)) {
    int64_t x = a.i, z = b.i;
    o.r = std::max(a.r, b.r);
    switch (op) {
      case B::kAdd: o.i = wrap(ct, wadd(x, z)); break;
      case B::kSub: o.i = wrap(ct, wsub(x, z)); break;
      case B::kMul: o.i = wrap(ct, wmul(x, z)); break;
      case B::kMax: o.i = std::max(x, z); break;
      case B::kMin: o.i = std::min(x, z); break;
      case B::kPow: {
        double r;
        o.i = ipow(ct, x, z, &r);
        o.r = std::max(o.r, r);
        break;
      }
      default: o.r = kInf; break;
    }
    return o;
  }
  const double x = a.f, z = b.f, ra = a.r, rb = b.r;
  const bool exact = ra == 0 && rb == 0;
  const bool finite = std::isfinite(x) && std::isfinite(z);
  switch (op) {
    case B::kAdd: o.f = rnd(ct, x + z); o.r = exact ? 0 : rounded_r(ct, o.f, ra + rb); break;
    case B::kSub: o.f = rnd(ct, x - z); o.r = exact ? 0 : rounded_r(ct, o.f, ra + rb); break;
    case B::kMul:
      o.f = rnd(ct, x * z);
      o.r = exact ? 0 : finite ? rounded_r(ct, o.f, std::abs(z) * ra + std::abs(x) * rb + ra * rb) : kInf;
      break;
    case B::kDiv:
      o.f = rnd(ct, x / z);
      o.r = exact                          ? 0
            : !finite || std::abs(z) <= rb ? kInf
                                           : rounded_r(ct, o.f, (ra * std::abs(z) + std::abs(x) * rb) / (std::abs(z) * (std::abs(z) - rb)));
      break;
    case B::kPow:
      o.f = rnd(ct, std::pow(x, z));
      o.r = exact ? approx_r(ct, x, o.f, 0, 5) : kInf;  // <= 4 ulp (docs/numerics.md) + the reference's own
      break;
    case B::kMax:
    case B::kMin: {
      bool mx = op == B::kMax;
      o.f = std::isnan(x) || std::isnan(z) ? kNaN : mx ? std::max(x, z) : std::min(x, z);
      if (ra < kInf && rb < kInf && finite && std::abs(x - z) > ra + rb) o.r = (mx == (x > z)) ? ra : rb;
      else o.r = std::max(ra, rb);
      if (x == z && x == 0 && std::signbit(x) != std::signbit(z)) o.r = std::max(o.r, kTiny);
      break;
    }
    default: o.r = kInf; break;
  }
  return o;
}

inline void merge_bitwise(Val& out, std::initializer_list<const Val*> in) {
  out.bitwise = true;
  for (const Val* v : in) out.bitwise = out.bitwise && v->bitwise;
}

inline Val ref_unary(U op, const Val& x, DType t) {
  Val o = make_val(t, x.shape);
  merge_bitwise(o, {&x});
  for (int64_t k = 0; k < o.size(); ++k) put(o, k, unary_el(op, x.dtype, t, get(x, k)));
  return o;
}
inline Val ref_binary(B op, const Val& a, const Val& b, DType t) {
  Val o = make_val(t, bshape(a.shape, b.shape));
  merge_bitwise(o, {&a, &b});
  for (int64_t k = 0; k < o.size(); ++k)
    put(o, k, binary_el(op, a.dtype, b.dtype, t, get(a, bindex(a.shape, o.shape, k)), get(b, bindex(b.shape, o.shape, k))));
  return o;
}
// A plain number as wok's weak constant: converted to the tensor's dtype `t`.
inline Val ref_scalar(DType t, double v) {
  Val o = make_val(t, {});
  if (is_f(t)) o.f[0] = rnd(t, v);
  else o.i[0] = static_cast<int64_t>(v);
  return o;
}
inline Val ref_where(const Val& c, const Val& a, const Val& b, DType t) {
  Val o = make_val(t, bshape(c.shape, bshape(a.shape, b.shape)));
  merge_bitwise(o, {&c, &a, &b});
  for (int64_t k = 0; k < o.size(); ++k) {
    El ce = get(c, bindex(c.shape, o.shape, k));
    bool take_a = ce.i != 0;
    const Val& s = take_a ? a : b;
    El e = conv(get(s, bindex(s.shape, o.shape, k)), s.dtype, t);
    if (ce.r != 0) e.r = kInf;
    put(o, k, e);
  }
  return o;
}
inline Val ref_cast(const Val& x, DType t) {
  Val o = make_val(t, x.shape);
  merge_bitwise(o, {&x});
  for (int64_t k = 0; k < o.size(); ++k) put(o, k, conv(get(x, k), x.dtype, t));
  return o;
}
// lo and hi are already in x's dtype (the generator picks integers for ints).
inline Val ref_clamp(const Val& x, double lo, double hi) {
  Val o = make_val(x.dtype, x.shape);
  merge_bitwise(o, {&x});
  for (int64_t k = 0; k < o.size(); ++k) {
    El e = get(x, k);
    if (x.floating()) {
      double v = e.f, l = rnd(x.dtype, lo), h = rnd(x.dtype, hi);
      e.f = std::isnan(v) ? v : std::min(std::max(v, l), h);
      if (e.r < kInf && (v - e.r > h || v + e.r < l)) e.r = 0;
      if (e.f == 0 && (l == 0 || h == 0)) e.r = std::max(e.r, kTiny);  // max(-0, +0): either zero
    } else {
      e.i = std::min<int64_t>(std::max<int64_t>(e.i, static_cast<int64_t>(lo)), static_cast<int64_t>(hi));
    }
    put(o, k, e);
  }
  return o;
}

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
        if (!is_f(t) || (kind == R::kMean && !xf && x.dtype != DType::kInt64)) {
          // Integers sum exactly in int64, wrapping; bool / int32 means divide that sum.
          int64_t s = 0;
          for (int64_t f : idx) s = wadd(s, x.i[f]);
          if (kind == R::kSum) {
            e.i = s;
            e.r = unknown ? kInf : 0;
          } else {
            e.f = rnd(t, static_cast<double>(s) / static_cast<double>(n));
            // JIT: sum * (1 / n) in t, up to 2 roundings.
            e.r = n == 0 ? 0 : unknown ? kInf : 2 * eps(t) * std::abs(e.f);
          }
          break;
        }
        // Floats (and int64 means, which the precompiled kernel sums in double).
        const DType at = xf ? x.dtype : DType::kFloat64;
        long double s = 0, mag = 0;
        bool has_nan = false, pinf = false, ninf = false;
        for (int64_t f : idx) {
          double v = xf ? x.f[f] : static_cast<double>(x.i[f]);
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
        } else {
          e.f = n == 0 ? kNaN : rnd(t, std::isfinite(y) ? static_cast<double>(s / n) : y);
          e.r = n == 0 ? 0 : r < kInf ? std::max(kTiny, r / static_cast<double>(n) + 2 * eps(t) * std::abs(e.f)) : r;
          if (n == 1 && r == 0 && e.f != 0) e.r = 0;
        }
        break;
      }
      case R::kProd: {
        if (!is_f(t)) {
          int64_t p = 1;
          for (int64_t f : idx) p = wmul(p, x.i[f]);
          e.i = p;
          e.r = unknown ? kInf : 0;
          break;
        }
        long double p = 1;
        bool nonfinite = false;
        for (int64_t f : idx) {
          p *= x.f[f];
          nonfinite = nonfinite || !std::isfinite(x.f[f]);
        }
        e.f = rnd(t, static_cast<double>(p));
        if (exact && n <= 1) e.r = 0;
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
          e.r = std::max(e.r, kTiny);
          if (!std::isfinite(e.r)) e.r = kInf;
        }
        break;
      }
      case R::kMax:
      case R::kMin: {
        const bool mx = kind == R::kMax;
        if (!xf) {
          int64_t m = x.i[idx[0]];
          for (int64_t f : idx) m = mx ? std::max(m, x.i[f]) : std::min(m, x.i[f]);
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
            if (x.i[idx[m]] > x.i[idx[w]]) w = m;
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
          e.f = rnd(t, static_cast<double>(s));
          if (!finite || !std::isfinite(e.f) || !(prop < kInf)) e.r = kInf;
          else if (K <= 1 && exact) e.r = 0;  // no product, or one rounded once
          else e.r = std::max(kTiny, prop + unit(t) * static_cast<double>(K + 1) * static_cast<double>(mag));
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
