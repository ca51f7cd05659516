// What follows a convolution in a network, fused under the JIT: the launch
// counts of conv2d + bias + relu, of batch norm (x * scale + shift with
// [C, 1, 1] tensors) + residual add + relu, of relu6, silu and gelu
// epilogues, and of two convolutions in a residual block, each result
// against the unfused float64 reference (conv_reference.h); then the
// precompiled kernels and the JIT compared on the same programs.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <functional>
#include <string>
#include <vector>

#include "conv_reference.h"
#include "test_util.h"

namespace {

using namespace wct;

// Geometries for the fused programs: a 3x3 with odd sizes and channel
// counts off the vector width, a 1x1 over several tiles of output
// channels, ResNet's 7x7 stride 2 stem, stride 2 with dilation 2, and
// groups 2.
const std::vector<ConvCase>& fusion_cases() {
  static const std::vector<ConvCase> cases = {
      {.n = 1, .c = 17, .h = 13, .w = 11, .o = 33, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}},
      {.n = 3, .c = 33, .h = 7, .w = 6, .o = 64, .kh = 1, .kw = 1},
      {.n = 1, .c = 3, .h = 23, .w = 21, .o = 64, .kh = 7, .kw = 7, .stride = {2, 2}, .pad = {3, 3, 3, 3}},
      {.n = 2, .c = 8, .h = 12, .w = 11, .o = 96, .kh = 3, .kw = 3, .stride = {2, 2}, .pad = {2, 2, 2, 2},
       .dilation = {2, 2}},
      {.n = 1, .c = 8, .h = 9, .w = 9, .o = 12, .kh = 3, .kw = 3, .pad = {1, 0, 2, 1}, .groups = 2},
  };
  return cases;
}

// The output's shape.
Shape out_shape(const ConvCase& p) { return {p.n, p.o, p.oh(), p.ow()}; }

std::string name_of(DType t, const ConvCase& p) { return wt::dname(t) + " " + p.str(); }

// ---- launch counts under the JIT ----------------------------------------------------

// The elementwise chain that consumes a conv2d's result runs in the
// implicit GEMM's epilogue: one launch per convolution.
class ConvFusion : public wt::JitLaunchCounts {};

TEST_F(ConvFusion, PlainConvIsOneLaunch) {
  for (DType t : kFloatTypes)
    for (const ConvCase& p : fusion_cases()) {
      const ConvOperands in = conv2d_operands(t, p, 100);
      Tensor y = run_conv2d(in, p, false);
      EXPECT_EQ(launches_of({y}), 1) << "conv2d " << name_of(t, p);
      EXPECT_TRUE(matches(y, expected_conv2d(in, p, false), "conv2d " + name_of(t, p)));
    }
}

TEST_F(ConvFusion, BiasReluIsOneLaunch) {
  for (DType t : kFloatTypes)
    for (const ConvCase& p : fusion_cases()) {
      const ConvOperands in = conv2d_operands(t, p, 110);
      Tensor y = wok::relu(run_conv2d(in, p, true));
      EXPECT_EQ(launches_of({y}), 1) << "relu(conv2d(x, w, b)) " << name_of(t, p);
      EXPECT_TRUE(matches(y, ref_relu(expected_conv2d(in, p, true)), "relu(conv2d(x, w, b)) " + name_of(t, p)));
    }
}

// The bias written as the user's own broadcast add, [O, 1, 1].
TEST_F(ConvFusion, UserBiasAddReluIsOneLaunch) {
  const ConvCase& p = fusion_cases()[0];
  for (DType t : kFloatTypes) {
    const ConvOperands in = conv2d_operands(t, p, 120);
    const Ref b = ref_reshape(in.bias, {p.o, 1, 1});
    Tensor y = wok::relu(run_conv2d(in, p, false) + tensor_of(b));
    EXPECT_EQ(launches_of({y}), 1) << "relu(conv2d(x, w) + b[O, 1, 1]) " << name_of(t, p);
    EXPECT_TRUE(matches(y, ref_relu(ref_add(ref_conv2d(in.x, in.w, p), b)), "relu(conv2d + b) " + name_of(t, p)));
  }
}

