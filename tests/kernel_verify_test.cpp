// WOK_VERIFY_KERNELS (Note [Verifying kernel outputs] in
// runtime/kernel_verify.h): custom ops whose kernel writes past, before or
// short of the shape their rule inferred fail at the node under both
// backends, naming the op, the shape and the offset; correct ops, including
// one whose results are the fill pattern's bits, and built-in ops pass with
// the same values as without verification.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"
#include "wok/runtime/sanitizers.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

// Turns verification on (or off) for a scope, restoring what was in effect.
class VerifyKernelsScope {
 public:
  explicit VerifyKernelsScope(bool on) { wok::set_verify_kernels(on); }
  ~VerifyKernelsScope() { wok::set_verify_kernels(saved_); }
  VerifyKernelsScope(const VerifyKernelsScope&) = delete;
  VerifyKernelsScope& operator=(const VerifyKernelsScope&) = delete;

 private:
  bool saved_ = wok::verify_kernels();
};

// An opaque op of one input whose shape rule says "same as the input";
// the kernel decides what is really written.
void register_same_shape_op(const std::string& name, wok::KernelFn kernel, int outputs = 1) {
  wok::OpDef def;
  def.name = name;
  def.inputs = {"x"};
  def.outputs.clear();
  for (int o = 0; o < outputs; ++o) def.outputs.push_back("out" + std::to_string(o));
  def.kind = wok::OpKind::kOpaque;
  def.infer_shape = [outputs](std::span<const Shape> in, const wok::Attrs&) {
    return std::vector<Shape>(outputs, in[0]);
  };
  def.infer_dtype = [outputs](std::span<const DType> in, const wok::Attrs&) {
    return std::vector<DType>(outputs, in[0]);
  };
  wok::register_op(def);
  wok::register_kernel(name, wok::DeviceType::kCPU, std::move(kernel));
}

// out = 2 x + 1 over the first `count(n)` elements, starting at `start`
// (relative to the output; negative writes before it).
template <typename Count>
wok::KernelFn affine_kernel(Count count, int64_t start = 0) {
  return [count, start](const wok::KernelContext& ctx) {
    const float* x = ctx.inputs[0].as<float>();
    float* out = ctx.outputs[0].as<float>();
    const int64_t n = ctx.outputs[0].numel();
    for (int64_t i = start; i < count(n); ++i) out[i] = 2 * x[i >= 0 && i < n ? i : 0] + 1;
  };
}

// Registered once per process, so the tests also pass under --gtest_repeat.
const std::string& overrun_op() {  // writes one element past the inferred shape
  static const std::string name = [] {
    std::string n = "verify_test_overrun";
    register_same_shape_op(n, affine_kernel([](int64_t n) { return n + 1; }));
    return n;
  }();
  return name;
}

const std::string& underrun_op() {  // writes one element before the output
  static const std::string name = [] {
    std::string n = "verify_test_underrun";
    register_same_shape_op(n, affine_kernel([](int64_t n) { return n; }, -1));
    return n;
  }();
  return name;
}

const std::string& short_op() {  // leaves the last row of a [rows, 3] output unwritten
  static const std::string name = [] {
    std::string n = "verify_test_short";
    register_same_shape_op(n, affine_kernel([](int64_t n) { return n - 3; }));
    return n;
  }();
  return name;
}

const std::string& correct_op() {  // out = 2 x + 1, every element
  static const std::string name = [] {
    std::string n = "verify_test_correct";
    register_same_shape_op(n, affine_kernel([](int64_t n) { return n; }));
    return n;
  }();
  return name;
}

// A bit copy of any dtype: its outputs hold the fill pattern wherever the
// input does, which must not be taken for unwritten elements.
const std::string& copy_op() {
  static const std::string name = [] {
    std::string n = "verify_test_copy";
    register_same_shape_op(n, [](const wok::KernelContext& ctx) {
      std::memcpy(ctx.outputs[0].data, ctx.inputs[0].data,
                  static_cast<size_t>(ctx.outputs[0].numel()) * wok::itemsize(ctx.outputs[0].dtype));
    });
    return n;
  }();
  return name;
}

