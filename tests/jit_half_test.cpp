// The JIT's float16 and bfloat16 kernels (Note [Half types in registers] in
// jit/x86/vec_emitter.h). One op gives the precompiled kernel's bits over
// every bit pattern (both compute in float32 and round once); a fused chain
// is one kernel that rounds only its output, so it is nearer the float64
// value than the same chain run op by op (docs/numerics.md); reductions,
// softmax and layer_norm fuse, with float32 accumulators.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "jit_x86_test_util.h"
#include "test_util.h"
#include "wok/frontend/dispatch.h"
#include "wok/jit/shadow.h"
#include "wok/runtime/vec_math_coeffs.h"

namespace {

using wok::bfloat16;
using wok::DType;
using wok::half;
using wok::Tensor;

class JitHalf : public wt::JitLaunchCounts {};

// Every bit pattern, then 7 more (a partial last vector: the bounce tail).
template <typename H>
std::vector<H> every_pattern() {
  std::vector<H> v;
  for (uint32_t b = 0; b < 65536 + 7; ++b) v.push_back(H::from_bits(static_cast<uint16_t>((b * 40503u) & 0xFFFF)));
  return v;
}

template <typename H>
void every_op_matches_the_precompiled_kernel() {
  const DType t = wok::dtype_of<H>();
  const std::vector<H> xs = every_pattern<H>();
  std::vector<H> ys(xs.rbegin(), xs.rend());
  const Tensor x = wok::from_vector(xs), y = wok::from_vector(ys);
  int ops = 0;
  for (const wok::OpInfo& info : wt::builtin_elementwise_ops()) {
    const std::string& name = info.name;
    if (name == "where" || info.inputs.size() > 2) continue;
    const wok::DTypeCase* c = nullptr;
    for (const wok::DTypeCase& d : info.dtypes)
      if (d.input == t && d.outputs.size() == 1) c = &d;
    if (!c) continue;
    const std::vector<Tensor> in = info.inputs.size() == 1 ? std::vector<Tensor>{x} : std::vector<Tensor>{x, y};
    wok::set_backend(wok::Backend::kJit);
    const Tensor jit = wok::call1(name, in);
    wok::eval({jit});
    wok::set_backend(wok::Backend::kPrecompiled);
    const Tensor pre = wok::call1(name, in);
    wok::eval({pre});
    wok::set_backend(wok::Backend::kJit);
    ++ops;
    wok::visit_any_dtype(c->outputs[0], [&](auto tag) {
      using T = decltype(tag);
      const std::vector<T> a = jit.template to_vector<T>(), b = pre.template to_vector<T>();
      for (size_t k = 0; k < a.size(); ++k)
        if (!wt::same_value(a[k], b[k])) {
          ADD_FAILURE() << name << " on " << wok::dtype_name(t) << " [" << k << "] x = " << static_cast<float>(xs[k])
                        << ": jit " << wt::fmt(static_cast<double>(wok::Scalar::of(a[k]).template to<double>()))
                        << ", precompiled " << wt::fmt(static_cast<double>(wok::Scalar::of(b[k]).template to<double>()));
          break;
        }
    });
  }
  EXPECT_GT(ops, 40);
}

TEST_F(JitHalf, EveryFloat16OpGivesThePrecompiledBits) { every_op_matches_the_precompiled_kernel<half>(); }
TEST_F(JitHalf, EveryBFloat16OpGivesThePrecompiledBits) { every_op_matches_the_precompiled_kernel<bfloat16>(); }

// The chains of docs/numerics.md ("Fused half-precision chains"), 20 ops
// each: ten rounds of y = y * 1.1 - 0.05 (every op rounds, op by op, and
// the errors add up), and four rounds of y = tanh(y * 1.7 + 0.1); y = y * y
// + 0.5 (a transcendental, and values that saturate).
template <typename H>
Tensor chain(const Tensor& x, bool linear) {
  Tensor y = x;
  if (linear) {
    for (int r = 0; r < 10; ++r) y = y * 1.1 - 0.05;
    return y;
  }
  for (int r = 0; r < 4; ++r) {
    y = wok::tanh(y * 1.7 + 0.1);
    y = y * y + 0.5;
  }
  return y;
}

template <typename H>
double chain_reference(double x, bool linear) {
  // The plain numbers are float16 (bfloat16) constants: the reference uses
  // the same rounded values.
  auto in_h = [](double v) { return static_cast<double>(static_cast<float>(H(v))); };
  if (linear) {
    for (int r = 0; r < 10; ++r) x = x * in_h(1.1) - in_h(0.05);
    return x;
  }
  for (int r = 0; r < 4; ++r) {
    x = std::tanh(x * in_h(1.7) + in_h(0.1));
    x = x * x + in_h(0.5);
  }
  return x;
}

struct ChainError {
  double mean_ulps = 0, max_ulps = 0;
};

template <typename H>
ChainError chain_error(const std::vector<H>& xs, const Tensor& y, bool linear) {
  const std::vector<H> got = y.to_vector<H>();
  ChainError e;
  for (size_t k = 0; k < xs.size(); ++k) {
    const H want(chain_reference<H>(static_cast<float>(xs[k]), linear));
    const double d = wok::jit::ulp_distance(got[k], want);
    e.mean_ulps += d / static_cast<double>(xs.size());
    e.max_ulps = std::max(e.max_ulps, d);
  }
  return e;
}

template <typename H>
void fused_chain_is_one_kernel_and_more_accurate(bool linear) {
  std::vector<H> xs;
  for (int k = 0; k < 4096; ++k) xs.push_back(H(-2.0f + 4.0f * static_cast<float>(k) / 4096.0f));
  const Tensor x = wok::from_vector(xs);
  const Tensor fused = chain<H>(x, linear);
  EXPECT_EQ(wt::JitLaunchCounts::launches_of({fused}), 1) << "the chain is one generated kernel";
  wok::set_backend(wok::Backend::kPrecompiled);
  const Tensor unfused = chain<H>(x, linear);
  wok::eval({unfused});
  wok::set_backend(wok::Backend::kJit);
  const ChainError f = chain_error(xs, fused, linear), u = chain_error(xs, unfused, linear);
  std::printf("%s %s chain of 20 ops: fused %.3f ulps mean, %.0f max; op by op %.3f mean, %.0f max\n",
              std::string(wok::dtype_name(wok::dtype_of<H>())).c_str(), linear ? "linear" : "tanh", f.mean_ulps,
              f.max_ulps, u.mean_ulps, u.max_ulps);
  EXPECT_LE(f.max_ulps, 1) << "computed in float32, rounded once";
  EXPECT_LT(f.mean_ulps, u.mean_ulps) << "fusion rounds less, so it is more accurate";
}

TEST_F(JitHalf, Float16ChainsFuseAndRoundOnlyTheirOutputs) {
  fused_chain_is_one_kernel_and_more_accurate<half>(true);
  fused_chain_is_one_kernel_and_more_accurate<half>(false);
}
TEST_F(JitHalf, BFloat16ChainsFuseAndRoundOnlyTheirOutputs) {
  fused_chain_is_one_kernel_and_more_accurate<bfloat16>(true);
  fused_chain_is_one_kernel_and_more_accurate<bfloat16>(false);
}

TEST_F(JitHalf, SoftmaxLayerNormAndSumsAreOneKernelEach) {
  const int64_t rows = 33, cols = 1000;  // 1000: a partial last vector
  std::vector<half> v;
  for (int64_t k = 0; k < rows * cols; ++k) v.push_back(half(std::sin(0.37f * static_cast<float>(k)) * 3.0f));
  const Tensor x = wok::from_vector(v, {rows, cols});
  const Tensor s = wok::softmax(x, 1);
  const Tensor ln = wok::layer_norm(x);
  const Tensor total = wok::sum(x * x, {1});
  const Tensor col = wok::sum(x, {0});
  EXPECT_EQ(launches_of({s}), 1);
  EXPECT_EQ(launches_of({ln}), 1);
  EXPECT_EQ(launches_of({total}), 1);
  EXPECT_EQ(launches_of({col}), 1);
  wok::set_backend(wok::Backend::kPrecompiled);
  const Tensor s_ref = wok::softmax(wok::cast(x, DType::kFloat64), 1);
  const Tensor ln_ref = wok::layer_norm(wok::cast(x, DType::kFloat64));
  const Tensor total_ref = wok::sum(wok::cast(x, DType::kFloat64) * wok::cast(x, DType::kFloat64), {1});
  const Tensor col_ref = wok::sum(wok::cast(x, DType::kFloat64), {0});
  wok::eval({s_ref, ln_ref, total_ref, col_ref});
  wok::set_backend(wok::Backend::kJit);
  auto max_ulps = [](const Tensor& got, const Tensor& ref) {
    const std::vector<half> g = got.to_vector<half>();
    const std::vector<double> r = ref.to_vector<double>();
    double worst = 0;
    for (size_t k = 0; k < g.size(); ++k) worst = std::max(worst, wok::jit::ulp_distance(g[k], half(r[k])));
    return worst;
  };
  // float32 arithmetic, one rounding: within an ulp of the float64 value
  // rounded once (the sums of 1000 values lose a little in float32).
  EXPECT_LE(max_ulps(s, s_ref), 1);
  EXPECT_LE(max_ulps(ln, ln_ref), 1);
  EXPECT_LE(max_ulps(total, total_ref), 1);
  EXPECT_LE(max_ulps(col, col_ref), 1);
}

// A half-type softmax computes in float32 and rounds once: its results are
// the exact softmax rounded once, up to the float32 arithmetic's error and
// that of its half-grade exp (Note [Half-grade exp] in
// jit/x86/instr_emitter.cpp), 2^-21 relative; so each is the float32
// softmax's result rounded, or, for a value that near a rounding boundary,
// its neighbour, and rarely. Its float32 exp(x - max) does not fit the half
// output's row, so the kernel keeps it in a scratch row between phases
// rather than computing it twice (Note [Spilled values] in
// jit/x86/row_schedule.h); rows of each tail length, and a softmax of a
// softmax, whose second exp also goes there.
template <typename H>
void softmax_rounds_the_exact_softmax_once() {
  const DType t = wok::dtype_of<H>();
  for (int64_t cols : {1, 7, 16, 17, 100, 1000, 4099}) {
    const int64_t rows = 5;
    std::vector<float> v;
    for (int64_t k = 0; k < rows * cols; ++k) v.push_back(static_cast<float>(H(std::sin(0.61f * static_cast<float>(k)) * 4.0f)));
    const Tensor x32 = wok::from_vector(v, {rows, cols});
    const Tensor x = wok::cast(x32, t);
    wok::eval({x});
    for (bool twice : {false, true}) {
      auto f = [twice](const Tensor& in) { return twice ? wok::softmax(wok::softmax(in, 1), 1) : wok::softmax(in, 1); };
      const Tensor got = f(x);
      wok::reset_stats();
      wok::eval({got});
      EXPECT_EQ(wok::stats().kernel_launches, 1);
      const std::vector<H> g = got.template to_vector<H>();
      // The float32 kernel on the same (exactly widened) values, rounded.
      const std::vector<H> want = wok::cast(twice ? wok::softmax(wok::cast(wok::softmax(x32, 1), t), 1) : f(x32), t).template to_vector<H>();
      ASSERT_EQ(g.size(), want.size());
      int64_t moved = 0;
      for (size_t k = 0; k < g.size(); ++k) {
        // The inner softmax of two is rounded in the fused kernel only at
        // its outputs, where op by op it is rounded to the half type.
        ASSERT_LE(wok::jit::ulp_distance(g[k], want[k]), 1) << wok::dtype_name(t) << " softmax cols=" << cols << " at " << k;
        moved += g[k].bits != want[k].bits;
      }
      if (twice) continue;
      // About one float16 result in 2^10 may move (bfloat16: 2^13).
      EXPECT_LE(moved, static_cast<int64_t>(g.size()) / 128 + 1) << wok::dtype_name(t) << " cols=" << cols;
      // Each result is within half an ulp, plus 2^-16 relative, of the
      // float64 softmax of the same values: a rounding of a half-type
      // intermediate (2^-11 or 2^-8 relative) would show.
      for (int64_t r = 0; r < rows; ++r) {
        const float* row = v.data() + r * cols;
        double m = row[0], total = 0;
        for (int64_t c = 0; c < cols; ++c) m = std::max(m, static_cast<double>(row[c]));
        for (int64_t c = 0; c < cols; ++c) total += std::exp(row[c] - m);
        for (int64_t c = 0; c < cols; ++c) {
          const double exact = std::exp(row[c] - m) / total;
          const H h = g[r * cols + c];
          const double got_v = static_cast<float>(h);
          // The neighbour on the exact value's side: half its distance is
          // the rounding's bound.
          const H next = H::from_bits(static_cast<uint16_t>(exact >= got_v ? h.bits + 1 : h.bits - 1));
          const double step = std::abs(static_cast<double>(static_cast<float>(next)) - got_v);
          ASSERT_LE(std::abs(got_v - exact), 0.5 * step + 0x1p-16 * exact)
              << wok::dtype_name(t) << " softmax cols=" << cols << " row " << r << " col " << c << ": " << got_v << " for "
              << exact;
        }
      }
    }
  }
}
// The half-grade exp's constants (vmc::kLn2F, vmc::kExpHalfPolyF), in the
// JIT's order of operations (jit/x86/math_emitter.cpp): over a dense sweep
// of float32 x in [-104, 0], within 2^-20.9 of e^x, relative (the
// documented 2^-21.0 was measured over every float32 x there).
TEST(HalfGradeExp, ItsPolynomialIsWithinTwoToTheMinus21) {
  namespace vmc = wok::vmc;
  double worst = 0;
  for (uint32_t bits = 0x80000000u;; bits += 97) {
    const float x = std::bit_cast<float>(bits);
    if (!(x >= -104.0f)) break;
    const float tt = std::fma(x, vmc::kLog2eF, vmc::kRoundMagicF);
    const float nf = tt - vmc::kRoundMagicF;
    const float r = std::fma(-nf, vmc::kLn2F, x);
    float q = std::fma(r, vmc::kExpHalfPolyF[0], vmc::kExpHalfPolyF[1]);
    for (size_t i = 2; i < std::size(vmc::kExpHalfPolyF); ++i) q = std::fma(q, r, vmc::kExpHalfPolyF[i]);
    const double got = std::ldexp(static_cast<double>(q), static_cast<int>(nf));  // 2^n exactly
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(got - want) / want);
  }
  EXPECT_LE(worst, std::exp2(-20.9));
  EXPECT_GE(worst, std::exp2(-23.0));  // the degree 5 polynomial, not float32's degree 6
}

