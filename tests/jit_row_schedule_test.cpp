// Note [Next row prefetch] (jit/x86/row_codegen.cpp): a row kernel that
// walks its row more than once asks for the next row's inputs during the
// phase with the most work, and for its output rows (prefetchw) in the
// phase before the first one writing them; a one-pass kernel, a kernel over
// one row, and an input that is the same for every row do not. Prefetches
// change no result, so the check is on the generated code, for both
// instruction sets, and on the schedule (Notes [Row loop unrolling] and
// [Spilled values] in jit/x86/row_schedule.*). Also softmax's exp without
// its upper clamp (Note [Nonpositive exp arguments], instr_emitter.cpp),
// scaling by 2^n in one factor on AVX2 (Note [One-factor exp scaling],
// math_emitter.cpp), and in a half type at half grade (Note [Half-grade
// exp], instr_emitter.cpp).
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "jit_x86_test_util.h"
#include "test_util.h"
#include "wok/jit/plan.h"
#include "wok/jit/x86/instr_emitter.h"
#include "wok/jit/x86/row_schedule.h"
#include "wok/jit/x86/x86_codegen.h"

namespace {

using wok::DType;
using wok::Tensor;

std::vector<std::string> row_kernel_listings(const Tensor& out, wok::CpuIsa isa) {
  return wt::kernel_listings(out, wok::jit::KernelKind::kRow, isa);
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Lines of `text` that hold both `a` and `b`.
int count_lines(const std::string& text, const std::string& a, const std::string& b) {
  int n = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) n += line.find(a) != std::string::npos && line.find(b) != std::string::npos;
  return n;
}

TEST(JitRowPrefetch, MultiPassRowKernelsAskForTheNextRow) {
  for (wok::CpuIsa isa : {wok::CpuIsa::kAvx2, wok::CpuIsa::kAvx512}) {
    SCOPED_TRACE(std::string(wok::cpu_isa_name(isa)));
    for (DType t : {DType::kFloat32, DType::kFloat16}) {
      const Tensor x = wok::cast(wok::rand({64, 1000}, 1), t);
      // softmax: max, then exp and its sum, then the division.
      std::vector<std::string> k = row_kernel_listings(wok::softmax(x, 1), isa);
      ASSERT_EQ(k.size(), 1u);
      EXPECT_GT(count(k[0], "prefetcht1"), 0) << k[0];
      EXPECT_GT(count(k[0], "prefetchw"), 0) << k[0];
      // layer_norm with a weight the same for every row: only x is asked for.
      const Tensor w = wok::cast(wok::rand({1000}, 2), t);
      k = row_kernel_listings(wok::layer_norm(x) * w, isa);
      ASSERT_EQ(k.size(), 1u);
      EXPECT_GT(count(k[0], "prefetcht1"), 0) << k[0];
      // One pass over the row: nothing to overlap.
      k = row_kernel_listings(wok::sum(wok::exp(x), {1}), isa);
      ASSERT_EQ(k.size(), 1u);
      EXPECT_EQ(count(k[0], "prefetcht1"), 0) << k[0];
      // One row: no next row.
      k = row_kernel_listings(wok::softmax(wok::cast(wok::rand({1000}, 3), t), 0), isa);
      ASSERT_EQ(k.size(), 1u);
      EXPECT_EQ(count(k[0], "prefetcht1"), 0) << k[0];
    }
  }
}

// softmax's phases: 0 the max, 1 exp(x - max) and its sum, 2 the division.
TEST(JitRowSchedule, SoftmaxFetchesDuringItsExpPassAndUnrollsItsMaxPass) {
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(std::string(wok::dtype_name(t)));
    // x is stored in its dtype, not cast inside the kernel.
    const Tensor x = wok::cast(wok::rand({64, 1000}, 1), t);
    wok::eval({x});
    // What the generator schedules: the program in registers' dtypes.
    std::vector<wok::jit::FusedKernelSpec> specs = wt::compute_row_kernel_specs(wok::softmax(x, 1));
    ASSERT_EQ(specs.size(), 1u);
    const wok::jit::x86::RowSchedule sched(specs[0]);
    ASSERT_EQ(sched.phases(), 3);
    EXPECT_EQ(sched.prefetch_phase(), 1);
    EXPECT_EQ(sched.unroll(0), 4);
    EXPECT_EQ(sched.unroll(1), 2);
    EXPECT_EQ(sched.unroll(2), 4);
    // Only the exp pass is software-pipelined (Note [Software-pipelined
    // steps] in jit/x86/step_pipeline.h).
    EXPECT_FALSE(sched.pipelined(0));
    EXPECT_TRUE(sched.pipelined(1));
    EXPECT_FALSE(sched.pipelined(2));
    if (t == DType::kFloat32) {
      // exp(x - max) is kept in the output's row from phase 1 on: its
      // lines are asked for during phase 0. No scratch.
      EXPECT_EQ(sched.first_write_phase(0), 1);
      EXPECT_EQ(sched.scratch_bytes_per_column(), 0);
    } else {
      // Scratch rows hold the widened input (from phase 0) and exp(x - max)
      // (from phase 1), both float32; the output's row is first written by
      // phase 2.
      EXPECT_EQ(sched.first_write_phase(0), 2);
      EXPECT_EQ(sched.scratch_bytes_per_column(), 8);
    }
  }
}

