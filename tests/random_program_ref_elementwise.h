// The random-program reference's elementwise ops (unary, binary, where,
// cast, clamp) on reference values, with their bounds (Note [Reference
// values and bounds] in random_program_reference.h).
#pragma once

#include <wok/wok.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

#include "random_program_reference.h"

namespace rp {

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
  // A narrow integer widens first (Note [The widening adapter] in
  // runtime/widening.h): the op runs on its compute dtype, whose float
  // result (float64) rounds once to t.
  if (!is_f(in_t) && is_f(t) && wok::compute_dtype(in_t) != in_t) {
    const DType wide = wok::float_result_type(wok::compute_dtype(in_t));
    if (wide != t) return conv(unary_el(op, wok::compute_dtype(in_t), wide, x0), wide, t);
  }
  // Half types compute in float32 (Note [Half values in the reference]);
  // the sign ops and the roundings to integers give half values as they are.
  if (is_half(t) && op != U::kNeg && op != U::kAbs && op != U::kRelu && op != U::kFloor && op != U::kCeil && op != U::kRound)
    return to_half(t, unary_el(op, in_t, DType::kFloat32, x0));
  El x = conv(x0, in_t, t);
  if (!is_f(t)) {
    int64_t v = x.i;
    const bool unsigned_t = wok::is_unsigned(t);
    switch (op) {
      case U::kNeg: o.i = wrap(t, wsub(0, v)); break;
      case U::kAbs: o.i = wrap(t, v < 0 && !unsigned_t ? wsub(0, v) : v); break;
      case U::kRelu: o.i = unsigned_t ? v : std::max<int64_t>(v, 0); break;
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
      if (std::isinf(v) && v < 0) {  // the formula as written: -inf * (1 + tanh(-inf)) = -inf * 0 = nan, as PyTorch and ONNX's reference give
        o.f = std::numeric_limits<double>::quiet_NaN();
        o.r = exact ? 0 : kInf;
        return o;
      }
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
  if (b < 0 && !wok::is_unsigned(t)) {
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
  if (is_half(ct)) {  // in float32 (Note [Half values in the reference])
    // An integer operand converts to the half type first (as the op's
    // dtype rule promotes it: 65520 is inf in float16), then to float32.
    auto widen = [ct](const El& e, DType from) { return conv(conv(e, from, ct), ct, DType::kFloat32); };
    El o32 = binary_el(op, DType::kFloat32, DType::kFloat32, cmp ? t : DType::kFloat32, widen(a0, ta), widen(b0, tb));
    return cmp ? o32 : to_half(t, o32);
  }
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
      o.i = ct == DType::kUInt64 ? c(static_cast<uint64_t>(a.i), static_cast<uint64_t>(b.i)) : c(a.i, b.i);
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
      case B::kMax: o.i = imax(ct, x, z); break;
      case B::kMin: o.i = imin(ct, x, z); break;
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
  if (is_half(t)) o.bitwise = false;
  for (int64_t k = 0; k < o.size(); ++k) put(o, k, unary_el(op, x.dtype, t, get(x, k)));
  return o;
}
inline Val ref_binary(B op, const Val& a, const Val& b, DType t) {
  Val o = make_val(t, bshape(a.shape, b.shape));
  merge_bitwise(o, {&a, &b});
  if (is_half(t) || is_half(a.dtype) || is_half(b.dtype)) o.bitwise = false;
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
      e.i = imin(x.dtype, imax(x.dtype, e.i, static_cast<int64_t>(lo)), static_cast<int64_t>(hi));
    }
    put(o, k, e);
  }
  return o;
}

}  // namespace rp
