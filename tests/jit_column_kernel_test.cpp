// Generated column kernels (reductions over leading axes, vectorized along
// the kept columns) at any width: the streaming walk of wide spaces (Note
// [Streaming column kernel] in jit/x86/column_codegen.cpp) and the register
// walk of narrow ones, against the precompiled kernels. Widths cover whole
// and partial tiles, rows cross the blocked summation's blocks, and each
// fused program must run as one kernel. The AVX2 walk runs under
// WOK_CPU_ISA=avx2 (the capped_isa_avx2_jit ctest entry).
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "wok/runtime/cpu_features.h"

namespace {

using wok::Tensor;
using Program = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

class JitColumnKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
    wok::set_backend(wok::Backend::kJit);
  }
  void TearDown() override {
    wok::set_backend(wok::Backend::kJit);
    wok::set_num_threads(0);
  }
};

// Runs `program` on `inputs` under both backends; returns the JIT's
// results and the precompiled ones, and the JIT's kernel launches.
struct Runs {
  std::vector<std::vector<double>> jit, pre;
  int64_t launches = 0;
};

std::vector<double> values(const Tensor& t) { return wok::cast(t, wok::DType::kFloat64).to_vector<double>(); }

Runs run_both(const Program& program, const std::vector<Tensor>& inputs) {
  Runs r;
  for (wok::Backend b : {wok::Backend::kJit, wok::Backend::kPrecompiled}) {
    wok::set_backend(b);
    std::vector<Tensor> out = program(inputs);
    wok::reset_stats();
    wok::eval(out);
    if (b == wok::Backend::kJit) r.launches = wok::stats().kernel_launches;
    wok::set_backend(wok::Backend::kPrecompiled);  // the casts below
    for (const Tensor& t : out) (b == wok::Backend::kJit ? r.jit : r.pre).push_back(values(t));
  }
  wok::set_backend(wok::Backend::kJit);
  return r;
}

// Sums and means tolerate the two backends' summation orders (rtol, and
// atol for sums near 0); the rest must agree exactly (nan where nan).
void expect_close(const std::vector<double>& got, const std::vector<double>& want, double rtol, const std::string& what,
                  double atol = 0) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    const bool ok = std::isnan(want[i]) ? std::isnan(got[i])
                                        : std::abs(got[i] - want[i]) <= atol + rtol * (1.0 + std::abs(want[i]));
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", precompiled " << want[i];
    }
  }
}

Tensor input(wok::Shape shape, uint64_t seed, wok::DType t = wok::DType::kFloat32) {
  Tensor x = wok::randn(shape, seed, t);
  wok::eval({x});
  return x;
}

// The widths: narrow (register walk), and wide, whole and partial tiles.
const int64_t kWidths[] = {16, 100, 128, 256, 512, 1000, 4096, 4099};

struct Case {
  const char* name;
  Program program;
  double rtol;
  int launches = 1;  // kernels per evaluation
};

std::vector<Case> cases_over_axis(std::vector<int64_t> axes) {
  return {
      {"sum", [=](auto& in) { return std::vector<Tensor>{wok::sum(in[0], axes)}; }, 1e-5},
      {"mean", [=](auto& in) { return std::vector<Tensor>{wok::mean(in[0], axes)}; }, 1e-5},
      {"max", [=](auto& in) { return std::vector<Tensor>{wok::max(in[0], axes)}; }, 0},
      {"min", [=](auto& in) { return std::vector<Tensor>{wok::min(in[0], axes)}; }, 0},
      {"sum(exp)", [=](auto& in) { return std::vector<Tensor>{wok::sum(wok::exp(in[0]), axes)}; }, 1e-5},
      {"log(sum(exp))", [=](auto& in) { return std::vector<Tensor>{wok::log(wok::sum(wok::exp(in[0]), axes))}; },
       1e-5},
      {"sqrt(mean(x*x))", [=](auto& in) { return std::vector<Tensor>{wok::sqrt(wok::mean(in[0] * in[0], axes))}; },
       1e-5},
      {"max and sum", [=](auto& in) { return std::vector<Tensor>{wok::max(in[0], axes), wok::sum(in[0], axes)}; },
       1e-5, 2},
      // Beyond kMaxBareColumnKernelColumns only reductions with a prologue
      // are generated (Note [Wide column reductions]): these keep every
      // reduction on the streaming kernel at every width.
      {"sum(x/2)", [=](auto& in) { return std::vector<Tensor>{wok::sum(in[0] * 0.5f, axes)}; }, 1e-5},
      {"max(2x)", [=](auto& in) { return std::vector<Tensor>{wok::max(in[0] * 2.0f, axes)}; }, 0},
      {"min(-x)", [=](auto& in) { return std::vector<Tensor>{wok::min(-in[0], axes)}; }, 0},
      {"mean(2x)", [=](auto& in) { return std::vector<Tensor>{wok::mean(in[0] * 2.0f, axes)}; }, 1e-5},
  };
}

