// op_info_text: an OpInfo as the lines wok-ops NAME prints (shown in
// docs/troubleshooting.md, so kept within kLineWidth columns and stable).
#include <algorithm>

#include "wok/runtime/op_catalog.h"

namespace wok {

namespace {

constexpr size_t kLabelWidth = 11;  // "attributes" and a space
constexpr size_t kLineWidth = 88;

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? std::string(sep) : "") + items[i];
  return s;
}

std::string dtype_list(const std::vector<DType>& dtypes) {
  if (dtypes.size() == static_cast<size_t>(kNumDTypes)) return "any dtype";
  std::vector<std::string> names;
  for (DType t : dtypes) names.emplace_back(dtype_name(t));
  return join(names, ", ");
}

// Appends `text` word-wrapped: the first line after `first`, the others
// after `rest`.
void wrap(std::string& out, const std::string& first, const std::string& rest, const std::string& text) {
  std::string line = first;
  size_t at_start = line.size();  // nothing after the prefix yet
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.size() > at_start && line.size() + 1 + word.size() > kLineWidth) {
      out += line + "\n";
      line = rest;
      at_start = line.size();
    }
    line += (line.size() > at_start ? " " : "") + word;
  }
  out += line + "\n";
}

// A labelled row of one or more lines, under the value column; a wrapped
// line's continuation is indented a little more.
void row(std::string& out, std::string_view label, const std::vector<std::string>& lines) {
  std::string first = "  " + std::string(label);
  first.resize(kLabelWidth + 2, ' ');
  const std::string indent(kLabelWidth + 2, ' ');
  for (size_t i = 0; i < lines.size(); ++i) wrap(out, i ? indent : first, indent + "  ", lines[i]);
}

void row(std::string& out, std::string_view label, const std::string& text) {
  row(out, label, std::vector<std::string>{text});
}

// "float32, float64 -> same dtype" and the like: the cases grouped by what
// they give, in order of first appearance.
std::vector<std::string> dtype_items(const OpInfo& info) {
  if (info.inputs.empty()) {
    if (!info.dtype_attrs.empty()) return {"no tensor inputs; output dtype from attribute '" + info.dtype_attrs[0] + "'"};
    if (info.dtypes.empty()) return {"no tensor inputs; the dtype rule refused the probe"};
    std::vector<std::string> outs;
    for (DType t : info.dtypes[0].outputs) outs.emplace_back(dtype_name(t));
    return {"no tensor inputs -> " + join(outs, ", ")};
  }
  if (info.dtypes.empty()) return {"none accepted with all inputs alike (the rule may want other attribute values)"};
  std::vector<std::pair<std::string, std::vector<DType>>> groups;  // result text, inputs
  for (const DTypeCase& c : info.dtypes) {
    std::string result;
    if (!info.dtype_attrs.empty()) {
      result = "from attribute '" + info.dtype_attrs[0] + "'";
    } else if (c.outputs.size() == 1 && c.outputs[0] == c.input) {
      result = "same dtype";
    } else {
      std::vector<std::string> outs;
      for (DType t : c.outputs) outs.emplace_back(dtype_name(t));
      result = c.outputs.size() == 1 ? outs[0] : "(" + join(outs, ", ") + ")";
    }
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == result; });
    if (it == groups.end()) groups.push_back({result, {c.input}});
    else it->second.push_back(c.input);
  }
  std::vector<std::string> items;
  for (const auto& [result, inputs] : groups) {
    std::vector<std::string> names;
    for (DType t : inputs) names.emplace_back(dtype_name(t));
    items.push_back(join(names, ", ") + " -> " + result);
  }
  return items;
}

// "cond: bool; a, b: any dtype": inputs accepting the same dtypes together.
std::vector<std::string> input_dtype_items(const OpInfo& info) {
  std::vector<std::pair<std::vector<DType>, std::vector<std::string>>> groups;
  for (size_t i = 0; i < info.input_dtypes.size(); ++i) {
    const std::string& name = i < info.inputs.size() ? info.inputs[i] : info.inputs.back();
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == info.input_dtypes[i]; });
    if (it == groups.end()) groups.push_back({info.input_dtypes[i], {name}});
    else it->second.push_back(name);
  }
  std::vector<std::string> items;
  for (const auto& [dtypes, names] : groups)
    items.push_back(join(names, ", ") + ": " + (dtypes.empty() ? "none" : dtype_list(dtypes)));
  return items;
}