TEST_F(JitHalf, Float16SoftmaxRoundsTheExactSoftmaxOnce) { softmax_rounds_the_exact_softmax_once<half>(); }
TEST_F(JitHalf, BFloat16SoftmaxRoundsTheExactSoftmaxOnce) { softmax_rounds_the_exact_softmax_once<bfloat16>(); }

// float32 -> bfloat16 in generated code, against the scalar conversion
// (which tests/half_test.cpp checks against a reference), over every
// bfloat16 pattern's float32 neighbourhood: ties, the values either side,
// subnormals, NaNs with every payload, the overflow to infinity. Once as a
// store (a cast that is the kernel's output), once as a cast inside the
// kernel followed by more arithmetic. With AVX512-BF16 both take
// vcvtneps2bf16 and, for a vector holding a subnormal, the integer code
// (Note [bfloat16 stores] in jit/x86/vec_emitter.h); WOK_CPU_ISA=avx512
// and avx2 (capped_isa_* in tests/CMakeLists.txt) run the integer code.
TEST_F(JitHalf, Float32ToBFloat16MatchesTheScalarConversion) {
  std::vector<float> xs;
  for (uint32_t top = 0; top < 65536; ++top)
    for (uint32_t low : {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu})
      xs.push_back(std::bit_cast<float>(top << 16 | low));
  // Vectors of all-normal values between the subnormal ones: both paths
  // run in one kernel.
  for (int k = 0; k < 4099; ++k) xs.push_back(1.0f + static_cast<float>(k) * 0x1p-20f);
  const Tensor x = wok::from_vector(xs);
  const Tensor stored = wok::cast(x * 1.0f, DType::kBFloat16);
  const Tensor inside = wok::cast(wok::cast(x * 1.0f, DType::kBFloat16), DType::kFloat32) * 1.0f;
  EXPECT_EQ(launches_of({stored}), 1);
  EXPECT_EQ(launches_of({inside}), 1);
  const std::vector<bfloat16> s = stored.to_vector<bfloat16>();
  const std::vector<float> in = inside.to_vector<float>();
  for (size_t k = 0; k < xs.size(); ++k) {
    const uint16_t want = bfloat16(xs[k]).bits;
    ASSERT_EQ(s[k].bits, want) << std::hex << "stored, float bits 0x" << std::bit_cast<uint32_t>(xs[k]);
    const float w = bfloat16::from_bits(want);
    ASSERT_TRUE(std::bit_cast<uint32_t>(in[k]) == std::bit_cast<uint32_t>(w) || (std::isnan(in[k]) && std::isnan(w)))
        << std::hex << "inside a kernel, float bits 0x" << std::bit_cast<uint32_t>(xs[k]);
  }
}