TEST_F(JitColumnKernel, EveryWidthAgreesWithPrecompiled) {
  for (int64_t rows : {5, 2500}) {
    for (int64_t c : kWidths) {
      Tensor x = input({rows, c}, static_cast<uint64_t>(rows * 7 + c));
      for (const Case& k : cases_over_axis({0})) {
        const std::string what = std::string(k.name) + " of [" + std::to_string(rows) + ", " + std::to_string(c) + "]";
        Runs r = run_both(k.program, {x});
        for (size_t o = 0; o < r.jit.size(); ++o) expect_close(r.jit[o], r.pre[o], k.rtol, what, 1e-7 * rows);
        EXPECT_EQ(r.launches, k.launches) << what;
      }
    }
  }
}

TEST_F(JitColumnKernel, SeveralOuterRowsReduceTheMiddleAxis) {
  for (int64_t c : {300, 1000, 4099}) {
    Tensor x = input({3, 1500, c}, static_cast<uint64_t>(c));
    for (const Case& k : cases_over_axis({1})) {
      const std::string what = std::string(k.name) + " of [3, 1500, " + std::to_string(c) + "] over axis 1";
      Runs r = run_both(k.program, {x});
      for (size_t o = 0; o < r.jit.size(); ++o) expect_close(r.jit[o], r.pre[o], k.rtol, what, 1.5e-4);
      // The reduction is one kernel; an epilogue of a value that dropped a
      // middle axis may run as a second (fusion's call, not the kernel's).
      EXPECT_LE(r.launches, 2) << what;
    }
  }
}

TEST_F(JitColumnKernel, ThreadsSplitTheTilesOfWideSpaces) {
  Tensor x = input({2, 1200, 1000}, 3);
  for (int threads : {1, 2}) {
    wok::set_num_threads(threads);
    Runs r = run_both([](auto& in) { return std::vector<Tensor>{wok::sum(wok::exp(in[0]), {1})}; }, {x});
    expect_close(r.jit[0], r.pre[0], 1e-5, std::to_string(threads) + " threads", 1e-3);
  }
}

TEST_F(JitColumnKernel, ArgmaxKeepsTheFirstIndex) {
  for (int64_t c : {16, 256, 1000, 4099}) {
    // Few distinct values: many ties, which the first index must win.
    Tensor x = wok::round(input({2100, c}, static_cast<uint64_t>(c)) * 2.0f);
    for (auto [name, fn] : std::vector<std::pair<const char*, Program>>{
             {"argmax", [](auto& in) { return std::vector<Tensor>{wok::argmax(in[0], {0})}; }},
             {"argmax of -x", [](auto& in) { return std::vector<Tensor>{wok::argmax(-in[0], {0})}; }},
             {"argmax of exp", [](auto& in) { return std::vector<Tensor>{wok::argmax(wok::exp(in[0]), {0})}; }}}) {
      const std::string what = std::string(name) + " of [2100, " + std::to_string(c) + "]";
      Runs r = run_both(fn, {x});
      expect_close(r.jit[0], r.pre[0], 0, what);
      EXPECT_EQ(r.launches, 1) << what;
    }
  }
}

TEST_F(JitColumnKernel, InputsVaryingAlongRowsOrColumnsOnly) {
  for (int64_t c : {256, 1000, 4099}) {
    const int64_t rows = 1100;
    Tensor x = input({rows, c}, 11), per_col = input({c}, 12), per_row = input({rows, 1}, 13);
    const std::string shape = "[" + std::to_string(rows) + ", " + std::to_string(c) + "]";
    Runs r = run_both([](auto& in) { return std::vector<Tensor>{wok::sum(in[0] * wok::exp(in[1]), {0})}; },
                      {x, per_col, per_row});
    expect_close(r.jit[0], r.pre[0], 1e-5, "sum(x * exp(w[c])) of " + shape, 1e-3);
    r = run_both([](auto& in) { return std::vector<Tensor>{wok::max(in[0] + in[2], {0})}; }, {x, per_col, per_row});
    expect_close(r.jit[0], r.pre[0], 0, "max(x + b[r]) of " + shape);
    r = run_both([](auto& in) { return std::vector<Tensor>{wok::sum(in[0], {0}) * in[1]}; }, {x, per_col, per_row});
    expect_close(r.jit[0], r.pre[0], 1e-5, "sum(x) * w[c] of " + shape, 3e-4);
  }
}

TEST_F(JitColumnKernel, FullValuesWrittenBesideTheReduction) {
  // exp(x) is both an output and the reduction's input: the kernel stores it
  // row by row while it streams.
  for (int64_t c : {256, 1000}) {
    Tensor x = input({1030, c}, 21);
    Runs r = run_both(
        [](auto& in) {
          Tensor e = wok::exp(in[0]);
          return std::vector<Tensor>{e, wok::sum(e, {0})};
        },
        {x});
    expect_close(r.jit[0], r.pre[0], 1e-6, "exp(x) of width " + std::to_string(c));
    expect_close(r.jit[1], r.pre[1], 1e-5, "sum(exp(x)) of width " + std::to_string(c), 1e-3);
  }
}

