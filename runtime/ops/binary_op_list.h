// The binary elementwise ops, one line each:
//
//   WOK_BINARY_OP(name, result rule, takes bool, formula, doc)
//
// Like unary_op_list.h (read it first): the formula is an expression over
// `a` and `b`, which the frontend has promoted to one dtype; the formula
// builder then converts them to what the rule computes in (float for div,
// int32 for bool arithmetic). Read by runtime/ops/elementwise_ops.cpp
// (registration) and runtime/kernels/cpu/binary_formula_kernels.cpp (the
// precompiled kernels, the formula compiled as C++); the frontend's
// functions, with their plain-number overloads, are in frontend/ops.h.
//
// clang-format off
WOK_BINARY_OP(add,         kArithmetic, true,  a + b,                  "a + b")
WOK_BINARY_OP(sub,         kArithmetic, false, a - b,                  "a - b")
WOK_BINARY_OP(mul,         kArithmetic, true,  a * b,                  "a * b")
WOK_BINARY_OP(div,         kFloat,      true,  a / b,                  "true division a / b")
WOK_BINARY_OP(pow,         kArithmetic, true,  fx::pow(a, b),          "a ^ b")
WOK_BINARY_OP(maximum,     kSame,       true,  fx::maximum(a, b),      "elementwise max, nan-propagating")
WOK_BINARY_OP(minimum,     kSame,       true,  fx::minimum(a, b),      "elementwise min, nan-propagating")
WOK_BINARY_OP(eq,          kCompare,    true,  fx::eq(a, b),           "a == b")
WOK_BINARY_OP(ne,          kCompare,    true,  fx::ne(a, b),           "a != b")
WOK_BINARY_OP(lt,          kCompare,    true,  fx::lt(a, b),           "a < b")
WOK_BINARY_OP(le,          kCompare,    true,  fx::le(a, b),           "a <= b")
WOK_BINARY_OP(gt,          kCompare,    true,  fx::gt(a, b),           "a > b")
WOK_BINARY_OP(ge,          kCompare,    true,  fx::ge(a, b),           "a >= b")
WOK_BINARY_OP(logical_and, kLogical,    true,  fx::logical_and(a, b),  "a && b")
WOK_BINARY_OP(logical_or,  kLogical,    true,  fx::logical_or(a, b),   "a || b")
// Division: integers exact, and an integer division by zero gives 0 (quotient and remainder).
WOK_BINARY_OP(fmod,        kArithmetic, true,  fx::apply(ScalarOp::kFmod, a, b),
                                                                       "C fmod: a - trunc(a / b) b, exact, with the sign of a (ONNX Mod fmod=1)")
WOK_BINARY_OP(remainder,   kArithmetic, true,  remainder_of<fx>(a, b), "a mod b with the sign of b, as Python's % (ONNX Mod fmod=0)")
WOK_BINARY_OP(floor_divide, kArithmetic, true, fx::apply(ScalarOp::kFloorDiv, a, b),
                                                                       "floor(a / b); on integers the exact floored quotient")
WOK_BINARY_OP(atan2,       kFloat,      true,  atan2_of<fx>(fx::as_float(a), fx::as_float(b)), "the angle of the point (b, a), in [-pi, pi], as C's atan2(a, b)")
// Bits: integers, and bool as truth values (shifts compute bool as int32); floats are refused.
WOK_BINARY_OP(bitwise_and, kBitwise,    true,  fx::apply(ScalarOp::kBitAnd, a, b), "a & b")
WOK_BINARY_OP(bitwise_or,  kBitwise,    true,  fx::apply(ScalarOp::kBitOr, a, b),  "a | b")
WOK_BINARY_OP(bitwise_xor, kBitwise,    true,  fx::apply(ScalarOp::kBitXor, a, b), "a ^ b")
WOK_BINARY_OP(bitwise_left_shift,  kShift, true, fx::apply(ScalarOp::kShl, a, b),
                                                                       "a << b on the unsigned view; 0 for b < 0 or b >= the width")
WOK_BINARY_OP(bitwise_right_shift, kShift, true, fx::apply(ScalarOp::kShr, a, b),
                                                                       "logical a >> b on the unsigned view (ONNX BitShift); 0 for b < 0 or b >= the width")
// clang-format on
