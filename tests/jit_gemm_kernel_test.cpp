// The generated GEMM as the JIT plans and caches it: transposes read in
// place, epilogues in the kernel, what its signature covers, the disk cache
// and strict mode, and each ISA's tile.
#include <gtest/gtest.h>

#include <cmath>
#include <type_traits>

#include "cache_test_fixture.h"
#include "wok/jit/fused_kernel.h"
#include "wok/jit/gemm_driver.h"
#include "wok/jit/kernel_cache.h"
#include "wok/jit/x86/x86_codegen.h"
#include "wok/wok.h"

namespace {

namespace wc = wok::cache;

int64_t launches_of(const std::function<wok::Tensor()>& program) {
  wok::Tensor y = program();
  wok::reset_stats();
  y.to_vector<float>();
  return wok::stats().kernel_launches;
}

// Largest |got - want| over the elements, want computed in double.
double max_error(const wok::Tensor& got, const std::vector<double>& want) {
  std::vector<float> g = got.to_vector<float>();
  double e = 0;
  for (size_t i = 0; i < g.size(); ++i) e = std::max(e, std::abs(static_cast<double>(g[i]) - want[i]));
  return e;
}

std::vector<double> reference(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t k,
                              int64_t n, bool b_transposed) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += static_cast<double>(a[i * k + p]) * (b_transposed ? b[j * k + p] : b[p * n + j]);
      c[i * n + j] = s;
    }
  return c;
}

class JitGemmKernel : public cache_test::CacheTest {};

TEST_F(JitGemmKernel, ATransposedOperandIsReadInPlace) {
  const int64_t m = 37, k = 53, n = 41;
  wok::Tensor a = wok::rand({m, k}, 11), bt = wok::rand({n, k}, 12);
  // One launch: no permute kernel makes the transpose.
  EXPECT_EQ(launches_of([&] { return wok::matmul(a, bt.transpose()); }), 1);
  std::vector<double> want = reference(a.to_vector<float>(), bt.to_vector<float>(), m, k, n, true);
  EXPECT_LT(max_error(wok::matmul(a, bt.transpose()), want), 1e-4);
  // A transpose someone else reads too is made once, and the product is still right.
  wok::Tensor t = bt.transpose();
  wok::Tensor y = wok::matmul(a, t) + wok::sum(t);
  EXPECT_LT(max_error(wok::matmul(a, t), want), 1e-4);
  y.to_vector<float>();
}

TEST_F(JitGemmKernel, EpilogueRunsInsideTheKernel) {
  wok::Tensor x = wok::rand({64, 48}, 1), w = wok::rand({48, 96}, 2), b = wok::rand({96}, 3), r = wok::rand({64, 96}, 4);
  EXPECT_EQ(launches_of([&] { return wok::relu(wok::matmul(x, w) + b) * 0.5f + r; }), 1);
  // A producer of an operand only the matmul reads runs inside its packing.
  EXPECT_EQ(launches_of([&] { return wok::matmul(x * 2.0f, w); }), 1);
  EXPECT_EQ(launches_of([&] { return wok::matmul(wok::tanh(x), w * b) + b; }), 1);
  // One someone else reads too is a kernel of its own (here with the sum).
  wok::Tensor xs = x * 2.0f;
  EXPECT_EQ(launches_of([&] { return wok::matmul(xs, w) + wok::sum(xs); }), 2);
  // A consumer the tile loop cannot apply (a reduction) stays outside.
  EXPECT_EQ(launches_of([&] { return wok::sum(wok::matmul(x, w), {1}); }), 2);
}

TEST_F(JitGemmKernel, ProloguesComputeTheOperandsTheyReplace) {
  // Prologues on both operands, broadcast inputs and a param, over several
  // blocks of k and a batch; against the same program with the operands
  // materialized first (wok::eval between).
  for (int64_t k : {7, 300, 1100}) {
    wok::Tensor x = wok::rand({2, 45, k}, 21), w = wok::rand({k, 38}, 22), s = wok::rand({k}, 23),
                c = wok::rand({45, 1}, 24);
    wok::Tensor fused = wok::matmul(x * s + c, wok::tanh(w) * 0.5f);
    wok::Tensor xa = x * s + c, wa = wok::tanh(w) * 0.5f;
    wok::eval({xa, wa});
    wok::Tensor apart = wok::matmul(xa, wa);
    std::vector<float> f = fused.to_vector<float>(), p = apart.to_vector<float>();
    ASSERT_EQ(f.size(), p.size());
    double worst = 0;
    for (size_t i = 0; i < f.size(); ++i) worst = std::max(worst, static_cast<double>(std::abs(f[i] - p[i])));
    EXPECT_LT(worst, 1e-6 * static_cast<double>(k)) << "k = " << k;
  }
}

