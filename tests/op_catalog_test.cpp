// The op catalog (wok::describe_op, wok::op_info, the wok-ops tool): what it
// says about built-in and user ops, the did-you-mean errors for misspelt
// names, and that its fusion claims match what the JIT does. The registry is
// global: user ops here are named catalog_test_*.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using wok::DeviceType;
using wok::DType;
using wok::JitTreatment;

// Runs of spaces and newlines as one space: the text wraps long lines.
std::string flat(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool space = c == ' ' || c == '\n';
    if (!space) out += c;
    else if (out.empty() || out.back() != ' ') out += ' ';
  }
  return out;
}

bool contains(const std::string& text, const std::string& part) { return flat(text).find(flat(part)) != std::string::npos; }

// The message of the RegistryError `fn` throws ("" if it throws none).
template <typename Fn>
std::string registry_error(Fn fn) {
  try {
    fn();
  } catch (const wok::RegistryError& e) {
    return e.what();
  }
  return "";
}

const wok::DTypeCase* find_case(const wok::OpInfo& info, DType in) {
  for (const wok::DTypeCase& c : info.dtypes)
    if (c.input == in) return &c;
  return nullptr;
}

// The treatment of `device`'s JIT at input dtype `t`, if it has an entry.
std::optional<JitTreatment> jit_at(const wok::OpInfo& info, DeviceType device, DType t) {
  for (const wok::JitInfo& j : info.jit)
    if (j.device == device && (j.dtypes.empty() || std::count(j.dtypes.begin(), j.dtypes.end(), t)))
      return j.treatment;
  return std::nullopt;
}

bool has_kernel(const wok::OpInfo& info, DeviceType d) {
  return std::any_of(info.kernels.begin(), info.kernels.end(), [&](const wok::KernelInfo& k) { return k.device == d; });
}

TEST(OpCatalog, DescribesABuiltinElementwiseOp) {
  const wok::OpInfo info = wok::op_info("exp");
  EXPECT_EQ(info.kind, wok::OpKind::kElementwise);
  EXPECT_TRUE(info.builtin);
  EXPECT_TRUE(info.has_formula);
  EXPECT_EQ(info.inputs, std::vector<std::string>{"x"});
  // Floats keep their dtype; whatever else exp accepts gives the float
  // result type of docs/numerics.md.
  ASSERT_NE(find_case(info, DType::kFloat32), nullptr);
  ASSERT_NE(find_case(info, DType::kFloat64), nullptr);
  for (const wok::DTypeCase& c : info.dtypes)
    EXPECT_EQ(c.outputs, std::vector<DType>{wok::float_result_type(c.input)}) << wok::dtype_name(c.input);
  EXPECT_TRUE(info.input_dtypes.empty()) << "one input: nothing to mix";
  EXPECT_TRUE(has_kernel(info, DeviceType::kCPU));
  for (const wok::KernelInfo& k : info.kernels)
    EXPECT_EQ(k.from_formula, k.device != DeviceType::kCPU) << "the CPU has exp's own kernel";
  EXPECT_EQ(jit_at(info, DeviceType::kCPU, DType::kFloat32), JitTreatment::kFusesElementwise);
  EXPECT_EQ(jit_at(info, DeviceType::kCUDA, DType::kFloat32), JitTreatment::kFusesElementwise);
  EXPECT_EQ(jit_at(info, DeviceType::kCPU, DType::kFloat16), JitTreatment::kFusesElementwise);
  EXPECT_EQ(jit_at(info, DeviceType::kCPU, DType::kInt8), JitTreatment::kOwnKernel);
  EXPECT_EQ(jit_at(info, DeviceType::kCPU, DType::kUInt32), JitTreatment::kFusesElementwise);
  EXPECT_EQ(jit_at(info, DeviceType::kCUDA, DType::kFloat16), JitTreatment::kFusesElementwise);
  EXPECT_EQ(jit_at(info, DeviceType::kCUDA, DType::kInt8), JitTreatment::kOwnKernel);
  EXPECT_EQ(jit_at(info, DeviceType::kCUDA, DType::kUInt64), JitTreatment::kFusesElementwise);  // computes in itself

  const std::string text = wok::describe_op("exp");
  for (const char* part : {"exp: e^x\n", "elementwise with a formula, built-in",
                           "float16, bfloat16, float32, float64 -> same dtype", "cpu: its own kernel",
                           "at bool, int32, uint32, int64, float16, bfloat16, float32",
                           "at int8, uint8, int16, uint16: not fused, runs its own kernel",
                           "widens it to int32, which computes in another float type",
                           "cpu (x86) at uint64: not fused, runs its own kernel (no x86 emitter for it)"})
    EXPECT_TRUE(contains(text, part)) << part << " not in:\n" << text;
  if (has_kernel(info, DeviceType::kCUDA)) {
    EXPECT_TRUE(contains(text, "cuda: the formula kernel")) << text;
  }
}

