// The CUDA code generator without a GPU: every elementwise op and dtype,
// and every fusion pattern of the test suite, renders to CUDA source that
// NVRTC compiles for sm_80 and sm_90 (each op and dtype pair for one of
// them, alternately: Note [Alternating archs in the NVRTC sweeps]). Skipped (with the reason) only where
// NVRTC cannot be loaded (e.g. WOK_NVRTC_PATH=/nonexistent).
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <chrono>
#include <cstdio>
#include <random>

#include "cuda_test_util.h"
#include "nvrtc_sweep.h"
#include "wok/jit/cuda/cuda_kernel_cache.h"
#include "wok/jit/cuda/cuda_renderer.h"
#include "wok/jit/plan.h"
#include "wok/jit/target.h"
#include "wok/runtime/cuda/cuda_compiler.h"
#include "wok/runtime/cuda/embedded_files.h"

namespace {

using wok::DType;
using wok::jit::FusedKernelSpec;
namespace cj = wok::jit::cuda;
namespace cu = wok::cuda;

struct Case {
  std::string label;
  FusedKernelSpec spec;
};

// Kernels per NVRTC program: rendered kernels are self-contained (their
// constants live in a namespace named after them), so a batch compiles as
// one translation unit and pays NVRTC's fixed cost once.
constexpr size_t kBatch = 24;

// Renders every case and compiles them in batches on all cores (a failing
// batch kernel by kernel, to name the culprit). Returns the failures.
std::vector<std::string> compile_all(const std::vector<Case>& cases, wt::SweepArchs archs, const char* what) {
  std::vector<std::string> failures;
  std::vector<wt::NvrtcCase> sources(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    absl::StatusOr<cj::RenderedKernel> r = cj::render_cuda(cases[i].spec, "k" + std::to_string(i));
    sources[i] = {cases[i].label, "k" + std::to_string(i), r.ok() ? r->source : "", cases[i].spec.str()};
    if (!r.ok()) failures.push_back(cases[i].label + ": " + std::string(r.status().message()) + "\n" + cases[i].spec.str());
  }
  auto start = std::chrono::steady_clock::now();
  wt::SweepResult result = wt::compile_sweep(sources, kBatch, archs);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  failures.insert(failures.end(), result.failures.begin(), result.failures.end());
  std::printf("[ nvrtc    ] %zu %s, %s: %zu programs of up to %zu, %.0f ms each, %.1f s wall\n", cases.size(), what,
              archs == wt::SweepArchs::kBoth ? "each for sm_80 and sm_90" : "sm_80 and sm_90 alternately",
              result.compiles, kBatch, result.ms_per_batch, wall);
  return failures;
}

// The spec of one op alone, for input dtypes `ins`, at `rank` with input
// `bcast_input` (if >= 0) broadcast along dim 0.
std::optional<FusedKernelSpec> op_spec(const wok::RegisteredOp& op, const std::vector<DType>& ins, const wok::Attrs& attrs,
                                       int rank, int bcast_input) {
  std::vector<DType> outs;
  try {
    outs = op.def().infer_dtype(ins, attrs);
  } catch (const wok::Error&) {
    return std::nullopt;  // the op does not take these dtypes
  }
  wok::FormulaBuilder b(ins, outs, attrs);
  op.def().formula(b);
  FusedKernelSpec spec;
  spec.rank = rank;
  spec.input_dtypes = ins;
  for (size_t i = 0; i < ins.size(); ++i) {
    std::vector<bool> flags(rank, false);
    if (static_cast<int>(i) == bcast_input) flags[0] = true;
    spec.input_broadcast.push_back(flags);
  }
  spec.program = b.finish();
  return spec;
}

std::vector<Case> every_op_case() {
  std::vector<Case> cases;
  const wok::OpRegistry& reg = wok::OpRegistry::global();
  for (const std::string& name : reg.names()) {
    const wok::RegisteredOp& op = reg.get(name);
    if (!op.is_elementwise() || !op.def().formula) continue;
    const auto& specs = op.def().attrs;
    std::vector<std::vector<wok::AttrValue>> attr_sets(1);
    for (const wok::AttrSpec& s : specs) {
      if (s.type == wok::AttrType::kDType) {  // cast: every target dtype
        std::vector<std::vector<wok::AttrValue>> next;
        for (const auto& set : attr_sets)
          for (DType t : wt::cuda_rendered_dtypes()) {
            next.push_back(set);
            next.back().push_back(t);
          }
        attr_sets = std::move(next);
      } else {
        for (auto& set : attr_sets) set.push_back(*s.default_value);
      }
    }
    const size_t arity = op.def().inputs.size();
    for (const auto& values : attr_sets) {
      wok::Attrs attrs(&specs, values);
      for (DType t : wt::cuda_rendered_dtypes()) {
        std::vector<DType> ins(arity, t);
        if (name == "where") ins[0] = DType::kBool;
        std::string label = name + "(" + std::string(wok::dtype_name(t)) + (attrs.size() ? "; " + attrs.str() : "") + ")";
        // Rank 2 with the last input broadcast: the kernel holds the flat
        // (vector) path and the strided path. Rank-1 kernels come with the
        // fusion patterns below.
        if (auto s = op_spec(op, ins, attrs, 2, static_cast<int>(arity) - 1)) cases.push_back({label, *s});
      }
    }
  }
  return cases;
}

TEST(CudaCodegen, TemplatesAreEmbedded) {
  ASSERT_NE(wok::embedded::find("templates/elementwise.cu.in"), nullptr);
  ASSERT_NE(wok::embedded::find("templates/wok_device.cuh"), nullptr);
  ASSERT_NE(wok::embedded::find("kernels/misc"), nullptr) << "the precompiled kernels' sources are embedded too";
  ASSERT_NE(wok::embedded::find("templates/formula_kernel.cu.in"), nullptr);
  EXPECT_FALSE(cu::templates_fingerprint().empty());
  EXPECT_GE(cu::device_headers().names.size(), 3u);
}

TEST(CudaCodegen, RenderedSourceIsTheTemplateWithSlotsFilled) {
  const wok::RegisteredOp& add = wok::OpRegistry::global().get("add");
  auto spec = op_spec(add, {DType::kFloat32, DType::kFloat32}, wok::Attrs(), 1, -1);
  ASSERT_TRUE(spec);
  absl::StatusOr<cj::RenderedKernel> r = cj::render_cuda(*spec, "my_add");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->source.find("@@"), std::string::npos);
  EXPECT_NE(r->source.find("#include \"wok_device.cuh\""), std::string::npos);
  EXPECT_NE(r->source.find("my_add("), std::string::npos);
  EXPECT_NE(r->source.find("wok::add(v"), std::string::npos) << "ops map to the shared device functions";
  EXPECT_NE(r->source.find("wok::Vec<float, kVec>"), std::string::npos) << "the flat path loads vectors";
  EXPECT_NE(r->source.find("const float* __restrict__ in0"), std::string::npos);
}

