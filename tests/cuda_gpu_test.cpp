// The CUDA backend on a GPU: results equal to the CPU path for every op
// (JIT and precompiled), fusion patterns, copies, a multi-stream stress
// test with cross-stream dependencies, and device memory that stays flat
// across replays. Every test skips with the reason on machines without a
// CUDA device (run scripts/gpu_check on one).
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "cuda_test_util.h"
#include "test_util.h"

namespace {

using wok::Device;
using wok::DType;
using wok::Tensor;

const Device kGpu = Device::cuda(0);

class CudaGpu : public ::testing::Test {
 protected:
  void SetUp() override { WOK_SKIP_WITHOUT_GPU(); }
  void TearDown() override { wok::set_backend(wok::Backend::kJit); }
};

// Runs fn under the CUDA JIT, then the precompiled CUDA kernels.
template <typename Fn>
void for_each_gpu_backend(Fn&& fn) {
  for (wok::Backend b : {wok::Backend::kJit, wok::Backend::kPrecompiled}) {
    SCOPED_TRACE("backend " + std::string(wok::backend_name(b)));
    wok::set_backend(b);
    fn();
  }
  wok::set_backend(wok::Backend::kJit);
}

// ---- comparison ---------------------------------------------------------------------------

// Ops computed with a math library on each side (CPU: wok's own vector
// math; GPU: CUDA's): equal within a few ulp, or close in absolute terms
// where the formula cancels (gelu, silu near their zeros).
bool is_approximate(const std::string& op) {
  for (const char* a : {"exp", "log", "sin", "cos", "tanh", "erf", "sigmoid", "gelu", "silu", "pow", "softmax",
                        "log_softmax", "mean", "sum", "prod", "matmul", "layer_norm", "rms_norm", "tan",
                        "sinh", "cosh", "asinh", "acosh", "atanh", "gelu_erf", "mish"})
    if (op == a) return true;
  return false;
}

template <typename T>
::testing::AssertionResult same_as_cpu(const std::string& what, const Tensor& gpu, const Tensor& cpu, bool approx,
                                       double scale = 1) {
  if (gpu.dtype() != cpu.dtype())
    return ::testing::AssertionFailure() << what << ": dtype " << wt::dname(gpu.dtype()) << " vs cpu "
                                         << wt::dname(cpu.dtype());
  if (gpu.shape() != cpu.shape())
    return ::testing::AssertionFailure() << what << ": shape " << wok::shape_str(gpu.shape()) << " vs cpu "
                                         << wok::shape_str(cpu.shape());
  std::vector<T> g = gpu.to_vector<T>(), c = cpu.to_vector<T>();
  auto fail = ::testing::AssertionFailure();
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    bool ok;
    if constexpr (std::is_floating_point_v<T>) {
      if (!approx || std::isnan(c[i]) || std::isinf(c[i]) || std::isnan(g[i]) || std::isinf(g[i])) {
        ok = wt::same_value<T>(g[i], c[i], /*zero_sign_matters=*/!approx);
      } else {
        const double eps = std::numeric_limits<T>::epsilon();
        const double diff = std::fabs(static_cast<double>(g[i]) - static_cast<double>(c[i]));
        ok = diff <= 8 * eps * std::fabs(static_cast<double>(c[i])) + 16 * eps * scale;
      }
    } else {
      ok = g[i] == c[i];
    }
    if (ok) continue;
    if (++bad <= 8) fail << "\n  " << what << " index " << i << ": gpu " << wt::fmt(g[i]) << ", cpu " << wt::fmt(c[i]);
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return fail << "\n  " << bad << " of " << g.size() << " elements differ";
}

::testing::AssertionResult matches(const std::string& what, const Tensor& gpu, const Tensor& cpu, bool approx,
                                   double scale = 1) {
  return wok::visit_dtype(cpu.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return same_as_cpu<T>(what, gpu, cpu, approx, scale);
  });
}

// ---- inputs ---------------------------------------------------------------------------------

