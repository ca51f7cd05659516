#include "wok/jit/cuda/cuda_renderer.h"

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>

#include "wok/runtime/cuda/embedded_files.h"
#include "wok/runtime/signature.h"

namespace wok::jit::cuda {

namespace {

// The CUDA spelling of `op` with operands of dtype t: the CUDA column of
// Note [One table per primitive] (runtime/scalar_primitives.h).
const char* find_op(ScalarOp op, DType t) {
  const ScalarPrimitive& p = primitive(op);
  switch (t) {
    case DType::kBool: return p.cuda_bool;
    case DType::kInt32:
    case DType::kInt64: return p.cuda_int;
    case DType::kFloat32:
    case DType::kFloat64: return p.cuda_float;
  }
  return nullptr;
}

std::string fill(const char* pattern, const std::string* args, int nargs, std::string_view type) {
  std::string out;
  for (const char* p = pattern; *p; ++p) {
    if (p[0] == '{' && p[1] >= '0' && p[1] <= '2' && p[2] == '}') {
      int a = p[1] - '0';
      if (a < nargs) out += args[a];
      p += 2;
    } else if (std::strncmp(p, "{T}", 3) == 0) {
      out += type;
      p += 2;
    } else {
      out.push_back(*p);
    }
  }
  return out;
}

// An exact literal of `value` as dtype t.
std::string literal(DType t, const Scalar& value) {
  char buf[64];
  switch (t) {
    case DType::kBool: return value.to<bool>() ? "true" : "false";
    case DType::kInt32: {
      int32_t v = value.to<int32_t>();
      return v == INT32_MIN ? "(-2147483647 - 1)" : "(" + std::to_string(v) + ")";
    }
    case DType::kInt64: {
      int64_t v = value.to<int64_t>();
      return v == INT64_MIN ? "(-9223372036854775807LL - 1)" : "(" + std::to_string(v) + "LL)";
    }
    case DType::kFloat32: {
      float v = value.to<float>();
      if (std::isfinite(v)) {
        std::snprintf(buf, sizeof buf, "(%af)", static_cast<double>(v));
      } else {
        uint32_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        std::snprintf(buf, sizeof buf, "__int_as_float(0x%08" PRIx32 ")", bits);
      }
      return buf;
    }
    case DType::kFloat64: {
      double v = value.to<double>();
      if (std::isfinite(v)) {
        std::snprintf(buf, sizeof buf, "(%a)", v);
      } else {
        uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        std::snprintf(buf, sizeof buf, "__longlong_as_double(0x%016" PRIx64 "LL)", bits);
      }
      return buf;
    }
  }
  return "0";
}

std::string var(int i) { return "v" + std::to_string(i); }

// The scalar program as statements `const T vI = ...;`, reading inputs as
// xK and params as pK.
absl::StatusOr<std::string> render_body(const FusedKernelSpec& spec, const std::string& indent) {
  std::string out;
  const ScalarProgram& prog = spec.program;
  for (size_t i = 0; i < prog.instrs.size(); ++i) {
    const ScalarInstr& in = prog.instrs[i];
    std::string_view type = cuda_type(in.dtype);
    std::string expr;
    if (in.op == ScalarOp::kInput) {
      expr = in.index < spec.num_inputs() ? "x" + std::to_string(in.index)
                                          : "p" + std::to_string(in.index - spec.num_inputs());
    } else if (in.op == ScalarOp::kConst) {
      expr = literal(in.dtype, in.constant);
    } else {
      const int arity = scalar_op_arity(in.op);
      std::string args[3];
      for (int a = 0; a < arity; ++a) args[a] = var(in.args[a]);
      // Select is checked on its result; everything else on its first operand.
      DType checked = in.op == ScalarOp::kSelect ? in.dtype : prog.instrs[in.args[0]].dtype;
      const char* pattern = find_op(in.op, checked);
      if (!pattern)
        return absl::UnimplementedError("the CUDA renderer has no rendering of " + std::string(scalar_op_name(in.op)) +
                                        " on " + std::string(dtype_name(checked)));
      expr = fill(pattern, args, arity, type);
    }
    out += indent + "const " + std::string(type) + " " + var(static_cast<int>(i)) + " = " + expr + ";\n";
  }
  return out;
}

bool fully_broadcast(const FusedKernelSpec& spec, int input) {
  for (bool b : spec.input_broadcast[input])
    if (!b) return false;
  return true;
}

void substitute(std::string& text, const std::string& key, const std::string& value) {
  const std::string slot = "@@" + key + "@@";
  for (size_t pos = text.find(slot); pos != std::string::npos; pos = text.find(slot, pos + value.size()))
    text.replace(pos, slot.size(), value);
}

}  // namespace

std::string_view cuda_type(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kInt32: return "int";
    case DType::kInt64: return "long long";
    case DType::kFloat32: return "float";
    case DType::kFloat64: return "double";
  }
  return "void";
}

bool can_render(const ScalarProgram& program) {
  for (const ScalarInstr& in : program.instrs) {
    if (in.op == ScalarOp::kInput || in.op == ScalarOp::kConst) continue;
    if (is_reduction(in.op) || in.op == ScalarOp::kRowLength) return false;
    // As render_body checks it: Select on its result, the rest on operand 0.
    DType checked = in.op == ScalarOp::kSelect ? in.dtype : program.instrs[in.args[0]].dtype;
    if (!find_op(in.op, checked)) return false;
  }
  return true;
}