// Every (op, dtype) pair compiles for one of sm_80 and sm_90, alternately
// (Note [Alternating archs in the NVRTC sweeps] in tests/nvrtc_sweep.h).
TEST(CudaCodegen, EveryElementwiseOpAndDtypeCompilesForSm80AndSm90) {
  WOK_SKIP_WITHOUT_NVRTC();
  std::vector<Case> cases = every_op_case();
  ASSERT_GT(cases.size(), 150u);
  for (const std::string& f : compile_all(cases, wt::SweepArchs::kAlternate, "op kernels")) ADD_FAILURE() << f;
}

// ---- fusion patterns -------------------------------------------------------------------

using wok::Tensor;

std::vector<float> iota_f(int n, float scale = 0.01f) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i % 97) - 0.3f;
  return v;
}

// The programs of tests/jit_fusion_test.cpp and the JIT benchmarks, then
// seeded random ones in the style of tests/jit_random_program_test.cpp.
std::vector<std::pair<std::string, std::vector<Tensor>>> fusion_programs() {
  std::vector<std::pair<std::string, std::vector<Tensor>>> p;
  Tensor a = wok::from_vector(iota_f(1000), {10, 100});
  Tensor b = wok::from_vector(iota_f(1000, 0.02f), {10, 100});
  p.push_back({"nine-op chain", {wok::tanh(wok::exp(-(a * 2.0f + b)) * b - a) / (wok::abs(b) + 1.0f)}});
  Tensor t = wok::exp(a);
  p.push_back({"multi-output group", {t * 2.0f, t + 1.0f}});
  Tensor m = wok::from_vector(iota_f(7 * 13), {7, 13});
  Tensor row = wok::from_vector(iota_f(13, 0.1f), {13});
  Tensor col = wok::from_vector(iota_f(7, 0.2f), {7, 1});
  p.push_back({"broadcast inputs", {wok::relu(m * row + col) - wok::sigmoid(col)}});
  Tensor s = wok::rand({}, 4);
  p.push_back({"leaf broadcasts", {wok::tanh(m * row + col) * s}});
  Tensor sq = wok::from_vector(iota_f(64), {8, 8});
  p.push_back({"split by matmul and sum", {wok::sum(wok::exp(wok::matmul(sq * 2.0f + 1.0f, sq) - 3.0f), {1})}});
  p.push_back({"sizes only", {wok::gelu(m * row + 0.5f) * wok::exp(-m)}});
  p.push_back({"constants as params", {(a * 0.25f + 1.0f) * a}});
  p.push_back({"common subexpressions", {wok::exp(a) + wok::exp(a) * wok::exp(a)}});
  p.push_back({"folded constants", {a * (wok::full({}, 2.0f) * wok::full({}, 3.0f) + 1.0f)}});
  Tensor big_a = wok::rand({1 << 10}, 1), big_b = wok::rand({1 << 10}, 2);
  p.push_back({"P1", {((big_a * 2.0f + big_b) * 0.5f - big_a) * big_b + 1.0f}});
  p.push_back({"P2", {(wok::maximum(big_a * 1.5f + big_b, 0.0f) - wok::exp(-(big_a * big_a))) * wok::tanh(big_b)}});
  p.push_back({"P3 gelu", {wok::gelu(big_a)}});
  p.push_back({"softmax", {wok::softmax(m, 1)}});
  p.push_back({"where and compare", {wok::where(a > b, a * b, wok::sqrt(wok::abs(b)))}});
  Tensor ia = wok::from_vector(std::vector<int32_t>{1, -2, 3, 4, -5, 6}, {2, 3});
  Tensor ib = wok::from_vector(std::vector<int64_t>{7, 8, -9}, {3});
  p.push_back({"integer mix", {(ia * 3 + ib) * ia - wok::abs(ib), wok::cast(ia, DType::kFloat64) / 3.0}});
  p.push_back({"bool logic", {wok::logical_and(ia > 0, wok::logical_not(ib < 0)), wok::where(ia > 1, wok::cast(ia, DType::kFloat32), 2.5f)}});
  Tensor d = wok::from_vector(std::vector<double>{0.5, 1.5, -2.5, 3.25}, {4});
  p.push_back({"float64", {wok::pow(d, 2.5) + wok::erf(d) * wok::cos(d), wok::round(d) + wok::floor(d) - wok::ceil(d)}});
  p.push_back({"clamp and casts", {wok::cast(wok::clamp(a * 100.0f, -50.0, 50.0), DType::kInt32) + 1}});

  // Storage dtypes (Note [Programs in their compute dtypes]): computed in
  // float32, int32 or int64, rounded or wrapped where stored.
  Tensor h = wok::cast(a, DType::kFloat16), hb = wok::cast(b, DType::kBFloat16);
  p.push_back({"float16 chain", {wok::gelu(h * 2.0f + 1.0f) - h, wok::softmax(h, 1)}});
  p.push_back({"bfloat16 with float32", {hb * b + 0.5f, wok::cast(hb, DType::kFloat16) * h, wok::cast(h, DType::kFloat64)}});
  Tensor q = wok::cast(a * 100.0f, DType::kInt8), r = wok::cast(b * 50.0f, DType::kInt8);
  p.push_back({"int8 wrapping", {wok::where(q > r, (q + r) * 3, q - r * 2), wok::floor_divide(q, r)}});
  p.push_back({"dequantize", {wok::relu(wok::cast(q, DType::kFloat32) * 0.03f + 0.25f), wok::cast(h, DType::kInt8)}});
  Tensor u16 = wok::cast(a * 1000.0f, DType::kUInt16), u32 = wok::cast(b * 1e6f, DType::kUInt32);
  p.push_back({"uint16 and uint32", {u16 * 7 + 3, (u32 - 5) * 3, wok::cast(u16, DType::kUInt8) + wok::cast(q, DType::kUInt8)}});

  // Random programs: unary and binary ops over a few leaves of mixed dtype
  // and broadcast shapes.
  std::mt19937 rng(1234);
  const char* unary[] = {"neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "erf", "sigmoid", "relu", "gelu",
                         "silu", "floor", "ceil", "round", "reciprocal", "square", "rsqrt"};
  using Binary = Tensor (*)(const Tensor&, const Tensor&);
  const Binary binary[] = {wok::add, wok::sub, wok::mul, wok::div, wok::maximum, wok::minimum, wok::pow,
                           wok::lt, wok::ge, wok::eq};
  for (int prog = 0; prog < 60; ++prog) {
    std::vector<Tensor> vals = {
        wok::rand({3, 4, 5}, prog * 7 + 1),
        wok::rand({4, 1}, prog * 7 + 2, DType::kFloat64),
        wok::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5}, {5}),
        wok::rand({3, 1, 5}, prog * 7 + 3),
    };
    if (prog >= 40) {  // with storage dtypes
      vals[1] = wok::cast(vals[1], prog % 2 ? DType::kFloat16 : DType::kBFloat16);
      vals[2] = wok::cast(vals[2], prog % 3 ? DType::kInt8 : DType::kUInt16);
    }
    for (int step = 0; step < 8; ++step) {
      Tensor x = vals[rng() % vals.size()];
      if (rng() % 2) {
        const char* op = unary[rng() % std::size(unary)];
        if (x.dtype() == DType::kBool || (x.dtype() == DType::kInt32 && std::string(op) == "neg")) x = wok::cast(x, DType::kFloat32);
        vals.push_back(wok::call1(op, {x}));
      } else {
        Tensor y = vals[rng() % vals.size()];
        Binary op = binary[rng() % std::size(binary)];
        if (x.dtype() == DType::kBool) x = wok::cast(x, DType::kInt32);
        if (y.dtype() == DType::kBool) y = wok::cast(y, DType::kInt32);
        vals.push_back(op(x, y));
      }
    }
    p.push_back({"random program " + std::to_string(prog), {vals.back(), vals[vals.size() - 3]}});
  }
  return p;
}