std::vector<std::string> attr_items(const OpInfo& info) {
  if (info.attrs.empty()) return {"none"};
  std::vector<std::string> items;
  for (const AttrSpec& a : info.attrs)
    items.push_back(a.name + ": " + std::string(attr_type_name(a.type)) +
                    (a.default_value ? " = " + attr_value_str(*a.default_value) : ", required"));
  return items;
}

std::vector<std::string> kernel_items(const OpInfo& info) {
  if (info.output_aliases_input) return {"none needed: the output is input 0's buffer"};
  std::vector<std::string> items;
  for (int d = 0; d < kNumDeviceTypes; ++d) {
    const auto dev = static_cast<DeviceType>(d);
    auto it = std::find_if(info.kernels.begin(), info.kernels.end(), [&](const KernelInfo& k) { return k.device == dev; });
    const std::string name(device_type_name(dev));
    if (it == info.kernels.end()) items.push_back(name + ": none");
    else items.push_back(name + (it->from_formula ? ": the formula kernel" : ": its own kernel"));
  }
  if (info.kernels.empty()) items.push_back("wok::register_kernel binds one");
  return items;
}

std::string_view jit_phrase(JitTreatment t) {
  switch (t) {
    case JitTreatment::kFusesElementwise: return "fused with its elementwise neighbours";
    case JitTreatment::kFusesReduction: return "a generated reduction kernel, fused with its producers and consumers";
    case JitTreatment::kGemmEpilogue: return "a generated GEMM kernel, its elementwise consumers fused as the epilogue";
    case JitTreatment::kView: return "a view, no kernel runs";
    case JitTreatment::kMovement: return "not fused, runs its own copy kernel";
    case JitTreatment::kConstant: return "folded into the kernels that read it, as a launch parameter";
    case JitTreatment::kOwnKernel: return "not fused, runs its own kernel";
  }
  return "?";
}

// "cpu (x86) at float32, float64: fused with ...", fused entries first;
// none for a device without a kernel (nothing runs there to fuse).
std::vector<std::string> jit_lines(const OpInfo& info) {
  std::vector<std::string> lines;
  for (int d = 0; d < kNumDeviceTypes; ++d) {
    const auto dev = static_cast<DeviceType>(d);
    const bool has_kernel = info.output_aliases_input || std::any_of(info.kernels.begin(), info.kernels.end(),
                                                                     [&](const KernelInfo& k) { return k.device == dev; });
    if (!has_kernel) continue;
    std::vector<const JitInfo*> entries;
    for (const JitInfo& j : info.jit)
      if (j.device == dev) entries.push_back(&j);
    std::stable_partition(entries.begin(), entries.end(),
                          [](const JitInfo* j) { return j->treatment != JitTreatment::kOwnKernel; });
    for (const JitInfo* j : entries) {
      std::string where(device_type_name(dev));
      if (j->target != where) where += " (" + j->target + ")";
      if (!j->dtypes.empty()) where += " at " + dtype_list(j->dtypes);
      lines.push_back(where + ": " + std::string(jit_phrase(j->treatment)) + (j->note.empty() ? "" : " (" + j->note + ")"));
    }
  }
  return lines;
}

}  // namespace

std::string op_info_text(const OpInfo& info) {
  std::string out = info.name + (info.doc.empty() ? "" : ": " + info.doc) + "\n";
  row(out, "kind", std::string(op_kind_name(info.kind)) + (info.has_formula ? " with a formula" : "") +
                       (info.builtin ? ", built-in" : ", user-registered"));
  std::vector<std::string> inputs = info.inputs;
  if (info.variadic_inputs && !inputs.empty()) inputs.back() += "...";
  row(out, "inputs", inputs.empty() ? "none" : join(inputs, ", "));
  row(out, "outputs", join(info.outputs, ", "));
  row(out, "attributes", join(attr_items(info), "; "));
  std::string dtypes = join(dtype_items(info), "; ");
  if (info.inputs.size() + info.variadic_inputs > 1 && !info.dtypes.empty())
    dtypes += " (inputs alike: the named functions such as wok::add promote to one dtype; wok::call does not)";
  row(out, "dtypes", dtypes);
  if (!info.input_dtypes.empty()) row(out, "per input", join(input_dtype_items(info), "; ") + " (mixed dtypes)");
  row(out, "kernels", join(kernel_items(info), "; "));
  if (std::vector<std::string> jit = jit_lines(info); !jit.empty()) row(out, "jit", jit);
  return out;
}

}  // namespace wok
