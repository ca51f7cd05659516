#include "wok/runtime/dtype.h"

#include <algorithm>
#include <string>

#include "wok/runtime/error.h"

namespace wok {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kInt8: return "int8";
    case DType::kUInt8: return "uint8";
    case DType::kInt16: return "int16";
    case DType::kUInt16: return "uint16";
    case DType::kInt32: return "int32";
    case DType::kUInt32: return "uint32";
    case DType::kInt64: return "int64";
    case DType::kUInt64: return "uint64";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
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
  if (name == "half") return DType::kFloat16;
  return std::nullopt;
}

namespace {

int int_bits(DType t) { return static_cast<int>(8 * itemsize(t)); }

DType signed_of_bits(int bits) {
  switch (bits) {
    case 8: return DType::kInt8;
    case 16: return DType::kInt16;
    case 32: return DType::kInt32;
    default: return DType::kInt64;
  }
}

// NumPy's integer table: the narrowest integer holding both ranges.
DType promote_integers(DType a, DType b) {
  if (is_unsigned(a) == is_unsigned(b)) return int_bits(a) >= int_bits(b) ? a : b;
  const DType u = is_unsigned(a) ? a : b;
  const DType s = is_unsigned(a) ? b : a;
  const int bits = std::max(int_bits(s), 2 * int_bits(u));
  return bits > 64 ? DType::kFloat64 : signed_of_bits(bits);
}

DType promote_floats(DType a, DType b) {
  if (is_half(a) && is_half(b)) return DType::kFloat32;  // float16 with bfloat16
  return itemsize(a) >= itemsize(b) ? a : b;
}

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_bool(a)) return b;
  if (is_bool(b)) return a;
  if (is_integral(a) && is_integral(b)) return promote_integers(a, b);
  if (is_floating(a) && is_floating(b)) return promote_floats(a, b);
  const DType i = is_integral(a) ? a : b;
  const DType f = is_integral(a) ? b : a;
  if (is_half(f)) return f;
  if (f == DType::kFloat32 && itemsize(i) > 2) return DType::kFloat64;
  return f;
}

DType float_result_type(DType t) {
  if (is_floating(t)) return t;
  return is_bool(t) || itemsize(t) <= 2 ? DType::kFloat32 : DType::kFloat64;
}

void throw_unvisited_dtype(DType t, DTypeMask visited) {
  std::string names;
  for (DType d : kAllDTypes)
    if (in_mask(visited, d)) names += (names.empty() ? "" : ", ") + std::string(dtype_name(d));
  throw DTypeError("no code for dtype " + std::string(dtype_name(t)) + " here (this path takes " + names + ")");
}

}  // namespace wok