Tensor inputs_of(DType t, int64_t rows, int64_t cols, uint32_t seed) {
  const size_t n = static_cast<size_t>(rows * cols);
  return wok::visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> v;
    if constexpr (std::is_floating_point_v<T>) {
      v = wt::special_values<T>();
      for (T x : wt::random_values<T>(n, -4, 4, seed)) v.push_back(x);
    } else if constexpr (std::is_same_v<T, bool>) {
      v = wt::random_values<T>(n, 0, 1, seed);
    } else {
      v = wt::integer_edges<T>();
      for (T x : wt::random_values<T>(n, -100, 100, seed)) v.push_back(x);
    }
    v.resize(n);
    return wok::from_vector(v, {rows, cols});
  });
}

// ---- copies -----------------------------------------------------------------------------------

TEST_F(CudaGpu, CopiesRoundTripEveryDtypeAndSize) {
  for (DType t : wt::cuda_dtypes())
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{1000}, int64_t{3} << 20}) {  // 3M: several staging chunks
      SCOPED_TRACE(wt::dname(t) + " n=" + std::to_string(n));
      Tensor x = inputs_of(t, 1, n, 7);
      Tensor g = x.to(kGpu);
      EXPECT_EQ(g.device(), kGpu);
      EXPECT_TRUE(matches("round trip", g, x, false));
      EXPECT_TRUE(matches("back to cpu", g.to(Device::cpu()), x, false));
      EXPECT_EQ(g.to(Device::cpu()).device(), Device::cpu());
    }
  Tensor s = wok::from_vector(std::vector<double>{2.5}, {}, kGpu);
  EXPECT_EQ(s.item<double>(), 2.5);
  EXPECT_THROW(s.data<double>(), wok::DeviceError) << "data<T>() names the device instead of reading GPU memory";
  EXPECT_EQ(wok::ones({3}, DType::kInt32, kGpu).to_vector<int32_t>(), (std::vector<int32_t>{1, 1, 1}));
}

// ---- every elementwise op -------------------------------------------------------------------

TEST_F(CudaGpu, EveryElementwiseOpMatchesTheCpu) {
  const wok::OpRegistry& reg = wok::OpRegistry::global();
  for_each_gpu_backend([&] {
    for (const std::string& name : reg.names()) {
      const wok::RegisteredOp& op = reg.get(name);
      if (!op.is_elementwise()) continue;
      const size_t arity = op.def().inputs.size();
      for (DType t : wt::cuda_dtypes()) {
        std::vector<Tensor> cpu_in;
        for (size_t k = 0; k < arity; ++k) {
          DType dt = (name == "where" && k == 0) ? DType::kBool : t;
          // The last input broadcasts along rows: [8, 40] op [40].
          Tensor x = inputs_of(dt, k + 1 == arity && arity > 1 ? 1 : 8, 40, static_cast<uint32_t>(11 * k + 3));
          if (k + 1 == arity && arity > 1) x = x.reshape({40});
          cpu_in.push_back(x);
        }
        wok::AttrMap attrs;
        if (name == "cast") attrs = {{"dtype", DType::kFloat32}};
        if (name == "clamp") attrs = {{"min", -1.5}, {"max", 2.0}};
        std::vector<Tensor> cpu_out;
        try {
          cpu_out = wok::call(name, cpu_in, attrs);
        } catch (const wok::DTypeError&) {
          continue;  // the op does not take this dtype
        }
        std::vector<Tensor> gpu_in;
        for (const Tensor& x : cpu_in) gpu_in.push_back(x.to(kGpu));
        std::vector<Tensor> gpu_out = wok::call(name, gpu_in, attrs);
        EXPECT_TRUE(matches(name + "(" + wt::dname(t) + ")", gpu_out[0], cpu_out[0], is_approximate(name), 4));
      }
    }
  });
}

TEST_F(CudaGpu, CastsMatchTheCpuIncludingOutOfRange) {
  for_each_gpu_backend([&] {
    for (DType from : wt::cuda_dtypes())
      for (DType to : wt::cuda_dtypes()) {
        Tensor x = inputs_of(from, 4, 32, 5);
        if (wok::is_floating(from)) x = x * 1e10;  // nan, inf and out-of-range values for integers
        EXPECT_TRUE(matches("cast " + wt::dname(from) + "->" + wt::dname(to), wok::cast(x.to(kGpu), to),
                            wok::cast(x, to), false));
      }
  });
}

