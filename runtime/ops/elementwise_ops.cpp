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

using namespace formula;

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  using R = ResultType;
  // Each unary op's formula gets its input converted to the result dtype
  // (a predicate's, such as isnan's, as it is).
#define WOK_UNARY_OP(name, rule, takes_bool, formula, doc)                                              \
  r.add(elementwise_op_def(                                                                            \
      #name, {"x"}, R::rule,                                                                           \
      [](FormulaBuilder& b) {                                                                          \
        Expr in = b.input(0);                                                                          \
        Expr x = b.cast(in, unary_operand_dtype(R::rule, in.dtype(), b.output_dtype(0)));              \
        b.output(0, formula);                                                                          \
      },                                                                                               \
      doc, takes_bool));
#include "wok/runtime/ops/unary_op_list.h"
#undef WOK_UNARY_OP

  // The binary ops' operands are converted by the formula builder.
#define WOK_BINARY_OP(name, rule, takes_bool, formula, doc)                                            \
  r.add(elementwise_op_def(                                                                            \
      #name, {"a", "b"}, R::rule,                                                                      \
      [](FormulaBuilder& fb) {                                                                         \
        Expr a = fb.input(0), b = fb.input(1);                                                         \
        fb.output(0, formula);                                                                         \
      },                                                                                               \
      doc, takes_bool));
#include "wok/runtime/ops/binary_op_list.h"
#undef WOK_BINARY_OP

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
