// The scalar formula of an elementwise op: what one output element is, as a
// small typed expression over the op's input elements. It is part of the
// op's description (the recipe), written once, and it is what the JIT
// compiles; see Note [One formula per op] in runtime/op_def.h.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "wok/runtime/attrs.h"
#include "wok/runtime/dtype.h"
#include "wok/runtime/scalar.h"
#include "wok/runtime/scalar_primitives.h"

namespace wok {

struct ScalarInstr {
  ScalarInstr(ScalarOp op, DType dtype) : op(op), dtype(dtype) {}

  ScalarOp op;
  DType dtype;           // of the result
  int32_t args[3] = {-1, -1, -1};
  int32_t index = -1;    // kInput: which input
  Scalar constant;       // kConst
};

// Straight-line SSA program: instruction i may use results of j < i.
struct ScalarProgram {
  std::vector<ScalarInstr> instrs;
  std::vector<int32_t> outputs;  // one per op output

  std::string str() const;              // readable listing
  void append_signature(std::string& out) const;
};

// The result dtype of a primitive under `rule` whose operands were promoted
// to `operand`; the elementwise ops' dtype rules use it too, so an op and
// the primitive it is named after cannot disagree.
DType result_dtype(ResultRule rule, DType operand);
// What a built-in unary op's formula reads its input as: the result dtype,
// but a predicate's (kCompare: isnan) input dtype as it is.
inline DType unary_operand_dtype(ResultRule rule, DType input, DType result) {
  return rule == ResultRule::kCompare ? input : result;
}

class FormulaBuilder;

// A value inside a formula being built; combine with the operators below.
class Expr {
 public:
  Expr() = default;
  Expr(FormulaBuilder* b, int32_t id) : builder_(b), id_(id) {}
  int32_t id() const { return id_; }
  FormulaBuilder* builder() const { return builder_; }
  DType dtype() const;

 private:
  FormulaBuilder* builder_ = nullptr;
  int32_t id_ = -1;
};

// Builds a ScalarProgram for concrete input dtypes. Binary operations promote
// their operands like the tensor ops do; plain numbers (`x * 0.5`) are weakly
// typed and take the other operand's dtype.
class FormulaBuilder {
 public:
  FormulaBuilder(std::span<const DType> input_dtypes, std::span<const DType> output_dtypes, const Attrs& attrs);

  Expr input(int i);
  Expr constant(Scalar value);             // strongly typed
  Expr weak_constant(double value, DType like);
  Expr attr(std::string_view name, DType like);  // a numeric attribute as a constant
  const Attrs& attrs() const { return attrs_; }
  DType output_dtype(int i) const { return output_dtypes_[i]; }

  Expr unary(ScalarOp op, Expr a);
  Expr binary(ScalarOp op, Expr a, Expr b);
  Expr select(Expr cond, Expr a, Expr b);
  Expr cast(Expr a, DType to);

  // Sets output i; casts to the op's declared output dtype.
  void output(int i, Expr e);

  ScalarProgram finish();
  const ScalarInstr& instr(int32_t id) const { return program_.instrs[id]; }

 private:
  int32_t push(ScalarInstr in);

  std::vector<DType> input_dtypes_;
  std::vector<DType> output_dtypes_;
  const Attrs& attrs_;
  ScalarProgram program_;
};

// Arithmetic on Exprs; numbers on either side are weak constants.
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator+(Expr a, double b);
Expr operator+(double a, Expr b);
Expr operator-(Expr a, double b);
Expr operator-(double a, Expr b);
Expr operator*(Expr a, double b);
Expr operator*(double a, Expr b);
Expr operator/(Expr a, double b);
Expr operator/(double a, Expr b);

// Formula functions, named after the tensor functions. A struct, not a
// namespace, so that a formula written once can be instantiated over other
// value types: a template taking `class fx` (runtime/ops/formula_helpers.h)
// calls fx::exp on whatever it is given (Note [One formula per op]).
struct fx {
  static Expr abs(Expr a);
  static Expr sqrt(Expr a);
  static Expr exp(Expr a);
  static Expr log(Expr a);
  static Expr sin(Expr a);
  static Expr cos(Expr a);
  static Expr tanh(Expr a);
  static Expr erf(Expr a);
  static Expr floor(Expr a);
  static Expr ceil(Expr a);
  static Expr round(Expr a);
  static Expr logical_not(Expr a);
  static Expr maximum(Expr a, Expr b);
  static Expr minimum(Expr a, Expr b);
  static Expr maximum(Expr a, double b);
  static Expr minimum(Expr a, double b);
  static Expr pow(Expr a, Expr b);
  static Expr eq(Expr a, Expr b);
  static Expr ne(Expr a, Expr b);
  static Expr lt(Expr a, Expr b);
  static Expr le(Expr a, Expr b);
  static Expr gt(Expr a, Expr b);
  static Expr ge(Expr a, Expr b);
  static Expr gt(Expr a, double b);
  static Expr logical_and(Expr a, Expr b);
  static Expr logical_or(Expr a, Expr b);
  static Expr where(Expr c, Expr a, Expr b);
  static Expr cast(Expr a, DType to);
  // Any unary or binary primitive, for those without a function of their own.
  static Expr apply(ScalarOp op, Expr a);
  static Expr apply(ScalarOp op, Expr a, Expr b);
  static Expr ge(Expr a, double b);
  static Expr eq(Expr a, double b);
  static Expr ne(Expr a, double b);
  static Expr lt(Expr a, double b);
  static Expr le(Expr a, double b);
  static Expr where(Expr c, Expr a, double b);
  static Expr where(Expr c, double a, Expr b);
  // a in the float dtype it computes in (float_result_type: integers in
  // float64, bool in float32), for a formula that must not see integers.
  static Expr as_float(Expr a) { return cast(a, float_result_type(a.dtype())); }
  // A plain number with the dtype of `like` (what `like + 0.5` gives 0.5).
  static Expr number(Expr like, double v);
  // Questions about a value's dtype, answered while the formula is built
  // (at compile time when it is compiled as C++): a helper may take a
  // different polynomial for float32 than for float64. The half types
  // compute in float32 and take its polynomials and constants.
  static bool is_float32(Expr a) { return a.dtype() == DType::kFloat32 || is_half(a.dtype()); }
  static bool is_floating(Expr a) { return wok::is_floating(a.dtype()); }
};

}  // namespace wok