TEST(OpCatalog, MixedInputDtypesAreShownWhereTheyDiffer) {
  // where's cond is bool whatever a and b are; add takes one dtype.
  const wok::OpInfo where = wok::op_info("where");
  ASSERT_EQ(where.input_dtypes.size(), 3u);
  EXPECT_EQ(where.input_dtypes[0], std::vector<DType>{DType::kBool});
  EXPECT_EQ(where.input_dtypes[1].size(), static_cast<size_t>(wok::kNumDTypes));
  EXPECT_TRUE(contains(wok::describe_op("where"), "cond: bool; a, b: any dtype")) << wok::describe_op("where");
  const wok::OpInfo add = wok::op_info("add");
  EXPECT_TRUE(add.input_dtypes.empty());
  EXPECT_TRUE(contains(wok::describe_op("add"), "inputs alike")) << wok::describe_op("add");
  // cast's output dtype is its attribute's.
  EXPECT_EQ(wok::op_info("cast").dtype_attrs, std::vector<std::string>{"dtype"});
  EXPECT_TRUE(contains(wok::describe_op("cast"), "from attribute 'dtype'")) << wok::describe_op("cast");
}

TEST(OpCatalog, DescribesAReduction) {
  const wok::OpInfo info = wok::op_info("sum");
  EXPECT_EQ(info.kind, wok::OpKind::kReduction);
  ASSERT_EQ(info.attrs.size(), 2u);
  EXPECT_EQ(info.attrs[0].name, "axes");
  EXPECT_FALSE(info.attrs[0].default_value.has_value());
  ASSERT_NE(find_case(info, DType::kInt32), nullptr);
  EXPECT_EQ(find_case(info, DType::kInt32)->outputs, std::vector<DType>{DType::kInt64});
  EXPECT_EQ(jit_at(info, DeviceType::kCPU, DType::kFloat32), JitTreatment::kFusesReduction);
  EXPECT_EQ(jit_at(info, DeviceType::kCUDA, DType::kFloat32), JitTreatment::kOwnKernel) << "CUDA fuses no reductions";
  EXPECT_EQ(jit_at(info, DeviceType::kCPU, DType::kBFloat16), JitTreatment::kFusesReduction);
  const std::string text = wok::describe_op("sum");
  for (const char* part : {"axes: int list, required", "keepdims: bool = false", "bool, int8, uint8, int16, uint16, int32, uint32 -> int64; int64, uint64,",
                           "generated reduction kernel, fused with its producers", "fuses no reductions"})
    EXPECT_TRUE(contains(text, part)) << part << " not in:\n" << text;
}

TEST(OpCatalog, DescribesMatmul) {
  const wok::OpInfo info = wok::op_info("matmul");
  EXPECT_EQ(info.kind, wok::OpKind::kOpaque);
  EXPECT_EQ(find_case(info, DType::kBool), nullptr) << "matmul refuses bool";
  EXPECT_EQ(jit_at(info, DeviceType::kCPU, DType::kFloat32), JitTreatment::kGemmEpilogue);
  EXPECT_EQ(jit_at(info, DeviceType::kCPU, DType::kFloat64), JitTreatment::kGemmEpilogue);
  EXPECT_EQ(jit_at(info, DeviceType::kCPU, DType::kInt32), JitTreatment::kOwnKernel);
  const std::string text = wok::describe_op("matmul");
  for (const char* part : {"cpu (x86) at float32, float64: a generated GEMM kernel", "float16, bfloat16: not fused",
                           "the GEMM generator takes float32 and float64"})
    EXPECT_TRUE(contains(text, part)) << part << " not in:\n" << text;
}

TEST(OpCatalog, ViewsAndConstants) {
  const wok::OpInfo reshape = wok::op_info("reshape");
  EXPECT_EQ(jit_at(reshape, DeviceType::kCPU, DType::kFloat32), JitTreatment::kView);
  EXPECT_TRUE(contains(wok::describe_op("reshape"), "none needed")) << wok::describe_op("reshape");
  const wok::OpInfo full = wok::op_info("full");
  EXPECT_EQ(full.dtype_attrs, std::vector<std::string>{"value"});
  EXPECT_EQ(jit_at(full, DeviceType::kCPU, DType::kFloat32), JitTreatment::kConstant);
}

