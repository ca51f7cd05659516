#include "wok/jit/fused_kernel.h"

#include <cstring>
#include <sstream>

namespace wok::jit {

std::string FusedKernelSpec::short_name(const std::string& key_hex) const {
  std::string name = is_gemm() ? "gemm" : "fused";
  int shown = 0;
  for (const ScalarInstr& in : program.instrs) {
    if (in.op == ScalarOp::kInput || in.op == ScalarOp::kConst || in.op == ScalarOp::kCast) continue;
    if (shown++ == 4) {
      name += "_etc";
      break;
    }
    name += "_";
    name += scalar_op_name(in.op);
  }
  return name + "_" + key_hex.substr(0, 8);
}

std::string FusedKernelSpec::signature() const {
  std::string s = "fk";
  s.push_back(static_cast<char>(kKernelAbiVersion));
  s.push_back(static_cast<char>(kind));
  for (bool b : output_row_scalar) s.push_back(b ? 'r' : 'f');
  if (is_gemm()) {
    s.push_back(static_cast<char>(tile_rows));
    s.push_back(static_cast<char>(tile_cols));
  }
  s.push_back(static_cast<char>(rank));
  s.push_back(static_cast<char>(input_dtypes.size()));
  for (size_t i = 0; i < input_dtypes.size(); ++i) {
    s.push_back(static_cast<char>(input_dtypes[i]));
    for (bool b : input_broadcast[i]) s.push_back(b ? 'b' : 'c');
  }
  s.push_back(static_cast<char>(param_dtypes.size()));
  for (DType t : param_dtypes) s.push_back(static_cast<char>(t));
  program.append_signature(s);
  return s;
}

std::string FusedKernelSpec::str() const {
  std::ostringstream out;
  out << (is_row() ? "row kernel" : is_column() ? "column kernel" : is_gemm() ? "gemm kernel" : "fused kernel") << ", rank "
      << rank;
  if (is_gemm()) out << ", tile " << tile_rows << "x" << tile_cols;
  out << "\n";
  for (size_t i = 0; i < input_dtypes.size(); ++i) {
    out << "  input #" << i << ": " << dtype_name(input_dtypes[i]) << " dims ";
    for (bool b : input_broadcast[i]) out << (b ? 'b' : '.');
    out << "\n";
  }
  for (size_t i = 0; i < param_dtypes.size(); ++i)
    out << "  param #" << input_dtypes.size() + i << ": " << dtype_name(param_dtypes[i]) << "\n";
  out << program.str();
  for (size_t o = 0; o < output_row_scalar.size(); ++o)
    if (output_row_scalar[o]) out << "  output " << o << " is one value per row\n";
  return out.str();
}

uint64_t param_bits(DType dtype, const Scalar& value) {
  uint64_t bits = 0;
  visit_any_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      bits = value.cast(dtype).to<bool>() ? 1 : 0;
    } else {
      T v = value.cast(dtype).to<T>();
      std::memcpy(&bits, &v, sizeof v);
    }
  });
  return bits;
}

}  // namespace wok::jit