// The storage dtypes with a wider compute dtype: float16, bfloat16, the
// narrow integers and uint32 (uint64 computes in itself:
// Uint64ElementwiseMatchesTheCpu).
const std::vector<DType>& storage_dtypes() {
  static const std::vector<DType> dtypes =
      wt::dtypes_in(wok::kAllDTypeMask & ~wok::kComputeDTypeMask & ~wok::dtype_bit(DType::kUInt64));
  return dtypes;
}

// Equal values in float64 (nan equal to nan); approximate ones within 4
// units of the dtype's last place (plus 1e-6 absolute).
::testing::AssertionResult same_storage_values(const std::string& what, const Tensor& gpu, const Tensor& cpu,
                                               bool approx) {
  if (gpu.dtype() != cpu.dtype()) return ::testing::AssertionFailure() << what << ": dtype " << wt::dname(gpu.dtype());
  const std::vector<double> g = wok::cast(gpu.to(Device::cpu()), DType::kFloat64).to_vector<double>();
  const std::vector<double> c = wok::cast(cpu, DType::kFloat64).to_vector<double>();
  const double ulp = cpu.dtype() == DType::kFloat16 ? 0x1p-10 : cpu.dtype() == DType::kBFloat16 ? 0x1p-7 : 0x1p-23;
  int bad = 0;
  auto fail = ::testing::AssertionFailure();
  for (size_t i = 0; i < c.size(); ++i) {
    const bool ok = approx && std::isfinite(c[i]) ? std::fabs(g[i] - c[i]) <= 4 * ulp * std::fabs(c[i]) + 1e-6
                                                  : wt::same_value<double>(g[i], c[i], true);
    if (!ok && ++bad <= 8) fail << "\n  " << what << " index " << i << ": gpu " << g[i] << ", cpu " << c[i];
  }
  return bad ? fail : ::testing::AssertionSuccess();
}

// uint64 computes in itself on the device (no wider type): wrapping
// arithmetic, unsigned division and shifts past int64's range, exactly.
TEST_F(CudaGpu, Uint64ElementwiseMatchesTheCpu) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const std::vector<uint64_t> edges = {0, 1, 3, 64, 0xFFFFFFFFull, 0x8000000000000000ull, max - 1, max};
  std::vector<uint64_t> av, bv;
  for (uint64_t x : edges)
    for (uint64_t y : edges) av.push_back(x), bv.push_back(y);
  const Tensor a = wt::tensor(av), b = wt::tensor(bv);
  const Tensor ga = a.to(kGpu), gb = b.to(kGpu);
  for_each_gpu_backend([&] {
    for (const char* op : {"add", "sub", "mul", "maximum", "pow", "fmod", "remainder", "floor_divide",
                           "bitwise_left_shift", "bitwise_right_shift", "lt"}) {
      const Tensor cpu = wok::call(op, {a, b})[0], gpu = wok::call(op, {ga, gb})[0].to(Device::cpu());
      ASSERT_EQ(gpu.dtype(), cpu.dtype()) << op;
      EXPECT_EQ(wok::cast(gpu, DType::kUInt64).to_vector<uint64_t>(), wok::cast(cpu, DType::kUInt64).to_vector<uint64_t>())
          << op;
    }
    const Tensor x = wt::tensor(std::vector<double>{-1.5, 0.5, 0x1p63, 1e19, 0x1p64, NAN});
    EXPECT_EQ(wok::cast(x.to(kGpu), DType::kUInt64).to(Device::cpu()).to_vector<uint64_t>(),
              wok::cast(x, DType::kUInt64).to_vector<uint64_t>());
  });
}

