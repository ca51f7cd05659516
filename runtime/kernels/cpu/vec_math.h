// Branch-free scalar math that the compiler vectorizes: the transcendental
// functions of the precompiled kernels. The JIT emits the same sequences
// (jit/x86/), from the same constants (runtime/vec_math_coeffs.h).
//
// Every function handles inf, nan and overflow like libm; accuracy is
// measured by tests/jit_math_sweep_test.cpp and tests/elementwise_ops_test.cpp and listed in docs/numerics.md.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "wok/runtime/vec_math_coeffs.h"

// Each instruction-set build of these functions gets its own symbols.
// Without this, a copy GCC chose not to inline in the AVX-512 kernels could
// be merged by the linker with the baseline build's copy (same name, no
// FMA), and the kernels would silently compute something else.
#if defined(__AVX512F__)
#define WOK_VM_ISA isa_avx512
#elif defined(__FMA__)
#define WOK_VM_ISA isa_fma
#else
#define WOK_VM_ISA isa_baseline
#endif

namespace wok::vm {
inline namespace WOK_VM_ISA {

// Fused multiply-add where the ISA has one (the JIT always does); kernels
// are built with -ffp-contract=off so these are the only fused operations.
#if defined(__FMA__)
inline float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
inline double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
#else
inline float fma(float a, float b, float c) { return a * b + c; }
inline double fma(double a, double b, double c) { return a * b + c; }
#endif

// a*b + c where the caller needs the product's low bits (an exact residual,
// or the rounding error of a product): the hardware FMA where there is one,
// else Dekker's exact product. Without it, float64 pow on CPUs without FMA
// lost up to 17 ulp. Operands past 2^995 would overflow the split; those
// take the plain expression.
inline double fma_exact(double a, double b, double c) {
#if defined(__FMA__)
  return __builtin_fma(a, b, c);
#else
  constexpr double kSplit = 134217729.0;  // 2^27 + 1
  double ta = kSplit * a, ah = ta - (ta - a), al = a - ah;
  double tb = kSplit * b, bh = tb - (tb - b), bl = b - bh;
  double p = a * b;
  double e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;  // a*b = p + e exactly
  bool safe = std::fabs(a) < 0x1p995 && std::fabs(b) < 0x1p995;
  return safe ? (p + c) + e : p + c;
#endif
}

// Unrolled at compile time: a loop here would stop GCC from vectorizing the
// element loop around it.
template <typename T, size_t N, size_t... I>
inline T horner_unrolled(T x, const T (&c)[N], std::index_sequence<I...>) {
  T acc = c[0];
  ((acc = fma(acc, x, c[I + 1])), ...);
  return acc;
}
template <typename T, size_t N>
inline T horner(T x, const T (&c)[N]) {
  return horner_unrolled(x, c, std::make_index_sequence<N - 1>{});
}

template <typename T>
struct FloatBits;
template <>
struct FloatBits<float> {
  using Int = int32_t;
  static constexpr int kMantissa = 23;
  static constexpr Int kBias = 127;
};
template <>
struct FloatBits<double> {
  using Int = int64_t;
  static constexpr int kMantissa = 52;
  static constexpr Int kBias = 1023;
};

template <typename T>
inline T inf() {
  return std::numeric_limits<T>::infinity();
}
template <typename T>
inline T qnan() {
  return std::numeric_limits<T>::quiet_NaN();
}
template <typename T>
inline T copysign(T magnitude, T sign) {
  using I = typename FloatBits<T>::Int;
  constexpr I kSign = I{1} << (sizeof(T) * 8 - 1);
  return std::bit_cast<T>((std::bit_cast<I>(magnitude) & ~kSign) | (std::bit_cast<I>(sign) & kSign));
}
template <typename T>
inline T fabs(T x) {
  using I = typename FloatBits<T>::Int;
  constexpr I kSign = I{1} << (sizeof(T) * 8 - 1);
  return std::bit_cast<T>(std::bit_cast<I>(x) & ~kSign);
}
// 2^n for n in the normal exponent range.
template <typename T>
inline T pow2i(typename FloatBits<T>::Int n) {
  using B = FloatBits<T>;
  return std::bit_cast<T>(static_cast<typename B::Int>((n + B::kBias) << B::kMantissa));
}

// NumPy's maximum/minimum: a nan in either operand wins. The compare-select
// order matches x86 max/min instructions, so the JIT gets bitwise the same.
template <typename T>
inline T maximum(T a, T b) {
  T r = a > b ? a : b;
  if constexpr (std::is_floating_point_v<T>) r = a != a ? a : r;
  return r;
}
template <typename T>
inline T minimum(T a, T b) {
  T r = a < b ? a : b;
  if constexpr (std::is_floating_point_v<T>) r = a != a ? a : r;
  return r;
}

// ---- exp / expm1 -------------------------------------------------------------------
// Note [Cheap transcendentals]
// A fused GELU or tanh program is compute-bound on AVX2: its kernel is a
// chain of ~40 vector instructions per vector of elements, and on Zen the
// two pipes that multiply, compare and blend were the bottleneck
// (bench_jit_programs P3). So the formulas here avoid work whose only job
// was a special case the arithmetic already gets right:
//  - nan needs no compare-and-blend: the clamps are comparisons that are
//    false for nan (the JIT's vmin/vmax return their second operand when
//    unordered, which is the input), and every later step keeps a nan a
//    nan. The result is some nan, not necessarily the input's payload.
//  - tanh needs no "beyond the cut-off, 1" blend: at the clamp 2|x| =
//    2 kTanhOne, expm1 is above 2^26 (float32; 2^55 for float64), so
//    em + 2 rounds to em and em / (em + 2) is exactly 1.
//  - tanh's result is >= +0 (or nan) before its sign is applied, so the
//    sign is or-ed in: one and, one or.
// The JIT emits the same operations in the same order (jit/x86/math_emitter.cpp),
// so the backends agree bitwise; tests/jit_math_sweep_test.cpp checks it.
template <typename T>
struct ExpConst;
template <>
struct ExpConst<float> {
  static constexpr float kLog2e = vmc::kLog2eF, kLn2Hi = vmc::kLn2HiF, kLn2Lo = vmc::kLn2LoF;
  static constexpr float kMin = vmc::kExpMinF, kMax = vmc::kExpMaxF, kMagic = vmc::kRoundMagicF;
  static constexpr const auto& kPoly = vmc::kExpPolyF;
  static constexpr const auto& kDirectPoly = vmc::kExpDirectPolyF;
};
template <>
struct ExpConst<double> {
  static constexpr double kLog2e = vmc::kLog2eD, kLn2Hi = vmc::kLn2HiD, kLn2Lo = vmc::kLn2LoD;
  static constexpr double kMin = vmc::kExpMinD, kMax = vmc::kExpMaxD, kMagic = vmc::kRoundMagicD;
  static constexpr const auto& kPoly = vmc::kExpPolyD;
  static constexpr const auto& kDirectPoly = vmc::kExpDirectPolyD;
};

// x = n ln2 + r: returns r and sets n.
template <typename T>
inline T exp_reduce(T x, typename FloatBits<T>::Int& n) {
  using C = ExpConst<T>;
  using I = typename FloatBits<T>::Int;
  T t = fma(x, C::kLog2e, C::kMagic);
  T nf = t - C::kMagic;
  n = std::bit_cast<I>(t) - std::bit_cast<I>(C::kMagic);
  T r = fma(-nf, C::kLn2Hi, x);
  return fma(-nf, C::kLn2Lo, r);
}

// x = n ln2 + r: returns expm1(r) and sets n.
template <typename T>
inline T expm1_reduced(T x, typename FloatBits<T>::Int& n) {
  T r = exp_reduce(x, n);
  T p = horner(r, ExpConst<T>::kPoly);
  return fma(r * r, p, r);
}

// Note [Direct exp polynomial]
// exp needs e^r, not e^r - 1, so its polynomial is e^r's own, evaluated by
// Horner's rule down to the constant: it ends in r * (1 + r/2 + ...) + 1,
// one fused multiply-add, where 1 + (r + r^2 P(r)) took a multiply, a fused
// multiply-add and an add. In float32 the polynomial is a fitted degree 6
// (vec_math_coeffs.h) where the Taylor form needed degree 7: two
// instructions fewer per vector, one fewer in the chain of dependent ones,
// and no less accurate (0.72 ulp on the reduced range, from 0.89). The
// chain is what matters on a Zen 5 EPYC: exp's is long enough that only a
// few vectors' worth fit in the scheduler, and float32 softmax, compute
// bound there, is mostly exp. In a standalone AVX-512 loop of exp and sum
// this polynomial took about 1.3 cycles per vector fewer than the degree 7
// Taylor polynomial evaluated the same direct way, which ran no faster
// than the old form. (vrange, which would clamp in one instruction, turns a
// nan into the bound: the two clamps stay.)
// Tried and dropped (2026-12): reducing by ln2/16 with a table of 2^(j/16)
// (one vpermps on AVX-512) and its rounding errors (a second table, added
// to r) needs only Taylor's terms to r^3: seven multiply-adds instead of
// nine, 0.72 ulp at most, the JIT's exp 20% faster in L2 and a float16
// softmax row 5% faster. But the precompiled kernels must agree with the
// JIT bitwise, and GCC does not vectorize a table lookup here (no gathers
// under its tuning; scalar code instead): their exp ran 3.5 to 4 times
// slower, too much for the fallback path.
// An exp whose value reaches only float16 or bfloat16 results through
// products, quotients and its own row sum (softmax's) is cheaper still in
// the JIT: ln2 in one part and degree 5 (vmc::kExpHalfPolyF), 2^-21
// relative, Note [Half-grade exp] in jit/x86/instr_emitter.cpp. In a
// standalone loop a float16 softmax's three passes took 8.6 cycles per 16
// values where they took 10.0 (AVX-512). The precompiled kernels have no
// such exp: they run softmax op by op, rounding each op's result.
// expm1_reduced keeps the other form, which tanh and expm1 need for their
// accuracy near 0.
template <typename T>
inline T exp(T x) {
  using C = ExpConst<T>;
  using I = typename FloatBits<T>::Int;
  T xc = x < C::kMin ? C::kMin : x;
  xc = xc > C::kMax ? C::kMax : xc;
  I n;
#if defined(__FMA__)
  T q = horner(exp_reduce(xc, n), C::kDirectPoly);
#else
  // Without a fused multiply-add (the baseline build, which has no JIT to
  // agree with) the direct form's last step, r * (...) + 1, rounds twice:
  // up to 1.02 ulp in float64. 1 + expm1(r) stays within 1.
  T q = expm1_reduced(xc, n) + T(1);
#endif
  // 2^n in two factors, so results in the subnormal range and just below
  // overflow are both reached without an intermediate inf or 0; q * s1 is
  // exact (a power of two scaling of a normal number), so the result is
  // rounded once.
  I h = n >> 1;
  T s1 = pow2i<T>(h);
  T s2 = pow2i<T>(n - h);
  // A nan input stays nan through the clamps (they compare false) and the
  // arithmetic: no separate check (Note [Cheap transcendentals]).
  return q * s1 * s2;
}

// e^x - 1, accurate near 0; for |x| below the tanh cut-off only.
template <typename T>
inline T expm1_small(T x) {
  typename FloatBits<T>::Int n;
  T p = expm1_reduced(x, n);
  T s = pow2i<T>(n);
  return fma(s, p, s - T(1));
}

template <typename T>
inline T tanh(T x) {
  constexpr T kOne = std::is_same_v<T, float> ? vmc::kTanhOneF : vmc::kTanhOneD;
  // Note [Cheap transcendentals]: at the clamp em / (em + 2) is exactly 1,
  // t >= +0, and a nan passes through every step.
  T y = T(2) * fabs(x);
  y = y > T(2) * kOne ? T(2) * kOne : y;
  T em = expm1_small(y);
  T t = em / (em + T(2));
  using I = typename FloatBits<T>::Int;
  constexpr I kSign = I{1} << (8 * sizeof(T) - 1);
  return std::bit_cast<T>(std::bit_cast<I>(t) | (std::bit_cast<I>(x) & kSign));
}

// ---- log ---------------------------------------------------------------------------
template <typename T>
inline T log(T x) {
  using B = FloatBits<T>;
  using I = typename B::Int;
  constexpr T kScale = std::is_same_v<T, float> ? T(8388608.0f) : T(4503599627370496.0);  // 2^mantissa
  constexpr I kMantMask = (I{1} << B::kMantissa) - 1;
  constexpr I kOneBits = B::kBias << B::kMantissa;
  constexpr T kSqrt2 = static_cast<T>(vmc::kSqrt2);
  constexpr T kLn2Hi = ExpConst<T>::kLn2Hi, kLn2Lo = ExpConst<T>::kLn2Lo;
  const auto& poly = []() -> const auto& {
    if constexpr (std::is_same_v<T, float>) return vmc::kLogPolyF;
    else return vmc::kLogPolyD;
  }();

  bool sub = x < std::numeric_limits<T>::min();  // subnormal (or <= 0, fixed below)
  T xs = sub ? x * kScale : x;
  I bits = std::bit_cast<I>(xs);
  I e = (bits >> B::kMantissa) - B::kBias;
  T m = std::bit_cast<T>((bits & kMantMask) | kOneBits);
  bool big = m > kSqrt2;
  m = big ? m * T(0.5) : m;
  e = big ? e + 1 : e;
  e = sub ? e - B::kMantissa : e;
  T f = m - T(1);
  T s = f / (T(2) + f);
  T z = s * s;
  T r = z * horner(z, poly);
  T hf = T(0.5) * f * f;
  T l1p = f - (hf - s * (hf + r));
  T ef = static_cast<T>(e);
  T res = fma(ef, kLn2Hi, fma(ef, kLn2Lo, l1p));
  res = x == inf<T>() ? x : res;
  res = x == T(0) ? -inf<T>() : res;
  res = x < T(0) ? qnan<T>() : res;
  return x != x ? x : res;
}

// ---- sin / cos (float32 through double) ----------------------------------------------
// quadrant_shift 0 gives sin, 1 gives cos.
inline double sincos_d(double x, int64_t quadrant_shift) {
  double t = fma(x, vmc::kTwoOverPi, vmc::kRoundMagicD);
  double n = t - vmc::kRoundMagicD;
  int64_t q = std::bit_cast<int64_t>(t) + quadrant_shift;
  double r = fma(-n, vmc::kPio2Part1, x);
  r = fma(-n, vmc::kPio2Part2, r);
  r = fma(-n, vmc::kPio2Part3, r);
  r = fma(-n, vmc::kPio2Part4, r);
  double z = r * r;
  double s = fma(r * z, horner(z, vmc::kSinPoly), r);
  double c = fma(z * z, horner(z, vmc::kCosPoly), fma(-0.5, z, 1.0));
  double v = (q & 1) ? c : s;
  v = (q & 2) ? -v : v;
  v = fabs(x) > vmc::kSinCosMax ? qnan<double>() : v;
  // sin keeps the sign of a zero argument; r + r^3 S would give +0 for -0.
  return (quadrant_shift == 0 && x == 0) ? x : v;
}

inline double sin(double x) { return sincos_d(x, 0); }
inline double cos(double x) { return sincos_d(x, 1); }
inline float sin(float x) { return static_cast<float>(sincos_d(x, 0)); }
inline float cos(float x) { return static_cast<float>(sincos_d(x, 1)); }

// ---- erf -----------------------------------------------------------------------------
template <typename T>
inline T erf(T x) {
  constexpr bool f32 = std::is_same_v<T, float>;
  constexpr T kSmall = static_cast<T>(vmc::kErfSmall);
  constexpr T kOne = f32 ? T(vmc::kErfOneF) : T(vmc::kErfOneD);
  constexpr T kMid = f32 ? T(vmc::kErfcMidF) : T(vmc::kErfcMidD);
  constexpr T kScale = f32 ? T(vmc::kErfcScaleF) : T(vmc::kErfcScaleD);
  const auto& taylor = []() -> const auto& {
    if constexpr (f32) return vmc::kErfTaylorF;
    else return vmc::kErfTaylorD;
  }();
  const auto& tail = []() -> const auto& {
    if constexpr (f32) return vmc::kErfcPolyF;
    else return vmc::kErfcPolyD;
  }();
  T a = fabs(x);
  T small = x * horner(x * x, taylor);
  T ac = a > kOne ? kOne : a;
  T u = (T(1) / (T(1) + ac) - kMid) * kScale;
  T large = T(1) - exp(-(ac * ac)) * horner(u, tail);
  large = a >= kOne ? T(1) : large;
  T res = a < kSmall ? small : copysign(large, x);
  return x != x ? x : res;
}

// ---- pow -----------------------------------------------------------------------------
// IEEE pow special cases on top of exp(b log|a|); float32 is computed in
// double, so its result is correctly rounded but for rare ties.
template <typename T>
inline T pow_special_cases(T a, T b, T r) {
  T fb = std::floor(b);
  bool b_int = fb == b;
  T half = b * T(0.5);
  bool b_odd = b_int && std::floor(half) != half;
  bool neg = std::signbit(a);
  r = (neg && b_odd) ? -r : r;
  r = (a < T(0) && !b_int && a != -inf<T>()) ? qnan<T>() : r;
  r = (fabs(a) == T(1) && fabs(b) == inf<T>()) ? T(1) : r;
  // The exponents code uses most, computed exactly (correctly rounded).
  r = b == T(1) ? a : r;
  r = b == T(2) ? a * a : r;
  r = b == T(-1) ? T(1) / a : r;
  r = (b == T(0.5) && a >= T(0)) ? std::sqrt(a) + T(0) : r;  // + 0 turns sqrt(-0) into +0
  r = (a == T(1) || b == T(0)) ? T(1) : r;
  return r;
}

// log(x) as an unevaluated sum hi + lo, good to about 2^-60 relative: what
// float64 pow needs so that b * log|a| keeps its last bits. Same
// decomposition as log(), with the division and the sums done exactly.
inline void log_dd(double x, double& hi, double& lo) {
  using I = int64_t;
  constexpr I kMantMask = (I{1} << 52) - 1;
  constexpr I kOneBits = I{1023} << 52;
  bool sub = x < std::numeric_limits<double>::min();
  double xs = sub ? x * 4503599627370496.0 : x;
  I bits = std::bit_cast<I>(xs);
  I e = (bits >> 52) - 1023;
  double m = std::bit_cast<double>((bits & kMantMask) | kOneBits);
  bool big = m > vmc::kSqrt2;
  m = big ? m * 0.5 : m;
  e = big ? e + 1 : e;
  e = sub ? e - 52 : e;
  double f = m - 1.0;           // exact
  double u = 2.0 + f;
  double u_lo = (2.0 - u) + f;  // 2 + f = u + u_lo exactly
  double s = f / u;
  double rem = fma_exact(-s, u, f);  // f - s u, exact
  rem = fma_exact(-s, u_lo, rem);
  double s_lo = rem / u;        // s + s_lo = f / (2 + f)
  double z = s * s;
  double r = z * horner(z, vmc::kLogPolyD);
  double ef = static_cast<double>(e);
  double a = ef * vmc::kLn2HiD;  // exact
  double b = 2.0 * s;            // exact
  double sum = a + b;            // two-sum: sum + err = a + b exactly
  double bb = sum - a;
  double err = (a - (sum - bb)) + (b - bb);
  double tail = err + fma(ef, vmc::kLn2LoD, fma(s, r, 2.0 * s_lo));
  hi = sum + tail;
  lo = tail - (hi - sum);
  bool special = !(x > 0.0 && x < inf<double>());  // 0, negative, inf, nan
  hi = special ? log(x) : hi;
  lo = special ? 0.0 : lo;
}

// Note [Exact integer powers]
// exp(b log a) is within an ulp or two, so pow(9, 3) could be 728.99999...
// (and 728 once cast to an integer). For an integer-valued b with |b| <
// 2^kPowIntBits the power is also computed by squaring, with each product
// that matters checked exact by an FMA (a*b - p == 0, p normal and large
// enough that a nonzero error could not round to 0); when every one is,
// the squaring's result is a^|b| exactly and replaces the approximation
// (for b < 0 its reciprocal, correctly rounded). So every exactly
// representable integer power is exact, and the others keep the
// exp-log result. 11 bits reach 2^-1074 = 0.5^1074: no larger |b| has an
// exact result but for |a| = 1. The JIT emits the same steps
// (jit/x86/math_emitter.cpp), CUDA runs them in wok::pow_ (templates/wok_device.cuh).
using vmc::kPowExactMin;
using vmc::kPowIntBits;

// x*y == p exactly, and p within [kPowExactMin, max]. Without an FMA, by
// Dekker's product; operands past 2^995 count as inexact there.
inline bool product_exact(double x, double y, double p) {
  bool in_range = p >= kPowExactMin && p <= std::numeric_limits<double>::max();
#if defined(__FMA__)
  return in_range && __builtin_fma(x, y, -p) == 0.0;
#else
  bool safe = std::fabs(x) < 0x1p995 && std::fabs(y) < 0x1p995;
  return in_range && safe && fma_exact(x, y, -p) == 0.0;
#endif
}

// a^n for a >= 0 and an integer-valued n in [0, 2^kPowIntBits) by
// squaring; `exact` says whether the result is a^n exactly.
template <size_t... I>
inline double pow_by_squaring(double a, double n, bool& exact, std::index_sequence<I...>) {
  double result = 1.0, base = a;
  bool ok = true;
  auto step = [&] {
    double half = n * 0.5;
    double rest = std::floor(half);
    bool bit = rest != half;
    double p = result * base;
    ok = ok && (!bit || product_exact(result, base, p));
    result = bit ? p : result;
    double sq = base * base;
    ok = ok && (rest == 0.0 || product_exact(base, base, sq));  // used only if bits remain
    base = sq;
    n = rest;
  };
  ((static_cast<void>(I), step()), ...);
  exact = ok && n == 0.0;
  return result;
}

// r, or a^b exactly where b is an integer and a^b is representable (Note
// [Exact integer powers]); the sign is pow_special_cases' to apply.
inline double pow_exact_or(double a, double b, double r) {
  double n = fabs(b);
  bool b_int = std::floor(b) == b && n < double(1 << kPowIntBits);
  bool exact;
  double s = pow_by_squaring(fabs(a), b_int ? n : 0.0, exact, std::make_index_sequence<kPowIntBits>{});
  s = b < 0 ? 1.0 / s : s;
  return (b_int && exact) ? s : r;
}

inline double pow(double a, double b) {
  double lh, ll;
  log_dd(fabs(a), lh, ll);
  double y = b * lh;
  double y_lo = fma_exact(b, lh, -y) + b * ll;  // b (lh + ll) = y + y_lo
  y_lo = fabs(y) < inf<double>() ? y_lo : 0.0;
  double r = exp(y);
  r = fabs(r) < inf<double>() ? fma(r, y_lo, r) : r;  // e^(y + y_lo) to first order
  r = pow_exact_or(a, b, r);
  return pow_special_cases(a, b, r);
}

inline float pow(float a, float b) {
  double r = exp(static_cast<double>(b) * log(static_cast<double>(fabs(a))));
  r = pow_exact_or(a, b, r);
  return pow_special_cases(a, b, static_cast<float>(r));
}

// Integer power by squaring; negative exponents give 1/a^|b| truncated
// toward zero (0 for |a| > 1, and 0 for a = 0).
template <typename T>
inline T ipow(T a, T b) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>)
    if (b < 0) {
      if (a == 1) return 1;
      if (a == -1) return (b & 1) ? T(-1) : T(1);
      return 0;
    }
  U result = 1, base = static_cast<U>(a);
  for (U e = static_cast<U>(b); e; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return static_cast<T>(result);
}

}  // inline namespace WOK_VM_ISA
}  // namespace wok::vm
