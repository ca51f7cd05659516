// A scalar program as CUDA C++: one `const T vI = ...;` statement per
// instruction, spelled with the CUDA columns of the primitive table (Note
// [One table per primitive]) and the device functions of
// templates/wok_device.cuh. The CUDA JIT's renderer (jit/cuda/
// cuda_renderer.cpp) and the precompiled formula kernels
// (cuda_formula_kernel.cpp) both render programs here, so a program has one
// CUDA spelling.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <absl/status/statusor.h>

#include "wok/runtime/dtype.h"
#include "wok/runtime/scalar.h"
#include "wok/runtime/scalar_formula.h"

namespace wok::cuda {

// The CUDA spelling of a dtype: "float", "long long", "bool", ...
std::string_view cuda_type(DType t);

// An exact literal of `value` as dtype t (hex floats; bit patterns for nan
// and infinities).
std::string cuda_literal(DType t, const Scalar& value);

// The variable holding instruction i's result: "v<i>".
std::string value_name(int32_t i);

// The expression a kInput instruction with `index` reads (its input element,
// or a kernel parameter).
using InputExpr = std::function<std::string(int32_t index)>;

// A program as CUDA statements, one `const T vI = ...;` per instruction of
// its compute form (Note [Programs in their compute dtypes] in
// runtime/compute_program.h: half types computed in float32, narrow
// integers in int32 and wrapped), each line starting with `indent`.
struct RenderedStatements {
  std::string text;
  std::vector<std::string> outputs;  // the variable holding each of the program's outputs
};
// Fails for an instruction without a CUDA rendering at its dtype.
absl::StatusOr<RenderedStatements> render_statements(const ScalarProgram& program, const InputExpr& input,
                                                     std::string_view indent);

// Whether every instruction of `program` has a CUDA rendering at its dtypes
// (reductions have none: both users make elementwise kernels).
bool can_render(const ScalarProgram& program);

// `text` as C++ comment lines ("// " before each line, a newline after).
std::string as_comment(std::string_view text);

// The embedded template `path` (e.g. "templates/elementwise.cu.in") with
// each @@KEY@@ replaced by its value; an error when the template is not
// embedded or a slot is left unfilled.
absl::StatusOr<std::string> fill_template(std::string_view path,
                                          std::span<const std::pair<std::string_view, std::string>> slots);

}  // namespace wok::cuda