// The storage dtypes compute in their compute dtypes on the GPU as on the
// CPU (Note [Programs in their compute dtypes] in runtime/compute_program.h):
// the same bits for exact ops, for approximate ones within a few units of
// the dtype's last place.
TEST_F(CudaGpu, StorageDtypesMatchTheCpu) {
  for_each_gpu_backend([&] {
    for (DType t : storage_dtypes()) {
      const std::string name = wt::dname(t);
      const Tensor a = wok::cast(inputs_of(DType::kFloat32, 8, 40, 3) * 30.0, t);
      const Tensor b = wok::cast(inputs_of(DType::kFloat32, 1, 40, 5).reshape({40}) * 30.0, t);
      const Tensor ga = a.to(kGpu), gb = b.to(kGpu);
      for (const char* op : {"add", "sub", "mul", "maximum", "lt", "floor_divide"}) {
        std::vector<Tensor> cpu_out;
        try {
          cpu_out = wok::call(op, {a, b});
        } catch (const wok::DTypeError&) {
          continue;
        }
        EXPECT_TRUE(same_storage_values(std::string(op) + "(" + name + ")", wok::call(op, {ga, gb})[0], cpu_out[0], false));
      }
      for (const char* op : {"neg", "abs", "exp", "sqrt", "gelu", "sigmoid", "rsqrt"}) {
        std::vector<Tensor> cpu_out;
        try {
          cpu_out = wok::call(op, {a});
        } catch (const wok::DTypeError&) {
          continue;
        }
        EXPECT_TRUE(same_storage_values(std::string(op) + "(" + name + ")", wok::call(op, {ga})[0], cpu_out[0], is_approximate(op)));
      }
      EXPECT_TRUE(same_storage_values("fused chain " + name, (ga * 3 + gb) - ga * gb, (a * 3 + b) - a * b, false));
      for (DType to : wt::cuda_rendered_dtypes())
        EXPECT_TRUE(same_storage_values("cast " + name + "->" + wt::dname(to), wok::cast(ga, to), wok::cast(a, to), false));
    }
  });
}

// ---- reductions, movement, matmul ----------------------------------------------------------

using Reduction = Tensor (*)(const Tensor&, std::vector<int64_t>, bool);

// Reductions and matmul take the compute dtypes on CUDA; the storage
// dtypes are widened on the device as the CPU widens them (Note [The
// widening adapter] in runtime/widening.h): float16 sums in float32 and
// rounds once. full and the copies move every width as it is.
TEST_F(CudaGpu, StorageDtypeReductionsMatmulAndMovesMatchTheCpu) {
  for_each_gpu_backend([&] {
    for (DType t : storage_dtypes()) {
      const std::string name = wt::dname(t);
      const Tensor a = wok::cast(inputs_of(DType::kFloat32, 24, 40, 3) * 30.0, t);
      const Tensor b = wok::cast(inputs_of(DType::kFloat32, 40, 16, 5) * 0.25, t);
      const Tensor ga = a.to(kGpu), gb = b.to(kGpu);
      for (auto [op, fn] : std::initializer_list<std::pair<const char*, Reduction>>{
               {"sum", wok::sum}, {"mean", wok::mean}, {"max", wok::max}, {"min", wok::min}, {"argmax", wok::argmax}})
        for (const std::vector<int64_t>& axes : {std::vector<int64_t>{1}, std::vector<int64_t>{0}}) {
          const std::string what = std::string(op) + "(" + name + ", axis " + std::to_string(axes[0]) + ")";
          EXPECT_TRUE(same_storage_values(what, fn(ga, axes, false), fn(a, axes, false), is_approximate(op)));
        }
      EXPECT_TRUE(same_storage_values("matmul " + name, wok::matmul(ga, gb), wok::matmul(a, b), wok::is_floating(t)));
      EXPECT_TRUE(same_storage_values("permute " + name, wok::permute(ga, {1, 0}), wok::permute(a, {1, 0}), false));
      EXPECT_TRUE(same_storage_values("slice " + name, wok::slice(ga, 1, 3, 29, 2), wok::slice(a, 1, 3, 29, 2), false));
      EXPECT_TRUE(same_storage_values("concat " + name, wok::concat({ga, ga}, 0), wok::concat({a, a}, 0), false));
      EXPECT_TRUE(same_storage_values("full " + name, wok::ones({5, 3}, t, kGpu), wok::ones({5, 3}, t), false));
    }
  });
}