TEST_F(JitColumnKernel, FullValuesThatDoNotVaryAlongTheReducedAxis) {
  // An input broadcast along the reduced axis (a mean over an axis of size
  // 1 of a [1, c] tensor) makes a full output a tile-level value: the
  // streaming walk (9 tiles or more) stores it every row, so it computes it
  // every row too (the random-program test found it unwritten).
  for (int64_t c : {64, 65, 100, 1533}) {
    Tensor x = input({1, c}, 41, wok::DType::kFloat64);
    Runs r = run_both(
        [](auto& in) {
          Tensor positive = in[0] > 0.5;
          return std::vector<Tensor>{wok::mean(positive, {0}), wok::cast(positive, wok::DType::kFloat64),
                                     wok::where(positive, in[0], 0.0)};
        },
        {x});
    const std::string width = " of width " + std::to_string(c);
    expect_close(r.jit[0], r.pre[0], 0, "mean(x > 0.5)" + width);
    expect_close(r.jit[1], r.pre[1], 0, "cast(x > 0.5)" + width);
    expect_close(r.jit[2], r.pre[2], 0, "where(x > 0.5, x, 0)" + width);
    EXPECT_EQ(r.launches, 1) << width;
  }
}

TEST_F(JitColumnKernel, HalfTypesWhoseOpsComputeInFloat64TileEveryColumn) {
  // sin of a half type is computed as float32 sin, which runs in float64
  // lanes: the kernel takes half the lanes a float32 program would, and the
  // launcher must tile by those lanes, or the last columns are never
  // computed (random program 3000034 found them unwritten).
  for (wok::DType t : {wok::DType::kBFloat16, wok::DType::kFloat16}) {
    for (int64_t c : {5, 13, 21, 40}) {
      for (int64_t rows : {1, 3}) {
        Tensor x = wok::cast(input({rows, c}, 43), t);
        wok::eval({x});
        Runs r = run_both(
            [](auto& in) {
              Tensor s = wok::sin(in[0]);
              Tensor e = wok::erf(s);
              return std::vector<Tensor>{s, wok::prod(e, {0}), wok::pow(in[0], in[0])};
            },
            {x});
        const std::string what = std::string(wok::dtype_name(t)).append(wok::shape_str({rows, c}));
        // A fused kernel rounds to the half type once where the precompiled
        // ones round each op: within a few of the half type's ulps.
        const double tol = t == wok::DType::kBFloat16 ? 0x1p-6 : 0x1p-9;
        expect_close(r.jit[0], r.pre[0], 0, "sin of " + what);
        expect_close(r.jit[1], r.pre[1], tol, "prod(erf(sin)) of " + what);
        expect_close(r.jit[2], r.pre[2], 0, "pow of " + what);
      }
    }
  }
}

TEST_F(JitColumnKernel, Float64) {
  for (int64_t c : {256, 1000, 4099}) {
    Tensor x = input({1500, c}, 31, wok::DType::kFloat64);
    const std::string shape = "[1500, " + std::to_string(c) + "] float64";
    Runs r = run_both([](auto& in) { return std::vector<Tensor>{wok::sum(wok::exp(in[0]), {0})}; }, {x});
    expect_close(r.jit[0], r.pre[0], 1e-12, "sum(exp) of " + shape);
    EXPECT_EQ(r.launches, 1);
    r = run_both([](auto& in) { return std::vector<Tensor>{wok::argmax(in[0], {0}), wok::min(in[0], {0})}; }, {x});
    expect_close(r.jit[0], r.pre[0], 0, "argmax of " + shape);
    expect_close(r.jit[1], r.pre[1], 0, "min of " + shape);
  }
}

TEST_F(JitColumnKernel, NanAndProd) {
  const int64_t rows = 1500, c = 1000;
  std::vector<float> v(static_cast<size_t>(rows * c));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 1.0f + 0.0005f * static_cast<float>(static_cast<int>(i % 7) - 3);
  v[static_cast<size_t>(17 * c + 5)] = NAN;
  v[static_cast<size_t>(1200 * c + 999)] = NAN;
  Tensor x = wok::from_vector(v, {rows, c});
  for (auto [name, fn] : std::vector<std::pair<const char*, Program>>{
           {"prod", [](auto& in) { return std::vector<Tensor>{wok::prod(in[0], {0})}; }},
           {"max", [](auto& in) { return std::vector<Tensor>{wok::max(in[0], {0})}; }},
           {"argmax", [](auto& in) { return std::vector<Tensor>{wok::argmax(in[0], {0})}; }},
           {"sum", [](auto& in) { return std::vector<Tensor>{wok::sum(in[0], {0})}; }}}) {
    Runs r = run_both(fn, {x});
    expect_close(r.jit[0], r.pre[0], 1e-5, name, 1e-3);
  }
}

}  // namespace