TEST_F(JitGemmKernel, SignatureCoversTileDTypeAndEpilogue) {
  wok::jit::FusedKernelSpec s;
  s.kind = wok::jit::KernelKind::kGemm;
  s.rank = 2;
  s.tile_rows = 14;
  s.tile_cols = 32;
  s.input_dtypes = {wok::DType::kFloat32};
  s.input_broadcast = {{false, false}};
  wok::ScalarInstr in(wok::ScalarOp::kInput, wok::DType::kFloat32);
  in.index = 0;
  s.program.instrs.push_back(in);
  s.program.outputs = {0};
  const std::string base = s.signature();
  wok::jit::FusedKernelSpec other_tile = s;
  other_tile.tile_rows = 6;
  EXPECT_NE(other_tile.signature(), base);
  wok::jit::FusedKernelSpec relu = s;
  wok::ScalarInstr zero(wok::ScalarOp::kConst, wok::DType::kFloat32);
  zero.constant = wok::Scalar(0.0f);
  relu.program.instrs.push_back(zero);
  wok::ScalarInstr mx(wok::ScalarOp::kMax, wok::DType::kFloat32);
  mx.args[0] = 0;
  mx.args[1] = 1;
  relu.program.instrs.push_back(mx);
  relu.program.outputs = {2};
  EXPECT_NE(relu.signature(), base);
  EXPECT_NE(wok::jit::KernelCache::signature_of(s, wok::CpuIsa::kAvx2),
            wok::jit::KernelCache::signature_of(s, wok::CpuIsa::kAvx512));
  EXPECT_NE(s.str().find("gemm kernel, rank 2, tile 14x32"), std::string::npos) << s.str();
}

TEST_F(JitGemmKernel, EachIsaCompilesItsTilesWithEveryEpilogueOperandKind) {
  // Both tiles of each ISA, float32 and float64: a row bias, a column bias,
  // a residual and a param, through a tanh.
  for (wok::CpuIsa isa : {wok::CpuIsa::kAvx2, wok::CpuIsa::kAvx512}) {
    if (isa > wok::host_cpu_isa()) continue;
    for (wok::DType t : {wok::DType::kFloat32, wok::DType::kFloat64})
      for (int64_t m : {1, 16, 1000}) {
        const wok::jit::GemmTile tile = wok::jit::choose_gemm_tile(t, isa, m);
        wok::jit::FusedKernelSpec s;
        s.kind = wok::jit::KernelKind::kGemm;
        s.rank = 2;
        s.tile_rows = tile.rows;
        s.tile_cols = tile.cols;
        s.input_dtypes = {t, t, t, t};
        s.input_broadcast = {{false, false}, {true, false}, {false, true}, {false, false}};
        s.param_dtypes = {t};
        auto add = [&](wok::ScalarInstr in) {
          s.program.instrs.push_back(in);
          return static_cast<int32_t>(s.program.instrs.size() - 1);
        };
        int32_t v[5];
        for (int i = 0; i < 5; ++i) {
          wok::ScalarInstr in(wok::ScalarOp::kInput, t);
          in.index = i;
          v[i] = add(in);
        }
        int32_t acc = v[0];
        for (int i = 1; i < 5; ++i) {
          wok::ScalarInstr op(wok::ScalarOp::kAdd, t);
          op.args[0] = acc;
          op.args[1] = v[i];
          acc = add(op);
        }
        wok::ScalarInstr th(wok::ScalarOp::kTanh, t);
        th.args[0] = acc;
        s.program.outputs = {add(th), v[0]};
        absl::StatusOr<wok::jit::x86::MachineCode> code = wok::jit::x86::generate_x86(s, isa, false);
        ASSERT_TRUE(code.ok()) << code.status() << "\n" << s.str();
        EXPECT_GT(code->bytes.size(), 0u);
      }
  }
}

TEST_F(JitGemmKernel, PersistsAndStrictModeCoversIt) {
  wok::Tensor x = wok::rand({40, 24}, 5), w = wok::rand({24, 56}, 6), b = wok::rand({56}, 7);
  auto program = [&] { return wok::gelu(wok::matmul(x, w) + b); };
  std::vector<float> first = program().to_vector<float>();
  EXPECT_GE(wok::stats().kernels_compiled, 1);
  // A fresh process (nothing in memory) loads it from the store: no compile.
  cache_test::forget_in_memory();
  wok::reset_stats();
  std::vector<float> again = program().to_vector<float>();
  EXPECT_EQ(wok::stats().kernels_compiled, 0);
  EXPECT_GE(wok::stats().disk_hits, 1);
  EXPECT_EQ(first, again);
  // Strict mode: a GEMM kernel missing from the store is an error naming it.
  set_config([](wc::CacheConfig& c) { c.strict = true; });
  cache_test::forget_in_memory();
  std::string message;
  try {
    wok::gelu(wok::matmul(x, w) * 3.0f).to_vector<float>();
  } catch (const wok::Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("gemm kernel"), std::string::npos) << message;
  set_config([](wc::CacheConfig& c) { c.strict = false; });
}

}  // namespace