TEST(CudaCodegen, EveryFusionPatternCompilesForSm80AndSm90) {
  WOK_SKIP_WITHOUT_NVRTC();
  std::vector<Case> cases;
  int row_kernels = 0;
  for (auto& [label, outs] : fusion_programs()) {
    wok::jit::cuda::PendingFragment pf = wt::pending_fragment(outs);
    std::shared_ptr<wok::jit::Plan> plan = wok::jit::plan_structure(pf.fragment, wok::jit::cuda_target());
    int k = 0;
    for (const wok::jit::PlanStep& st : plan->steps) {
      if (st.kind != wok::jit::PlanStep::Kind::kKernel) continue;
      if (st.lowered.spec.kind != wok::jit::KernelKind::kElementwise) {  // row kernels: not rendered for CUDA yet
        ++row_kernels;
        continue;
      }
      cases.push_back({label + " kernel " + std::to_string(k++), st.lowered.spec});
    }
  }
  ASSERT_GT(cases.size(), 40u);
  for (const std::string& f : compile_all(cases, wt::SweepArchs::kBoth, "fused kernels")) ADD_FAILURE() << f;
  std::printf("[ nvrtc    ] %d row/column kernels left to the precompiled path\n", row_kernels);
}

TEST(CudaCodegen, CompileErrorCarriesTheLogAndTheSourceLine) {
  WOK_SKIP_WITHOUT_NVRTC();
  std::string source = "#include \"wok_device.cuh\"\nextern \"C\" __global__ void broken(float* p) {\n  p[0] = undeclared_thing;\n}\n";
  absl::StatusOr<cu::CudaBinary> b = cu::compile_cuda(source, "broken_kernel", 80);
  ASSERT_FALSE(b.ok());
  std::string msg(b.status().message());
  EXPECT_NE(msg.find("broken_kernel.cu"), std::string::npos) << msg;
  EXPECT_NE(msg.find("undeclared_thing"), std::string::npos) << msg;
  EXPECT_NE(msg.find(" >3 |"), std::string::npos) << "the failing line, numbered:\n" << msg;
  EXPECT_NE(msg.find("NVRTC log"), std::string::npos) << msg;
}

