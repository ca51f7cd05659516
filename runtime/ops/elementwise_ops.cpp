// Elementwise ops: schema, dtype rule and scalar formula of each.
#include <cmath>
#include <limits>

#include "wok/runtime/op_registry.h"
#include "wok/runtime/ops/formula_helpers.h"
#include "wok/runtime/ops/op_rules.h"

namespace wok::ops {

namespace {

// An elementwise op's result dtype follows from its common input dtype by
// the rule of the primitive it is named after (runtime/scalar_primitives.h).
using ResultType = ResultRule;

DTypeFn dtype_rule(ResultType rule, bool allow_bool) {
  return [rule, allow_bool](std::span<const DType> in, const Attrs&) {
    DType t = common_dtype(in);
    if (!allow_bool) require_not_bool(t, "this op");
    return one(result_dtype(rule, t));
  };
}

OpDef binary(std::string name, ResultType rule, bool allow_bool, Expr (*f)(Expr, Expr), std::string doc) {
  return elementwise_op_def(std::move(name), {"a", "b"}, rule,
                            [f](FormulaBuilder& b) { b.output(0, f(b.input(0), b.input(1))); }, std::move(doc),
                            allow_bool);
}

using formula::log1p_of;
using formula::stable_sigmoid;

// The binary formulas.
Expr f_add(Expr a, Expr b) { return a + b; }
Expr f_sub(Expr a, Expr b) { return a - b; }
Expr f_mul(Expr a, Expr b) { return a * b; }
Expr f_div(Expr a, Expr b) { return a / b; }
Expr f_pow(Expr a, Expr b) { return fx::pow(a, b); }
Expr f_maximum(Expr a, Expr b) { return fx::maximum(a, b); }
Expr f_minimum(Expr a, Expr b) { return fx::minimum(a, b); }
Expr f_eq(Expr a, Expr b) { return fx::eq(a, b); }
Expr f_ne(Expr a, Expr b) { return fx::ne(a, b); }
Expr f_lt(Expr a, Expr b) { return fx::lt(a, b); }
Expr f_le(Expr a, Expr b) { return fx::le(a, b); }
Expr f_gt(Expr a, Expr b) { return fx::gt(a, b); }
Expr f_ge(Expr a, Expr b) { return fx::ge(a, b); }
Expr f_and(Expr a, Expr b) { return fx::logical_and(a, b); }
Expr f_or(Expr a, Expr b) { return fx::logical_or(a, b); }

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  using R = ResultType;
  // Each unary op's formula gets its input converted to the result dtype.
#define WOK_UNARY_OP(name, rule, takes_bool, formula, doc)                                              \
  r.add(elementwise_op_def(                                                                            \
      #name, {"x"}, R::rule,                                                                           \
      [](FormulaBuilder& b) {                                                                          \
        Expr x = b.cast(b.input(0), b.output_dtype(0));                                                \
        b.output(0, formula);                                                                          \
      },                                                                                               \
      doc, takes_bool));
#include "wok/runtime/ops/unary_op_list.h"
#undef WOK_UNARY_OP

  r.add(binary("add", R::kArithmetic, true, f_add, "a + b"));
  r.add(binary("sub", R::kArithmetic, false, f_sub, "a - b"));
  r.add(binary("mul", R::kArithmetic, true, f_mul, "a * b"));
  r.add(binary("div", R::kFloat, true, f_div, "true division a / b"));
  r.add(binary("pow", R::kArithmetic, true, f_pow, "a ^ b"));
  r.add(binary("maximum", R::kSame, true, f_maximum, "elementwise max, nan-propagating"));
  r.add(binary("minimum", R::kSame, true, f_minimum, "elementwise min, nan-propagating"));
  r.add(binary("eq", R::kCompare, true, f_eq, "a == b"));
  r.add(binary("ne", R::kCompare, true, f_ne, "a != b"));
  r.add(binary("lt", R::kCompare, true, f_lt, "a < b"));
  r.add(binary("le", R::kCompare, true, f_le, "a <= b"));
  r.add(binary("gt", R::kCompare, true, f_gt, "a > b"));
  r.add(binary("ge", R::kCompare, true, f_ge, "a >= b"));
  r.add(binary("logical_and", R::kLogical, true, f_and, "a && b"));
  r.add(binary("logical_or", R::kLogical, true, f_or, "a || b"));

  // cast: the one unary op whose result dtype is an attribute.
  {
    OpDef def;
    def.name = "cast";
    def.inputs = {"x"};
    def.attrs = {{"dtype", AttrType::kDType, std::nullopt}};
    def.kind = OpKind::kElementwise;
    def.infer_shape = broadcast_all_inputs;
    def.infer_dtype = [](std::span<const DType>, const Attrs& a) { return one(a.get_dtype("dtype")); };
    def.formula = [](FormulaBuilder& b) { b.output(0, b.cast(b.input(0), b.output_dtype(0))); };
    def.doc = "convert to another dtype (C++ conversion; float to int truncates)";
    r.add(std::move(def));
  }
  // where(cond, a, b): a and b share a dtype; cond is bool.
  {
    OpDef def;
    def.name = "where";
    def.inputs = {"cond", "a", "b"};
    def.kind = OpKind::kElementwise;
    def.infer_shape = broadcast_all_inputs;
    def.infer_dtype = [](std::span<const DType> in, const Attrs&) {
      if (in[0] != DType::kBool)
        throw DTypeError("cond must be bool, got " + std::string(dtype_name(in[0])));
      return one(common_dtype(in.subspan(1)));
    };
    def.formula = [](FormulaBuilder& b) { b.output(0, fx::where(b.input(0), b.input(1), b.input(2))); };
    def.doc = "cond ? a : b";
    r.add(std::move(def));
  }
  // clamp(x; min, max): nan stays nan; bounds are converted to x's dtype.
  {
    OpDef def;
    def.name = "clamp";
    def.inputs = {"x"};
    def.attrs = {{"min", AttrType::kFloat, -std::numeric_limits<double>::infinity()},
                 {"max", AttrType::kFloat, std::numeric_limits<double>::infinity()}};
    def.kind = OpKind::kElementwise;
    def.infer_shape = broadcast_all_inputs;
    def.infer_dtype = [](std::span<const DType> in, const Attrs&) {
      require_not_bool(in[0], "clamp");
      return one(in[0]);
    };
    def.formula = [](FormulaBuilder& b) {
      Expr x = b.input(0);
      b.output(0, fx::minimum(fx::maximum(x, b.attr("min", x.dtype())), b.attr("max", x.dtype())));
    };
    def.doc = "min(max(x, min), max)";
    r.add(std::move(def));
  }
}

}  // namespace wok::ops

namespace wok {

OpDef elementwise_op_def(std::string name, std::vector<std::string> inputs, ResultRule rule, FormulaFn formula,
                         std::string doc, bool takes_bool) {
  OpDef def;
  def.name = std::move(name);
  def.inputs = std::move(inputs);
  def.kind = OpKind::kElementwise;
  def.infer_shape = broadcast_all_inputs;
  def.infer_dtype = ops::dtype_rule(rule, takes_bool);
  def.formula = std::move(formula);
  def.doc = std::move(doc);
  return def;
}

}  // namespace wok
