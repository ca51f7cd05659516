// Element types and the promotion rules between them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "wok/runtime/half.h"

namespace wok {

// The enumerators' values are part of the on-disk cache and bundle formats
// (a signature holds the byte): new dtypes are appended, never inserted.
// Order says nothing about promotion: promote_types is a table.
enum class DType : uint8_t {
  kBool = 0,
  kInt32,
  kInt64,
  kFloat32,
  kFloat64,
  kFloat16,
  kBFloat16,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kUInt32,
  kUInt64,
};

inline constexpr int kNumDTypes = 13;
inline constexpr DType kAllDTypes[kNumDTypes] = {
    DType::kBool,   DType::kInt8,   DType::kUInt8,   DType::kInt16,   DType::kUInt16,  DType::kInt32,  DType::kUInt32,
    DType::kInt64,  DType::kUInt64, DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};

// A set of dtypes as a bit mask over the enumerators' values.
using DTypeMask = uint32_t;
constexpr DTypeMask dtype_bit(DType t) { return DTypeMask{1} << static_cast<unsigned>(t); }
constexpr bool in_mask(DTypeMask m, DType t) { return (m & dtype_bit(t)) != 0; }
inline constexpr DTypeMask kAllDTypeMask = (DTypeMask{1} << kNumDTypes) - 1;
// The dtypes every precompiled kernel computes in (Note [Compute dtypes]).
inline constexpr DTypeMask kComputeDTypeMask = dtype_bit(DType::kBool) | dtype_bit(DType::kInt32) |
                                               dtype_bit(DType::kInt64) | dtype_bit(DType::kFloat32) |
                                               dtype_bit(DType::kFloat64);

constexpr size_t itemsize(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kInt8:
    case DType::kUInt8: return 1;
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kInt16:
    case DType::kUInt16: return 2;
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kFloat32: return 4;
    case DType::kInt64:
    case DType::kUInt64:
    case DType::kFloat64: return 8;
  }
  return 0;
}

constexpr bool is_half(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }
// int8, uint8, int16 and uint16: the integers that compute in int32.
constexpr bool is_narrow_int(DType t) {
  return t == DType::kInt8 || t == DType::kUInt8 || t == DType::kInt16 || t == DType::kUInt16;
}
// The integers that compute in a wider integer: the narrow ones (int32) and
// uint32 (int64).
constexpr bool is_widened_int(DType t) { return is_narrow_int(t) || t == DType::kUInt32; }
constexpr bool is_floating(DType t) { return t == DType::kFloat32 || t == DType::kFloat64 || is_half(t); }
constexpr bool is_unsigned(DType t) {
  return t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
}
constexpr bool is_integral(DType t) { return t != DType::kBool && !is_floating(t); }
constexpr bool is_bool(DType t) { return t == DType::kBool; }

// Note [Compute dtypes]
// float16 and bfloat16 are storage formats: arithmetic on them is done in
// float32 and rounded once when a value is stored. The integers narrower
// than 32 bits compute in int32 and uint32 in int64, then wrap to their own
// width on store, which gives the same bits as wrapping at every step for
// add, sub, mul, neg, the bitwise ops and shifts, and the exact result for
// the others (their operands are in range). uint64 has no wider type and
// computes as itself (the formula kernel has uint64 loops; other kernels
// refuse it by name). The precompiled kernels of most ops are instantiated
// for the compute dtypes only (kComputeDTypeMask) plus what they declare:
// the runtime widens other operands before such a kernel runs and narrows
// its outputs after (Note [The widening adapter] in runtime/widening.h); the
// x86 JIT widens the half types and int8, uint8, int16 and uint16 in
// registers (Notes [Half types in registers] and [Narrow integers in
// registers] in jit/x86/vec_emitter.h) and leaves uint32 and uint64 to the
// precompiled kernels.
constexpr DType compute_dtype(DType t) {
  switch (t) {
    case DType::kFloat16:
    case DType::kBFloat16: return DType::kFloat32;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kUInt16: return DType::kInt32;
    case DType::kUInt32: return DType::kInt64;
    default: return t;
  }
}

