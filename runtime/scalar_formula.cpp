#include "wok/runtime/scalar_formula.h"

#include <sstream>

#include "wok/runtime/error.h"

namespace wok {

DType result_dtype(ResultRule rule, DType operand) {
  switch (rule) {
    case ResultRule::kGiven:
    case ResultRule::kSame:
    case ResultRule::kWhole:
    case ResultRule::kSelect: return operand;
    case ResultRule::kFloat: return float_result_type(operand);
    case ResultRule::kArithmetic: return operand == DType::kBool ? DType::kInt32 : operand;
    case ResultRule::kBitwise:
      if (is_floating(operand))
        throw DTypeError("bitwise operations take integer or bool tensors, not " + std::string(dtype_name(operand)));
      return operand;
    case ResultRule::kShift:
      if (is_floating(operand))
        throw DTypeError("shifts take integer (or bool) tensors, not " + std::string(dtype_name(operand)));
      return operand == DType::kBool ? DType::kInt32 : operand;
    case ResultRule::kCompare:
    case ResultRule::kLogical: return DType::kBool;
  }
  return operand;
}

std::string ScalarProgram::str() const {
  std::ostringstream out;
  for (size_t i = 0; i < instrs.size(); ++i) {
    const ScalarInstr& in = instrs[i];
    out << "  %" << i << ":" << dtype_name(in.dtype) << " = " << scalar_op_name(in.op);
    if (in.op == ScalarOp::kInput) out << " #" << in.index;
    if (in.op == ScalarOp::kConst) out << " " << in.constant.str();
    for (int a = 0; a < scalar_op_arity(in.op); ++a) out << (a ? ", %" : " %") << in.args[a];
    out << "\n";
  }
  out << "  return";
  for (size_t i = 0; i < outputs.size(); ++i) out << (i ? ", %" : " %") << outputs[i];
  out << "\n";
  return out.str();
}

void ScalarProgram::append_signature(std::string& out) const {
  for (const ScalarInstr& in : instrs) {
    out.push_back(static_cast<char>(in.op));
    out.push_back(static_cast<char>(in.dtype));
    out.append(reinterpret_cast<const char*>(in.args), sizeof in.args);
    out.append(reinterpret_cast<const char*>(&in.index), sizeof in.index);
    if (in.op == ScalarOp::kConst) {
      if (is_floating(in.constant.dtype())) {
        double d = in.constant.as_double();
        out.append(reinterpret_cast<const char*>(&d), sizeof d);
      } else {
        int64_t i = in.constant.to<int64_t>();
        out.append(reinterpret_cast<const char*>(&i), sizeof i);
      }
    }
  }
  for (int32_t o : outputs) out.append(reinterpret_cast<const char*>(&o), sizeof o);
}

DType Expr::dtype() const { return builder_->instr(id_).dtype; }

FormulaBuilder::FormulaBuilder(std::span<const DType> input_dtypes, std::span<const DType> output_dtypes,
                               const Attrs& attrs)
    : input_dtypes_(input_dtypes.begin(), input_dtypes.end()),
      output_dtypes_(output_dtypes.begin(), output_dtypes.end()),
      attrs_(attrs) {
  program_.outputs.assign(output_dtypes_.size(), -1);
}

int32_t FormulaBuilder::push(ScalarInstr in) {
  program_.instrs.push_back(in);
  return static_cast<int32_t>(program_.instrs.size() - 1);
}

Expr FormulaBuilder::input(int i) {
  if (i < 0 || i >= static_cast<int>(input_dtypes_.size()))
    throw ArgumentError("formula reads input " + std::to_string(i) + " of an op with " +
                        std::to_string(input_dtypes_.size()) + " inputs");
  ScalarInstr in{ScalarOp::kInput, input_dtypes_[i]};
  in.index = i;
  return Expr(this, push(in));
}

Expr FormulaBuilder::constant(Scalar value) {
  ScalarInstr in{ScalarOp::kConst, value.dtype()};
  in.constant = value;
  return Expr(this, push(in));
}

Expr FormulaBuilder::weak_constant(double value, DType like) {
  // A plain number adopts the dtype of what it meets; in an integer context
  // it keeps its fraction only if the other side is floating.
  if (is_half(like)) {
    // Half types compute in float32 (Note [Compute dtypes] in
    // runtime/dtype.h): a formula's constants (gelu's sqrt(2/pi)) keep
    // float32 precision, as in the float32 formula the precompiled kernels
    // run for them, and are typed like their operands.
    ScalarInstr in{ScalarOp::kConst, like};
    in.constant = Scalar(value).cast(DType::kFloat32);
    return Expr(this, push(in));
  }
  return constant(Scalar(value).cast(like));
}

Expr FormulaBuilder::attr(std::string_view name, DType like) {
  const AttrValue& v = attrs_.at(name);
  if (const double* d = std::get_if<double>(&v)) return weak_constant(*d, like);
  if (const int64_t* i = std::get_if<int64_t>(&v)) return constant(Scalar(*i).cast(like));
  if (const Scalar* s = std::get_if<Scalar>(&v)) return constant(s->cast(like));
  if (const bool* b = std::get_if<bool>(&v)) return constant(Scalar(*b).cast(like));
  throw ArgumentError("formula uses attribute '" + std::string(name) + "', which is not numeric");
}

Expr FormulaBuilder::cast(Expr a, DType to) {
  if (a.dtype() == to) return a;
  ScalarInstr in{ScalarOp::kCast, to};
  in.args[0] = a.id();
  return Expr(this, push(in));
}

Expr FormulaBuilder::unary(ScalarOp op, Expr a) {
  const ResultRule rule = primitive(op).result;
  if (primitive(op).arity != 1 || rule == ResultRule::kGiven)
    throw ArgumentError("'" + std::string(scalar_op_name(op)) + "' is not a unary formula primitive");
  if (rule == ResultRule::kWhole && !is_floating(a.dtype())) return a;  // integers are already whole
  // Operands are converted to what the primitive computes in: a float for
  // sqrt and exp, a truth value for not.
  const DType t = result_dtype(rule, a.dtype());
  a = cast(a, rule == ResultRule::kLogical ? DType::kBool : t);
  ScalarInstr in{op, t};
  in.args[0] = a.id();
  return Expr(this, push(in));
}

Expr FormulaBuilder::binary(ScalarOp op, Expr a, Expr b) {
  const ResultRule rule = primitive(op).result;
  if (primitive(op).arity != 2 || rule == ResultRule::kGiven)
    throw ArgumentError("'" + std::string(scalar_op_name(op)) + "' is not a binary formula primitive");
  const DType promoted = promote_types(a.dtype(), b.dtype());
  const DType t = result_dtype(rule, promoted);
  // Comparisons compare in the promoted dtype; the rest compute in their result's.
  const DType operand_t = rule == ResultRule::kCompare ? promoted : t;
  a = cast(a, operand_t);
  b = cast(b, operand_t);
  ScalarInstr in{op, t};
  in.args[0] = a.id();
  in.args[1] = b.id();
  return Expr(this, push(in));
}

Expr FormulaBuilder::select(Expr cond, Expr a, Expr b) {
  DType t = promote_types(a.dtype(), b.dtype());
  cond = cast(cond, DType::kBool);
  a = cast(a, t);
  b = cast(b, t);
  ScalarInstr in{ScalarOp::kSelect, t};
  in.args[0] = cond.id();
  in.args[1] = a.id();
  in.args[2] = b.id();
  return Expr(this, push(in));
}

void FormulaBuilder::output(int i, Expr e) {
  if (i < 0 || i >= static_cast<int>(output_dtypes_.size()))
    throw ArgumentError("formula sets output " + std::to_string(i) + " of an op with " +
                        std::to_string(output_dtypes_.size()) + " outputs");
  program_.outputs[i] = cast(e, output_dtypes_[i]).id();
}

ScalarProgram FormulaBuilder::finish() {
  for (size_t i = 0; i < program_.outputs.size(); ++i)
    if (program_.outputs[i] < 0) throw ArgumentError("formula never sets output " + std::to_string(i));
  return std::move(program_);
}

namespace {
Expr weak(Expr like, double v) { return like.builder()->weak_constant(v, like.dtype()); }
Expr bin(ScalarOp op, Expr a, Expr b) { return a.builder()->binary(op, a, b); }
Expr un(ScalarOp op, Expr a) { return a.builder()->unary(op, a); }
}  // namespace

Expr operator+(Expr a, Expr b) { return bin(ScalarOp::kAdd, a, b); }
Expr operator-(Expr a, Expr b) { return bin(ScalarOp::kSub, a, b); }
Expr operator*(Expr a, Expr b) { return bin(ScalarOp::kMul, a, b); }
Expr operator/(Expr a, Expr b) { return bin(ScalarOp::kDiv, a, b); }
Expr operator-(Expr a) { return un(ScalarOp::kNeg, a); }
Expr operator+(Expr a, double b) { return a + weak(a, b); }
Expr operator+(double a, Expr b) { return weak(b, a) + b; }
Expr operator-(Expr a, double b) { return a - weak(a, b); }
Expr operator-(double a, Expr b) { return weak(b, a) - b; }
Expr operator*(Expr a, double b) { return a * weak(a, b); }
Expr operator*(double a, Expr b) { return weak(b, a) * b; }
Expr operator/(Expr a, double b) { return a / weak(a, b); }
Expr operator/(double a, Expr b) { return weak(b, a) / b; }

Expr fx::abs(Expr a) { return un(ScalarOp::kAbs, a); }
Expr fx::sqrt(Expr a) { return un(ScalarOp::kSqrt, a); }
Expr fx::exp(Expr a) { return un(ScalarOp::kExp, a); }
Expr fx::log(Expr a) { return un(ScalarOp::kLog, a); }
Expr fx::sin(Expr a) { return un(ScalarOp::kSin, a); }
Expr fx::cos(Expr a) { return un(ScalarOp::kCos, a); }
Expr fx::tanh(Expr a) { return un(ScalarOp::kTanh, a); }
Expr fx::erf(Expr a) { return un(ScalarOp::kErf, a); }
Expr fx::floor(Expr a) { return un(ScalarOp::kFloor, a); }
Expr fx::ceil(Expr a) { return un(ScalarOp::kCeil, a); }
Expr fx::round(Expr a) { return un(ScalarOp::kRound, a); }
Expr fx::logical_not(Expr a) { return un(ScalarOp::kNot, a); }
Expr fx::maximum(Expr a, Expr b) { return bin(ScalarOp::kMax, a, b); }
Expr fx::minimum(Expr a, Expr b) { return bin(ScalarOp::kMin, a, b); }
Expr fx::maximum(Expr a, double b) { return maximum(a, weak(a, b)); }
Expr fx::minimum(Expr a, double b) { return minimum(a, weak(a, b)); }
Expr fx::pow(Expr a, Expr b) { return bin(ScalarOp::kPow, a, b); }
Expr fx::eq(Expr a, Expr b) { return bin(ScalarOp::kEq, a, b); }
Expr fx::ne(Expr a, Expr b) { return bin(ScalarOp::kNe, a, b); }
Expr fx::lt(Expr a, Expr b) { return bin(ScalarOp::kLt, a, b); }
Expr fx::le(Expr a, Expr b) { return bin(ScalarOp::kLe, a, b); }
Expr fx::gt(Expr a, Expr b) { return bin(ScalarOp::kGt, a, b); }
Expr fx::ge(Expr a, Expr b) { return bin(ScalarOp::kGe, a, b); }
Expr fx::gt(Expr a, double b) { return gt(a, weak(a, b)); }
Expr fx::logical_and(Expr a, Expr b) { return bin(ScalarOp::kAnd, a, b); }
Expr fx::logical_or(Expr a, Expr b) { return bin(ScalarOp::kOr, a, b); }
Expr fx::where(Expr c, Expr a, Expr b) { return c.builder()->select(c, a, b); }
Expr fx::cast(Expr a, DType to) { return a.builder()->cast(a, to); }
Expr fx::apply(ScalarOp op, Expr a) { return un(op, a); }
Expr fx::apply(ScalarOp op, Expr a, Expr b) { return bin(op, a, b); }
Expr fx::ge(Expr a, double b) { return ge(a, weak(a, b)); }
Expr fx::eq(Expr a, double b) { return eq(a, weak(a, b)); }
Expr fx::ne(Expr a, double b) { return ne(a, weak(a, b)); }
Expr fx::lt(Expr a, double b) { return lt(a, weak(a, b)); }
Expr fx::le(Expr a, double b) { return le(a, weak(a, b)); }
Expr fx::where(Expr c, Expr a, double b) { return where(c, a, weak(a, b)); }
Expr fx::where(Expr c, double a, Expr b) { return where(c, weak(b, a), b); }
Expr fx::number(Expr like, double v) { return weak(like, v); }

}  // namespace wok
