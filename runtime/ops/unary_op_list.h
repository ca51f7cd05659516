// The unary elementwise ops, one line each:
//
//   WOK_UNARY_OP(name, result rule, takes bool, formula, doc)
//
// The result rule is a ResultRule (runtime/scalar_primitives.h) applied to
// the input dtype; the formula is an expression over `x`, the input already
// converted to the result dtype. This file is read twice, so it has no
// include guard: runtime/ops/elementwise_ops.cpp registers each op from its
// line and frontend/ops.h declares `Tensor wok::name(const Tensor& x)`.
// Every backend derives its kernels from the formula (Note [One formula per
// op] in runtime/op_def.h): the formula is built as a scalar program for
// the JIT and the CUDA renderer, and compiled as C++ for the precompiled
// CPU kernels (runtime/kernels/cpu/unary_formula_kernels.cpp), so it may
// use only `x`, plain numbers, arithmetic, fx:: functions and the helpers
// of runtime/ops/formula_helpers.h (which take `fx` as their first template
// argument). A composite op is its line here and its tests
// (docs/adding-an-op.md).
//
// clang-format off
WOK_UNARY_OP(neg,         kSame,       false, -x,                                  "-x")
WOK_UNARY_OP(abs,         kSame,       false, fx::abs(x),                          "|x|")
WOK_UNARY_OP(exp,         kFloat,      true,  fx::exp(x),                          "e^x")
WOK_UNARY_OP(log,         kFloat,      true,  fx::log(x),                          "natural logarithm")
WOK_UNARY_OP(sqrt,        kFloat,      true,  fx::sqrt(x),                         "square root")
WOK_UNARY_OP(rsqrt,       kFloat,      true,  1.0 / fx::sqrt(x),                   "1 / sqrt(x)")
WOK_UNARY_OP(sin,         kFloat,      true,  fx::sin(x),                          "sine")
WOK_UNARY_OP(cos,         kFloat,      true,  fx::cos(x),                          "cosine")
WOK_UNARY_OP(tanh,        kFloat,      true,  fx::tanh(x),                         "hyperbolic tangent")
WOK_UNARY_OP(erf,         kFloat,      true,  fx::erf(x),                          "error function")
WOK_UNARY_OP(sigmoid,     kFloat,      true,  stable_sigmoid<fx>(x),                   "1 / (1 + e^-x), computed from e^-|x|")
WOK_UNARY_OP(relu,        kSame,       false, fx::maximum(x, 0.0),                 "max(x, 0)")
WOK_UNARY_OP(gelu,        kFloat,      true,  0.5 * x * (1.0 + fx::tanh(0.7978845608028654 * (x + 0.044715 * (x * x * x)))),
                                                                                   "GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))")
WOK_UNARY_OP(silu,        kFloat,      true,  x * stable_sigmoid<fx>(x),               "x * sigmoid(x)")
WOK_UNARY_OP(softplus,    kFloat,      true,  fx::maximum(x, 0.0) + log1p_of<fx>(fx::exp(-fx::abs(x))),
                                                                                   "log(1 + e^x), computed as max(x, 0) + log1p(e^-|x|)")
WOK_UNARY_OP(floor,       kSame,       false, fx::floor(x),                        "round toward -inf")
WOK_UNARY_OP(ceil,        kSame,       false, fx::ceil(x),                         "round toward +inf")
WOK_UNARY_OP(round,       kSame,       false, fx::round(x),                        "round half to even")
WOK_UNARY_OP(trunc,       kSame,       false, fx::apply(ScalarOp::kTrunc, x),      "round toward zero")
WOK_UNARY_OP(reciprocal,  kFloat,      true,  1.0 / x,                             "1 / x")
WOK_UNARY_OP(square,      kArithmetic, true,  x * x,                               "x * x")
WOK_UNARY_OP(logical_not, kLogical,    true,  fx::logical_not(x),                  "x == 0")
// Note [Composite transcendentals] in runtime/ops/formula_helpers.h says how these are computed.
WOK_UNARY_OP(tan,         kFloat,      true,  tan_of<fx>(x),                       "tangent, sin x / cos x")
WOK_UNARY_OP(asin,        kFloat,      true,  asin_of<fx>(x),                      "arcsine, in [-pi/2, pi/2]; nan outside [-1, 1]")
WOK_UNARY_OP(acos,        kFloat,      true,  acos_of<fx>(x),                      "arccosine, in [0, pi]; nan outside [-1, 1]")
WOK_UNARY_OP(atan,        kFloat,      true,  atan_of<fx>(x),                      "arctangent, in [-pi/2, pi/2]")
WOK_UNARY_OP(sinh,        kFloat,      true,  sinh_of<fx>(x),                      "hyperbolic sine")
WOK_UNARY_OP(cosh,        kFloat,      true,  cosh_of<fx>(x),                      "hyperbolic cosine")
WOK_UNARY_OP(asinh,       kFloat,      true,  asinh_of<fx>(x),                     "inverse hyperbolic sine")
WOK_UNARY_OP(acosh,       kFloat,      true,  acosh_of<fx>(x),                     "inverse hyperbolic cosine; nan below 1")
WOK_UNARY_OP(atanh,       kFloat,      true,  atanh_of<fx>(x),                     "inverse hyperbolic tangent; +-inf at +-1, nan outside [-1, 1]")
WOK_UNARY_OP(sign,        kSame,       false, sign_of<fx>(x),                      "1, -1 or 0 by the sign of x; x itself for 0 (-0 stays -0) and nan")
WOK_UNARY_OP(isnan,       kCompare,    true,  fx::ne(x, x),                        "x is nan (false for integers and bool)")
WOK_UNARY_OP(isinf,       kCompare,    true,  isinf_of<fx>(x),                     "x is +inf or -inf (false for integers and bool)")
WOK_UNARY_OP(gelu_erf,    kFloat,      true,  0.5 * x * (1.0 + fx::erf(x * 0.70710678118654752440)),
                                                                                   "GELU, exact form: 0.5 x (1 + erf(x / sqrt 2))")
WOK_UNARY_OP(softsign,    kFloat,      true,  softsign_of<fx>(x),                  "x / (1 + |x|); +-1 at +-inf")
WOK_UNARY_OP(mish,        kFloat,      true,  mish_of<fx>(x),                      "x tanh(softplus(x)); -0 at -inf")
WOK_UNARY_OP(hard_swish,  kFloat,      true,  hard_swish_of<fx>(x),                "x relu6(x + 3) / 6 (PyTorch's hardswish); -0 at -inf")
WOK_UNARY_OP(bitwise_not, kBitwise,    true,  fx::apply(ScalarOp::kBitNot, x),     "~x on integers, logical not on bool; floats are refused")
// clang-format on