wok::OpDef catalog_test_def(const std::string& name, bool with_formula) {
  wok::OpDef def;
  def.name = name;
  def.inputs = {"x"};
  def.kind = with_formula ? wok::OpKind::kElementwise : wok::OpKind::kOpaque;
  def.attrs = {{"scale", wok::AttrType::kFloat, 2.0}};
  def.infer_shape = [](std::span<const wok::Shape> in, const wok::Attrs&) { return std::vector<wok::Shape>{in[0]}; };
  def.infer_dtype = [](std::span<const DType> in, const wok::Attrs&) {
    if (!wok::is_floating(in[0])) throw wok::DTypeError("catalog_test ops take floats");
    return std::vector<DType>{in[0]};
  };
  if (with_formula)
    def.formula = [](wok::FormulaBuilder& b) {
      wok::Expr x = b.input(0);
      b.output(0, x * b.attr("scale", x.dtype()));
    };
  def.doc = "x * scale, for the catalog tests";
  return def;
}

// A fresh op name per call, so the tests also pass under --gtest_repeat.
std::string unique_name(const std::string& base) {
  static std::atomic<int> counter{0};
  return base + "_" + std::to_string(counter++);
}

TEST(OpCatalog, UserOpWithACpuKernelOnly) {
  const std::string name = unique_name("catalog_test_cpu_only");
  wok::register_op(catalog_test_def(name, false));
  wok::register_kernel(name, DeviceType::kCPU, [](const wok::KernelContext&) {});
  const wok::OpInfo info = wok::op_info(name);
  EXPECT_FALSE(info.builtin);
  ASSERT_EQ(info.kernels.size(), 1u);
  EXPECT_EQ(info.kernels[0].device, DeviceType::kCPU);
  EXPECT_FALSE(info.kernels[0].from_formula);
  ASSERT_EQ(info.dtypes.size(), 4u);  // float16, bfloat16, float32, float64
  EXPECT_EQ(jit_at(info, DeviceType::kCPU, DType::kFloat32), JitTreatment::kOwnKernel);
  const std::string text = wok::describe_op(name);
  for (const char* part : {"user-registered", "scale: float = 2", "float16, bfloat16, float32, float64 -> same dtype",
                           "kernels    cpu: its own kernel; cuda: none", "cpu (x86): not fused, runs its own kernel"})
    EXPECT_TRUE(contains(text, part)) << part << " not in:\n" << text;
  EXPECT_FALSE(contains(text, "cuda: not fused")) << "no CUDA kernel, no CUDA JIT line:\n" << text;
  const std::vector<std::string> names = wok::op_names();
  EXPECT_NE(std::find(names.begin(), names.end(), name), names.end());
  // A user op's misspelt name suggests it, like a built-in's.
  std::string typo = name;
  std::swap(typo[typo.size() - 3], typo[typo.size() - 4]);  // "..._oynl_N"
  const std::string error = registry_error([&] { wok::call(typo, {wok::ones({2})}); });
  EXPECT_TRUE(contains(error, "did you mean '" + name + "'")) << error;
}

TEST(OpCatalog, UserFormulaOpFusesAndItsOwnKernelReplacesTheFormulaOne) {
  const std::string name = unique_name("catalog_test_formula");
  wok::register_op(catalog_test_def(name, true));
  wok::OpInfo info = wok::op_info(name);
  ASSERT_TRUE(has_kernel(info, DeviceType::kCPU));
  for (const wok::KernelInfo& k : info.kernels) EXPECT_TRUE(k.from_formula);
  EXPECT_EQ(jit_at(info, DeviceType::kCPU, DType::kFloat64), JitTreatment::kFusesElementwise);
  EXPECT_TRUE(contains(wok::describe_op(name), "cpu: the formula kernel")) << wok::describe_op(name);
  wok::register_kernel(name, DeviceType::kCPU, [](const wok::KernelContext&) {});
  info = wok::op_info(name);
  for (const wok::KernelInfo& k : info.kernels) EXPECT_EQ(k.from_formula, k.device != DeviceType::kCPU);
}

TEST(OpCatalog, MisspeltNamesGetSuggestions) {
  const std::string describe = registry_error([] { wok::describe_op("sofplus"); });
  EXPECT_TRUE(contains(describe, "unknown op 'sofplus' (did you mean 'softplus'?)")) << describe;
  EXPECT_TRUE(contains(describe, "wok-ops")) << describe;
  const std::string call = registry_error([] { wok::call("sigmod", {wok::ones({2})}); });
  EXPECT_TRUE(contains(call, "unknown op 'sigmod' (did you mean 'sigmoid'?)")) << call;
  const std::string get = registry_error([] { wok::get_op("MatMul"); });
  EXPECT_TRUE(contains(get, "did you mean 'matmul'")) << get;
  const std::string far = registry_error([] { wok::get_op("catalog_test_qqqqqqqq"); });
  EXPECT_TRUE(contains(far, "unknown op 'catalog_test_qqqqqqqq'")) << far;
  EXPECT_FALSE(contains(far, "did you mean")) << far;
}

