// The op registry from a user's side: duplicate and unknown names, missing
// kernels, and a custom op (like examples/custom_op) with shape and dtype
// rules, attributes with defaults, and a CPU kernel, called through
// wok::call. The registry is global: every test uses its own op names.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

// Expects `fn` to throw E with every piece of `needles` in its message.
template <typename E, typename Fn>
void expect_error(Fn fn, std::vector<std::string> needles, const std::string& what) {
  try {
    fn();
    ADD_FAILURE() << what << ": did not throw";
  } catch (const E& e) {
    std::string msg = e.what();
    for (const std::string& n : needles)
      EXPECT_TRUE(msg.find(n) != std::string::npos) << what << ": \"" << n << "\" not in: " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw the wrong type: " << e.what();
  }
}

// An elementwise op with one float attribute, out = weight * a + b, like
// examples/custom_op/main.cpp's WeightedSum but with kernels for float32
// and float64 and full broadcasting of both inputs.
wok::OpDef weighted_sum_def(const std::string& name) {
  wok::OpDef def;
  def.name = name;
  def.inputs = {"a", "b"};
  def.attrs = {{"weight", wok::AttrType::kFloat, 1.0}};
  def.kind = wok::OpKind::kElementwise;
  def.infer_shape = wok::broadcast_all_inputs;
  def.infer_dtype = [](std::span<const DType> in, const wok::Attrs&) {
    if (in[0] != in[1] || !wok::is_floating(in[0]))
      throw wok::DTypeError("WeightedSum needs two inputs of the same floating dtype");
    return std::vector<DType>{in[0]};
  };
  def.formula = [](wok::FormulaBuilder& f) {
    wok::Expr a = f.input(0);
    f.output(0, f.attr("weight", a.dtype()) * a + f.input(1));
  };
  def.doc = "weight * a + b";
  return def;
}

std::atomic<int> g_weighted_sum_calls{0};

void weighted_sum_kernel(const wok::KernelContext& ctx) {
  ++g_weighted_sum_calls;
  const wok::TensorRef& a = ctx.inputs[0];
  const wok::TensorRef& b = ctx.inputs[1];
  const wok::TensorRef& out = ctx.outputs[0];
  const Shape& os = *out.shape;
  const int64_t n = out.numel();
  // Broadcast by index arithmetic: slow, simple, obviously right.
  auto offset = [&](const Shape& s, int64_t flat) {
    int64_t off = 0, stride = 1;
    for (size_t d = os.size(); d-- > 0;) {
      int64_t i = flat % os[d];
      flat /= os[d];
      size_t sd = d + s.size() - os.size();
      if (d + s.size() >= os.size() && s[sd] != 1) off += i * stride;
      if (d + s.size() >= os.size()) stride *= s[sd];
    }
    return off;
  };
  const double w = ctx.attrs.get_float("weight");
  wok::visit_dtype(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      for (int64_t i = 0; i < n; ++i)
        out.as<T>()[i] = static_cast<T>(w) * a.as<T>()[offset(*a.shape, i)] + b.as<T>()[offset(*b.shape, i)];
    } else {
      throw wok::DTypeError("unexpected dtype");
    }
  });
}

const std::string& weighted_sum_name() {
  static const std::string name = [] {
    std::string n = "registry_test_WeightedSum";
    wok::register_op(weighted_sum_def(n));
    wok::register_kernel(n, wok::DeviceType::kCPU, weighted_sum_kernel);
    return n;
  }();
  return name;
}

// A fresh op name per call, so the tests also pass under --gtest_repeat.
std::string unique_name(const std::string& base) {
  static std::atomic<int> counter{0};
  return base + "_" + std::to_string(counter++);
}

wok::OpDef identity_def(const std::string& name) {
  wok::OpDef def;
  def.name = name;
  def.inputs = {"x"};
  def.kind = wok::OpKind::kOpaque;
  def.infer_shape = [](std::span<const Shape> in, const wok::Attrs&) { return std::vector<Shape>{in[0]}; };
  def.infer_dtype = [](std::span<const DType> in, const wok::Attrs&) { return std::vector<DType>{in[0]}; };
  return def;
}

