#include "wok/runtime/op_catalog.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <span>

#include "wok/runtime/op_registry.h"

namespace wok {

std::string_view jit_treatment_label(JitTreatment t) {
  switch (t) {
    case JitTreatment::kFusesElementwise: return "elementwise";
    case JitTreatment::kFusesReduction: return "reduction";
    case JitTreatment::kGemmEpilogue: return "gemm+epilogue";
    case JitTreatment::kView: return "view";
    case JitTreatment::kMovement: return "copy";
    case JitTreatment::kConstant: return "constant";
    case JitTreatment::kOwnKernel: return "own kernel";
  }
  return "?";
}

Attrs placeholder_attrs(const OpDef& def) {
  std::vector<AttrValue> values;
  for (const AttrSpec& s : def.attrs) {
    if (s.default_value) {
      values.push_back(*s.default_value);
      continue;
    }
    switch (s.type) {
      case AttrType::kBool: values.emplace_back(false); break;
      case AttrType::kInt: values.emplace_back(int64_t{0}); break;
      case AttrType::kFloat: values.emplace_back(0.0); break;
      case AttrType::kInts: values.emplace_back(std::vector<int64_t>{}); break;
      case AttrType::kDType: values.emplace_back(DType::kFloat32); break;
      case AttrType::kScalar: values.emplace_back(Scalar(0.0f)); break;
      case AttrType::kString: values.emplace_back(std::string()); break;
    }
  }
  return Attrs(&def.attrs, std::move(values));
}

namespace {

// The dtype rule's answer, or nullopt where it refuses. Rules throw
// DTypeError; a rule that reads a stand-in attribute badly may throw
// anything, and a probe must not take the caller down with it.
std::optional<std::vector<DType>> probe(const OpDef& def, std::span<const DType> in, const Attrs& attrs) {
  try {
    return def.infer_dtype(in, attrs);
  } catch (...) {
    return std::nullopt;
  }
}

// Inputs a probe passes: the declared ones, a variadic last one once.
size_t probe_arity(const OpDef& def) { return def.inputs.size(); }

std::vector<DTypeCase> probe_alike(const OpDef& def, const Attrs& attrs) {
  std::vector<DTypeCase> out;
  const size_t n = probe_arity(def);
  for (DType t : kAllDTypes) {
    std::vector<DType> in(n, t);
    if (auto got = probe(def, in, attrs)) out.push_back({t, *got});
    if (n == 0) break;  // nothing to vary
  }
  return out;
}

// Per input, the dtypes some combination of input dtypes is accepted with;
// empty when each input accepts exactly what the alike probe found.
std::vector<std::vector<DType>> probe_mixed(const OpDef& def, const Attrs& attrs, const std::vector<DTypeCase>& alike) {
  const size_t n = probe_arity(def);
  if (n < 2 || n > 4) return {};  // 5^4 combinations at most
  std::vector<std::array<bool, kNumDTypes>> seen(n, std::array<bool, kNumDTypes>{});
  std::vector<int> digit(n, 0);
  std::vector<DType> in(n);
  for (;;) {
    for (size_t i = 0; i < n; ++i) in[i] = kAllDTypes[digit[i]];
    if (probe(def, in, attrs))
      for (size_t i = 0; i < n; ++i) seen[i][digit[i]] = true;
    size_t i = 0;
    while (i < n && ++digit[i] == kNumDTypes) digit[i++] = 0;
    if (i == n) break;
  }
  std::array<bool, kNumDTypes> alike_set{};
  for (const DTypeCase& c : alike) alike_set[static_cast<int>(c.input)] = true;
  std::vector<std::vector<DType>> out(n);
  bool differs = false;
  for (size_t i = 0; i < n; ++i) {
    differs = differs || seen[i] != alike_set;
    for (int d = 0; d < kNumDTypes; ++d)
      if (seen[i][d]) out[i].push_back(kAllDTypes[d]);
  }
  return differs ? out : std::vector<std::vector<DType>>{};
}

// Attributes whose value changes the output dtype: each DType or Scalar
// attribute is set to another dtype and the accepted cases probed again.
std::vector<std::string> probe_dtype_attrs(const OpDef& def, const std::vector<DTypeCase>& alike) {
  std::vector<std::string> out;
  const Attrs base = placeholder_attrs(def);
  for (size_t i = 0; i < def.attrs.size(); ++i) {
    const AttrType type = def.attrs[i].type;
    if (type != AttrType::kDType && type != AttrType::kScalar) continue;
    std::vector<AttrValue> values;
    for (size_t j = 0; j < base.size(); ++j) values.push_back(base.at(j));
    const bool was_int64 = type == AttrType::kDType ? std::get<DType>(values[i]) == DType::kInt64
                                                    : std::get<Scalar>(values[i]).dtype() == DType::kInt64;
    const DType other = was_int64 ? DType::kFloat64 : DType::kInt64;
    if (type == AttrType::kDType) values[i] = other;
    else values[i] = Scalar(0.0).cast(other);
    const Attrs changed(&def.attrs, std::move(values));
    for (const DTypeCase& c : alike) {
      std::vector<DType> in(probe_arity(def), c.input);
      auto got = probe(def, in, changed);
      if (got && *got != c.outputs) {
        out.push_back(def.attrs[i].name);
        break;
      }
    }
  }
  return out;
}

}  // namespace

OpInfo op_info(const RegisteredOp& op) {
  const OpDef& def = op.def();
  OpInfo info;
  info.name = def.name;
  info.kind = def.kind;
  info.inputs = def.inputs;
  info.variadic_inputs = def.variadic_inputs;
  info.outputs = def.outputs;
  info.attrs = def.attrs;
  info.doc = def.doc;
  info.builtin = op.is_builtin();
  info.has_formula = static_cast<bool>(def.formula);
  info.output_aliases_input = def.output_aliases_input;
  const Attrs attrs = placeholder_attrs(def);
  info.dtypes = probe_alike(def, attrs);
  info.input_dtypes = probe_mixed(def, attrs, info.dtypes);
  info.dtype_attrs = probe_dtype_attrs(def, info.dtypes);
  const OpRegistry& registry = OpRegistry::global();
  for (DeviceType d : op.kernel_devices()) info.kernels.push_back({d, registry.kernel_from_formula(op, d)});
  return info;
}

// ---- names close to a misspelt one ----------------------------------------------------

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Edits (insert, delete, replace, swap of neighbours) turning a into b:
// the optimal string alignment distance, so "sfotplus" is one from softplus.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& candidates, size_t k) {
  const std::string q = lower(name);
  if (q.empty()) return {};
  // About one edit per three letters: "Add" finds add, "sofplus" softplus,
  // but "x" is close to no two-letter name.
  const size_t limit = q.size() <= 3 ? 1 : q.size() <= 6 ? 2 : 3;
  std::vector<std::pair<size_t, const std::string*>> hits;
  for (const std::string& c : candidates) {
    const std::string cl = lower(c);
    const size_t d = edit_distance(q, cl);
    const bool close = d == 0 || (d <= limit && d < q.size());
    // "pool" inside max_pool2d; relu inside "relu6", but not max inside
    // "sofmax": the name found must be most of what was typed.
    const bool inside = (q.size() >= 3 && cl.find(q) != std::string::npos) ||
                        (cl.size() >= 4 && 2 * cl.size() >= q.size() && q.find(cl) != std::string::npos);
    if (close || inside) hits.emplace_back(d, &c);
  }
  std::sort(hits.begin(), hits.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : *a.second < *b.second;
  });
  std::vector<std::string> out;
  for (size_t i = 0; i < hits.size() && i < k; ++i) out.push_back(*hits[i].second);
  return out;
}

std::vector<std::string> nearest_op_names(std::string_view name, size_t k) {
  return nearest_names(name, OpRegistry::global().names(), k);
}

std::string unknown_op_message(std::string_view name, const std::vector<std::string>& suggestions) {
  std::string s = "unknown op '" + std::string(name) + "'";
  if (!suggestions.empty()) {
    s += " (did you mean ";
    for (size_t i = 0; i < suggestions.size(); ++i) s += (i ? ", '" : "'") + suggestions[i] + "'";
    s += "?)";
  }
  return s + "; wok::op_names() lists the registered ops, and the wok-ops tool lists and describes the built-in ones";
}

}  // namespace wok