TEST_F(CudaGpu, ReductionsMatchTheCpu) {
  const std::vector<std::pair<wok::Shape, std::vector<int64_t>>> cases = {
      {{1000}, {}},          {{37, 53}, {1}},        {{37, 53}, {0}},      {{4, 5, 6}, {0, 2}},
      {{4, 5, 6}, {1}},      {{3, 1, 200000}, {2}}, {{200000, 3}, {0}},   {{2, 0, 3}, {1}},
      {{1, 1}, {0, 1}},      {{6, 7, 8, 9}, {1, 3}},
  };
  for_each_gpu_backend([&] {
    for (const auto& [shape, axes] : cases)
      for (DType t : wt::cuda_dtypes())
        for (auto [op, fn] : std::initializer_list<std::pair<const char*, Reduction>>{
                 {"sum", wok::sum}, {"mean", wok::mean}, {"max", wok::max}, {"min", wok::min}, {"prod", wok::prod},
                 {"argmax", wok::argmax}}) {
          bool empty = wok::numel(shape) == 0;
          if (empty && std::string(op) != "sum" && std::string(op) != "mean" && std::string(op) != "prod") continue;
          int64_t cols = shape.empty() ? 1 : shape.back();
          Tensor x = inputs_of(t, wok::numel(shape) / std::max<int64_t>(cols, 1), cols, 9).reshape(shape);
          if (std::string(op) == "prod" && wok::is_floating(t)) x = wok::cast(wok::gt(x, 0.0), t) * 0.5 + 0.75;
          Tensor c = fn(x, axes, false);
          Tensor g = fn(x.to(kGpu), axes, false);
          double scale = std::sqrt(static_cast<double>(std::max<int64_t>(1, wok::numel(shape))));
          EXPECT_TRUE(matches(std::string(op) + wok::shape_str(shape) + " axes " + wok::shape_str(axes) + " " +
                                  wt::dname(t),
                              g, c, is_approximate(op), 16 * scale));
        }
  });
}

TEST_F(CudaGpu, MovementAndMatmulMatchTheCpu) {
  for_each_gpu_backend([&] {
    for (DType t : {DType::kBool, DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat64}) {
      Tensor x = inputs_of(t, 24, 10, 3).reshape({2, 3, 4, 10});
      Tensor g = x.to(kGpu);
      EXPECT_TRUE(matches("permute", wok::permute(g, {3, 1, 0, 2}), wok::permute(x, {3, 1, 0, 2}), false));
      EXPECT_TRUE(matches("transpose", g.transpose(1, 3), x.transpose(1, 3), false));
      EXPECT_TRUE(matches("broadcast_to", wok::broadcast_to(g.reshape({2, 3, 1, 4, 10}), {2, 3, 5, 4, 10}),
                          wok::broadcast_to(x.reshape({2, 3, 1, 4, 10}), {2, 3, 5, 4, 10}), false));
      EXPECT_TRUE(matches("slice", wok::slice(g, 3, 8, 1, -2), wok::slice(x, 3, 8, 1, -2), false));
      EXPECT_TRUE(matches("slice", wok::slice(g, 1, 1, std::nullopt), wok::slice(x, 1, 1, std::nullopt), false));
      EXPECT_TRUE(matches("concat", wok::concat({g, g * 2, g}, 2), wok::concat({x, x * 2, x}, 2), false));
      if (t == DType::kBool) continue;
      Tensor a = inputs_of(t, 3 * 17, 33, 4).reshape({3, 17, 33});
      Tensor b = inputs_of(t, 33, 9, 5);
      EXPECT_TRUE(matches("matmul", wok::matmul(a.to(kGpu), b.to(kGpu)), wok::matmul(a, b), true, 64));
    }
  });
}

// ---- fusion -----------------------------------------------------------------------------------