TEST(CudaCodegen, CubinCacheCompilesOnceAndKeysOnArchAndNvrtc) {
  WOK_SKIP_WITHOUT_NVRTC();
  const wok::RegisteredOp& op = wok::OpRegistry::global().get("silu");
  auto spec = op_spec(op, {DType::kFloat64}, wok::Attrs(), 3, 0);
  ASSERT_TRUE(spec);
  absl::StatusOr<std::string> s80 = cj::CudaKernelCache::signature_of(*spec, 80);
  absl::StatusOr<std::string> s90 = cj::CudaKernelCache::signature_of(*spec, 90);
  ASSERT_TRUE(s80.ok() && s90.ok());
  EXPECT_NE(*s80, *s90);
  EXPECT_NE(s80->find("sm_80"), std::string::npos);
  const cu::Nvrtc* nv = *cu::nvrtc();
  EXPECT_NE(s80->find("nvrtc " + nv->version_str()), std::string::npos) << *s80;
  EXPECT_NE(s80->find("tpl " + cu::templates_fingerprint()), std::string::npos);

  wok::reset_stats();
  auto k1 = cj::CudaKernelCache::global().get(*spec, 90);
  auto k2 = cj::CudaKernelCache::global().get(*spec, 90);
  ASSERT_TRUE(k1.ok() && k2.ok()) << (k1.ok() ? k2.status() : k1.status());
  EXPECT_EQ(k1->get(), k2->get());
  EXPECT_TRUE((*k1)->binary.is_cubin);
  EXPECT_EQ((*k1)->binary.target, "sm_90");
  EXPECT_EQ(wok::stats().cache_hits, 1);
}

TEST(CudaCodegen, UnsupportedArchitectureFallsBackToPtx) {
  WOK_SKIP_WITHOUT_NVRTC();
  const cu::Nvrtc* nv = *cu::nvrtc();
  if (nv->supported_archs.empty()) GTEST_SKIP() << "this NVRTC cannot list its architectures";
  int beyond = nv->supported_archs.back() + 1;  // an sm_ NVRTC has never heard of
  absl::StatusOr<cu::CudaBinary> b =
      cu::compile_cuda("extern \"C\" __global__ void k(float* p) { p[0] = 1; }\n", "ptx_fallback", beyond);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(b->is_cubin);
  EXPECT_EQ(b->target, "compute_" + std::to_string(nv->supported_archs.back()));
  EXPECT_NE(std::string(b->image.data()).find(".entry k"), std::string::npos);
}

}  // namespace