TEST_F(ConvFusion, Relu6SiluGeluEpiloguesAreOneLaunch) {
  struct Epilogue {
    const char* name;
    std::function<Tensor(const Tensor&)> apply;
    std::function<Ref(Ref)> ref;
  };
  const std::vector<Epilogue> epilogues = {
      {"relu6 (clamp 0..6)", [](const Tensor& y) { return wok::clamp(y, 0.0, 6.0); }, ref_relu6},
      {"silu", [](const Tensor& y) { return wok::silu(y); }, ref_silu},
      {"gelu", [](const Tensor& y) { return wok::gelu(y); }, ref_gelu},
  };
  for (DType t : kFloatTypes)
    for (const ConvCase& p : fusion_cases())
      for (const Epilogue& e : epilogues) {
        // Inputs in [-2, 2] so that relu6 clamps at 6 as well as at 0.
        ConvOperands in = conv2d_operands(t, p, 130);
        in.x = random_ref(t, p.x_shape(), 131, -2, 2);
        Tensor y = e.apply(run_conv2d(in, p, true));
        const std::string what = std::string(e.name) + "(conv2d(x, w, b)) " + name_of(t, p);
        EXPECT_EQ(launches_of({y}), 1) << what;
        EXPECT_TRUE(matches(y, e.ref(expected_conv2d(in, p, true)), what));
      }
}

// Random running statistics for `c` channels: gamma in [0.5, 1.5], beta
// and mean in [-1, 1], var in [0.5, 2], each [C, 1, 1].
struct BatchNormParams {
  Ref gamma, beta, mean, var;
};
BatchNormParams random_batch_norm(DType t, int64_t c, uint32_t seed) {
  return {random_ref(t, {c, 1, 1}, seed, 0.5, 1.5), random_ref(t, {c, 1, 1}, seed + 1),
          random_ref(t, {c, 1, 1}, seed + 2), random_ref(t, {c, 1, 1}, seed + 3, 0.5, 2)};
}

// relu(conv2d(x, w) * scale + shift + residual), scale and shift given as
// ready [O, 1, 1] tensors (batch norm folded ahead of time): the whole
// elementwise part is the convolution's epilogue.
TEST_F(ConvFusion, BatchNormResidualReluIsOneLaunch) {
  for (DType t : kFloatTypes)
    for (const ConvCase& p : fusion_cases()) {
      const ConvOperands in = conv2d_operands(t, p, 140);
      const Ref scale = random_ref(t, {p.o, 1, 1}, 141, 0.5, 1.5), shift = random_ref(t, {p.o, 1, 1}, 142);
      const Ref res = random_ref(t, out_shape(p), 143);
      Tensor y = wok::relu(run_conv2d(in, p, false) * tensor_of(scale) + tensor_of(shift) + tensor_of(res));
      const std::string what = "relu(conv2d * scale + shift + residual) " + name_of(t, p);
      EXPECT_EQ(launches_of({y}), 1) << what;
      EXPECT_TRUE(
          matches(y, ref_relu(ref_add(ref_add(ref_mul(ref_conv2d(in.x, in.w, p), scale), shift), res)), what));
    }
}

// The same with scale = gamma / sqrt(var + eps) and shift = beta - mean *
// scale computed in the program from the running statistics. Those are
// [O, 1, 1] values, of another shape than the convolution's output, so
// the JIT does not pull them into its epilogue (Note [Fusion groups] in
// jit/passes/fusion.cpp: that would recompute them once per output
// element): they are one small fused kernel of their own, whose two
// outputs the convolution's epilogue reads. Two launches in all.
TEST_F(ConvFusion, BatchNormFromRunningStatsIsTwoLaunches) {
  for (DType t : kFloatTypes)
    for (const ConvCase& p : fusion_cases()) {
      const ConvOperands in = conv2d_operands(t, p, 150);
      const BatchNormParams bn = random_batch_norm(t, p.o, 151);
      const Ref res = random_ref(t, out_shape(p), 155);
      Tensor scale = tensor_of(bn.gamma) / wok::sqrt(tensor_of(bn.var) + 1e-5);
      Tensor shift = tensor_of(bn.beta) - tensor_of(bn.mean) * scale;
      Tensor y = wok::relu(run_conv2d(in, p, true) * scale + shift + tensor_of(res));
      const std::string what = "relu(conv2d(x, w, b) * scale + shift + residual), scale from running stats " +
                               name_of(t, p);
      EXPECT_EQ(launches_of({y}), 2) << what;
      const BatchNormRef r = ref_batch_norm_params(bn.gamma, bn.beta, bn.mean, bn.var, 1e-5);
      EXPECT_TRUE(matches(y, ref_relu(ref_add(ref_add(ref_mul(expected_conv2d(in, p, true), r.scale), r.shift), res)),
                          what));
    }
}

