// Element types and the promotion rules between them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace wok {

// Ordered by promotion rank: promote_types returns the higher category, and
// within a category the wider type.
enum class DType : uint8_t { kBool = 0, kInt32, kInt64, kFloat32, kFloat64 };

inline constexpr int kNumDTypes = 5;
inline constexpr DType kAllDTypes[kNumDTypes] = {DType::kBool, DType::kInt32, DType::kInt64,
                                                 DType::kFloat32, DType::kFloat64};

constexpr size_t itemsize(DType t) {
  switch (t) {
    case DType::kBool: return 1;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
  }
  return 0;
}

constexpr bool is_floating(DType t) { return t == DType::kFloat32 || t == DType::kFloat64; }
constexpr bool is_integral(DType t) { return t == DType::kInt32 || t == DType::kInt64; }
constexpr bool is_bool(DType t) { return t == DType::kBool; }

std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);

// NumPy's rules between two tensors: bool < int32 < int64 < float32 < float64,
// except that an integer meeting float32 gives float64 (float32 cannot hold
// every int32 or int64 exactly), as NumPy does.
DType promote_types(DType a, DType b);

// The dtype of a floating-point result computed from an input of dtype `t`
// (exp, sqrt, true division, mean): floats keep their type, bool gives
// float32 and integers give float64, as in NumPy.
DType float_result_type(DType t);

// C++ type <-> DType. bool tensors are stored one byte per element.
template <typename T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return DType::kBool;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::kInt64;
  else if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  else if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  else static_assert(sizeof(T) == 0, "wok: unsupported element type");
}

template <typename T>
inline constexpr bool is_element_type_v =
    std::is_same_v<T, bool> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
    std::is_same_v<T, float> || std::is_same_v<T, double>;

// Calls fn(T{}) with the C++ type of `t`; the one switch over dtypes that
// kernels and conversions share.
template <typename Fn>
decltype(auto) visit_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::kBool: return fn(bool{});
    case DType::kInt32: return fn(int32_t{});
    case DType::kInt64: return fn(int64_t{});
    case DType::kFloat32: return fn(float{});
    case DType::kFloat64: break;
  }
  return fn(double{});
}

}  // namespace wok
