// The reference of the random-program test (tests/jit_random_program_test.cpp):
// every op of wok re-implemented on plain vectors, with a first-order bound
// on how far wok's result may be from it. This file holds reference values,
// their elements, conversions and bounds; the ops are in
// random_program_ref_elementwise.h and random_program_ref_shaped.h.
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
using wok::is_half;
inline double eps(DType t) {
  switch (t) {
    case DType::kFloat16: return 0x1p-10;
    case DType::kBFloat16: return 0x1p-7;
    case DType::kFloat32: return 0x1p-23;
    case DType::kFloat64: return 0x1p-52;
    default: return 0;
  }
}
inline double unit(DType t) { return eps(t) / 2; }
// Half the smallest subnormal: the absolute error of rounding to t near zero.
inline double underflow(DType t) {
  switch (t) {
    case DType::kFloat16: return 0x1p-25;
    case DType::kBFloat16: return 0x1p-134;
    case DType::kFloat32: return 0x1p-150;
    default: return 0;  // 2^-1075 is below float64's range
  }
}
// v rounded to t, once (float16 and bfloat16 from the double directly).
inline double rnd(DType t, double v) {
  switch (t) {
    case DType::kFloat32: return static_cast<double>(static_cast<float>(v));
    case DType::kFloat16: return static_cast<double>(static_cast<float>(wok::half(v)));
    case DType::kBFloat16: return static_cast<double>(static_cast<float>(wok::bfloat16(v)));
    default: return v;
  }
}
// v wrapped to the integer t's width. uint64 values are held as their
// int64 bit pattern (num() reads them back unsigned).
inline int64_t wrap(DType t, int64_t v) {
  const auto u = static_cast<uint64_t>(v);
  switch (t) {
    case DType::kBool: return v != 0;
    case DType::kInt8: return static_cast<int8_t>(static_cast<uint8_t>(u));
    case DType::kUInt8: return static_cast<uint8_t>(u);
    case DType::kInt16: return static_cast<int16_t>(static_cast<uint16_t>(u));
    case DType::kUInt16: return static_cast<uint16_t>(u);
    case DType::kInt32: return static_cast<int32_t>(static_cast<uint32_t>(u));
    case DType::kUInt32: return static_cast<uint32_t>(u);
    default: return v;
  }
}
// a < b for integers of dtype t (uint64 compares its bit patterns unsigned).
inline bool ilt(DType t, int64_t a, int64_t b) {
  return t == DType::kUInt64 ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b;
}
inline int64_t imax(DType t, int64_t a, int64_t b) { return ilt(t, a, b) ? b : a; }
inline int64_t imin(DType t, int64_t a, int64_t b) { return ilt(t, b, a) ? b : a; }
// The integer t's lowest and highest values (uint64's highest as its bit pattern, -1).
inline int64_t ilowest(DType t) {
  switch (t) {
    case DType::kInt8: return INT8_MIN;
    case DType::kInt16: return INT16_MIN;
    case DType::kInt32: return INT32_MIN;
    case DType::kInt64: return INT64_MIN;
    default: return 0;  // bool and the unsigned
  }
}
inline int64_t ihighest(DType t) {
  switch (t) {
    case DType::kBool: return 1;
    case DType::kInt8: return INT8_MAX;
    case DType::kUInt8: return UINT8_MAX;
    case DType::kInt16: return INT16_MAX;
    case DType::kUInt16: return UINT16_MAX;
    case DType::kInt32: return INT32_MAX;
    case DType::kUInt32: return UINT32_MAX;
    case DType::kUInt64: return -1;
    default: return INT64_MAX;
  }
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
inline double num(DType t, const El& e) {
  if (is_f(t)) return e.f;
  return t == DType::kUInt64 ? static_cast<double>(static_cast<uint64_t>(e.i)) : static_cast<double>(e.i);
}

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

// Casts (and the conversions of promotion), as Note [Float to integer
// casts] (runtime/element_cast.h) says: truncation; to int32 and int64, nan,
// inf and out of range give the most negative integer; the narrower
// integers convert through int32 and uint32 through int64, then wrap;
// uint64 takes [2^63, 2^64) exactly and the rest through int64.
inline int64_t float_to_int(DType to, double x) {
  auto through = [x](bool wide) -> int64_t {
    const double lo = wide ? -9223372036854775808.0 : -2147483648.0;
    if (!(x >= lo && x < -lo)) return wide ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min();
    return static_cast<int64_t>(std::trunc(x));
  };
  switch (to) {
    case DType::kInt64: return through(true);
    case DType::kUInt32: return wrap(to, through(true));
    case DType::kUInt64:
      if (x >= 9223372036854775808.0 && x < 18446744073709551616.0) return static_cast<int64_t>(static_cast<uint64_t>(x));
      return through(true);
    default: return wrap(to, through(false));
  }
}
inline El conv(const El& e, DType from, DType to) {
  if (from == to) return e;
  El o;
  if (is_f(to)) {
    // One rounding: a 64-bit integer converts to float32 directly, not through double.
    if (to == DType::kFloat32 && from == DType::kUInt64) o.f = static_cast<float>(static_cast<uint64_t>(e.i));
    else if (to == DType::kFloat32 && from == DType::kInt64) o.f = static_cast<float>(e.i);
    else o.f = rnd(to, num(from, e));
    o.r = e.r == 0 ? 0 : rounded_r(to, o.f, e.r);
    // An integer float32 cannot hold converts to a half type once in the
    // precompiled kernels but through float32 in a fused one.
    if (is_half(to) && !is_f(from) && static_cast<double>(static_cast<float>(num(from, e))) != num(from, e)) o.r = kInf;
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

// Note [Half values in the reference]
// float16 and bfloat16 compute in float32 (Note [Compute dtypes] in
// runtime/dtype.h): an op on them is emulated in float32 and its result
// rounded to the half type. The precompiled kernels round every op's
// result, a fused kernel only the values it stores, so wok's value of an
// intermediate is either rounded or not: within eps(t) |y| (the
// reference's rounding and the one wok may have skipped) plus the
// underflow term of the reference's, and a value that overflows t in the
// reference may not in a fused kernel (unknown). A float32 result that is
// exact and that t holds is exact in both. Half results are never
// bitwise: the JIT and the precompiled kernels agree within the bound.
inline El to_half(DType t, const El& o32) {
  El o;
  o.f = rnd(t, o32.f);
  if (std::isnan(o.f)) o.r = o32.r;
  else if (o32.r == 0 && o.f == o32.f) o.r = 0;
  else if (std::isinf(o.f)) o.r = kInf;
  else o.r = o32.r < kInf ? o32.r + eps(t) * std::abs(o.f) + underflow(t) : kInf;
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

}  // namespace rp