absl::StatusOr<RenderedKernel> render_cuda(const FusedKernelSpec& spec, const std::string& name) {
  const embedded::EmbeddedFile* tpl = embedded::find("templates/elementwise.cu.in");
  if (!tpl) return absl::InternalError("templates/elementwise.cu.in is not embedded in this build");
  if (spec.kind != KernelKind::kElementwise)
    return absl::UnimplementedError("the CUDA renderer generates elementwise kernels only (this is a " +
                                    std::string(spec.is_row() ? "row" : spec.is_column() ? "column" : "non-elementwise") + " kernel)");
  const int nin = spec.num_inputs(), nout = spec.num_outputs(), rank = spec.rank;
  if (rank < 1 || rank > kMaxRenderedRank) return absl::InvalidArgumentError("rank " + std::to_string(rank) + " is out of range");

  RenderedKernel k;
  k.name = name;
  // Parameter list, in launch order: inputs, outputs, params, then the
  // template's own (layout, n, vec_ok).
  std::string params;
  for (int i = 0; i < nin; ++i)
    params += "const " + std::string(cuda_type(spec.input_dtypes[i])) + "* __restrict__ in" + std::to_string(i) + ", ";
  for (int o = 0; o < nout; ++o)
    params += std::string(cuda_type(spec.output_dtype(o))) + "* __restrict__ out" + std::to_string(o) + ", ";
  for (int p = 0; p < spec.num_params(); ++p)
    params += "const " + std::string(cuda_type(spec.param_dtypes[p])) + " p" + std::to_string(p) + ", ";
  k.param_bytes = 8 * static_cast<size_t>(nin + nout + spec.num_params()) + 8 * rank +
                  8 * static_cast<size_t>(rank) * std::max(nin, 1) + 8 + 4;
  if (k.param_bytes > kMaxKernelParamBytes)
    return absl::ResourceExhaustedError("fused kernel needs " + std::to_string(k.param_bytes) +
                                        " bytes of kernel parameters (" + std::to_string(nin) + " inputs, rank " +
                                        std::to_string(rank) + "); the limit is " +
                                        std::to_string(kMaxKernelParamBytes));

  absl::StatusOr<std::string> body = render_body(spec, "      ");
  if (!body.ok()) return body.status();
  auto out_var = [&](int o) { return var(spec.program.outputs[o]); };

  std::string element, tile_load, tile_element, tile_store;
  for (int i = 0; i < nin; ++i) {
    std::string t(cuda_type(spec.input_dtypes[i])), k_str = std::to_string(i);
    bool scalar = fully_broadcast(spec, i);
    element += "      const " + t + " x" + k_str + " = in" + k_str + (scalar ? "[0]" : "[WOK_OFF(" + k_str + ")]") + ";\n";
    if (scalar) {
      tile_element += "          const " + t + " x" + k_str + " = in" + k_str + "[0];\n";
    } else {
      tile_load += "        const wok::Vec<" + t + ", kVec> t" + k_str + " = *reinterpret_cast<const wok::Vec<" + t +
                   ", kVec>*>(in" + k_str + " + base);\n";
      tile_element += "          const " + t + " x" + k_str + " = t" + k_str + ".v[j];\n";
    }
  }
  element += *body;
  absl::StatusOr<std::string> tile_body = render_body(spec, "          ");
  tile_element += *tile_body;
  for (int o = 0; o < nout; ++o) {
    std::string t(cuda_type(spec.output_dtype(o))), o_str = std::to_string(o);
    element += "      out" + o_str + "[i] = " + out_var(o) + ";\n";
    tile_load += "        wok::Vec<" + t + ", kVec> u" + o_str + ";\n";
    tile_element += "          u" + o_str + ".v[j] = " + out_var(o) + ";\n";
    tile_store += "        *reinterpret_cast<wok::Vec<" + t + ", kVec>*>(out" + o_str + " + base) = u" + o_str + ";\n";
  }

  std::string src = "// " + name + ": generated by wok's CUDA renderer from templates/elementwise.cu.in\n";
  std::string spec_text = spec.str();
  for (size_t b = 0, e; b < spec_text.size(); b = e + 1) {
    e = spec_text.find('\n', b);
    if (e == std::string::npos) e = spec_text.size();
    src += "// " + spec_text.substr(b, e - b) + "\n";
  }
  src += tpl->text();
  substitute(src, "KERNEL_NAME", name);
  substitute(src, "RANK", std::to_string(rank));
  substitute(src, "NUM_INPUTS", std::to_string(nin));
  substitute(src, "PARAMS", params);
  substitute(src, "TILE_LOAD", tile_load);
  substitute(src, "TILE_ELEMENT", tile_element);
  substitute(src, "TILE_STORE", tile_store);
  substitute(src, "ELEMENT", element);
  if (src.find("@@") != std::string::npos)
    return absl::InternalError("templates/elementwise.cu.in has a slot the renderer does not fill");
  k.source = std::move(src);
  return k;
}

}  // namespace wok::jit::cuda