TEST(Registry, DuplicateOpNamesIt) {
  const std::string name = unique_name("registry_test_dup");
  wok::register_op(identity_def(name));
  expect_error<wok::RegistryError>([&] { wok::register_op(identity_def(name)); },
                                   {"'" + name + "'", "already registered"}, "second registration");
  // Built-in names are taken too.
  expect_error<wok::RegistryError>([] { wok::register_op(identity_def("add")); }, {"'add'"}, "built-in name");
}

TEST(Registry, DuplicateKernelNamesOpAndDevice) {
  const std::string name = unique_name("registry_test_dup_kernel");
  wok::register_op(identity_def(name));
  wok::register_kernel(name, wok::DeviceType::kCPU, [](const wok::KernelContext&) {});
  expect_error<wok::RegistryError>(
      [&] { wok::register_kernel(name, wok::DeviceType::kCPU, [](const wok::KernelContext&) {}); }, {name, "cpu"},
      "second kernel");
  // A second CPU kernel for a built-in op is refused too.
  expect_error<wok::RegistryError>(
      [] { wok::register_kernel("exp", wok::DeviceType::kCPU, [](const wok::KernelContext&) {}); }, {"exp", "cpu"},
      "built-in kernel");
  // A kernel for an op nobody registered.
  expect_error<wok::RegistryError>(
      [] { wok::register_kernel("registry_test_no_such_op", wok::DeviceType::kCPU, [](const wok::KernelContext&) {}); },
      {"registry_test_no_such_op"}, "kernel for unknown op");
  // An empty kernel function.
  expect_error<wok::RegistryError>([&] { wok::register_kernel(name, wok::DeviceType::kCUDA, {}); }, {name},
                                   "empty kernel");
}

TEST(Registry, IncompleteDefinitionsAreRefused) {
  const std::string name = unique_name("registry_test_incomplete");
  wok::OpDef no_shape = identity_def(name);
  no_shape.infer_shape = nullptr;
  expect_error<wok::RegistryError>([&] { wok::register_op(no_shape); }, {name, "shape"}, "no shape rule");
  wok::OpDef no_dtype = identity_def(name);
  no_dtype.infer_dtype = nullptr;
  expect_error<wok::RegistryError>([&] { wok::register_op(no_dtype); }, {name, "dtype"}, "no dtype rule");
  expect_error<wok::RegistryError>([] { wok::register_op(identity_def("")); }, {"empty"}, "empty name");
  // The refused op did not get half-registered: the name is still free.
  EXPECT_EQ(wok::OpRegistry::global().find(name), nullptr);
  wok::register_op(identity_def(name));
  EXPECT_NE(wok::OpRegistry::global().find(name), nullptr);
}

TEST(Registry, UnknownOpNamesIt) {
  expect_error<wok::RegistryError>([] { wok::call("nope", {wok::ones({2})}); }, {"nope"}, "call of unknown op");
  expect_error<wok::RegistryError>([] { wok::get_op("registry_test_never_registered"); },
                                   {"registry_test_never_registered"}, "get_op");
  // Near misses are suggested.
  expect_error<wok::RegistryError>(
      [] {
        wok::call("Add", {wok::ones({2}), wok::ones({2})});
      },
      {"'Add'", "add"}, "case typo");
}

TEST(Registry, OpWithoutKernelNamesOpDeviceAndKernels) {
  const std::string name = unique_name("registry_test_no_kernel");
  wok::register_op(identity_def(name));
  expect_error<wok::RegistryError>([&] { wok::call(name, {wok::ones({2})}); },
                                   {"'" + name + "'", "cpu", "kernels exist for: none"}, "no kernel");
  // Nothing was recorded for the failed call.
  const int64_t nodes = wok::live_node_count();
  EXPECT_THROW(wok::call(name, {wok::from_vector(std::vector<float>{1})}), wok::RegistryError);
  EXPECT_EQ(wok::live_node_count(), nodes);
}

