#include "wok/runtime/dtype.h"

#include <algorithm>

namespace wok {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  if (name == "float") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  if (name == "int") return DType::kInt32;
  return std::nullopt;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_integral(a) && b == DType::kFloat32) return DType::kFloat64;
  if (is_integral(b) && a == DType::kFloat32) return DType::kFloat64;
  return std::max(a, b);
}

DType float_result_type(DType t) {
  if (is_floating(t)) return t;
  return is_bool(t) ? DType::kFloat32 : DType::kFloat64;
}

}  // namespace wok
