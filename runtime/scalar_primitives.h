// The primitive instructions of scalar formulas, and the one table that says
// everything backend-independent about each: its name, arity, result-dtype
// rule, cost class, the precision it computes in and its CUDA spelling.
// Backends keep their own tables beside it (the x86 emitters in
// jit/x86/instr_emitter.cpp, the vector loops in runtime/kernels/cpu/
// primitive_loops.h), each checked against this enum at compile time; see
// Note [One table per primitive].
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace wok {

// Note [One table per primitive]
// Adding a primitive used to mean about 19 edits in 15 files, and nothing
// failed to compile when one was missed: a missing x86 case threw at run
// time, a missing CUDA row silently fell back to the precompiled kernels.
// Now a primitive is one enumerator here, one row of kScalarPrimitives, one
// row of the x86 emitter table and one case of the CPU vector-loop switch.
// Each table is an array indexed by the enum whose rows also name their op;
// a static_assert checks the length and that row i is op i, and the
// switches over ScalarOp have no `default:` (built with -Werror=switch), so
// a missing or misplaced entry is a compile error in every backend.

// The primitive set every elementwise backend implements. Everything else
// (sigmoid, gelu, silu, rsqrt, clamp, ...) is written in terms of these.
enum class ScalarOp : uint8_t {
  kInput,  // element of input `index`
  kConst,  // a constant
  kCast,   // to the instruction's dtype
  // unary
  kNeg, kAbs, kSqrt, kExp, kLog, kSin, kCos, kTanh, kErf, kFloor, kCeil, kRound, kTrunc, kNot, kBitNot,
  // binary
  kAdd, kSub, kMul, kDiv, kMax, kMin, kPow, kFmod, kFloorDiv,
  kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr,
  kBitAnd, kBitOr, kBitXor, kShl, kShr,
  // ternary: a ? b : c
  kSelect,
  // Reductions along the row of a JIT row kernel (jit/x86/row_codegen.cpp); never
  // produced by a formula. The result is the row's value, available once
  // the row has been read; kRowLength is the row's length.
  kReduceSum, kReduceMax, kReduceMin, kReduceProd, kReduceArgmax, kRowLength,
};
inline constexpr size_t kNumScalarOps = static_cast<size_t>(ScalarOp::kRowLength) + 1;

// How a primitive's result dtype follows from its operands' dtypes. The
// formula builder (runtime/scalar_formula.cpp) applies it, casting the
// operands first, so a backend always sees operands of one dtype (the
// condition of a select aside) and never has to promote.
enum class ResultRule : uint8_t {
  kGiven,       // input, const, cast, row reductions: the instruction carries its dtype
  kSame,        // neg, abs, max, min: the (promoted) operand dtype
  kWhole,       // floor, ceil, round: same dtype; on integers the instruction vanishes
  kFloat,       // sqrt, exp, div, ...: operands converted to float_result_type first
  kArithmetic,  // add, sub, mul, pow, fmod, floor_div: the promoted dtype, bool computing as int32
  kBitwise,     // bit_and, bit_or, bit_xor, bit_not: integers and bool (as truth values); floats refused
  kShift,       // shl, shr: integers, bool computing as int32; floats refused
  kCompare,     // eq, ..., ge: operands promoted, result bool
  kLogical,     // not, and, or: operands read as truth values, result bool
  kSelect,      // select: condition bool, branches promoted
};

// What a row-reduction instruction combines with (kNone for the rest).
enum class ReduceKind : uint8_t { kNone, kSum, kMax, kMin, kProd, kArgmax };

struct ScalarPrimitive {
  ScalarOp op;                  // this row's op: rows are in enum order
  std::string_view name;        // in listings, dumps and kernel names
  int8_t arity;                 // operands (0 for input, const, row_length)
  ResultRule result;
  bool transcendental;          // a polynomial-sized instruction sequence: cost models weigh it
  // A 4-byte result is computed in float64 (float32 sin, cos, pow; the
  // JIT's int32 fmod and floor_div): such a kernel takes 8-byte lanes, and
  // a float32 GEMM epilogue cannot hold it (Note [Lanes and registers]).
  bool float32_via_float64;
  ReduceKind reduce;
  // CUDA expressions over {0} {1} {2} (operands) and {T} (result type), by
  // the dtype class of the first operand (of the result for select);
  // nullptr where CUDA has no rendering. Device functions are in
  // templates/wok_device.cuh.
  const char* cuda_bool;
  const char* cuda_int;
  const char* cuda_float;
};

namespace primitive_table {
using O = ScalarOp;
using R = ResultRule;
using K = ReduceKind;
inline constexpr const char* kNo = nullptr;
// clang-format off
inline constexpr std::array<ScalarPrimitive, kNumScalarOps> kRows = {{
  //  op          name        arity result          transc  f64    reduce      cuda: bool / int / float
  {O::kInput,     "input",        0, R::kGiven,      false, false, K::kNone,   kNo, kNo, kNo},
  {O::kConst,     "const",        0, R::kGiven,      false, false, K::kNone,   kNo, kNo, kNo},
  {O::kCast,      "cast",         1, R::kGiven,      false, false, K::kNone,   "wok::cast<{T}>({0})", "wok::cast<{T}>({0})", "wok::cast<{T}>({0})"},
  {O::kNeg,       "neg",          1, R::kSame,       false, false, K::kNone,   kNo, "wok::neg({0})", "wok::neg({0})"},
  {O::kAbs,       "abs",          1, R::kSame,       false, false, K::kNone,   kNo, "wok::abs({0})", "wok::abs({0})"},
  {O::kSqrt,      "sqrt",         1, R::kFloat,      false, false, K::kNone,   kNo, kNo, "wok::sqrt_({0})"},
  {O::kExp,       "exp",          1, R::kFloat,      true,  false, K::kNone,   kNo, kNo, "wok::exp_({0})"},
  {O::kLog,       "log",          1, R::kFloat,      true,  false, K::kNone,   kNo, kNo, "wok::log_({0})"},
  {O::kSin,       "sin",          1, R::kFloat,      true,  true,  K::kNone,   kNo, kNo, "wok::sin_({0})"},
  {O::kCos,       "cos",          1, R::kFloat,      true,  true,  K::kNone,   kNo, kNo, "wok::cos_({0})"},
  {O::kTanh,      "tanh",         1, R::kFloat,      true,  false, K::kNone,   kNo, kNo, "wok::tanh_({0})"},
  {O::kErf,       "erf",          1, R::kFloat,      true,  false, K::kNone,   kNo, kNo, "wok::erf_({0})"},
  {O::kFloor,     "floor",        1, R::kWhole,      false, false, K::kNone,   kNo, "{0}", "wok::floor_({0})"},
  {O::kCeil,      "ceil",         1, R::kWhole,      false, false, K::kNone,   kNo, "{0}", "wok::ceil_({0})"},
  {O::kRound,     "round",        1, R::kWhole,      false, false, K::kNone,   kNo, "{0}", "wok::round_({0})"},
  {O::kTrunc,     "trunc",        1, R::kWhole,      false, false, K::kNone,   kNo, "{0}", "trunc({0})"},
  {O::kNot,       "not",          1, R::kLogical,    false, false, K::kNone,   "(!{0})", kNo, kNo},
  {O::kBitNot,    "bit_not",      1, R::kBitwise,    false, false, K::kNone,   "(!{0})", "(~{0})", kNo},
  {O::kAdd,       "add",          2, R::kArithmetic, false, false, K::kNone,   kNo, "wok::add({0}, {1})", "wok::add({0}, {1})"},
  {O::kSub,       "sub",          2, R::kArithmetic, false, false, K::kNone,   kNo, "wok::sub({0}, {1})", "wok::sub({0}, {1})"},
  {O::kMul,       "mul",          2, R::kArithmetic, false, false, K::kNone,   kNo, "wok::mul({0}, {1})", "wok::mul({0}, {1})"},
  {O::kDiv,       "div",          2, R::kFloat,      false, false, K::kNone,   kNo, kNo, "wok::div({0}, {1})"},
  {O::kMax,       "max",          2, R::kSame,       false, false, K::kNone,   "wok::maximum({0}, {1})", "wok::maximum({0}, {1})", "wok::maximum({0}, {1})"},
  {O::kMin,       "min",          2, R::kSame,       false, false, K::kNone,   "wok::minimum({0}, {1})", "wok::minimum({0}, {1})", "wok::minimum({0}, {1})"},
  {O::kPow,       "pow",          2, R::kArithmetic, true,  true,  K::kNone,   kNo, "wok::pow_({0}, {1})", "wok::pow_({0}, {1})"},
  {O::kFmod,      "fmod",         2, R::kArithmetic, false, true,  K::kNone,   kNo, "wok::fmod_({0}, {1})", "wok::fmod_({0}, {1})"},
  {O::kFloorDiv,  "floor_div",    2, R::kArithmetic, false, true,  K::kNone,   kNo, "wok::floor_div({0}, {1})", "wok::floor_div({0}, {1})"},
  {O::kEq,        "eq",           2, R::kCompare,    false, false, K::kNone,   "({0} == {1})", "({0} == {1})", "({0} == {1})"},
  {O::kNe,        "ne",           2, R::kCompare,    false, false, K::kNone,   "({0} != {1})", "({0} != {1})", "({0} != {1})"},
  {O::kLt,        "lt",           2, R::kCompare,    false, false, K::kNone,   "({0} < {1})", "({0} < {1})", "({0} < {1})"},
  {O::kLe,        "le",           2, R::kCompare,    false, false, K::kNone,   "({0} <= {1})", "({0} <= {1})", "({0} <= {1})"},
  {O::kGt,        "gt",           2, R::kCompare,    false, false, K::kNone,   "({0} > {1})", "({0} > {1})", "({0} > {1})"},
  {O::kGe,        "ge",           2, R::kCompare,    false, false, K::kNone,   "({0} >= {1})", "({0} >= {1})", "({0} >= {1})"},
  {O::kAnd,       "and",          2, R::kLogical,    false, false, K::kNone,   "({0} && {1})", kNo, kNo},
  {O::kOr,        "or",           2, R::kLogical,    false, false, K::kNone,   "({0} || {1})", kNo, kNo},
  {O::kBitAnd,    "bit_and",      2, R::kBitwise,    false, false, K::kNone,   "({0} && {1})", "({0} & {1})", kNo},
  {O::kBitOr,     "bit_or",       2, R::kBitwise,    false, false, K::kNone,   "({0} || {1})", "({0} | {1})", kNo},
  {O::kBitXor,    "bit_xor",      2, R::kBitwise,    false, false, K::kNone,   "({0} != {1})", "({0} ^ {1})", kNo},
  {O::kShl,       "shl",          2, R::kShift,      false, false, K::kNone,   kNo, "wok::shl({0}, {1})", kNo},
  {O::kShr,       "shr",          2, R::kShift,      false, false, K::kNone,   kNo, "wok::shr({0}, {1})", kNo},
  {O::kSelect,    "select",       3, R::kSelect,     false, false, K::kNone,   "({0} ? {1} : {2})", "({0} ? {1} : {2})", "({0} ? {1} : {2})"},
  {O::kReduceSum, "reduce_sum",   1, R::kGiven,      false, false, K::kSum,    kNo, kNo, kNo},
  {O::kReduceMax, "reduce_max",   1, R::kGiven,      false, false, K::kMax,    kNo, kNo, kNo},
  {O::kReduceMin, "reduce_min",   1, R::kGiven,      false, false, K::kMin,    kNo, kNo, kNo},
  {O::kReduceProd, "reduce_prod", 1, R::kGiven,      false, false, K::kProd,   kNo, kNo, kNo},
  {O::kReduceArgmax, "reduce_argmax", 1, R::kGiven,  false, false, K::kArgmax, kNo, kNo, kNo},
  {O::kRowLength, "row_length",   0, R::kGiven,      false, false, K::kNone,   kNo, kNo, kNo},
}};
// clang-format on
}  // namespace primitive_table

// True when row i of `table` describes op i, for every row: the check each
// backend table runs on itself.
template <typename Row, size_t N>
constexpr bool rows_follow_enum(const std::array<Row, N>& table) {
  if (N != kNumScalarOps) return false;
  for (size_t i = 0; i < N; ++i)
    if (static_cast<size_t>(table[i].op) != i) return false;
  return true;
}
static_assert(rows_follow_enum(primitive_table::kRows), "kRows must have one row per ScalarOp, in enum order");

constexpr const ScalarPrimitive& primitive(ScalarOp op) { return primitive_table::kRows[static_cast<size_t>(op)]; }
constexpr std::string_view scalar_op_name(ScalarOp op) { return primitive(op).name; }
constexpr int scalar_op_arity(ScalarOp op) { return primitive(op).arity; }
constexpr bool is_transcendental(ScalarOp op) { return primitive(op).transcendental; }
constexpr ReduceKind reduce_kind(ScalarOp op) { return primitive(op).reduce; }
constexpr bool is_reduction(ScalarOp op) { return reduce_kind(op) != ReduceKind::kNone; }

}  // namespace wok
