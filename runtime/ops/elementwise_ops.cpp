// Elementwise ops: schema, dtype rule and scalar formula of each.
#include <cmath>
#include <limits>

#include "wok/runtime/op_registry.h"
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

OpDef elementwise(std::string name, std::vector<std::string> inputs, ResultType rule, bool allow_bool,
                  FormulaFn formula, std::string doc) {
  OpDef def;
  def.name = std::move(name);
  def.inputs = std::move(inputs);
  def.kind = OpKind::kElementwise;
  def.infer_shape = broadcast_all_inputs;
  def.infer_dtype = dtype_rule(rule, allow_bool);
  def.formula = std::move(formula);
  def.doc = std::move(doc);
  return def;
}

OpDef unary(std::string name, ResultType rule, bool allow_bool, Expr (*f)(Expr), std::string doc) {
  return elementwise(std::move(name), {"x"}, rule, allow_bool,
                     [f](FormulaBuilder& b) { b.output(0, f(b.cast(b.input(0), b.output_dtype(0)))); },
                     std::move(doc));
}

OpDef binary(std::string name, ResultType rule, bool allow_bool, Expr (*f)(Expr, Expr), std::string doc) {
  return elementwise(std::move(name), {"a", "b"}, rule, allow_bool,
                     [f](FormulaBuilder& b) { b.output(0, f(b.input(0), b.input(1))); }, std::move(doc));
}

// The formulas: the only place each op's math is written; every backend
// derives its kernels from them (Note [One formula per op]).
Expr f_neg(Expr x) { return -x; }
Expr f_abs(Expr x) { return fx::abs(x); }
Expr f_exp(Expr x) { return fx::exp(x); }
Expr f_log(Expr x) { return fx::log(x); }
Expr f_sqrt(Expr x) { return fx::sqrt(x); }
Expr f_rsqrt(Expr x) { return 1.0 / fx::sqrt(x); }
Expr f_sin(Expr x) { return fx::sin(x); }
Expr f_cos(Expr x) { return fx::cos(x); }
Expr f_tanh(Expr x) { return fx::tanh(x); }
Expr f_erf(Expr x) { return fx::erf(x); }
// exp(-|x|) never overflows, so results stay accurate down to subnormals
// for large negative x (1 / (1 + exp(-x)) would give 0 there).
Expr stable_sigmoid(Expr x) {
  Expr e = fx::exp(-fx::abs(x));
  Expr d = 1.0 / (1.0 + e);
  return fx::where(fx::ge(x, x.builder()->weak_constant(0, x.dtype())), d, e * d);
}
Expr f_sigmoid(Expr x) { return stable_sigmoid(x); }
Expr f_relu(Expr x) { return fx::maximum(x, 0.0); }
// tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
Expr f_gelu(Expr x) {
  Expr inner = 0.7978845608028654 * (x + 0.044715 * (x * x * x));
  return 0.5 * x * (1.0 + fx::tanh(inner));
}
Expr f_silu(Expr x) { return x * stable_sigmoid(x); }
Expr f_floor(Expr x) { return fx::floor(x); }
Expr f_ceil(Expr x) { return fx::ceil(x); }
Expr f_round(Expr x) { return fx::round(x); }
Expr f_reciprocal(Expr x) { return 1.0 / x; }
Expr f_square(Expr x) { return x * x; }
Expr f_not(Expr x) { return fx::logical_not(x); }

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
  r.add(unary("neg", R::kSame, false, f_neg, "-x"));
  r.add(unary("abs", R::kSame, false, f_abs, "|x|"));
  r.add(unary("exp", R::kFloat, true, f_exp, "e^x"));
  r.add(unary("log", R::kFloat, true, f_log, "natural logarithm"));
  r.add(unary("sqrt", R::kFloat, true, f_sqrt, "square root"));
  r.add(unary("rsqrt", R::kFloat, true, f_rsqrt, "1 / sqrt(x)"));
  r.add(unary("sin", R::kFloat, true, f_sin, "sine"));
  r.add(unary("cos", R::kFloat, true, f_cos, "cosine"));
  r.add(unary("tanh", R::kFloat, true, f_tanh, "hyperbolic tangent"));
  r.add(unary("erf", R::kFloat, true, f_erf, "error function"));
  r.add(unary("sigmoid", R::kFloat, true, f_sigmoid, "1 / (1 + e^-x), computed from e^-|x|"));
  r.add(unary("relu", R::kSame, false, f_relu, "max(x, 0)"));
  r.add(unary("gelu", R::kFloat, true, f_gelu, "GELU, tanh approximation"));
  r.add(unary("silu", R::kFloat, true, f_silu, "x * sigmoid(x)"));
  r.add(unary("floor", R::kSame, false, f_floor, "round toward -inf"));
  r.add(unary("ceil", R::kSame, false, f_ceil, "round toward +inf"));
  r.add(unary("round", R::kSame, false, f_round, "round half to even"));
  r.add(unary("reciprocal", R::kFloat, true, f_reciprocal, "1 / x"));
  r.add(unary("square", R::kArithmetic, true, f_square, "x * x"));
  r.add(unary("logical_not", R::kLogical, true, f_not, "x == 0"));

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
