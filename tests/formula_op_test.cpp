// An op written as a formula alone, from this file: no kernel anywhere. It
// fuses with its neighbours under the JIT and runs under the precompiled
// backend through the kernel derived from the same formula (Note [One
// formula per op] in runtime/op_def.h).
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>

#include "test_util.h"
#include "wok/runtime/ops/formula_helpers.h"

namespace {

using wok::Expr;

// mish(x) = x * tanh(softplus(x)), softplus written stably as
// max(x, 0) + log(1 + exp(-|x|)).
const char* register_mish() {
  static const char* name = [] {
    wok::register_op(wok::elementwise_op_def(
        "FormulaTestMish", {"x"}, wok::ResultRule::kFloat,
        [](wok::FormulaBuilder& b) {
          Expr x = b.cast(b.input(0), b.output_dtype(0));
          Expr softplus = wok::fx::maximum(x, 0.0) + wok::fx::log(1.0 + wok::fx::exp(-wok::fx::abs(x)));
          b.output(0, x * wok::fx::tanh(softplus));
        },
        "x tanh(softplus(x))"));
    return "FormulaTestMish";
  }();
  return name;
}

double mish_reference(double x) { return x * std::tanh(std::log1p(std::exp(x))); }

class FormulaOp : public wt::BothBackends {};

TEST_P(FormulaOp, RunsWithoutAKernelAndFusesWithItsNeighbours) {
  const char* mish = register_mish();
  const std::vector<float> xs = {-20.0f, -3.5f, -1.0f, -0.25f, 0.0f, 0.5f, 1.0f, 2.0f, 7.0f, 30.0f};
  wok::Tensor x = wok::from_vector(xs);
  // Neighbours on both sides: scale before, add and square after.
  wok::Tensor y = wok::square(wok::call1(mish, {x * 0.5f}) + 1.0f);
  wok::reset_stats();
  std::vector<float> got = y.to_vector<float>();
  if (GetParam() == wok::Backend::kJit) {
    EXPECT_EQ(wok::stats().kernel_launches, 1) << "mul, the user op, add and square fuse into one kernel";
  } else {
    EXPECT_GE(wok::stats().kernel_launches, 4) << "one precompiled kernel per op (and per constant)";
  }
  ASSERT_EQ(got.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    double m = mish_reference(0.5 * xs[i]) + 1.0;
    EXPECT_NEAR(got[i], m * m, 4e-6 * std::max(1.0, m * m)) << "x = " << xs[i];
  }
}

TEST_P(FormulaOp, DerivedKernelTakesEveryInputDType) {
  const char* mish = register_mish();
  // int32 computes in float64 (ResultRule::kFloat), bool in float32.
  wok::Tensor i = wok::from_vector(std::vector<int32_t>{-2, 0, 3});
  wok::Tensor r = wok::call1(mish, {i});
  EXPECT_EQ(r.dtype(), wok::DType::kFloat64);
  std::vector<double> got = r.to_vector<double>();
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(got[k], mish_reference(std::vector<double>{-2, 0, 3}[k]), 1e-14);
  wok::Tensor b = wok::call1(mish, {wok::from_vector(std::vector<bool>{true, false})});
  EXPECT_EQ(b.dtype(), wok::DType::kFloat32);
  EXPECT_NEAR(b.to_vector<float>()[0], static_cast<float>(mish_reference(1.0)), 1e-6);
}

TEST_P(FormulaOp, BroadcastsItsInputs) {
  // A two-input formula op with an attribute, over a broadcast row and a
  // transposed matrix.
  static const char* name = [] {
    wok::OpDef def = wok::elementwise_op_def(
        "FormulaTestLerp", {"a", "b"}, wok::ResultRule::kFloat,
        [](wok::FormulaBuilder& b) {
          Expr a = b.cast(b.input(0), b.output_dtype(0)), c = b.cast(b.input(1), b.output_dtype(0));
          b.output(0, a + b.attr("t", a.dtype()) * (c - a));
        },
        "a + t (b - a)");
    def.attrs = {{"t", wok::AttrType::kFloat, 0.5}};
    wok::register_op(std::move(def));
    return "FormulaTestLerp";
  }();
  wok::Tensor row = wok::from_vector(std::vector<float>{1, 2, 3});
  wok::Tensor m = wok::arange(0, 6).reshape({3, 2}).permute({1, 0});
  wok::Tensor y = wok::call1(name, {row, m}, {{"t", 0.25}});
  // m is [[0, 2, 4], [1, 3, 5]]
  std::vector<float> want = {0.75f, 2.0f, 3.25f, 1.0f, 2.25f, 3.5f};
  EXPECT_EQ(y.to_vector<float>(), want);
}

INSTANTIATE_TEST_SUITE_P(Backends, FormulaOp, wt::kBothBackends, wt::backend_param_name);

TEST(FormulaOpRegistry, AUserKernelReplacesTheDerivedOneButNotForBuiltIns) {
  wok::register_op(wok::elementwise_op_def(
      "FormulaTestTwice", {"x"}, wok::ResultRule::kSame,
      [](wok::FormulaBuilder& b) { b.output(0, b.input(0) * 2.0); }, "2x"));
  wok::register_kernel("FormulaTestTwice", wok::DeviceType::kCPU, [](const wok::KernelContext& ctx) {
    float* out = ctx.outputs[0].as<float>();
    for (int64_t i = 0; i < ctx.outputs[0].numel(); ++i) out[i] = -1.0f;
  });
  wok::set_backend(wok::Backend::kPrecompiled);
  EXPECT_EQ(wok::call1("FormulaTestTwice", {wok::from_vector(std::vector<float>{3})}).to_vector<float>()[0], -1.0f);
  wok::set_backend(wok::Backend::kJit);
  try {
    wok::register_kernel("gelu", wok::DeviceType::kCPU, [](const wok::KernelContext&) {});
    ADD_FAILURE() << "a second kernel for a built-in op was accepted";
  } catch (const wok::RegistryError& e) {
    EXPECT_NE(std::string(e.what()).find("gelu"), std::string::npos) << e.what();
  }
  // Nor one whose CPU kernel is the derived one (where, clamp).
  try {
    wok::register_kernel("where", wok::DeviceType::kCPU, [](const wok::KernelContext&) {});
    ADD_FAILURE() << "a second kernel for a built-in op was accepted";
  } catch (const wok::RegistryError& e) {
    EXPECT_NE(std::string(e.what()).find("evaluates its formula"), std::string::npos) << e.what();
  }
}

}  // namespace