// Two outputs: the first complete, the second missing its last element.
const std::string& second_output_short_op() {
  static const std::string name = [] {
    std::string n = "verify_test_second_output_short";
    register_same_shape_op(
        n,
        [](const wok::KernelContext& ctx) {
          const float* x = ctx.inputs[0].as<float>();
          const int64_t n = ctx.outputs[0].numel();
          for (int64_t i = 0; i < n; ++i) ctx.outputs[0].as<float>()[i] = x[i];
          for (int64_t i = 0; i + 1 < n; ++i) ctx.outputs[1].as<float>()[i] = -x[i];
        },
        2);
    return n;
  }();
  return name;
}

Tensor input_4x3() {
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = static_cast<float>(i);
  return wok::from_vector(v, {4, 3});
}

std::vector<float> affine_of_input_4x3() {
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = 2 * static_cast<float>(i) + 1;
  return v;
}

// The op alone (its output is the fragment's) and followed by a built-in
// op (under the JIT its output then lives in the plan's arena).
std::vector<std::function<Tensor()>> programs_of(const std::string& op) {
  return {[op] { return wok::call1(op, {input_4x3()}); },
          [op] { return wok::call1(op, {input_4x3()}) * 2.0f; }};
}

TEST(VerifyKernels, SwitchTurnsOnAndOff) {
  VerifyKernelsScope scope(true);
  EXPECT_TRUE(wok::verify_kernels());
  wok::set_verify_kernels(false);
  EXPECT_FALSE(wok::verify_kernels());
}

TEST(VerifyKernels, WritePastTheEndNamesOpShapeAndOffset) {
  VerifyKernelsScope scope(true);
  wt::for_each_backend([] {
    for (auto& program : programs_of(overrun_op()))
      EXPECT_TRUE(wt::throws_naming<wok::CheckError>(
          [&] { wok::eval({program()}); },
          {"WOK_VERIFY_KERNELS", "op '" + overrun_op() + "'", "4 bytes past the end of output 0",
           "inferred float32[4, 3], 48 bytes", "first bad byte at offset 48", "shape rule",
           "recorded at kernel_verify_test.cpp:"}));
  });
}

TEST(VerifyKernels, WriteBeforeTheStartNamesOffset) {
  VerifyKernelsScope scope(true);
  wt::for_each_backend([] {
    for (auto& program : programs_of(underrun_op()))
      EXPECT_TRUE(wt::throws_naming<wok::CheckError>(
          [&] { wok::eval({program()}); },
          {"op '" + underrun_op() + "'", "4 bytes before the start of output 0", "inferred float32[4, 3]",
           "first bad byte at offset -4"}));
  });
}

TEST(VerifyKernels, UnwrittenRowNamesCountAndFirstElement) {
  VerifyKernelsScope scope(true);
  wt::for_each_backend([] {
    for (auto& program : programs_of(short_op()))
      EXPECT_TRUE(wt::throws_naming<wok::CheckError>(
          [&] { wok::eval({program()}); },
          {"op '" + short_op() + "'", "left 3 of 12 elements of output 0 (inferred float32[4, 3]) unwritten",
           "first at element 9 (byte offset 36)", "recorded at kernel_verify_test.cpp:"}));
  });
}

TEST(VerifyKernels, UnwrittenSecondOutputIsNamed) {
  VerifyKernelsScope scope(true);
  wt::for_each_backend([] {
    EXPECT_TRUE(wt::throws_naming<wok::CheckError>(
        [] { wok::eval(wok::call(second_output_short_op(), {input_4x3()})); },
        {"op '" + second_output_short_op() + "'", "left 1 of 12 elements of output 1", "first at element 11"}));
  });
}

TEST(VerifyKernels, CorrectOpPassesWithItsValues) {
  VerifyKernelsScope scope(true);
  wt::for_each_backend([] {
    std::vector<float> want = affine_of_input_4x3();
    EXPECT_TRUE(wt::exact<float>(correct_op(), wok::call1(correct_op(), {input_4x3()}), want));
    for (float& w : want) w *= 2;
    EXPECT_TRUE(wt::exact<float>(correct_op() + " * 2", wok::call1(correct_op(), {input_4x3()}) * 2.0f, want));
  });
}