namespace {

// The driver and a kernel compiled for `isa`, called directly: so the AVX2
// path runs on AVX-512 hosts too. c = relu(a @ b + bias) and the product.
template <typename T>
void check_driver(wok::CpuIsa isa, int64_t m, int64_t k, int64_t n, bool b_transposed) {
  const wok::DType t = std::is_same_v<T, float> ? wok::DType::kFloat32 : wok::DType::kFloat64;
  const wok::jit::GemmTile tile = wok::jit::choose_gemm_tile(t, isa, m);
  wok::jit::FusedKernelSpec s;
  s.kind = wok::jit::KernelKind::kGemm;
  s.rank = 2;
  s.tile_rows = tile.rows;
  s.tile_cols = tile.cols;
  s.input_dtypes = {t, t};
  s.input_broadcast = {{false, false}, {true, false}};
  auto add = [&](wok::ScalarInstr in) {
    s.program.instrs.push_back(in);
    return static_cast<int32_t>(s.program.instrs.size() - 1);
  };
  wok::ScalarInstr in0(wok::ScalarOp::kInput, t), in1(wok::ScalarOp::kInput, t);
  in0.index = 0;
  in1.index = 1;
  const int32_t p = add(in0), bias = add(in1);
  wok::ScalarInstr sum(wok::ScalarOp::kAdd, t);
  sum.args[0] = p;
  sum.args[1] = bias;
  wok::ScalarInstr zero(wok::ScalarOp::kConst, t);
  zero.constant = std::is_same_v<T, float> ? wok::Scalar(0.0f) : wok::Scalar(0.0);
  wok::ScalarInstr relu(wok::ScalarOp::kMax, t);
  relu.args[0] = add(sum);
  relu.args[1] = add(zero);
  s.program.outputs = {add(relu), p};
  auto kernel = wok::jit::KernelCache::global().get(s, isa);
  ASSERT_TRUE(kernel.ok()) << kernel.status();

  std::vector<T> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), bv(static_cast<size_t>(n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(std::sin(0.7 * static_cast<double>(i)));
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<T>(std::cos(0.3 * static_cast<double>(i)));
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<T>(0.01 * static_cast<double>(i) - 0.2);
  std::vector<T> out(static_cast<size_t>(m * n), T(-7)), prod(static_cast<size_t>(m * n), T(-7));
  wok::jit::GemmLayout l;
  l.m = m;
  l.n = n;
  l.k = k;
  l.a = {k, 1, {0}};
  // b as stored: [k, n], or its transpose [n, k] read through strides.
  l.b = b_transposed ? wok::jit::GemmOperandLayout{1, k, {0}} : wok::jit::GemmOperandLayout{n, 1, {0}};
  l.epilogue = {{0, 1, {0}}, {n, 1, {0}}, {n, 1, {0}}};
  l.acc_entry = 2;  // the product's output holds the partial sums
  void* ptrs[] = {a.data(), b.data(), bv.data(), out.data(), prod.data()};
  wok::jit::run_gemm(s, l, ptrs, nullptr, nullptr, nullptr,
                     reinterpret_cast<wok::jit::GemmTileFn>(reinterpret_cast<void*>((*kernel)->fn)));
  const double eps = std::is_same_v<T, float> ? 0x1p-23 : 0x1p-52;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, mag = 0;
      for (int64_t q = 0; q < k; ++q) {
        const double bq = b_transposed ? b[j * k + q] : b[q * n + j];
        want += static_cast<double>(a[i * k + q]) * bq;
        mag += std::abs(static_cast<double>(a[i * k + q]) * bq);
      }
      const double bound = 4 * static_cast<double>(k) * eps * mag + 1e-30;
      ASSERT_NEAR(prod[i * n + j], want, bound) << "product at " << i << "," << j << " m=" << m << " k=" << k << " n=" << n;
      ASSERT_NEAR(out[i * n + j], std::max(0.0, want + bv[j]), bound + 2 * eps) << "output at " << i << "," << j;
    }
}

TEST(JitGemmDriver, EveryIsaAndEdgeSizeWithTheKernelCalledDirectly) {
  if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "no AVX2";
  for (wok::CpuIsa isa : {wok::CpuIsa::kAvx2, wok::CpuIsa::kAvx512}) {
    if (isa > wok::host_cpu_isa()) continue;
    for (int64_t m : {1, 3, 7, 16, 17, 31}) {
      for (int64_t n : {1, 5, 17, 33, 70}) {
        check_driver<float>(isa, m, 13, n, false);
        check_driver<double>(isa, m, 9, n, n % 2 == 1);
      }
    }
    // k over several blocks (partial sums in the product's output).
    check_driver<float>(isa, 40, 1100, 37, false);
    check_driver<double>(isa, 29, 700, 19, true);
  }
}

}  // namespace