std::vector<std::pair<std::string, std::function<std::vector<Tensor>(Device)>>> programs() {
  auto data = [](Device d, wok::Shape s, uint64_t seed) { return wok::rand(std::move(s), seed, DType::kFloat32, d); };
  return {
      {"P1", [=](Device d) {
         Tensor a = data(d, {1 << 16}, 1), b = data(d, {1 << 16}, 2);
         return std::vector<Tensor>{((a * 2.0f + b) * 0.5f - a) * b + 1.0f};
       }},
      {"P2", [=](Device d) {
         Tensor a = data(d, {1 << 16}, 1), b = data(d, {1 << 16}, 2);
         return std::vector<Tensor>{(wok::maximum(a * 1.5f + b, 0.0f) - wok::exp(-(a * a))) * wok::tanh(b)};
       }},
      {"P3", [=](Device d) { return std::vector<Tensor>{wok::gelu(data(d, {1 << 16}, 1) * 4.0f - 2.0f)}; }},
      {"broadcast", [=](Device d) {
         Tensor m = data(d, {7, 13}, 1), row = data(d, {13}, 2), col = data(d, {7, 1}, 3);
         return std::vector<Tensor>{wok::relu(m * row + col) - wok::sigmoid(col), wok::tanh(m * row + col)};
       }},
      {"multi-output", [=](Device d) {
         Tensor t = wok::exp(data(d, {4096}, 1));
         return std::vector<Tensor>{t * 2.0f, t + 1.0f};
       }},
      {"split by reductions and matmul", [=](Device d) {
         Tensor a = data(d, {8, 8}, 4);
         Tensor b = wok::matmul(a * 2.0f + 1.0f, a) - 3.0f;
         return std::vector<Tensor>{wok::sum(wok::exp(b), {1}), wok::max(b, {0}), wok::argmax(b - a, {1})};
       }},
      {"softmax and norms", [=](Device d) {
         Tensor a = data(d, {16, 100}, 5);
         return std::vector<Tensor>{wok::softmax(a, 1), wok::layer_norm(a), wok::rms_norm(a)};
       }},
      {"integers and bools", [=](Device d) {
         Tensor i = wok::cast(data(d, {64}, 6) * 100.0f, DType::kInt32);
         Tensor j = wok::cast(data(d, {64}, 7) * 1e6f, DType::kInt64);
         return std::vector<Tensor>{(i * 3 + j) * i - wok::abs(j), wok::logical_and(i > 20, wok::logical_not(j < 5000)),
                                    wok::pow(i, 3)};
       }},
      {"float64 and casts", [=](Device d) {
         Tensor x = wok::rand({1000}, 8, DType::kFloat64, d) * 10.0 - 5.0;
         return std::vector<Tensor>{wok::erf(x) * wok::cos(x) + wok::round(x), wok::cast(wok::clamp(x * 1e9, -1e12, 1e12), DType::kInt32)};
       }},
  };
}

TEST_F(CudaGpu, FusionPatternsMatchTheCpu) {
  for_each_gpu_backend([&] {
    for (auto& [name, build] : programs()) {
      std::vector<Tensor> c = build(Device::cpu()), g = build(kGpu);
      for (size_t i = 0; i < c.size(); ++i)
        EXPECT_TRUE(matches(name + " output " + std::to_string(i), g[i], c[i], true, 64));
    }
  });
}

TEST_F(CudaGpu, JitFusesAndAgreesBitwiseWithPrecompiledOnArithmetic) {
  Tensor a = wok::rand({100000}, 1, DType::kFloat32, kGpu), b = wok::rand({100000}, 2, DType::kFloat32, kGpu);
  auto p1 = [&] { return ((a * 2.0f + b) * 0.5f - a) * b + 1.0f; };
  wok::set_backend(wok::Backend::kJit);
  p1().to_vector<float>();  // compile
  wok::reset_stats();
  std::vector<float> jit = p1().to_vector<float>();
  EXPECT_EQ(wok::stats().kernel_launches, 1) << "five ops, one generated kernel";
  wok::set_backend(wok::Backend::kPrecompiled);
  std::vector<float> pre = p1().to_vector<float>();
  ASSERT_EQ(jit.size(), pre.size());
  for (size_t i = 0; i < jit.size(); ++i) ASSERT_EQ(jit[i], pre[i]) << i << ": -fmad=false on both paths";
}

// ---- streams ------------------------------------------------------------------------------------