// Results equal to the first fill pattern are values, not holes: the second
// run (with the other pattern) tells them apart.
TEST(VerifyKernels, ResultsEqualToTheFillPatternAreNotHoles) {
  VerifyKernelsScope scope(true);
  wt::for_each_backend([] {
    const float f = std::bit_cast<float>(uint32_t{0xA5A5A5A5});
    const float g = std::bit_cast<float>(uint32_t{0x5A5A5A5A});
    std::vector<float> fv = {f, 1, f, g, 0, f};
    EXPECT_TRUE(wt::exact<float>("copy float32", wok::call1(copy_op(), {wt::tensor(fv)}), fv));
    const int64_t i = static_cast<int64_t>(0xA5A5A5A5A5A5A5A5ull);
    std::vector<int64_t> iv = {i, i, 3, i};
    EXPECT_TRUE(wt::exact<int64_t>("copy int64", wok::call1(copy_op(), {wt::tensor(iv)}), iv));
    std::vector<bool> bv = {true, false, true};
    EXPECT_TRUE(wt::exact<bool>("copy bool", wok::call1(copy_op(), {wt::tensor(bv)}), bv));
  });
}

TEST(VerifyKernels, ZeroElementOutputsAreSkipped) {
  VerifyKernelsScope scope(true);
  wt::for_each_backend([] {
    Tensor y = wok::call1(correct_op(), {wok::zeros({0, 3})});
    EXPECT_EQ(y.shape(), (Shape{0, 3}));
    EXPECT_TRUE(wt::exact<float>("empty", y, {}));
  });
}

// The same wrong ops run without complaint when verification is off: the
// switch is what finds them.
TEST(VerifyKernels, OffRunsWrongOpsWithoutError) {
  VerifyKernelsScope scope(false);
  wt::for_each_backend([] {
    Tensor y = wok::call1(short_op(), {input_4x3()});
    EXPECT_NO_THROW(wok::eval({y}));
    std::vector<float> got = y.to_vector<float>(), want = affine_of_input_4x3();
    EXPECT_EQ(std::vector<float>(got.begin(), got.begin() + 9), std::vector<float>(want.begin(), want.begin() + 9));
    // ASan reports the overrun itself (the allocator poisons the slack past
    // each buffer); elsewhere it lands in the size class's slack unseen.
    if (!wok::kAsanBuild) {
      EXPECT_NO_THROW(wok::eval({wok::call1(overrun_op(), {input_4x3()})}));
    }
  });
}

// A few built-in ops whose precompiled kernels are not elementwise: same
// values with verification on as off, and no defect reported.
TEST(VerifyKernels, BuiltinOpsRunCleanWithTheSameValues) {
  auto programs = [] {
    Tensor a = wt::tensor(wt::random_values<float>(5 * 7, -1, 1, 1), {5, 7});
    Tensor b = wt::tensor(wt::random_values<float>(7 * 3, -1, 1, 2), {7, 3});
    Tensor x = wt::tensor(wt::random_values<float>(2 * 3 * 6 * 5, -1, 1, 3), {2, 3, 6, 5});
    Tensor w = wt::tensor(wt::random_values<float>(4 * 3 * 3 * 3, -1, 1, 4), {4, 3, 3, 3});
    Tensor bias = wt::tensor(wt::random_values<float>(4, -1, 1, 5), {4});
    Tensor i = wt::tensor(wt::random_values<int64_t>(5 * 7, -9, 9, 6), {5, 7});
    return std::vector<Tensor>{
        wok::matmul(a, b),
        wok::sum(a, {1}),
        wok::sum(i, {0}, true),
        wok::conv2d(x, w, bias),
        wok::concat({a, wok::matmul(a, wok::matmul(b, b.permute({1, 0})))}, 0),
        wok::concat({a > 0.0f, i > int64_t{0}}, 1),
    };
  };
  wt::for_each_backend([&] {
    std::vector<Tensor> off;
    {
      VerifyKernelsScope scope(false);
      off = programs();
      wok::eval(off);
    }
    VerifyKernelsScope scope(true);
    std::vector<Tensor> on = programs();
    ASSERT_NO_THROW(wok::eval(on));
    for (size_t k = 0; k < on.size(); ++k) {
      SCOPED_TRACE("program " + std::to_string(k));
      ASSERT_EQ(on[k].dtype(), off[k].dtype());
      ASSERT_EQ(on[k].shape(), off[k].shape());
      wok::visit_dtype(on[k].dtype(), [&](auto tag) {
        using T = decltype(tag);
        EXPECT_TRUE(wt::exact<T>("builtin", on[k], off[k].to_vector<T>()));
      });
    }
  });
}

}  // namespace
