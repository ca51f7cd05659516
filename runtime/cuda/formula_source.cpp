#include "wok/runtime/cuda/formula_source.h"

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "wok/runtime/cuda/embedded_files.h"

namespace wok::cuda {

namespace {

// The CUDA spelling of `op` with operands of dtype t: the CUDA column of
// Note [One table per primitive] (runtime/scalar_primitives.h).
const char* find_op(ScalarOp op, DType t) {
  const ScalarPrimitive& p = primitive(op);
  switch (t) {
    case DType::kBool: return p.cuda_bool;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kInt64:
    case DType::kUInt64: return p.cuda_int;
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
    case DType::kFloat64: return p.cuda_float;
  }
  return nullptr;
}

// The dtype that picks an instruction's CUDA column: a select's result,
// everything else's first operand (a comparison's result is bool).
DType column_dtype(const ScalarProgram& program, const ScalarInstr& in) {
  return in.op == ScalarOp::kSelect ? in.dtype : program.instrs[in.args[0]].dtype;
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

}  // namespace

std::string_view cuda_type(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kInt32: return "int";
    case DType::kInt64: return "long long";
    case DType::kFloat32: return "float";
    case DType::kFloat64: return "double";
    case DType::kFloat16: return "__half";
    case DType::kBFloat16: return "__nv_bfloat16";
    case DType::kInt8: return "signed char";
    case DType::kUInt8: return "unsigned char";
    case DType::kInt16: return "short";
    case DType::kUInt16: return "unsigned short";
    case DType::kUInt32: return "unsigned int";
    case DType::kUInt64: return "unsigned long long";
  }
  return "void";
}

std::string cuda_literal(DType t, const Scalar& value) {
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
    default: break;
  }
  return "0";
}

std::string value_name(int32_t i) { return "v" + std::to_string(i); }

absl::StatusOr<std::string> render_statements(const ScalarProgram& program, const InputExpr& input,
                                              std::string_view indent) {
  std::string out;
  for (size_t i = 0; i < program.instrs.size(); ++i) {
    const ScalarInstr& in = program.instrs[i];
    std::string_view type = cuda_type(in.dtype);
    std::string expr;
    if (in.op == ScalarOp::kInput) {
      expr = input(in.index);
    } else if (in.op == ScalarOp::kConst) {
      expr = cuda_literal(in.dtype, in.constant);
    } else {
      const int arity = scalar_op_arity(in.op);
      std::string args[3];
      for (int a = 0; a < arity; ++a) args[a] = value_name(in.args[a]);
      const DType checked = column_dtype(program, in);
      const char* pattern = find_op(in.op, checked);
      if (!pattern)
        return absl::UnimplementedError("no CUDA rendering of " + std::string(scalar_op_name(in.op)) + " on " +
                                        std::string(dtype_name(checked)));
      expr = fill(pattern, args, arity, type);
    }
    out.append(indent);
    out += "const " + std::string(type) + " " + value_name(static_cast<int32_t>(i)) + " = " + expr + ";\n";
  }
  return out;
}

bool can_render(const ScalarProgram& program) {
  for (const ScalarInstr& in : program.instrs) {
    if (!in_mask(kComputeDTypeMask, in.dtype)) return false;  // the storage dtypes are not rendered yet
    if (in.op == ScalarOp::kInput || in.op == ScalarOp::kConst) continue;
    if (is_reduction(in.op) || in.op == ScalarOp::kRowLength) return false;
    if (!find_op(in.op, column_dtype(program, in))) return false;
  }
  return true;
}

std::string as_comment(std::string_view text) {
  std::string out;
  for (size_t b = 0, e; b < text.size(); b = e + 1) {
    e = text.find('\n', b);
    if (e == std::string_view::npos) e = text.size();
    out += "// ";
    out.append(text.substr(b, e - b));
    out += "\n";
  }
  return out;
}

absl::StatusOr<std::string> fill_template(std::string_view path,
                                          std::span<const std::pair<std::string_view, std::string>> slots) {
  const embedded::EmbeddedFile* tpl = embedded::find(path);
  if (!tpl) return absl::InternalError(std::string(path) + " is not embedded in this build");
  std::string text(tpl->text());
  for (const auto& [key, value] : slots) {
    const std::string slot = "@@" + std::string(key) + "@@";
    for (size_t pos = text.find(slot); pos != std::string::npos; pos = text.find(slot, pos + value.size()))
      text.replace(pos, slot.size(), value);
  }
  if (size_t at = text.find("@@"); at != std::string::npos)
    return absl::InternalError(std::string(path) + " has a slot the renderer does not fill: " +
                               text.substr(at, text.find('\n', at) - at));
  return text;
}

}  // namespace wok::cuda
