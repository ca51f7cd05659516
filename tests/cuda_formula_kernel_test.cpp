// The precompiled CUDA formula kernels (runtime/cuda/cuda_formula_kernel.h)
// without a GPU: each elementwise op's kernel is rendered from its formula,
// with no composite spelled by hand, keyed by its program (attributes
// included), and compiles with NVRTC for sm_80 and sm_90. The NVRTC tests
// skip (with the reason) only where NVRTC cannot be loaded; the GPU test
// skips without a device.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "nvrtc_sweep.h"
#include "wok/runtime/cuda/cuda_compiler.h"
#include "wok/runtime/cuda/cuda_formula_kernel.h"
#include "wok/runtime/cuda/embedded_files.h"
#include "wok/runtime/widening.h"

namespace {

using wok::DType;
namespace cu = wok::cuda;

struct Rendered {
  std::string label;
  std::string signature;
  cu::FormulaKernelSource kernel;
};

// The formula kernel of `op` on inputs of `ins` with `given` attributes.
Rendered render(const std::string& op, const std::vector<DType>& ins, const wok::AttrMap& given = {}) {
  const wok::RegisteredOp& reg = wok::OpRegistry::global().get(op);
  const wok::Attrs attrs = wok::bind_attrs(op, reg.def().attrs, given);
  const std::vector<DType> outs = reg.def().infer_dtype(ins, attrs);
  const wok::ScalarProgram program = wok::widened_formula(reg.def(), ins, outs, attrs);  // as formula_kernel runs it
  std::string label = op + "(";
  for (size_t i = 0; i < ins.size(); ++i) label += (i ? ", " : "") + std::string(wok::dtype_name(ins[i]));
  label += ")";
  absl::StatusOr<cu::FormulaKernelSource> k = cu::render_formula_kernel(op, program, ins);
  EXPECT_TRUE(k.ok()) << label << ": " << k.status();
  return {label, cu::formula_kernel_signature(program, ins), k.ok() ? *k : cu::FormulaKernelSource{}};
}

std::vector<Rendered> named_cases() {
  const DType f32 = DType::kFloat32, f64 = DType::kFloat64, i32 = DType::kInt32, i64 = DType::kInt64,
              b8 = DType::kBool;
  return {
      render("exp", {f32}),
      render("gelu", {f32}),
      render("gelu", {f64}),
      render("sigmoid", {i32}),
      render("silu", {f32}),
      render("rsqrt", {f64}),
      render("relu", {i64}),
      render("reciprocal", {f32}),
      render("square", {b8}),
      render("clamp", {f32}, {{"min", -1.5}, {"max", 2.0}}),
      render("clamp", {i32}, {{"min", -3.0}, {"max", 7.0}}),
      render("where", {b8, f32, f32}),
      render("cast", {f64}, {{"dtype", i32}}),
      render("logical_not", {f32}),
      render("lt", {i64, i64}),
      render("pow", {i32, i32}),
      render("gelu", {DType::kFloat16}),
      render("mul", {DType::kBFloat16, DType::kBFloat16}),
      render("rsqrt", {DType::kInt8}),
      render("add", {DType::kUInt8, DType::kUInt8}),
      render("floor_divide", {DType::kInt16, DType::kInt16}),
      render("sub", {DType::kUInt32, DType::kUInt32}),
      render("cast", {DType::kFloat32}, {{"dtype", DType::kUInt16}}),
      render("cast", {DType::kFloat64}, {{"dtype", DType::kBFloat16}}),
  };
}

// Compiles the cases in NVRTC programs of `per_batch` kernels (names are
// unique, so a batch is one translation unit). Returns the failures.
std::vector<std::string> compile(const std::vector<Rendered>& cases, size_t per_batch, wt::SweepArchs archs) {
  std::vector<wt::NvrtcCase> sources;
  for (const Rendered& r : cases) sources.push_back({r.label, r.kernel.name, r.kernel.source, ""});
  return wt::compile_sweep(sources, per_batch, archs).failures;
}

TEST(CudaFormulaKernel, SourceIsTheFormulaWithNoHandWrittenComposite) {
  for (const Rendered& r : named_cases()) {
    SCOPED_TRACE(r.label);
    const std::string& src = r.kernel.source;
    EXPECT_NE(src.find("extern \"C\" __global__ void __launch_bounds__(256) " + r.kernel.name + "("),
              std::string::npos);
    EXPECT_NE(src.find("#include \"wok_elementwise.cuh\""), std::string::npos);
    EXPECT_NE(src.find("wok::ew_apply<"), std::string::npos) << "the precompiled loop of wok_elementwise.cuh";
    EXPECT_EQ(src.find("@@"), std::string::npos);
    for (const char* composite : {"wok::gelu", "wok::sigmoid", "wok::silu", "wok::rsqrt", "wok::relu",
                                  "wok::reciprocal", "wok::square", "wok::clamp", "wok::where"})
      EXPECT_EQ(src.find(composite), std::string::npos) << composite << " is spelled by hand:\n" << src;
  }
}

TEST(CudaFormulaKernel, SourceSpellsEachPrimitiveFromTheTable) {
  const Rendered gelu = render("gelu", {DType::kFloat32});
  EXPECT_NE(gelu.kernel.source.find("wok::tanh_(v"), std::string::npos) << gelu.kernel.source;
  EXPECT_NE(gelu.kernel.source.find("wok::ew_apply<float, float>(a, [](const float x0)"), std::string::npos);
  const Rendered sig = render("sigmoid", {DType::kInt32});
  EXPECT_NE(sig.kernel.source.find("wok::ew_apply<double, int>"), std::string::npos) << "int32 -> float64";
  EXPECT_NE(sig.kernel.source.find("wok::cast<double>(v0)"), std::string::npos) << sig.kernel.source;
  EXPECT_NE(sig.kernel.source.find("wok::exp_("), std::string::npos);
  const Rendered where = render("where", {DType::kBool, DType::kFloat32, DType::kFloat32});
  EXPECT_NE(where.kernel.source.find("wok::ew_apply<float, bool, float, float>"), std::string::npos);
  EXPECT_NE(where.kernel.source.find(" ? v"), std::string::npos);
  const Rendered cast = render("cast", {DType::kFloat64}, {{"dtype", DType::kInt32}});
  EXPECT_NE(cast.kernel.source.find("wok::cast<int>(v0)"), std::string::npos) << cast.kernel.source;
  const Rendered lt = render("lt", {DType::kInt64, DType::kInt64});
  EXPECT_NE(lt.kernel.source.find(" < v"), std::string::npos) << lt.kernel.source;
  EXPECT_NE(lt.kernel.source.find("wok::ew_apply<bool, long long, long long>"), std::string::npos);
}

// Note [Programs in their compute dtypes]: a storage dtype is read,
// widened, computed on in its compute dtype and narrowed once, as the CPU's
// widening adapter runs the op.
TEST(CudaFormulaKernel, StorageDtypesComputeAsTheCpuAdapterDoes) {
  const std::string gelu = render("gelu", {DType::kFloat16}).kernel.source;
  EXPECT_NE(gelu.find("wok::ew_apply<wok::f16, wok::f16>(a, [](const wok::f16 x0)"), std::string::npos) << gelu;
  EXPECT_NE(gelu.find("const float v1 = wok::cast<float>(v0);"), std::string::npos) << gelu;
  EXPECT_NE(gelu.find("wok::tanh_("), std::string::npos) << "float32 arithmetic:\n" << gelu;
  const size_t round = gelu.find("= wok::cast<wok::f16>(v");
  ASSERT_NE(round, std::string::npos) << gelu;
  EXPECT_EQ(gelu.find("wok::cast<wok::f16>", round + 3), std::string::npos) << "one rounding, at the output:\n" << gelu;
  // rsqrt(int8) is float32, but the CPU computes it at int32, whose rsqrt
  // is float64, and rounds once: so does the CUDA kernel.
  const std::string rsqrt = render("rsqrt", {DType::kInt8}).kernel.source;
  EXPECT_NE(rsqrt.find("wok::ew_apply<float, signed char>"), std::string::npos) << rsqrt;
  EXPECT_NE(rsqrt.find("const int v1 = wok::cast<int>(v0);"), std::string::npos) << rsqrt;
  EXPECT_NE(rsqrt.find("wok::cast<double>("), std::string::npos) << rsqrt;
  EXPECT_NE(rsqrt.find("wok::sqrt_("), std::string::npos) << rsqrt;
  // uint8 arithmetic wraps: the int32 sum, then its low byte.
  const std::string add = render("add", {DType::kUInt8, DType::kUInt8}).kernel.source;
  EXPECT_NE(add.find("wok::add(v1, v3)"), std::string::npos) << add;
  EXPECT_NE(add.find("wok::cast<unsigned char>(v4)"), std::string::npos) << add;
  // A cast to a half type rounds once from float64, as the CPU's cast does.
  const std::string to_bf16 = render("cast", {DType::kFloat64}, {{"dtype", DType::kBFloat16}}).kernel.source;
  EXPECT_NE(to_bf16.find("const wok::bf16 v1 = wok::cast<wok::bf16>(v0);"), std::string::npos) << to_bf16;
  EXPECT_EQ(to_bf16.find("wok::cast<float>"), std::string::npos) << "no rounding to float32 first:\n" << to_bf16;
  // uint32 computes in int64.
  const std::string sub = render("sub", {DType::kUInt32, DType::kUInt32}).kernel.source;
  EXPECT_NE(sub.find("const long long v1 = wok::cast<long long>(v0);"), std::string::npos) << sub;
  EXPECT_NE(sub.find("wok::cast<unsigned int>("), std::string::npos) << sub;
}

// uint64 has no wider compute dtype: its kernels compute in it, with the
// device library's unsigned overloads.
TEST(CudaFormulaKernel, Uint64ComputesInItself) {
  const std::string add = render("add", {DType::kUInt64, DType::kUInt64}).kernel.source;
  EXPECT_NE(add.find("const unsigned long long v2 = wok::add(v0, v1);"), std::string::npos) << add;
  const std::string div = render("floor_divide", {DType::kUInt64, DType::kUInt64}).kernel.source;
  EXPECT_NE(div.find("wok::floor_div(v0, v1)"), std::string::npos) << div;
  // A constant past int64's range is an unsigned literal.
  const std::string big = render("clamp", {DType::kUInt64}, {{"min", 0.0}, {"max", 1e19}}).kernel.source;
  EXPECT_NE(big.find("(10000000000000000000ULL)"), std::string::npos) << big;
}

TEST(CudaFormulaKernel, AttributesAreInTheProgramAndTheKey) {
  const Rendered a = render("clamp", {DType::kFloat32}, {{"min", -1.5}, {"max", 2.0}});
  const Rendered b = render("clamp", {DType::kFloat32}, {{"min", -1.5}, {"max", 3.0}});
  const Rendered a2 = render("clamp", {DType::kFloat32}, {{"min", -1.5}, {"max", 2.0}});
  EXPECT_NE(a.kernel.source.find("(-0x1.8p+0f)"), std::string::npos) << "min = -1.5 is a constant:\n" << a.kernel.source;
  EXPECT_NE(a.kernel.source.find("(0x1p+1f)"), std::string::npos) << "max = 2";
  EXPECT_NE(a.signature, b.signature);
  EXPECT_NE(a.kernel.name, b.kernel.name);
  EXPECT_EQ(a.signature, a2.signature);
  EXPECT_EQ(a.kernel.source, a2.kernel.source);
  // The input dtypes are in the key even where the program reads them alike.
  EXPECT_NE(render("exp", {DType::kFloat32}).signature, render("exp", {DType::kFloat64}).signature);
  EXPECT_NE(render("cast", {DType::kInt32}, {{"dtype", DType::kFloat32}}).signature,
            render("cast", {DType::kInt32}, {{"dtype", DType::kFloat64}}).signature);
}

TEST(CudaFormulaKernel, RefusesWhatTheLoopCannotRun) {
  const std::vector<DType> four(4, DType::kFloat32), one_out = {DType::kFloat32};
  wok::Attrs none;
  wok::FormulaBuilder b(four, one_out, none);
  b.output(0, b.input(0) + b.input(1) + b.input(2) + b.input(3));
  absl::StatusOr<cu::FormulaKernelSource> k = cu::render_formula_kernel("sum4", b.finish(), four);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(std::string(k.status().message()).find("1 to 3 inputs; op 'sum4' has 4"), std::string::npos)
      << k.status();
}

TEST(CudaFormulaKernel, EveryFormulaOpHasTheFormulaKernelOnCuda) {
  const wok::OpRegistry& reg = wok::OpRegistry::global();
  const wok::KernelFn* formula = reg.get("gelu").kernel(wok::DeviceType::kCUDA);
  ASSERT_NE(formula, nullptr);
  int ops = 0;
  for (const std::string& name : reg.names()) {
    const wok::RegisteredOp& op = reg.get(name);
    if (!op.def().formula) continue;
    ++ops;
    EXPECT_EQ(op.kernel(wok::DeviceType::kCUDA), formula) << name << " has a CUDA kernel of its own";
  }
  EXPECT_GE(ops, 30);
  EXPECT_NE(reg.get("full").kernel(wok::DeviceType::kCUDA), nullptr);
  EXPECT_NE(reg.get("full").kernel(wok::DeviceType::kCUDA), formula);
}

TEST(CudaFormulaKernel, NamedCasesCompileForSm80AndSm90) {
  WOK_SKIP_WITHOUT_NVRTC();
  for (const std::string& f : compile(named_cases(), 1, wt::SweepArchs::kBoth)) ADD_FAILURE() << f;
}

// Every (op, dtype) pair compiles for one of sm_80 and sm_90, alternately
// (Note [Alternating archs in the NVRTC sweeps] in tests/nvrtc_sweep.h).
TEST(CudaFormulaKernel, EveryElementwiseOpAndDtypeCompiles) {
  WOK_SKIP_WITHOUT_NVRTC();
  std::vector<Rendered> cases;
  const wok::OpRegistry& reg = wok::OpRegistry::global();
  for (const std::string& name : reg.names()) {
    const wok::RegisteredOp& op = reg.get(name);
    if (!op.def().formula) continue;
    for (DType t : wt::cuda_rendered_dtypes()) {
      std::vector<DType> ins(op.def().inputs.size(), t);  // the storage dtypes too
      if (name == "where") ins[0] = DType::kBool;
      wok::AttrMap given;
      if (name == "cast") given = {{"dtype", t == DType::kFloat32 ? DType::kInt64 : DType::kFloat32}};
      const wok::Attrs attrs = wok::bind_attrs(name, op.def().attrs, given);
      try {
        op.def().infer_dtype(ins, attrs);
      } catch (const wok::Error&) {
        continue;  // the op does not take these dtypes
      }
      cases.push_back(render(name, ins, given));
    }
  }
  ASSERT_GT(cases.size(), 120u);
  for (const std::string& f : compile(cases, 40, wt::SweepArchs::kAlternate)) ADD_FAILURE() << f;
}

// The modules that keep hand-written kernels (full, copies, matmul,
// reductions) build with NVRTC too: a machine without the fatbins' arch
// compiles them at first use.
TEST(CudaFormulaKernel, RemainingPrecompiledModulesCompileWithNvrtc) {
  WOK_SKIP_WITHOUT_NVRTC();
  for (const char* module : {"misc", "reduce"}) {
    const wok::embedded::EmbeddedFile* f = wok::embedded::find(std::string("kernels/") + module);
    ASSERT_NE(f, nullptr) << module;
    absl::StatusOr<cu::CudaBinary> bin = cu::compile_cuda(std::string(f->text()), module, 90);
    EXPECT_TRUE(bin.ok()) << module << ": " << bin.status();
  }
  for (const char* gone : {"kernels/unary", "kernels/binary"})
    EXPECT_EQ(wok::embedded::find(gone), nullptr) << gone << ": the elementwise ops are formula kernels";
}

// On a GPU: the precompiled path runs formula kernels, one per program.
TEST(CudaFormulaKernel, RunsOnTheGpuWithAttributesInTheKey) {
  WOK_SKIP_WITHOUT_GPU();
  wok::set_backend(wok::Backend::kPrecompiled);
  const wok::Tensor x = wok::from_vector(std::vector<float>{-4, -1, 0, 0.5f, 3, 9}, {6});
  const wok::Tensor g = x.to(wok::Device::cuda(0));
  EXPECT_EQ(wok::clamp(g, -1.5, 2.0).to_vector<float>(), (std::vector<float>{-1.5f, -1, 0, 0.5f, 2, 2}));
  EXPECT_EQ(wok::clamp(g, 0.0, 4.0).to_vector<float>(), (std::vector<float>{0, 0, 0, 0.5f, 3, 4}));
  EXPECT_EQ(wok::relu(g).to_vector<float>(), wok::relu(x).to_vector<float>());
  wok::set_backend(wok::Backend::kJit);
}

}  // namespace
