#include "wok/runtime/attrs.h"

#include <cstring>
#include <sstream>

#include "wok/runtime/error.h"
#include "wok/runtime/shape.h"

namespace wok {

std::string_view attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::kBool: return "bool";
    case AttrType::kInt: return "int";
    case AttrType::kFloat: return "float";
    case AttrType::kInts: return "int list";
    case AttrType::kDType: return "dtype";
    case AttrType::kScalar: return "scalar";
    case AttrType::kString: return "string";
  }
  return "?";
}

std::string attr_value_str(const AttrValue& v) {
  struct Printer {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const {
      std::ostringstream out;
      out.precision(9);
      out << d;
      return out.str();
    }
    std::string operator()(const std::vector<int64_t>& l) const { return shape_str(l); }
    std::string operator()(DType t) const { return std::string(dtype_name(t)); }
    std::string operator()(const Scalar& s) const { return s.str() + ":" + std::string(dtype_name(s.dtype())); }
    std::string operator()(const std::string& s) const { return "\"" + s + "\""; }
  };
  return std::visit(Printer{}, v);
}

const AttrValue& Attrs::at(std::string_view name) const {
  if (specs_)
    for (size_t i = 0; i < specs_->size() && i < values_.size(); ++i)
      if ((*specs_)[i].name == name) return values_[i];
  throw ArgumentError("no attribute named '" + std::string(name) + "'");
}

void Attrs::append_signature(std::string& out) const {
  auto raw = [&out](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
  for (const AttrValue& v : values_) {
    out.push_back(static_cast<char>(v.index()));
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            uint64_t n = x.size();
            raw(&n, sizeof n);
            raw(x.data(), x.size() * sizeof(int64_t));
          } else if constexpr (std::is_same_v<T, std::string>) {
            uint64_t n = x.size();
            raw(&n, sizeof n);
            out += x;
          } else if constexpr (std::is_same_v<T, Scalar>) {
            out.push_back(static_cast<char>(x.dtype()));
            if (is_floating(x.dtype())) {
              double d = x.as_double();
              raw(&d, sizeof d);
            } else {
              int64_t i = x.template to<int64_t>();
              raw(&i, sizeof i);
            }
          } else {
            raw(&x, sizeof x);
          }
        },
        v);
  }
}

std::string Attrs::str() const {
  std::string s;
  for (size_t i = 0; i < values_.size(); ++i) {
    if (i) s += ", ";
    if (specs_ && i < specs_->size()) s += (*specs_)[i].name + "=";
    s += attr_value_str(values_[i]);
  }
  return s;
}

namespace {

// Converts `v` to `type` where the conversion loses nothing a user would
// mind (int -> float, number -> scalar); nullopt otherwise.
std::optional<AttrValue> coerce(const AttrValue& v, AttrType type) {
  AttrType have = attr_value_type(v);
  if (have == type) return v;
  if (type == AttrType::kFloat && have == AttrType::kInt) return static_cast<double>(std::get<int64_t>(v));
  if (type == AttrType::kScalar) {
    if (have == AttrType::kInt) return Scalar(std::get<int64_t>(v));
    if (have == AttrType::kFloat) return Scalar(std::get<double>(v));
    if (have == AttrType::kBool) return Scalar(std::get<bool>(v));
  }
  if (type == AttrType::kInt && have == AttrType::kBool) return static_cast<int64_t>(std::get<bool>(v));
  return std::nullopt;
}

}  // namespace

Attrs bind_attrs(std::string_view op_name, const std::vector<AttrSpec>& specs, const AttrMap& given) {
  std::vector<AttrValue> values(specs.size());
  std::vector<bool> set(specs.size(), false);
  for (const auto& [name, value] : given) {
    size_t i = 0;
    while (i < specs.size() && specs[i].name != name) ++i;
    if (i == specs.size()) {
      std::string known;
      for (const AttrSpec& s : specs) known += (known.empty() ? "" : ", ") + s.name;
      throw ArgumentError("op '" + std::string(op_name) + "' has no attribute '" + name +
                          "' (its attributes: " + (known.empty() ? "none" : known) + ")");
    }
    std::optional<AttrValue> v = coerce(value, specs[i].type);
    if (!v)
      throw ArgumentError("op '" + std::string(op_name) + "': attribute '" + name + "' must be " +
                          std::string(attr_type_name(specs[i].type)) + ", got " +
                          std::string(attr_type_name(attr_value_type(value))) + " " + attr_value_str(value));
    values[i] = std::move(*v);
    set[i] = true;
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    if (set[i]) continue;
    if (!specs[i].default_value)
      throw ArgumentError("op '" + std::string(op_name) + "': attribute '" + specs[i].name +
                          "' is required and has no default");
    values[i] = *specs[i].default_value;
  }
  return Attrs(&specs, std::move(values));
}

}  // namespace wok
