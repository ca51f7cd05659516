// wok's device math: one definition of every scalar primitive, shared by
// the kernels the JIT renders (templates/elementwise.cu.in), the
// precompiled formula kernels (templates/formula_kernel.cu.in) and the
// other precompiled CUDA kernels (runtime/kernels/cuda/*.cu), so the paths
// cannot drift (Note [One formula per op] in runtime/op_def.h). Only
// primitives live here: composites (gelu, sigmoid, ...) are formulas.
//
// The semantics are the CPU's (docs/numerics.md): NumPy's nan-propagating
// maximum/minimum, wrapping integer arithmetic, round half to even, C++
// conversions, and float -> integer conversions that give the most negative
// integer for nan, infinities and out-of-range values, as x86 does.
// Transcendentals use CUDA's accurate math library (expf, not __expf);
// kernels are compiled with -fmad=false so + - * / and sqrt round exactly
// like the CPU.
//
// This file is compiled by nvcc and by NVRTC: it includes nothing but its
// sibling wok_half.cuh (the half types and their conversions).
#ifndef WOK_DEVICE_CUH
#define WOK_DEVICE_CUH

#ifndef WOK_DEVICE  // a host test defines it (tests/cuda_device_host_test.cpp)
#define WOK_DEVICE __device__ __forceinline__
#endif

#include "wok_half.cuh"