TEST(Registry, BuiltinOpsAreDescribed) {
  const wok::RegisteredOp& add = wok::get_op("add");
  EXPECT_EQ(add.def().kind, wok::OpKind::kElementwise);
  EXPECT_TRUE(add.is_elementwise());
  EXPECT_NE(add.kernel(wok::DeviceType::kCPU), nullptr);
  std::vector<std::string> names = wok::OpRegistry::global().names();
  for (const char* n : {"add", "exp", "where", "clamp", "cast", "full", "sum", "reshape", "matmul"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  // Built-ins can be called by name.
  Tensor y = wok::call1("mul", {wok::full({2}, 3.0f), wok::full({2}, 2.0f)});
  EXPECT_TRUE(wt::exact<float>("call1 mul", y, {6, 6}));
  EXPECT_TRUE(
      wt::exact<int64_t>("call1 cast", wok::call1("cast", {wok::full({1}, 2.9)}, {{"dtype", DType::kInt64}}), {2}));
}

TEST(CustomOp, ShapeDTypeAttributesAndKernel) {
  const std::string& op = weighted_sum_name();
  Tensor a = wok::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  Tensor b = wok::from_vector(std::vector<float>{10, 20}, {2});

  Tensor y = wok::call1(op, {a, b}, {{"weight", 0.5}});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_FALSE(y.is_ready());
  EXPECT_TRUE(wt::exact<float>("WeightedSum", y, {10.5f, 21.0f, 11.5f, 22.0f}));

  // The default weight (1.0) applies when the attribute is left out.
  EXPECT_TRUE(wt::exact<float>("WeightedSum default", wok::call1(op, {a, b}), {11, 22, 13, 24}));
  // An int given for a float attribute converts.
  EXPECT_TRUE(
      wt::exact<float>("WeightedSum int weight", wok::call1(op, {a, b}, {{"weight", int64_t{2}}}), {12, 24, 16, 28}));
  // It composes with built-in ops before and after.
  Tensor z = wok::call1(op, {a * 2.0f, b}, {{"weight", 0.25}}) * 2.0f - 1.0f;
  EXPECT_TRUE(wt::exact<float>("WeightedSum chain", z, {20, 41, 22, 43}));
  // float64, and a 0-d second input.
  Tensor d = wok::call1(op, {wok::from_vector(std::vector<double>{1, 2}), wok::scalar_tensor(0.5)}, {{"weight", 3.0}});
  EXPECT_TRUE(wt::exact<double>("WeightedSum f64", d, {3.5, 6.5}));
  // call returns every output.
  std::vector<Tensor> outs = wok::call(op, {a, b});
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].shape(), (Shape{2, 2}));
}

TEST(CustomOp, AttributeErrors) {
  const std::string& op = weighted_sum_name();
  Tensor a = wok::ones({2});
  expect_error<wok::ArgumentError>(
      [&] {
        wok::call1(op, {a, a}, {{"wieght", 0.5}});
      },
      {op, "wieght", "weight"}, "misspelled attribute");
  expect_error<wok::ArgumentError>(
      [&] {
        wok::call1(op, {a, a}, {{"weight", std::string("heavy")}});
      },
      {op, "weight", "float"}, "string for a float attribute");
  expect_error<wok::ArgumentError>(
      [&] {
        wok::call1(op, {a, a}, {{"weight", std::vector<int64_t>{1, 2}}});
      },
      {op, "weight"}, "list for a float attribute");
  expect_error<wok::ArgumentError>([&] { wok::call1(op, {a}, {}); }, {op, "2"}, "too few inputs");
  expect_error<wok::ArgumentError>([&] { wok::call1(op, {a, a, a}, {}); }, {op}, "too many inputs");
  expect_error<wok::ArgumentError>([&] { wok::call1(op, {a, Tensor()}, {}); }, {op, "undefined"}, "undefined input");
  // A required attribute (no default) must be given.
  expect_error<wok::ArgumentError>([] { wok::call1("cast", {wok::ones({1})}); }, {"cast", "dtype"},
                                   "required attribute");
}