// Many fragments in flight on pooled streams, each reading the previous
// one's result (a dependency across streams), plus fragments with
// independent chains joined at the end (lanes ordered by events inside
// one fragment). Every round is checked.
TEST_F(CudaGpu, MultiStreamStressWithCrossStreamDependencies) {
  constexpr int kRounds = 1000;
  constexpr int kChains = 6;
  constexpr int64_t kN = 4096;
  std::vector<float> base(kN);
  for (int64_t i = 0; i < kN; ++i) base[i] = static_cast<float>(i % 64);
  Tensor x0 = wok::from_vector(base, {kN}, kGpu);
  for (int round = 0; round < kRounds; ++round) {
    const float r = static_cast<float>(round % 7);
    std::vector<Tensor> chain;
    Tensor prev = x0;
    for (int c = 0; c < kChains; ++c) {
      // Exact in float32: small integers.
      Tensor next = prev + (r + static_cast<float>(c));
      wok::eval_async({next});  // its own fragment, on the next pooled stream
      chain.push_back(next);
      prev = next;
    }
    // Two independent chains in one fragment, joined: two lanes, one event.
    Tensor left = wok::relu(chain[1] * 2.0f - 1.0f), right = wok::abs(chain[2] - 3.0f) + wok::sum(chain[0], {0}) * 0.0f;
    Tensor joined = left + right;
    wok::eval_async({joined});
    std::vector<float> last = chain.back().to_vector<float>();
    std::vector<float> got = joined.to_vector<float>();
    for (int64_t i = 0; i < kN; i += 97) {
      float v = base[i];
      float c1 = v + r + (r + 1), c2 = c1 + (r + 2);
      float want_last = v;
      for (int c = 0; c < kChains; ++c) want_last += r + static_cast<float>(c);
      ASSERT_EQ(last[i], want_last) << "round " << round << " index " << i;
      ASSERT_EQ(got[i], std::max(0.0f, c1 * 2 - 1) + std::fabs(c2 - 3)) << "round " << round << " index " << i;
    }
  }
}

TEST_F(CudaGpu, DeviceMemoryIsFlatAcross10000Replays) {
  Tensor a = wok::rand({1 << 14}, 1, DType::kFloat32, kGpu), b = wok::rand({1 << 14}, 2, DType::kFloat32, kGpu);
  auto step = [&](int i) {
    Tensor y = wok::gelu(a * static_cast<float>(i % 5) + b) - wok::sum(b * a, {0});
    wok::eval({y});
  };
  for (int i = 0; i < 20; ++i) step(i);  // compile, fill the pools
  wok::cuda_synchronize(0);
  const wok::MemoryStats before = wok::cuda_memory_stats(0);
  for (int i = 0; i < 10000; ++i) step(i);
  wok::cuda_synchronize(0);
  const wok::MemoryStats after = wok::cuda_memory_stats(0);
  EXPECT_EQ(after.reserved_bytes, before.reserved_bytes) << "the pool stopped growing after warm-up";
  EXPECT_EQ(after.os_allocations, before.os_allocations) << "no cuMemAlloc in steady state";
  EXPECT_EQ(after.current_bytes, before.current_bytes) << "every replay's buffers went back";
  EXPECT_GT(after.reuses - before.reuses, 10000);
}

TEST_F(CudaGpu, AllocatorPoolsBySizeClassAndEmptiesItsCache) {
  wok::cuda_empty_cache(0);
  const wok::MemoryStats s0 = wok::cuda_memory_stats(0);
  { Tensor t = wok::zeros({1 << 20}, DType::kFloat32, kGpu) + 1.0f; wok::eval({t}); }
  const wok::MemoryStats s1 = wok::cuda_memory_stats(0);
  EXPECT_GT(s1.cached_bytes, s0.cached_bytes) << "freed blocks stay in the pool";
  { Tensor t = wok::zeros({1 << 20}, DType::kFloat32, kGpu) + 2.0f; wok::eval({t}); }
  const wok::MemoryStats s2 = wok::cuda_memory_stats(0);
  EXPECT_EQ(s2.os_allocations, s1.os_allocations) << "the same sizes are served from the pool";
  wok::cuda_empty_cache(0);
  EXPECT_EQ(wok::cuda_memory_stats(0).cached_bytes, 0);
}

}  // namespace