// Note [bfloat16 pairs] (jit/x86/x86_codegen.cpp): on AVX2 an elementwise
// kernel whose streamed operands are all bfloat16 loads and stores them
// sixteen at a time, in even/odd order. Its results are the same program's
// in float32 on the widened values, rounded once, bit for bit: rows of
// every length from 1 to 80 (pairs, the one-vector loop, the tail), an
// input broadcast along the rows, a per-row scalar, inputs running through
// every bfloat16 pattern (NaNs, infinities, subnormals), and a body with an
// exp (its pairs interleaved, Note [Interleaved copies]). The AVX2 listing
// shows the pairs (vpblendw) only where every streamed operand is bfloat16.
TEST_F(JitHalf, BFloat16PairsKeepTheBits) {
  auto p1 = [](const Tensor& a, const Tensor& b, const Tensor& row, const Tensor& per_row) {
    return ((a * 2.0f + b) * 0.5f - a) * b + row * per_row + 1.0f;
  };
  auto heavy = [](const Tensor& a, const Tensor& b, const Tensor&, const Tensor&) { return wok::exp(a) * b - 0.25f; };
  const int64_t rows = 3;
  uint32_t pattern = 0;
  auto next = [&pattern] { return bfloat16::from_bits(static_cast<uint16_t>((pattern++ * 40503u) & 0xFFFF)); };
  for (int64_t cols = 1; cols <= 80; ++cols) {
    std::vector<bfloat16> a, b, row, per_row;
    for (int64_t k = 0; k < rows * cols; ++k) a.push_back(next());
    for (int64_t k = 0; k < rows * cols; ++k) b.push_back(bfloat16(0.5f + static_cast<float>(k % 7) * 0.37f));
    for (int64_t k = 0; k < cols; ++k) row.push_back(next());
    for (int64_t k = 0; k < rows; ++k) per_row.push_back(bfloat16(1.5f - static_cast<float>(k)));
    const std::vector<Tensor> in = {wok::from_vector(a, {rows, cols}), wok::from_vector(b, {rows, cols}),
                                    wok::from_vector(row, {1, cols}), wok::from_vector(per_row, {rows, 1})};
    std::vector<Tensor> in32;
    for (const Tensor& t : in) in32.push_back(wok::cast(t, DType::kFloat32));
    for (auto* f : {+p1, +heavy}) {
      const Tensor got = f(in[0], in[1], in[2], in[3]);
      EXPECT_EQ(launches_of({got}), 1);
      const Tensor want = wok::cast(f(in32[0], in32[1], in32[2], in32[3]), DType::kBFloat16);
      const std::vector<bfloat16> g = got.to_vector<bfloat16>(), w = want.to_vector<bfloat16>();
      for (size_t k = 0; k < g.size(); ++k)
        ASSERT_EQ(g[k].bits, w[k].bits) << (f == +p1 ? "p1" : "exp") << " cols=" << cols << " at " << k;
    }
  }
  const Tensor a = wok::cast(wok::rand({4, 64}, 1), DType::kBFloat16), b = wok::cast(wok::rand({4, 64}, 2), DType::kBFloat16);
  const Tensor f = wok::cast(b, DType::kFloat32);
  wok::eval({a, b, f});
  auto listing = [](const Tensor& out) {
    const std::vector<std::string> l = wt::kernel_listings(out, wok::jit::KernelKind::kElementwise, wok::CpuIsa::kAvx2);
    EXPECT_EQ(l.size(), 1u);
    return l.size() == 1 ? l[0] : std::string();
  };
  const std::string pairs = listing(a * b + 1.0f);
  EXPECT_NE(pairs.find("vpblendw"), std::string::npos) << pairs;
  EXPECT_NE(pairs.find("vpmovzxwd"), std::string::npos) << "the one-vector loop and the tail widen as before\n" << pairs;
  for (const Tensor& mixed : {a * f + 1.0f, wok::cast(a * b, DType::kFloat32)}) {
    const std::string l = listing(mixed);
    EXPECT_EQ(l.find("vpblendw"), std::string::npos) << "a float32 operand keeps element order\n" << l;
  }
}

}  // namespace
