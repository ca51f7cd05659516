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
// clang-format on
