// Elementwise ONNX ops: one wok op each, or a short composite that the JIT
// fuses into one kernel with its neighbours.
#include "wok/frontend/ops.h"
#include "wok/onnx/converters.h"
#include "wok/onnx/tensor_proto.h"

namespace wok::onnx {

namespace {

// ONNX binary ops take operands of one dtype (the checker enforces it), so
// wok's promotion never changes a dtype here, except where noted.
#define WOK_ONNX_UNARY(table, onnx_name, fn) \
  table.add(onnx_name, [](const NodeContext& c) -> Outputs { return {fn(c.input(0))}; })
#define WOK_ONNX_BINARY(table, onnx_name, fn) \
  table.add(onnx_name, [](const NodeContext& c) -> Outputs { return {fn(c.input(0), c.input(1))}; })

// Max, Min, Sum, Mean take any number of inputs, broadcast together.
template <Tensor (*Combine)(const Tensor&, const Tensor&)>
Outputs fold_inputs(const NodeContext& c) {
  Tensor acc = c.input(0);
  for (size_t i = 1; i < c.num_inputs(); ++i) acc = Combine(acc, c.input(i));
  return {acc};
}

Tensor add_tensors(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor max_tensors(const Tensor& a, const Tensor& b) { return maximum(a, b); }
Tensor min_tensors(const Tensor& a, const Tensor& b) { return minimum(a, b); }

Outputs convert_mean(const NodeContext& c) {
  Tensor sum = fold_inputs<add_tensors>(c)[0];
  return {div(sum, Scalar(static_cast<double>(c.num_inputs()))).astype(c.input(0).dtype())};
}

// Integer Div truncates toward zero (the reference computes x / y and casts
// back); wok's div is true division in float64 for integers, exact for
// int32 and for int64 below 2^53.
Outputs convert_div(const NodeContext& c) {
  const Tensor& a = c.input(0);
  Tensor q = div(a, c.input(1));
  return {is_floating(a.dtype()) ? q : trunc(q).astype(a.dtype())};
}

// Pow's result has the base's dtype, whatever the exponent's.
Outputs convert_pow(const NodeContext& c) {
  const Tensor& base = c.input(0);
  return {pow(base, c.input(1)).astype(base.dtype())};
}

Outputs convert_clip(const NodeContext& c) {
  Tensor x = c.input(0);
  if (c.opset() < 11) {
    // min and max are attributes, defaulting to the float range.
    std::optional<double> lo, hi;
    if (c.has_attr("min")) lo = c.attr_float("min", 0);
    if (c.has_attr("max")) hi = c.attr_float("max", 0);
    return {clamp(x, lo, hi)};
  }
  if (c.has_input(1)) x = maximum(x, c.input(1).astype(x.dtype()));
  if (c.has_input(2)) x = minimum(x, c.input(2).astype(x.dtype()));
  return {x};
}

std::string check_cast(const ::onnx::NodeProto& node, int64_t) {
  const int64_t to = proto_attr_int(node, "to", 0);
  if (!dtype_from_onnx(static_cast<int32_t>(to)))
    return "casts to " + onnx_dtype_name(static_cast<int32_t>(to)) + ", a dtype wok does not have";
  return "";
}

Outputs convert_cast(const NodeContext& c) {
  return {c.input(0).astype(*dtype_from_onnx(static_cast<int32_t>(c.attr_int("to", 0))))};
}

// Mod: fmod=1 is C's fmod (the dividend's sign), fmod=0 Python's % (the
// divisor's sign, integers only in ONNX).
Outputs convert_mod(const NodeContext& c) {
  return {c.attr_int("fmod", 0) ? fmod(c.input(0), c.input(1)) : remainder(c.input(0), c.input(1))};
}

Outputs convert_bit_shift(const NodeContext& c) {
  const std::string direction = c.attr_string("direction", "");
  if (direction == "LEFT") return {bitwise_left_shift(c.input(0), c.input(1))};
  if (direction == "RIGHT") return {bitwise_right_shift(c.input(0), c.input(1))};
  c.fail("direction must be LEFT or RIGHT, got '" + direction + "'");
}

// IsInf with detect_negative / detect_positive (both on by default).
Outputs convert_isinf(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const bool negative = c.attr_int("detect_negative", 1) != 0, positive = c.attr_int("detect_positive", 1) != 0;
  if (negative && positive) return {isinf(x)};
  if (!negative && !positive) return {logical_and(isinf(x), Scalar(false))};
  return {logical_and(isinf(x), negative ? lt(x, Scalar(0)) : gt(x, Scalar(0)))};
}

Outputs convert_where(const NodeContext& c) { return {where(c.input(0), c.input(1), c.input(2))}; }

}  // namespace

void add_elementwise_converters(ConverterTable& t) {
  WOK_ONNX_UNARY(t, "Abs", abs);
  WOK_ONNX_UNARY(t, "Neg", neg);
  WOK_ONNX_UNARY(t, "Exp", exp);
  WOK_ONNX_UNARY(t, "Log", log);
  WOK_ONNX_UNARY(t, "Sqrt", sqrt);
  WOK_ONNX_UNARY(t, "Reciprocal", reciprocal);
  WOK_ONNX_UNARY(t, "Sin", sin);
  WOK_ONNX_UNARY(t, "Cos", cos);
  WOK_ONNX_UNARY(t, "Tanh", tanh);
  WOK_ONNX_UNARY(t, "Erf", erf);
  WOK_ONNX_UNARY(t, "Sigmoid", sigmoid);
  WOK_ONNX_UNARY(t, "Relu", relu);
  WOK_ONNX_UNARY(t, "Floor", floor);
  WOK_ONNX_UNARY(t, "Ceil", ceil);
  WOK_ONNX_UNARY(t, "Round", round);
  WOK_ONNX_UNARY(t, "Softplus", softplus);
  WOK_ONNX_UNARY(t, "Not", logical_not);
  WOK_ONNX_UNARY(t, "Tan", tan);
  WOK_ONNX_UNARY(t, "Asin", asin);
  WOK_ONNX_UNARY(t, "Acos", acos);
  WOK_ONNX_UNARY(t, "Atan", atan);
  WOK_ONNX_UNARY(t, "Sinh", sinh);
  WOK_ONNX_UNARY(t, "Cosh", cosh);
  WOK_ONNX_UNARY(t, "Asinh", asinh);
  WOK_ONNX_UNARY(t, "Acosh", acosh);
  WOK_ONNX_UNARY(t, "Atanh", atanh);
  WOK_ONNX_UNARY(t, "Sign", sign);
  WOK_ONNX_UNARY(t, "IsNaN", isnan);
  WOK_ONNX_UNARY(t, "Softsign", softsign);
  WOK_ONNX_UNARY(t, "Mish", mish);
  WOK_ONNX_UNARY(t, "BitwiseNot", bitwise_not);
  t.add("IsInf", convert_isinf);
  t.add("Identity", [](const NodeContext& c) -> Outputs { return {c.input(0)}; });

  WOK_ONNX_BINARY(t, "Add", add);
  WOK_ONNX_BINARY(t, "Sub", sub);
  WOK_ONNX_BINARY(t, "Mul", mul);
  WOK_ONNX_BINARY(t, "Equal", eq);
  WOK_ONNX_BINARY(t, "Less", lt);
  WOK_ONNX_BINARY(t, "LessOrEqual", le);
  WOK_ONNX_BINARY(t, "Greater", gt);
  WOK_ONNX_BINARY(t, "GreaterOrEqual", ge);
  WOK_ONNX_BINARY(t, "And", logical_and);
  WOK_ONNX_BINARY(t, "Or", logical_or);
  WOK_ONNX_BINARY(t, "Xor", ne);  // on bools
  WOK_ONNX_BINARY(t, "BitwiseAnd", bitwise_and);
  WOK_ONNX_BINARY(t, "BitwiseOr", bitwise_or);
  WOK_ONNX_BINARY(t, "BitwiseXor", bitwise_xor);
  t.add("Mod", convert_mod);
  t.add("BitShift", convert_bit_shift);
  t.add("Div", convert_div);
  t.add("Pow", convert_pow);

  t.add("Max", fold_inputs<max_tensors>);
  t.add("Min", fold_inputs<min_tensors>);
  t.add("Sum", fold_inputs<add_tensors>);
  t.add("Mean", convert_mean);

  t.add("Where", convert_where);
  t.add("Clip", convert_clip);
  t.add("Cast", convert_cast, check_cast);
  t.add("CastLike", [](const NodeContext& c) -> Outputs { return {c.input(0).astype(c.input(1).dtype())}; });
}

}  // namespace wok::onnx