namespace {

// Every built-in unary and binary op has two precompiled CPU kernels made
// from one formula: its own, compiled as C++ from runtime/ops/
// unary_op_list.h or binary_op_list.h, and
// the formula kernel that evaluates the built program (what a user op with
// the same formula gets). They compute the same IEEE operations in the same
// order, so they agree bitwise.
TEST(FormulaOpRegistry, CompiledAndEvaluatedFormulasAgreeBitwise) {
  struct Copy {
    std::string op, copy;
    bool binary = false;
  };
  static const std::vector<Copy> copies = [] {
    std::vector<Copy> out;
    using namespace wok;
    using namespace wok::formula;
#define WOK_UNARY_OP(name, rule, takes_bool, expr, doc)                                                   \
  register_op(elementwise_op_def(                                                                         \
      "FormulaTestCopy_" #name, {"x"}, ResultRule::rule,                                                  \
      [](FormulaBuilder& b) {                                                                             \
        Expr in = b.input(0);                                                                             \
        Expr x = b.cast(in, unary_operand_dtype(ResultRule::rule, in.dtype(), b.output_dtype(0)));        \
        b.output(0, expr);                                                                                \
      },                                                                                                  \
      doc, takes_bool));                                                                                  \
  out.push_back({#name, "FormulaTestCopy_" #name, false});
#include "wok/runtime/ops/unary_op_list.h"
#undef WOK_UNARY_OP
#define WOK_BINARY_OP(name, rule, takes_bool, expr, doc)                                                  \
  register_op(elementwise_op_def(                                                                         \
      "FormulaTestCopy_" #name, {"a", "b"}, ResultRule::rule,                                             \
      [](FormulaBuilder& fb) {                                                                            \
        Expr a = fb.input(0), b = fb.input(1);                                                            \
        fb.output(0, expr);                                                                               \
      },                                                                                                  \
      doc, takes_bool));                                                                                  \
  out.push_back({#name, "FormulaTestCopy_" #name, true});
#include "wok/runtime/ops/binary_op_list.h"
#undef WOK_BINARY_OP
    return out;
  }();
  wok::set_backend(wok::Backend::kPrecompiled);
  for (wok::DType t : {wok::DType::kFloat32, wok::DType::kFloat64, wok::DType::kInt32}) {
    wok::Tensor x = (wok::randn({1000}, 5, wok::DType::kFloat64) * 6.0).astype(t);
    // A second operand broadcast along x's rows: [10, 100] against [100].
    wok::Tensor y = (wok::randn({100}, 6, wok::DType::kFloat64) * 3.0).astype(t);
    wok::Tensor xm = x.reshape({10, 100});
    for (const Copy& c : copies) {
      wok::Tensor a;
      try {
        a = c.binary ? wok::call1(c.op, {xm, y}).reshape({1000}) : wok::call1(c.op, {x});
      } catch (const wok::DTypeError&) {
        continue;  // the op does not take this dtype (the bitwise ops refuse floats)
      }
      wok::Tensor b = c.binary ? wok::call1(c.copy, {xm, y}).reshape({1000}) : wok::call1(c.copy, {x});
      ASSERT_EQ(a.dtype(), b.dtype()) << c.op;
      wok::Tensor same = wok::logical_or(wok::eq(a, b), wok::logical_and(wok::ne(a, a), wok::ne(b, b)));
      EXPECT_EQ(wok::sum(same.astype(wok::DType::kInt32)).item<int32_t>(), 1000)
          << c.op << " on " << wok::dtype_name(t) << ": the compiled and the evaluated formula differ";
    }
  }
  wok::set_backend(wok::Backend::kJit);
}

}  // namespace