// layer_norm: no transcendental; the next row is fetched in the last of
// the phases of equal work, and every phase is unrolled four vectors.
TEST(JitRowSchedule, LightPhasesUnrollFourVectors) {
  std::vector<wok::jit::FusedKernelSpec> specs = wt::row_kernel_specs(wok::layer_norm(wok::rand({64, 1000}, 1)));
  ASSERT_EQ(specs.size(), 1u);
  const wok::jit::x86::RowSchedule sched(specs[0]);
  for (int p = 0; p < sched.phases(); ++p) {
    EXPECT_EQ(sched.unroll(p), 4) << p;
    EXPECT_FALSE(sched.pipelined(p)) << p;
  }
  EXPECT_EQ(sched.first_write_phase(0), sched.phases() - 1);
}

// A phase computes what its sinks read, and a reduction's result is a row
// value: layer_norm's last phase reads the variance, not (x - mean)^2, which
// only the phase summing it computes (it was computed again there, a dead
// multiply per vector, and float32 layer_norm's last pass did the same).
TEST(JitRowSchedule, APhaseDoesNotRecomputeAnEarlierReductionsOperand) {
  for (DType t : {DType::kFloat32, DType::kBFloat16}) {
    SCOPED_TRACE(std::string(wok::dtype_name(t)));
    const Tensor x = wok::cast(wok::rand({64, 1000}, 1), t);
    wok::eval({x});
    std::vector<wok::jit::FusedKernelSpec> specs = wt::compute_row_kernel_specs(wok::layer_norm(x));
    ASSERT_EQ(specs.size(), 1u);
    const wok::jit::FusedKernelSpec& spec = specs[0];
    const wok::jit::x86::RowSchedule sched(spec);
    const auto& ins = spec.program.instrs;
    int square = -1, variance = -1;
    for (size_t i = 0; i < ins.size(); ++i)
      if (ins[i].op == wok::ScalarOp::kReduceSum && ins[ins[i].args[0]].op == wok::ScalarOp::kMul) {
        variance = static_cast<int>(i);
        square = ins[i].args[0];
      }
    ASSERT_GE(square, 0);
    EXPECT_TRUE(sched.phase_need(sched.accum_phase(variance))[square]);
    EXPECT_EQ(sched.phases(), 3);
    EXPECT_FALSE(sched.phase_need(sched.phases() - 1)[square]);
  }
}

// exp(x - max(x)) cannot overflow: no vminps clamp, which exp of another
// row-dependent shift keeps. (The results are the same bits either way;
// the softmax tests compare them.) And on AVX-512 the exp loop is pipelined
// (Note [Software-pipelined steps]): its stage A reads a step ahead of stage
// B. A float32 step is two zmm vectors (32 columns, 128 bytes), so its
// loads reach 128 + 64 bytes past the column register, where the plain
// loop's reach 64. (Its results: tests/jit_step_pipeline_test.cpp; AVX2
// interleaves instead, checked below.)
// On AVX2 the same exp scales by one power of two (no vpsrad halving n),
// the shifted exp of another row value by two; and its one multiply is
// by that power, the 2^-64 being in the polynomial's coefficients (Note
// [One-factor exp scaling]): no vmulps reads a constant.
TEST(JitRowSchedule, SoftmaxExpSkipsItsUpperClampAndReadsAStepAhead) {
  const Tensor x = wok::rand({64, 1000}, 1);
  wok::eval({x});
  for (wok::CpuIsa isa : {wok::CpuIsa::kAvx2, wok::CpuIsa::kAvx512}) {
    SCOPED_TRACE(std::string(wok::cpu_isa_name(isa)));
    const bool avx2 = isa == wok::CpuIsa::kAvx2;
    std::vector<std::string> k = row_kernel_listings(wok::softmax(x, 1), isa);
    ASSERT_EQ(k.size(), 1u);
    EXPECT_EQ(count(k[0], "vminps"), 0) << k[0];
    if (!avx2) EXPECT_GT(count(k[0], "*4+192]"), 0) << k[0];
    EXPECT_EQ(count(k[0], "vpsrad"), 0) << k[0];
    if (avx2) {
      EXPECT_EQ(count_lines(k[0], "vmulps", "ptr ["), 0) << k[0];
    }
    k = row_kernel_listings(wok::exp(x - wok::mean(x, {1}, true)), isa);
    ASSERT_EQ(k.size(), 1u);
    EXPECT_GT(count(k[0], "vminps"), 0) << k[0];
    EXPECT_EQ(count(k[0], "vpsrad") > 0, avx2) << k[0];
  }
}