namespace wok {

using i32 = int;
using i64 = long long;
using u32 = unsigned int;
using u64 = unsigned long long;
using i8 = signed char;
using u8 = unsigned char;
using i16 = short;
using u16 = unsigned short;
using b8 = bool;
using f32 = float;
using f64 = double;

constexpr int kMaxRank = 8;
constexpr i32 kInt32Min = -2147483647 - 1;
constexpr i64 kInt64Min = -9223372036854775807LL - 1;
constexpr i32 kInt32Max = 2147483647;
constexpr i64 kInt64Max = 9223372036854775807LL;

template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

template <typename T>
struct Traits;
template <> struct Traits<bool> { static constexpr bool kFloat = false, kInt = false; };
template <> struct Traits<i32> { static constexpr bool kFloat = false, kInt = true; using U = u32; };
template <> struct Traits<i64> { static constexpr bool kFloat = false, kInt = true; using U = u64; };
template <> struct Traits<u64> { static constexpr bool kFloat = false, kInt = true; using U = u64; };
template <> struct Traits<float> { static constexpr bool kFloat = true, kInt = false; };
template <> struct Traits<double> { static constexpr bool kFloat = true, kInt = false; };
// Whether integer type T is signed: the INT_MIN / -1 rules below are for
// those only.
template <typename T>
constexpr bool kSigned = T(-1) < T(0);

// A param slot (8 bytes, value in the low bytes) read as T.
template <typename T>
WOK_DEVICE T from_bits(u64 bits) {
  return half_detail::bit_copy<T>(bits);
}

// ---- conversions ----------------------------------------------------------------------

template <typename To, typename From>
struct Convert {
  static WOK_DEVICE To run(From x) { return static_cast<To>(x); }
};
template <typename From>
struct Convert<bool, From> {
  static WOK_DEVICE bool run(From x) { return x != From(0); }
};
template <>
struct Convert<bool, bool> {
  static WOK_DEVICE bool run(bool x) { return x; }
};
// Float to integer: truncation, and the most negative integer for nan,
// infinities and values out of range (x86's "integer indefinite").
template <typename To, typename From, To kMin>
WOK_DEVICE To float_to_int(From x) {
  const From limit = -static_cast<From>(kMin);  // 2^31 or 2^63, exact
  const bool out = !(x > -limit - From(1) && x < limit);
  return out ? kMin : static_cast<To>(x);
}
template <> struct Convert<i32, float> { static WOK_DEVICE i32 run(float x) { return float_to_int<i32, float, kInt32Min>(x); } };
template <> struct Convert<i32, double> { static WOK_DEVICE i32 run(double x) { return float_to_int<i32, double, kInt32Min>(x); } };
template <> struct Convert<i64, float> { static WOK_DEVICE i64 run(float x) { return float_to_int<i64, float, kInt64Min>(x); } };
template <> struct Convert<i64, double> { static WOK_DEVICE i64 run(double x) { return float_to_int<i64, double, kInt64Min>(x); } };
// uint64 takes [2^63, 2^64) exactly and the rest through int64, wrapped:
// -1.5 -> 2^64 - 1, nan -> 2^63 (Note [Float to integer casts] in
// runtime/element_cast.h).
template <typename From>
WOK_DEVICE u64 float_to_u64(From x) {
  const From k63 = From(9223372036854775808.0), k64 = From(18446744073709551616.0);
  if (x >= k63 && x < k64) return static_cast<u64>(x);
  return static_cast<u64>(float_to_int<i64, From, kInt64Min>(x));
}
template <> struct Convert<u64, float> { static WOK_DEVICE u64 run(float x) { return float_to_u64(x); } };
template <> struct Convert<u64, double> { static WOK_DEVICE u64 run(double x) { return float_to_u64(x); } };

template <typename A, typename B>
struct Same {
  static constexpr bool value = false;
};
template <typename A>
struct Same<A, A> {
  static constexpr bool value = true;
};
template <typename T>
struct IsHalf {
  static constexpr bool value = Same<T, f16>::value || Same<T, bf16>::value;
};

// x rounded to a half type once: from float or double directly, from an
// integer or bool through double (exact up to 2^53), as on the CPU
// (runtime/element_cast.h).
template <typename To, typename From>
WOK_DEVICE To round_to_half(From x) {
  if constexpr (Same<From, float>::value || Same<From, double>::value) {
    if constexpr (Same<To, f16>::value) return to_f16(x);
    else return to_bf16(x);
  } else {
    return round_to_half<To>(static_cast<double>(x));
  }
}

// The narrow integers convert with static_cast: to them it keeps the low
// bits (kernels cast floats to them through int32: Note [Programs in their
// compute dtypes] in runtime/compute_program.h).
template <typename To, typename From>
WOK_DEVICE To cast(From x) {
  if constexpr (Same<To, From>::value) return x;
  else if constexpr (IsHalf<From>::value) return cast<To>(to_float(x));  // exact
  else if constexpr (IsHalf<To>::value) return round_to_half<To>(x);
  else return Convert<To, From>::run(x);
}

// ---- arithmetic: integers wrap, floats are IEEE ------------------------------------------

template <typename T>
WOK_DEVICE T add(T a, T b) {
  if constexpr (Traits<T>::kInt) return static_cast<T>(static_cast<typename Traits<T>::U>(a) + static_cast<typename Traits<T>::U>(b));
  else return a + b;
}
template <typename T>
WOK_DEVICE T sub(T a, T b) {
  if constexpr (Traits<T>::kInt) return static_cast<T>(static_cast<typename Traits<T>::U>(a) - static_cast<typename Traits<T>::U>(b));
  else return a - b;
}
template <typename T>
WOK_DEVICE T mul(T a, T b) {
  if constexpr (Traits<T>::kInt) return static_cast<T>(static_cast<typename Traits<T>::U>(a) * static_cast<typename Traits<T>::U>(b));
  else return a * b;
}
template <typename T>
WOK_DEVICE T div(T a, T b) {
  return a / b;  // floats only: integer '/' is true division in a float type
}
template <typename T>
WOK_DEVICE T neg(T a) {
  return sub(T(0), a);  // -0.0 for 0.0: 0 - x would give +0, so floats negate
}
template <> WOK_DEVICE float neg<float>(float a) { return -a; }
template <> WOK_DEVICE double neg<double>(double a) { return -a; }

// NumPy's maximum/minimum: a nan in either operand wins. Same compare-select
// order as the CPU (runtime/kernels/cpu/vec_math.h), so zeros of either sign
// come out the same.
template <typename T>
WOK_DEVICE T maximum(T a, T b) {
  T r = a > b ? a : b;
  if constexpr (Traits<T>::kFloat) r = a != a ? a : r;
  return r;
}
template <typename T>
WOK_DEVICE T minimum(T a, T b) {
  T r = a < b ? a : b;
  if constexpr (Traits<T>::kFloat) r = a != a ? a : r;
  return r;
}
template <> WOK_DEVICE bool maximum<bool>(bool a, bool b) { return a || b; }
template <> WOK_DEVICE bool minimum<bool>(bool a, bool b) { return a && b; }

WOK_DEVICE float abs(float a) { return fabsf(a); }
WOK_DEVICE double abs(double a) { return fabs(a); }
WOK_DEVICE i32 abs(i32 a) { return a < 0 ? neg(a) : a; }
WOK_DEVICE i64 abs(i64 a) { return a < 0 ? neg(a) : a; }
WOK_DEVICE u64 abs(u64 a) { return a; }

// ---- transcendentals: CUDA's accurate library ------------------------------------------------

WOK_DEVICE float sqrt_(float a) { return sqrtf(a); }
WOK_DEVICE double sqrt_(double a) { return sqrt(a); }
WOK_DEVICE float exp_(float a) { return expf(a); }
WOK_DEVICE double exp_(double a) { return exp(a); }
WOK_DEVICE float log_(float a) { return logf(a); }
WOK_DEVICE double log_(double a) { return log(a); }
WOK_DEVICE float sin_(float a) { return sinf(a); }
WOK_DEVICE double sin_(double a) { return sin(a); }
WOK_DEVICE float cos_(float a) { return cosf(a); }
WOK_DEVICE double cos_(double a) { return cos(a); }
WOK_DEVICE float tanh_(float a) { return tanhf(a); }
WOK_DEVICE double tanh_(double a) { return tanh(a); }
WOK_DEVICE float erf_(float a) { return erff(a); }
WOK_DEVICE double erf_(double a) { return erf(a); }
WOK_DEVICE float floor_(float a) { return floorf(a); }
WOK_DEVICE double floor_(double a) { return floor(a); }
WOK_DEVICE float ceil_(float a) { return ceilf(a); }
WOK_DEVICE double ceil_(double a) { return ceil(a); }
WOK_DEVICE float round_(float a) { return rintf(a); }  // half to even
WOK_DEVICE double round_(double a) { return rint(a); }
// Integers are already whole.
WOK_DEVICE i32 floor_(i32 a) { return a; }
WOK_DEVICE i64 floor_(i64 a) { return a; }
WOK_DEVICE u64 floor_(u64 a) { return a; }
WOK_DEVICE i32 ceil_(i32 a) { return a; }
WOK_DEVICE i64 ceil_(i64 a) { return a; }
WOK_DEVICE u64 ceil_(u64 a) { return a; }
WOK_DEVICE i32 round_(i32 a) { return a; }
WOK_DEVICE i64 round_(i64 a) { return a; }
WOK_DEVICE u64 round_(u64 a) { return a; }
// Exact integer powers, as on the CPU (Note [Exact integer powers] in
// runtime/kernels/cpu/vec_math.h): for an integer-valued |b| < 2^11, |a|^|b|
// by squaring, used when every product that matters is exact and at least
// 2^-968; then b < 0 takes its reciprocal and an odd b the sign of a.
WOK_DEVICE bool pow_exactly(double a, double b, double& out) {
  const double n0 = fabs(b);
  if (!(floor(b) == b && n0 < 2048.0)) return false;
  double n = n0, result = 1.0, base = fabs(a);
  bool ok = true;
  for (int i = 0; i < 11 && n != 0.0; ++i) {
    const double half = n * 0.5, rest = floor(half);
    if (rest != half) {
      const double p = result * base;
      ok = ok && p >= 0x1p-968 && p <= 1.7976931348623157e308 && fma(result, base, -p) == 0.0;
      result = p;
    }
    if (rest != 0.0) {
      const double sq = base * base;
      ok = ok && sq >= 0x1p-968 && sq <= 1.7976931348623157e308 && fma(base, base, -sq) == 0.0;
      base = sq;
    }
    n = rest;
  }
  if (!ok) return false;
  if (b < 0) result = 1.0 / result;
  const bool odd = floor(n0 * 0.5) != n0 * 0.5;
  out = (odd && signbit(a)) ? -result : result;
  return true;
}
WOK_DEVICE float pow_(float a, float b) {
  double r;
  return pow_exactly(a, b, r) ? static_cast<float>(r) : powf(a, b);
}
WOK_DEVICE double pow_(double a, double b) {
  double r;
  return pow_exactly(a, b, r) ? r : pow(a, b);
}
// Integer power by squaring; negative exponents give 1/a^|b| truncated
// toward zero, as on the CPU.
template <typename T>
WOK_DEVICE T ipow(T a, T b) {
  using U = typename Traits<T>::U;
  if constexpr (kSigned<T>) {
    if (b < 0) {
      if (a == 1) return 1;
      if (a == T(-1)) return (b & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  U result = 1, base = static_cast<U>(a);
  for (U e = static_cast<U>(b); e; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return static_cast<T>(result);
}
WOK_DEVICE i32 pow_(i32 a, i32 b) { return ipow(a, b); }
WOK_DEVICE i64 pow_(i64 a, i64 b) { return ipow(a, b); }
WOK_DEVICE u64 pow_(u64 a, u64 b) { return ipow(a, b); }

// ---- division and bits: the CPU's definitions (prim:: in runtime/kernels/cpu/primitive_loops.h) ----
// C fmod (the sign of a); integer division by zero gives 0, INT_MIN / -1
// wraps. The -1 rule is for signed types: on uint64, -1 would be the
// largest value, an ordinary divisor.
WOK_DEVICE float fmod_(float a, float b) { return fmodf(a, b); }
WOK_DEVICE double fmod_(double a, double b) { return fmod(a, b); }
template <typename T>
WOK_DEVICE T int_fmod(T a, T b) {
  if constexpr (kSigned<T>)
    if (b == T(-1)) return T(0);
  return b == 0 ? T(0) : static_cast<T>(a % b);
}
WOK_DEVICE i32 fmod_(i32 a, i32 b) { return int_fmod(a, b); }
WOK_DEVICE i64 fmod_(i64 a, i64 b) { return int_fmod(a, b); }
WOK_DEVICE u64 fmod_(u64 a, u64 b) { return int_fmod(a, b); }
// floor(a / b); exact on integers.
WOK_DEVICE float floor_div(float a, float b) { return floorf(a / b); }
WOK_DEVICE double floor_div(double a, double b) { return floor(a / b); }
template <typename T>
WOK_DEVICE T int_floor_div(T a, T b) {
  if (b == 0) return T(0);
  if constexpr (kSigned<T>) {
    if (b == T(-1)) return neg(a);  // before a / b, which INT_MIN / -1 would overflow
    const T q = static_cast<T>(a / b), r = static_cast<T>(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
  } else {
    return static_cast<T>(a / b);  // unsigned: the truncated quotient is the floor
  }
}
WOK_DEVICE i32 floor_div(i32 a, i32 b) { return int_floor_div(a, b); }
WOK_DEVICE i64 floor_div(i64 a, i64 b) { return int_floor_div(a, b); }
WOK_DEVICE u64 floor_div(u64 a, u64 b) { return int_floor_div(a, b); }
// Logical shifts of the unsigned view; a count that is negative or at least
// the width gives 0.
template <typename T>
WOK_DEVICE T shl(T a, T b) {
  using U = typename Traits<T>::U;
  return static_cast<U>(b) >= sizeof(T) * 8 ? T(0) : static_cast<T>(static_cast<U>(a) << static_cast<U>(b));
}
template <typename T>
WOK_DEVICE T shr(T a, T b) {
  using U = typename Traits<T>::U;
  return static_cast<U>(b) >= sizeof(T) * 8 ? T(0) : static_cast<T>(static_cast<U>(a) >> static_cast<U>(b));
}

// ---- iteration -------------------------------------------------------------------------------

// Sizes of an iteration space of rank R and the element strides of N
// operands through it.
template <int R, int N>
struct Layout {
  i64 shape[R];
  i64 stride[N > 0 ? N : 1][R];
};

// Offsets of row-major element i for each operand. I is the index type:
// 32-bit division is several times cheaper, so kernels use it when n fits.
template <typename I, int R, int N>
WOK_DEVICE void offsets(const Layout<R, N>& l, I i, I (&off)[N > 0 ? N : 1]) {
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
#pragma unroll
  for (int d = R - 1; d > 0; --d) {
    const I size = static_cast<I>(l.shape[d]);
    const I q = i / size;
    const I r = i - q * size;
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += r * static_cast<I>(l.stride[k][d]);
    i = q;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] += i * static_cast<I>(l.stride[k][0]);
}

WOK_DEVICE i64 global_thread() { return static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; }
WOK_DEVICE i64 global_threads() { return static_cast<i64>(gridDim.x) * blockDim.x; }

}  // namespace wok

#endif  // WOK_DEVICE_CUH