// wok::batch_norm (frontend/nn.h) folds the statistics into the same
// x * scale + shift, on [C] vectors reshaped to [C, 1, 1]: again a small
// kernel for the scale and shift, then the convolution with its epilogue.
TEST_F(ConvFusion, BatchNormOpAfterConv) {
  for (DType t : kFloatTypes) {
    const ConvCase& p = fusion_cases()[0];
    const ConvOperands in = conv2d_operands(t, p, 160);
    const BatchNormParams bn = random_batch_norm(t, p.o, 161);
    auto flat = [&](const Ref& r) { return tensor_of(ref_reshape(r, {p.o})); };
    Tensor y = wok::relu(wok::batch_norm(run_conv2d(in, p, false), flat(bn.mean), flat(bn.var), flat(bn.gamma),
                                         flat(bn.beta), 1e-5));
    const std::string what = "relu(batch_norm(conv2d(x, w))) " + name_of(t, p);
    EXPECT_EQ(launches_of({y}), 2) << what << " (the scale and shift, then the convolution with its epilogue)";
    const BatchNormRef r = ref_batch_norm_op_params(bn.gamma, bn.beta, bn.mean, bn.var, 1e-5);
    EXPECT_TRUE(matches(y, ref_relu(ref_add(ref_mul(ref_conv2d(in.x, in.w, p), r.scale), r.shift)), what));
  }
}

// A ResNet basic block with folded batch norms:
// relu(conv2(relu(conv1(x) * s1 + t1)) * s2 + t2 + x): one launch per conv.
TEST_F(ConvFusion, ResidualBlockIsTwoLaunches) {
  for (DType t : kFloatTypes) {
    const ConvCase p{.n = 2, .c = 17, .h = 9, .w = 7, .o = 17, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}};
    const Ref x = random_ref(t, p.x_shape(), 170), w1 = random_ref(t, p.w_shape(), 171),
              w2 = random_ref(t, p.w_shape(), 172);
    const Ref s1 = random_ref(t, {p.o, 1, 1}, 173, 0.5, 1.5), t1 = random_ref(t, {p.o, 1, 1}, 174);
    const Ref s2 = random_ref(t, {p.o, 1, 1}, 175, 0.5, 1.5), t2 = random_ref(t, {p.o, 1, 1}, 176);
    Tensor tx = tensor_of(x);
    Tensor h = wok::relu(wok::conv2d(tx, tensor_of(w1), {}, p.stride_arg(), p.padding_arg()) * tensor_of(s1) +
                         tensor_of(t1));
    Tensor y = wok::relu(wok::conv2d(h, tensor_of(w2), {}, p.stride_arg(), p.padding_arg()) * tensor_of(s2) +
                         tensor_of(t2) + tx);
    EXPECT_EQ(launches_of({y}), 2) << "residual block " << name_of(t, p);
    // The second convolution reads h with h's error: carried through the
    // sum as sum |w| e_h, on top of the bound of exact inputs.
    const Ref rh = ref_relu(ref_add(ref_mul(ref_conv2d(x, w1, p), s1), t1));
    Ref c2 = ref_conv2d(rh, w2, p);
    Ref abs_w2 = w2;
    for (double& v : abs_w2.v) v = std::fabs(v);
    Ref eh = rh;
    eh.v = rh.err;
    const Ref carried = ref_conv2d(eh, abs_w2, p);
    for (size_t i = 0; i < c2.err.size(); ++i) c2.err[i] += carried.v[i] * (1 + 1e-6);
    EXPECT_TRUE(matches(y, ref_relu(ref_add(ref_add(ref_mul(c2, s2), t2), x)), "residual block " + name_of(t, p)));
  }
}

// The convolution's own result is read besides its epilogue's: both right.
TEST_F(ConvFusion, ProductAlsoRead) {
  for (DType t : kFloatTypes) {
    const ConvCase& p = fusion_cases()[0];
    const ConvOperands in = conv2d_operands(t, p, 180);
    Tensor c = run_conv2d(in, p, false);
    Tensor y = wok::relu(c + tensor_of(ref_reshape(in.bias, {p.o, 1, 1})));
    wok::eval({c, y});
    const Ref rc = ref_conv2d(in.x, in.w, p);
    EXPECT_TRUE(matches(c, rc, "conv2d " + name_of(t, p)));
    EXPECT_TRUE(matches(y, ref_relu(ref_add(rc, ref_reshape(in.bias, {p.o, 1, 1}))), "relu(conv2d + b) " + name_of(t, p)));
  }
}

// conv1d is conv2d over [N, C, 1, L]; its bias and what follows are on
// [N, O, L].
TEST_F(ConvFusion, Conv1dBiasReluIsOneLaunch) {
  for (DType t : kFloatTypes) {
    const ConvCase p{.n = 2, .c = 17, .w = 29, .o = 33, .kw = 3, .pad = {0, 1, 0, 1}};
    const Ref x = random_ref(t, {p.n, p.c, p.w}, 190), w = random_ref(t, {p.o, p.c, p.kw}, 191);
    const Ref b = random_ref(t, {p.o}, 192);
    Tensor y = wok::relu(wok::conv1d(tensor_of(x), tensor_of(w), tensor_of(b), {1}, {1}));
    EXPECT_EQ(launches_of({y}), 1) << "relu(conv1d(x, w, b)) " << wt::dname(t);
    EXPECT_TRUE(matches(y, ref_relu(ref_add(ref_conv1d(x, w, p), ref_reshape(b, {p.o, 1}))),
                        "relu(conv1d(x, w, b)) " + wt::dname(t)));
  }
}