// The body of the loop of `listing` that walks the exp pass: the one whose
// body fetches the next row and has multiply-adds.
std::vector<std::string> exp_loop_body(const std::string& listing) {
  std::vector<std::string> lines;
  std::istringstream in(listing);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const std::regex label(R"(^(L\d+):$)"), back(R"(^(?:short )?j\w+ (L\d+)$)");
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_match(lines[i], m, label)) at[m[1]] = i;
    if (!std::regex_match(lines[i], m, back) || !at.count(m[1])) continue;
    std::vector<std::string> body(lines.begin() + static_cast<std::ptrdiff_t>(at[m[1]]) + 1,
                                  lines.begin() + static_cast<std::ptrdiff_t>(i));
    auto has = [&](const char* what) {
      return std::any_of(body.begin(), body.end(), [&](const std::string& l) { return l.find(what) == 0; });
    };
    if (has("prefetcht1") && has("vfmadd")) return body;
  }
  return {};
}

// Note [Loop constants on AVX2] (jit/x86/vec_emitter.cpp): softmax's exp
// loop on AVX2 interleaves its two copies (two multiply-adds in a row write
// different registers, where one copy's Horner chain writes one), loads no
// constant into a register per vector (the clamp, the magic number and the
// polynomial's first addend are loop constants), adds each copy's exp into
// its accumulator in place, and reduces the clamped argument in its own
// register (exp_reduce's x_scratch: no copy of it).
TEST(JitRowSchedule, Avx2ExpLoopInterleavesAndKeepsItsConstantsInRegisters) {
  const Tensor x = wok::rand({64, 1000}, 1);
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(std::string(wok::dtype_name(t)));
    std::vector<std::string> k = row_kernel_listings(wok::softmax(wok::cast(x, t), 1), wok::CpuIsa::kAvx2);
    ASSERT_EQ(k.size(), 1u);
    const std::vector<std::string> body = exp_loop_body(k[0]);
    ASSERT_FALSE(body.empty()) << k[0];
    std::string text;
    for (const std::string& l : body) text += l + "\n";
    const std::regex fma213(R"(^vfmadd213ps (ymm\d+),)"), in_place(R"(^vaddps (ymm\d+), \1, ymm\d+$)");
    int alternating = 0, accumulated = 0, constant_loads = 0;
    for (size_t i = 0; i < body.size(); ++i) {
      std::smatch a, b;
      if (i + 1 < body.size() && std::regex_search(body[i], a, fma213) && std::regex_search(body[i + 1], b, fma213))
        alternating += a[1] != b[1];
      accumulated += std::regex_match(body[i], in_place);
      constant_loads += body[i].find("vmovups ymm") == 0 && body[i].find("ptr [L") != std::string::npos;
    }
    EXPECT_GT(alternating, 0) << text;
    EXPECT_EQ(accumulated, 2) << text;
    EXPECT_EQ(constant_loads, 0) << text;
    // Per copy, the magic number and the first addend copied into the
    // multiply-adds that write them; the reduction by ln2 (in two parts for
    // float32, one at half grade) writes the clamped argument.
    EXPECT_EQ(count(text, "vmovaps"), 4) << text;
    EXPECT_EQ(count(text, "vfnmadd231ps"), t == DType::kFloat32 ? 4 : 2) << text;
  }
}