TEST(CustomOp, RuleErrorsNameTheOp) {
  const std::string& op = weighted_sum_name();
  // The dtype rule's DTypeError surfaces with the op and the inputs.
  expect_error<wok::DTypeError>(
      [&] {
        wok::call1(op, {wok::ones({2}, DType::kInt32), wok::ones({2}, DType::kInt32)});
      },
      {"wok::" + op, "same floating dtype", "int32"}, "int inputs");
  expect_error<wok::DTypeError>(
      [&] {
        wok::call1(op, {wok::ones({2}), wok::ones({2}, DType::kFloat64)});
      },
      {"wok::" + op, "float32", "float64"}, "mixed float inputs");
  // The shape rule's ShapeError likewise.
  expect_error<wok::ShapeError>(
      [&] {
        wok::call1(op, {wok::ones({2, 3}), wok::ones({4})});
      },
      {"wok::" + op, "[2, 3]", "[4]"}, "shapes");
}

TEST(CustomOp, MultipleOutputsAndOpaqueKernel) {
  // Splits x into (x * 2, x + 1): two outputs from one kernel call.
  wok::OpDef def;
  def.name = unique_name("registry_test_two_outputs");
  def.inputs = {"x"};
  def.outputs = {"doubled", "plus_one"};
  def.kind = wok::OpKind::kOpaque;
  def.infer_shape = [](std::span<const Shape> in, const wok::Attrs&) { return std::vector<Shape>{in[0], in[0]}; };
  def.infer_dtype = [](std::span<const DType> in, const wok::Attrs&) {
    if (in[0] != DType::kFloat32) throw wok::DTypeError("float32 only");
    return std::vector<DType>{in[0], in[0]};
  };
  wok::register_op(def);
  static std::atomic<int> calls{0};
  wok::register_kernel(def.name, wok::DeviceType::kCPU, [](const wok::KernelContext& ctx) {
    ++calls;
    const float* x = ctx.inputs[0].as<float>();
    for (int64_t i = 0; i < ctx.inputs[0].numel(); ++i) {
      ctx.outputs[0].as<float>()[i] = 2 * x[i];
      ctx.outputs[1].as<float>()[i] = x[i] + 1;
    }
  });
  std::vector<Tensor> outs = wok::call(def.name, {wok::from_vector(std::vector<float>{1, 2, 3})});
  ASSERT_EQ(outs.size(), 2u);
  int before = calls;
  wok::eval({outs[0], outs[1]});
  EXPECT_EQ(calls - before, 1) << "both outputs come from one kernel call";
  EXPECT_TRUE(wt::exact<float>("doubled", outs[0], {2, 4, 6}));
  EXPECT_TRUE(wt::exact<float>("plus_one", outs[1], {2, 3, 4}));
  EXPECT_EQ(calls - before, 1);
  expect_error<wok::ArgumentError>([&] { wok::call1(def.name, {wok::ones({1})}); }, {def.name, "2 outputs"}, "call1");
  expect_error<wok::DTypeError>([&] { wok::call(def.name, {wok::ones({1}, DType::kInt64)}); },
                                {"wok::" + def.name, "float32 only"}, "dtype rule");
}

TEST(CustomOp, ConcurrentRegistrationAndCalls) {
  constexpr int kThreads = 8;
  const std::string base = unique_name("registry_test_concurrent") + "_";
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures, &base] {
      try {
        std::string name = base + std::to_string(t);
        wok::OpDef def = weighted_sum_def(name);
        wok::register_op(def);
        wok::register_kernel(name, wok::DeviceType::kCPU, weighted_sum_kernel);
        for (int i = 0; i < 20; ++i) {
          Tensor y = wok::call1(name, {wok::full({3}, static_cast<float>(t)), wok::full({3}, 1.0f)},
                                {{"weight", static_cast<double>(i)}});
          if (y.to_vector<float>() != std::vector<float>(3, static_cast<float>(t * i + 1))) ++failures;
        }
      } catch (...) {
        ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < kThreads; ++t) EXPECT_NE(wok::OpRegistry::global().find(base + std::to_string(t)), nullptr);
}

}  // namespace