TEST(OpCatalog, NearestNames) {
  const std::vector<std::string> names = {"conv1d", "conv2d", "conv_transpose2d", "exp", "max", "max_pool2d",
                                          "relu", "softplus", "sub", "sum"};
  EXPECT_EQ(wok::nearest_names("conv", names), (std::vector<std::string>{"conv1d", "conv2d", "conv_transpose2d"}));
  EXPECT_EQ(wok::nearest_names("Sum", names, 1), std::vector<std::string>{"sum"});
  EXPECT_EQ(wok::nearest_names("sfotplus", names), std::vector<std::string>{"softplus"}) << "a swap is one edit";
  EXPECT_EQ(wok::nearest_names("relu6", names), std::vector<std::string>{"relu"});
  EXPECT_EQ(wok::nearest_names("maxpool2d", names), std::vector<std::string>{"max_pool2d"});
  EXPECT_TRUE(wok::nearest_names("x", names).empty());
  EXPECT_TRUE(wok::nearest_names("sofmax", names).empty()) << "max is too small a part of it";
  EXPECT_TRUE(wok::nearest_names("", names).empty());
  EXPECT_EQ(wok::nearest_op_names("sofplus"), std::vector<std::string>{"softplus"});
}

// Runs the wok-ops tool; its exit status and what it printed (both streams).
std::pair<int, std::string> run_tool(const std::string& args) {
  const std::string command = std::string(WOK_OPS_TOOL) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(OpCatalog, ToolListsAndDescribesOps) {
  auto [list_status, list] = run_tool("");
  EXPECT_EQ(list_status, 0) << list;
  for (const char* part : {"jit on cpu", "jit on cuda", "\nexp ", "\nsum ", "\nmatmul ", "\nreshape ", "elementwise", "gemm+epilogue*"})
    EXPECT_TRUE(contains(list, part)) << part << " not in:\n" << list;
  // A header and a line per built-in op: the tool's process registers no others.
  long builtins = 0;
  for (const std::string& n : wok::op_names()) builtins += wok::op_info(n).builtin;
  EXPECT_EQ(std::count(list.begin(), list.end(), '\n'), builtins + 1) << list;

  auto [exp_status, exp] = run_tool("exp");
  EXPECT_EQ(exp_status, 0) << exp;
  EXPECT_EQ(exp, wok::describe_op("exp"));

  auto [bad_status, bad] = run_tool("sofplus");
  EXPECT_EQ(bad_status, 1) << bad;
  EXPECT_TRUE(contains(bad, "wok-ops: unknown op 'sofplus' (did you mean 'softplus'?)")) << bad;

  auto [help_status, help] = run_tool("--help");
  EXPECT_EQ(help_status, 0) << help;
  EXPECT_TRUE(contains(help, "usage: wok-ops")) << help;
  EXPECT_EQ(run_tool("--bogus").first, 2);
}

// What the catalog says the x86 JIT fuses, checked against its launches.
TEST(OpCatalog, FusionClaimsMatchTheJit) {
  if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
  const wok::Backend saved = wok::backend();
  wok::set_backend(wok::Backend::kJit);
  auto launches = [](const wok::Tensor& y) {
    wok::reset_stats();
    wok::eval({y});
    return wok::stats().kernel_launches;
  };
  wok::Tensor x = wok::from_vector(std::vector<float>(64, 0.5f), {8, 8});
  ASSERT_EQ(jit_at(wok::op_info("exp"), DeviceType::kCPU, DType::kFloat32), JitTreatment::kFusesElementwise);
  EXPECT_EQ(launches(wok::exp(x) + 1.0f), 1);
  ASSERT_EQ(jit_at(wok::op_info("sum"), DeviceType::kCPU, DType::kFloat32), JitTreatment::kFusesReduction);
  EXPECT_EQ(launches(wok::sum(wok::exp(x), {1})), 1);
  ASSERT_EQ(jit_at(wok::op_info("matmul"), DeviceType::kCPU, DType::kFloat32), JitTreatment::kGemmEpilogue);
  EXPECT_EQ(launches(wok::relu(wok::matmul(x, x))), 1);
  // Integer pow runs its own kernel: the add after it is a second launch.
  wok::Tensor i = wok::from_vector(std::vector<int32_t>(16, 3), {16});
  ASSERT_EQ(jit_at(wok::op_info("pow"), DeviceType::kCPU, DType::kInt32), JitTreatment::kOwnKernel);
  EXPECT_EQ(launches(wok::call1("pow", {i, i}) + i), 2);
  wok::set_backend(saved);
}

}  // namespace