// Note [One-factor exp scaling]: exp(x - max) scaled by one power of two
// gives vm::exp's bits (the precompiled kernels run the ops one at a time),
// over differences from 0 to past the clamp, results down to float32's
// and float64's subnormals, and a row holding a nan.
TEST(JitOneFactorExp, ShiftedExpGivesThePrecompiledBits) {
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(std::string(wok::dtype_name(t)));
    const double span = t == DType::kFloat32 ? 110.0 : 760.0;
    std::vector<double> v;
    const int64_t rows = 6, cols = 1001;
    for (int64_t k = 0; k < rows * cols; ++k) v.push_back(-span * static_cast<double>((k * 7919) % cols) / cols);
    v[3 * cols + 5] = std::nan("");
    const Tensor x = wok::cast(wok::from_vector(v, {rows, cols}), t);
    wok::eval({x});
    auto f = [&] { return wok::exp(x - wok::max(x, {1}, true)); };
    wok::set_backend(wok::Backend::kJit);
    const Tensor jit = f();
    wok::eval({jit});
    wok::set_backend(wok::Backend::kPrecompiled);
    const Tensor pre = f();
    wok::eval({pre});
    wok::set_backend(wok::Backend::kJit);
    const std::vector<double> a = wok::cast(jit, DType::kFloat64).to_vector<double>();
    const std::vector<double> b = wok::cast(pre, DType::kFloat64).to_vector<double>();
    const double tiny = t == DType::kFloat32 ? 0x1p-126 : 0x1p-1022;
    int subnormal = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      ASSERT_TRUE(wt::same_value(a[k], b[k])) << "at " << k << ": jit " << a[k] << ", precompiled " << b[k];
      subnormal += b[k] > 0 && b[k] < tiny;
    }
    EXPECT_GT(subnormal, 0);
  }
}

// Note [Half-grade exp]: which exps take it (the results' error is checked
// in tests/jit_half_test.cpp), and the code: ln2 in one part, so one
// vfnmadd per exp to the float32 exp's two, and six fused multiply-adds
// (the reduction's and five of the polynomial) to its seven.
std::vector<bool> exp_grades(const Tensor& out) {
  std::vector<bool> grades;
  // What the generator emits: the program in its compute dtypes.
  for (const wok::jit::FusedKernelSpec& spec : wt::compute_row_kernel_specs(out)) {
    const wok::ScalarProgram& program = spec.program;
    for (size_t i = 0; i < program.instrs.size(); ++i)
      if (program.instrs[i].op == wok::ScalarOp::kExp)
        grades.push_back(wok::jit::x86::half_grade_exp(program, static_cast<int32_t>(i)));
  }
  return grades;
}

TEST(JitRowSchedule, HalfSoftmaxTakesTheHalfGradeExp) {
  const Tensor x32 = wok::rand({8, 100}, 1);
  using G = std::vector<bool>;
  EXPECT_EQ(exp_grades(wok::softmax(x32, 1)), G{false});  // a float32 output
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(std::string(wok::dtype_name(t)));
    const Tensor x = wok::cast(x32, t);
    EXPECT_EQ(exp_grades(wok::softmax(x, 1)), G{true});
    EXPECT_EQ(exp_grades(wok::sum(wok::exp(x), {1})), G{true});
    EXPECT_EQ(exp_grades(wok::softmax(wok::cast(x, DType::kFloat32), 1)), G{false});
    EXPECT_EQ(exp_grades(wok::log_softmax(x, 1)), G{false});  // the sum meets a log
    EXPECT_EQ(exp_grades(wok::sum(wok::exp(x) - 1.0, {1})), G{false});  // a difference
    const Tensor e = wok::exp(x - wok::max(x, {1}, true));
    EXPECT_EQ(exp_grades(e - e / wok::sum(e, {1}, true)), G{false});
    for (wok::CpuIsa isa : {wok::CpuIsa::kAvx2, wok::CpuIsa::kAvx512}) {
      SCOPED_TRACE(std::string(wok::cpu_isa_name(isa)));
      const std::vector<std::string> half = row_kernel_listings(wok::softmax(x, 1), isa);
      const std::vector<std::string> single = row_kernel_listings(wok::softmax(x32, 1), isa);
      ASSERT_EQ(half.size(), 1u);
      ASSERT_EQ(single.size(), 1u);
      const int half_fnma = count(half[0], "vfnmadd"), single_fnma = count(single[0], "vfnmadd");
      ASSERT_GT(half_fnma, 0);
      EXPECT_EQ(count(half[0], "vfmadd"), 6 * half_fnma) << half[0];
      EXPECT_EQ(2 * count(single[0], "vfmadd"), 7 * single_fnma) << single[0];
    }
  }
}

}  // namespace
