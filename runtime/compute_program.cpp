#include "wok/runtime/compute_program.h"

#include <utility>
#include <vector>

namespace wok {

bool has_storage_dtype(const ScalarProgram& program) {
  for (const ScalarInstr& in : program.instrs)
    if (compute_dtype(in.dtype) != in.dtype) return true;
  return false;
}

ScalarProgram compute_program(const ScalarProgram& program) {
  ScalarProgram out;
  std::vector<int32_t> value_of(program.instrs.size(), -1);  // the instruction now holding each value
  auto push = [&](ScalarInstr in) {
    out.instrs.push_back(std::move(in));
    return static_cast<int32_t>(out.instrs.size() - 1);
  };
  // An instruction, but a cast to the dtype its operand has already (as
  // the widened form of a cast from a storage dtype is) is that operand.
  auto emit = [&](ScalarInstr in) {
    if (in.op == ScalarOp::kCast && out.instrs[in.args[0]].dtype == in.dtype) return in.args[0];
    return push(std::move(in));
  };
  auto cast_to = [&](DType t, int32_t value) {
    ScalarInstr c(ScalarOp::kCast, t);
    c.args[0] = value;
    return emit(c);
  };
  for (size_t i = 0; i < program.instrs.size(); ++i) {
    ScalarInstr in = program.instrs[i];
    for (int a = 0; a < scalar_op_arity(in.op); ++a) in.args[a] = value_of[in.args[a]];
    const DType storage = in.dtype, wide = compute_dtype(storage);
    if (wide == storage) {
      value_of[i] = emit(in);
    } else if (in.op == ScalarOp::kInput) {
      value_of[i] = cast_to(wide, push(in));  // loaded, then widened exactly
    } else if (in.op == ScalarOp::kConst) {
      // A half type's weak constant holds float32 precision already.
      in.constant = is_half(storage) ? Scalar(in.constant.to<float>()) : in.constant.cast(storage).cast(wide);
      in.dtype = wide;
      value_of[i] = push(in);
    } else if (is_half(storage)) {
      // A cast to a half type rounds; every other op is float32 arithmetic.
      if (in.op == ScalarOp::kCast) value_of[i] = cast_to(wide, emit(in));
      else in.dtype = wide, value_of[i] = emit(in);
    } else {
      // The op on the wide type, wrapped to the narrow one.
      in.dtype = wide;
      value_of[i] = cast_to(wide, cast_to(storage, emit(in)));
    }
  }
  for (int32_t o : program.outputs) {
    const DType t = program.instrs[o].dtype;
    if (compute_dtype(t) == t) {
      out.outputs.push_back(value_of[o]);
      continue;
    }
    // The store's one rounding; a narrow value is in range and keeps its low bits.
    ScalarInstr c(ScalarOp::kCast, t);
    c.args[0] = value_of[o];
    c.index = kCastRoundedByTheStore;
    out.outputs.push_back(push(c));
  }
  return out;
}

}  // namespace wok