std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);

// Between two tensors' dtypes (docs/numerics.md, "Dtypes, promotion and casts"):
//  - bool with anything gives the other;
//  - two integers: NumPy's table (the narrowest integer that holds both
//    ranges: uint8 + int8 -> int16, uint32 + int32 -> int64; uint64 with a
//    signed integer -> float64);
//  - an integer with a float: float32 for integers of up to 16 bits and
//    float64 for wider ones (float32 cannot hold every int32), as NumPy;
//    an integer with float16 or bfloat16 keeps the half type, as PyTorch;
//  - two floats: the wider; float16 with bfloat16 gives float32 (neither
//    holds the other), as PyTorch.
DType promote_types(DType a, DType b);

// The dtype of a floating-point result computed from an input of dtype `t`
// (exp, sqrt, true division, mean): floats keep their type, bool gives
// float32, integers of up to 16 bits float32 (it holds them exactly) and
// wider integers float64.
DType float_result_type(DType t);

// C++ type <-> DType. bool tensors are stored one byte per element.
template <typename T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return DType::kBool;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::kInt8;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::kUInt8;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::kInt16;
  else if constexpr (std::is_same_v<T, uint16_t>) return DType::kUInt16;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::kInt32;
  else if constexpr (std::is_same_v<T, uint32_t>) return DType::kUInt32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::kInt64;
  else if constexpr (std::is_same_v<T, uint64_t>) return DType::kUInt64;
  else if constexpr (std::is_same_v<T, half>) return DType::kFloat16;
  else if constexpr (std::is_same_v<T, bfloat16>) return DType::kBFloat16;
  else if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  else if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  else static_assert(sizeof(T) == 0, "wok: unsupported element type");
}

template <typename T>
inline constexpr bool is_element_type_v =
    std::is_same_v<T, bool> || std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t> ||
    std::is_same_v<T, int16_t> || std::is_same_v<T, uint16_t> || std::is_same_v<T, int32_t> ||
    std::is_same_v<T, uint32_t> || std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t> ||
    std::is_same_v<T, half> || std::is_same_v<T, bfloat16> || std::is_same_v<T, float> || std::is_same_v<T, double>;

[[noreturn]] void throw_unvisited_dtype(DType t, DTypeMask visited);

// Calls fn(T{}) with the C++ type of `t`: the one switch over dtypes that
// kernels and conversions share. kSet names the dtypes the caller
// instantiates fn for (by default the compute dtypes: a kernel behind the
// widening adapter never sees others); any other raises DTypeError.
template <DTypeMask kSet = kComputeDTypeMask, typename Fn>
decltype(auto) visit_dtype(DType t, Fn&& fn) {
#define WOK_VISIT_CASE(E, T) \
  case DType::E:             \
    if constexpr (in_mask(kSet, DType::E)) return fn(T{}); \
    break;
  switch (t) {
    WOK_VISIT_CASE(kBool, bool)
    WOK_VISIT_CASE(kInt8, int8_t)
    WOK_VISIT_CASE(kUInt8, uint8_t)
    WOK_VISIT_CASE(kInt16, int16_t)
    WOK_VISIT_CASE(kUInt16, uint16_t)
    WOK_VISIT_CASE(kInt32, int32_t)
    WOK_VISIT_CASE(kUInt32, uint32_t)
    WOK_VISIT_CASE(kInt64, int64_t)
    WOK_VISIT_CASE(kUInt64, uint64_t)
    WOK_VISIT_CASE(kFloat16, half)
    WOK_VISIT_CASE(kBFloat16, bfloat16)
    WOK_VISIT_CASE(kFloat32, float)
    WOK_VISIT_CASE(kFloat64, double)
  }
#undef WOK_VISIT_CASE
  throw_unvisited_dtype(t, kSet);
}

// Every dtype.
template <typename Fn>
decltype(auto) visit_any_dtype(DType t, Fn&& fn) {
  return visit_dtype<kAllDTypeMask>(t, std::forward<Fn>(fn));
}

}  // namespace wok
