#include "wok/runtime/cuda/formula_source.h"

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "wok/runtime/compute_program.h"
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
    case DType::kFloat16: return "wok::f16";
    case DType::kBFloat16: return "wok::bf16";
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
    case DType::kUInt64: return "(" + std::to_string(value.to<uint64_t>()) + "ULL)";
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

namespace {

// Why the instruction `in` of a compute-form program has no CUDA rendering,
// or "" when it has one.
std::string unrenderable(const ScalarProgram& program, const ScalarInstr& in) {
  if (in.op == ScalarOp::kInput || in.op == ScalarOp::kConst) return "";
  if (is_reduction(in.op) || in.op == ScalarOp::kRowLength)
    return "no CUDA rendering of " + std::string(scalar_op_name(in.op)) + " (elementwise kernels only)";
  const DType column = column_dtype(program, in);
  if (!find_op(in.op, column))
    return "no CUDA rendering of " + std::string(scalar_op_name(in.op)) + " on " + std::string(dtype_name(column));
  return "";
}

}  // namespace

absl::StatusOr<RenderedStatements> render_statements(const ScalarProgram& source, const InputExpr& input,
                                                     std::string_view indent) {
  // Note [Programs in their compute dtypes]: storage dtypes appear only as
  // loads, casts and stores.
  const ScalarProgram program = compute_program(source);
  RenderedStatements out;
  std::vector<int32_t> stored;  // the instruction each output stores
  for (int32_t o : program.outputs) {
    // An output cast of a value that was itself cast from the output's
    // dtype (a half value rounded, or an int8 value wrapped, then widened)
    // stores that value: rounding it again would cost a conversion and
    // change nothing.
    const ScalarInstr& store = program.instrs[o];
    if (store.op == ScalarOp::kCast && store.index == kCastRoundedByTheStore) {
      const ScalarInstr& widened = program.instrs[store.args[0]];
      if (widened.op == ScalarOp::kCast && program.instrs[widened.args[0]].dtype == store.dtype) o = widened.args[0];
    }
    stored.push_back(o);
    out.outputs.push_back(value_name(o));
  }
  // What the outputs read (the casts skipped above are not rendered).
  std::vector<bool> live(program.instrs.size(), false);
  for (int32_t o : stored) live[o] = true;
  for (size_t i = program.instrs.size(); i-- > 0;)
    if (live[i])
      for (int a = 0; a < scalar_op_arity(program.instrs[i].op); ++a) live[program.instrs[i].args[a]] = true;
  for (size_t i = 0; i < program.instrs.size(); ++i) {
    const ScalarInstr& in = program.instrs[i];
    if (std::string why = unrenderable(program, in); !why.empty()) return absl::UnimplementedError(why);
    if (!live[i]) continue;
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
      expr = fill(find_op(in.op, column_dtype(program, in)), args, arity, type);
    }
    out.text.append(indent);
    out.text += "const " + std::string(type) + " " + value_name(static_cast<int32_t>(i)) + " = " + expr + ";\n";
  }
  return out;
}

bool can_render(const ScalarProgram& source) {
  const ScalarProgram program = compute_program(source);
  for (const ScalarInstr& in : program.instrs)
    if (!unrenderable(program, in).empty()) return false;
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
