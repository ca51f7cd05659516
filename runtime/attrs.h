// Typed operator attributes: declared by an op (AttrSpec), bound at a call
// (Attrs), hashed into graph signatures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "wok/runtime/dtype.h"
#include "wok/runtime/scalar.h"

namespace wok {

enum class AttrType : uint8_t { kBool, kInt, kFloat, kInts, kDType, kScalar, kString };

// Alternatives are in AttrType's order.
using AttrValue = std::variant<bool, int64_t, double, std::vector<int64_t>, DType, Scalar, std::string>;

std::string_view attr_type_name(AttrType t);
inline AttrType attr_value_type(const AttrValue& v) { return static_cast<AttrType>(v.index()); }
std::string attr_value_str(const AttrValue& v);

struct AttrSpec {
  std::string name;
  AttrType type;
  std::optional<AttrValue> default_value;  // nullopt: the caller must pass it
};

// Attributes passed by name at a call site, e.g. {{"weight", 0.5}}.
using AttrMap = std::vector<std::pair<std::string, AttrValue>>;

// The attribute values of one op call, in the order of the op's AttrSpecs.
class Attrs {
 public:
  Attrs() = default;
  Attrs(const std::vector<AttrSpec>* specs, std::vector<AttrValue> values)
      : specs_(specs), values_(std::move(values)) {}

  size_t size() const { return values_.size(); }
  const AttrValue& at(size_t i) const { return values_[i]; }
  const AttrValue& at(std::string_view name) const;
  // A copy with value i replaced (of the same type).
  Attrs with_value(size_t i, AttrValue v) const {
    Attrs a = *this;
    a.values_[i] = std::move(v);
    return a;
  }

  bool get_bool(std::string_view name) const { return std::get<bool>(at(name)); }
  int64_t get_int(std::string_view name) const { return std::get<int64_t>(at(name)); }
  double get_float(std::string_view name) const { return std::get<double>(at(name)); }
  const std::vector<int64_t>& get_ints(std::string_view name) const {
    return std::get<std::vector<int64_t>>(at(name));
  }
  DType get_dtype(std::string_view name) const { return std::get<DType>(at(name)); }
  const Scalar& get_scalar(std::string_view name) const { return std::get<Scalar>(at(name)); }
  const std::string& get_string(std::string_view name) const { return std::get<std::string>(at(name)); }

  // Canonical bytes of the values, for graph signatures and CSE.
  void append_signature(std::string& out) const;
  std::string str() const;  // "weight=0.5, axes=[1]"

  friend bool operator==(const Attrs& a, const Attrs& b) { return a.values_ == b.values_; }

 private:
  const std::vector<AttrSpec>* specs_ = nullptr;
  std::vector<AttrValue> values_;
};

// Checks names and types against `specs`, converts ints given for float
// attributes, fills defaults. `op_name` is only for error messages.
Attrs bind_attrs(std::string_view op_name, const std::vector<AttrSpec>& specs, const AttrMap& given);

}  // namespace wok
