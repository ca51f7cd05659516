// Note [Software-pipelined steps] (jit/x86/step_pipeline.h): a row
// kernel's phase that computes a transcendental runs its unrolled loop as a
// two-stage pipeline, stage A of the next step ahead of stage B of the
// current one. It computes the bits of the plain loop. Checked against the
// precompiled kernels over row lengths on both sides of every boundary the
// pipelined loop has (fewer than two steps, a step more, a 1024-column
// block and a step more): bit for bit where they compute the same thing
// (float32 exp(x - max)), within a tolerance where the JIT's sums
// reassociate or the precompiled kernels round to a half type between ops.
// Also a kernel the pipeliner declines (its mask registers would be
// carried). The pipelining is AVX-512's: on AVX2 the same loops interleave
// their copies (Note [Loop constants on AVX2] in jit/x86/vec_emitter.cpp),
// and these tests check that loop's boundaries on an AVX2 host and in the
// capped AVX2 entry of tests/CMakeLists.txt.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using wok::DType;
using wok::Tensor;

// JIT and precompiled results of `f`: bit for bit when `tolerance` is 0
// (nan payloads aside: a nan is a nan), else within `tolerance` relative
// plus `absolute` (sums reassociate: the JIT adds in vector lanes).
::testing::AssertionResult agree(const std::function<Tensor()>& f, double tolerance = 0, double absolute = 0) {
  // Evaluated before the cast to float64, which the JIT would otherwise
  // fuse in, skipping the rounding to a half type.
  auto run = [&](wok::Backend b) {
    wok::set_backend(b);
    Tensor r = f();
    wok::eval({r});
    return wok::cast(r, DType::kFloat64).to_vector<double>();
  };
  std::vector<double> pre = run(wok::Backend::kPrecompiled);
  std::vector<double> jit = run(wok::Backend::kJit);
  if (pre.size() != jit.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (size_t i = 0; i < pre.size(); ++i) {
    if (std::isnan(pre[i]) && std::isnan(jit[i])) continue;
    const bool ok = tolerance == 0 ? std::memcmp(&pre[i], &jit[i], sizeof(double)) == 0
                                   : std::fabs(pre[i] - jit[i]) <= tolerance * std::fabs(pre[i]) + absolute;
    if (!ok) return ::testing::AssertionFailure() << "element " << i << ": precompiled " << pre[i] << ", JIT " << jit[i];
  }
  return ::testing::AssertionSuccess();
}

const int64_t kLengths[] = {1,   15,  16,  17,  31,  32,  33,  47,  48,  63,   64,   65,   95,   96,  97,
                            127, 128, 129, 255, 256, 257, 1023, 1024, 1025, 1055, 1056, 1057, 1088, 2100};

TEST(JitStepPipeline, RowsOfEveryLengthMatchThePrecompiledKernels) {
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(std::string(wok::dtype_name(t)));
    // The precompiled kernels round x - max to the half type before the
    // exp (an error of up to 2^-8 for float16 and 2^-5 for bfloat16 in the
    // exponent at |x - max| < 8); a mistake of the pipeline (a wrong column
    // or register) is far larger.
    // float16's subnormals (below 6e-5) are 6e-8 apart: an absolute term.
    const double tol = t == DType::kFloat32 ? 1e-5 : t == DType::kFloat16 ? 1e-2 : 1e-1;
    const double abs = t == DType::kFloat16 ? 1e-6 : 0;
    for (int64_t len : kLengths) {
      SCOPED_TRACE("row length " + std::to_string(len));
      const Tensor x = wok::cast(wok::rand({3, len}, 11) * 8.0 - 4.0, t);
      wok::eval({x});
      // The pipelined phase writes the output: in float32 every bit as the
      // precompiled kernel's (which rounds x - max to a half type before
      // the exp, where the fused kernel does not).
      EXPECT_TRUE(agree([&] { return wok::exp(x - wok::max(x, {1}, true)); }, t == DType::kFloat32 ? 0 : tol, abs));
      // The pipelined phase sums.
      EXPECT_TRUE(agree([&] { return wok::softmax(x, 1); }, tol, abs));
      EXPECT_TRUE(agree([&] { return wok::log_softmax(x, 1); }, tol, abs));
      // One phase: the reduction's own loop is pipelined.
      EXPECT_TRUE(agree([&] { return wok::sum(wok::sigmoid(x), {1}); }, tol, abs));
    }
  }
}

TEST(JitStepPipeline, DeclinedKernelsStayCorrect) {
  // float64 pow's step keeps AVX-512 masks across its middle: declined.
  for (int64_t len : {1, 17, 64, 1025}) {
    SCOPED_TRACE("row length " + std::to_string(len));
    const Tensor x = wok::rand({3, len}, 5, DType::kFloat64) * 4.0 + 0.5;
    const Tensor y = wok::rand({3, len}, 6, DType::kFloat64) * 3.0;
    wok::eval({x, y});
    EXPECT_TRUE(agree([&] { return wok::sum(wok::pow(x, y), {1}); }, 1e-12));
  }
}

}  // namespace