// A depthwise conv2d has its own kernel, not the implicit GEMM (Note
// [Convolution as a GEMM] in jit/gemm_lowering.cpp), and conv_transpose2d
// is a precompiled kernel under the JIT too: what follows them is one
// fused elementwise kernel after theirs, two launches in all.
TEST_F(ConvFusion, DepthwiseAndTransposedEpilogueIsOneMoreLaunch) {
  for (DType t : kFloatTypes) {
    const ConvCase dw{.n = 2, .c = 17, .h = 10, .w = 9, .o = 34, .kh = 3, .kw = 3, .stride = {2, 2},
                      .pad = {1, 1, 1, 1}, .groups = 17};
    const ConvOperands din = conv2d_operands(t, dw, 195);
    Tensor y = wok::relu(run_conv2d(din, dw, true));
    EXPECT_EQ(launches_of({y}), 2) << "relu(depthwise conv2d(x, w, b)) " << name_of(t, dw);
    EXPECT_TRUE(matches(y, ref_relu(expected_conv2d(din, dw, true)), "relu(depthwise conv2d) " + name_of(t, dw)));

    const ConvCase up{.n = 2, .c = 16, .h = 5, .w = 4, .o = 8, .kh = 4, .kw = 4, .stride = {2, 2}, .pad = {1, 1, 1, 1}};
    const ConvOperands tin = conv_transpose2d_operands(t, up, 196);
    Tensor z = wok::relu(run_conv_transpose2d(tin, up, true));
    EXPECT_EQ(launches_of({z}), 2) << "relu(conv_transpose2d(x, w, b)) " << name_of(t, up);
    EXPECT_TRUE(
        matches(z, ref_relu(expected_conv_transpose2d(tin, up, true)), "relu(conv_transpose2d) " + name_of(t, up)));
  }
}

// ---- backends agree -----------------------------------------------------------------------

// The same convolution programs under set_backend(kJit) and
// set_backend(kPrecompiled) (expect_backends_agree): each within the bound
// of the reference, and within twice the bound of each other.
TEST(ConvBackends, PrecompiledAndJitAgree) {
  for (DType t : kFloatTypes) {
    std::vector<Program> programs;
    uint32_t seed = 200;
    for (const ConvCase& p : fusion_cases()) {
      const ConvOperands in = conv2d_operands(t, p, seed);
      const Ref res = random_ref(t, out_shape(p), seed + 3);
      seed += 10;
      programs.push_back({"relu(conv2d(x, w, b)) " + p.str(), [in, p] { return wok::relu(run_conv2d(in, p, true)); },
                          ref_relu(expected_conv2d(in, p, true))});
      programs.push_back({"gelu(conv2d(x, w, b) * 0.5 + r) " + p.str(),
                          [in, p, res] { return wok::gelu(run_conv2d(in, p, true) * 0.5 + tensor_of(res)); },
                          ref_gelu(ref_add(ref_mul(expected_conv2d(in, p, true), Ref{{}, t, {0.5}, {0.0}}), res))});
    }
    // Depthwise, multiplier 2.
    const ConvCase dw{.n = 2, .c = 17, .h = 10, .w = 9, .o = 34, .kh = 3, .kw = 3, .stride = {2, 2},
                      .pad = {1, 1, 1, 1}, .groups = 17};
    const ConvOperands din = conv2d_operands(t, dw, 250);
    programs.push_back({"relu(depthwise conv2d) " + dw.str(), [din, dw] { return wok::relu(run_conv2d(din, dw, true)); },
                        ref_relu(expected_conv2d(din, dw, true))});
    // conv_transpose2d, 2x upsampling.
    const ConvCase up{.n = 2, .c = 16, .h = 5, .w = 4, .o = 8, .kh = 4, .kw = 4, .stride = {2, 2}, .pad = {1, 1, 1, 1}};
    const ConvOperands tin = conv_transpose2d_operands(t, up, 260);
    programs.push_back({"relu(conv_transpose2d) " + up.str(),
                        [tin, up] { return wok::relu(run_conv_transpose2d(tin, up, true)); },
                        ref_relu(expected_conv_transpose2d(tin, up, true))});
    expect_backends_agree(programs, " " + wt::dname(t));
  }
}

}  // namespace
