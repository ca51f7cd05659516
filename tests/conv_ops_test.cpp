// conv2d, conv1d and conv_transpose2d against float64 direct loops
// (conv_reference.h): named geometries (1x1, 3x3, 7x7 stride 2 pad 3,
// stride, dilation, padding past the kernel, asymmetric padding, groups,
// depthwise with and without a channel multiplier, odd sizes, channel
// counts off the vector width, output channels over several GEMM tiles),
// seeded random geometries, view and computed operands, dtypes, the
// adjoint identity between conv2d and conv_transpose2d, and the errors. Every suite runs under the JIT and the precompiled kernels. The
// fusion of what follows a convolution, and the two backends compared, are
// in conv_fusion_test.cpp.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "conv_reference.h"
#include "test_util.h"

namespace {

using namespace wct;

struct Named {
  const char* name;
  ConvCase p;
};

// Runs `check`; a wok::Error it throws fails the case named `what` and
// lets the next case run.
template <typename Fn>
void guarded(const std::string& what, Fn&& check) {
  try {
    check();
  } catch (const wok::Error& e) {
    ADD_FAILURE() << what << ": threw " << e.what();
  }
}

// conv2d (with bias when `with_bias`) of random operands against the reference.
void expect_conv2d(DType t, const ConvCase& p, bool with_bias, uint32_t seed, const std::string& what) {
  const ConvOperands in = conv2d_operands(t, p, seed);
  const std::string name =
      what + ": conv2d " + wt::dname(t) + " " + p.str() + (with_bias ? " +bias" : "") + " seed=" + std::to_string(seed);
  guarded(name, [&] { EXPECT_TRUE(matches(run_conv2d(in, p, with_bias), expected_conv2d(in, p, with_bias), name)); });
}

void expect_conv_transpose2d(DType t, const ConvCase& p, bool with_bias, uint32_t seed, const std::string& what) {
  const ConvOperands in = conv_transpose2d_operands(t, p, seed);
  const std::string name = what + ": conv_transpose2d " + wt::dname(t) + " " + p.str() + (with_bias ? " +bias" : "") +
                           " seed=" + std::to_string(seed);
  guarded(name, [&] {
    EXPECT_TRUE(matches(run_conv_transpose2d(in, p, with_bias), expected_conv_transpose2d(in, p, with_bias), name));
  });
}

// conv1d over x [N, C, L] = p's [N, C, 1, L] (h = kh = 1, pad top/bottom 0):
// one-value padding when symmetric, else {before, after}.
void expect_conv1d(DType t, const ConvCase& p, bool with_bias, uint32_t seed, const std::string& what) {
  const Ref x = random_ref(t, {p.n, p.c, p.w}, seed), w = random_ref(t, {p.o, p.cg(), p.kw}, seed + 1);
  const Ref bias = random_ref(t, {p.o}, seed + 2);
  const std::vector<int64_t> padding =
      p.pad[1] == p.pad[3] && !p.four_pads ? std::vector<int64_t>{p.pad[1]} : std::vector<int64_t>{p.pad[1], p.pad[3]};
  Ref r = ref_conv1d(x, w, p);
  if (with_bias) r = ref_add(r, ref_reshape(bias, {p.o, 1}));
  std::ostringstream name;
  name << what << ": conv1d " << wt::dname(t) << " x[" << p.n << "," << p.c << "," << p.w << "] O=" << p.o
       << " k=" << p.kw << " stride=" << p.stride[1] << " pad=" << wok::shape_str(padding)
       << " dilation=" << p.dilation[1] << " groups=" << p.groups << (with_bias ? " +bias" : "") << " seed=" << seed;
  guarded(name.str(), [&] {
    Tensor y = wok::conv1d(tensor_of(x), tensor_of(w), with_bias ? tensor_of(bias) : Tensor{}, {p.stride[1]}, padding,
                           {p.dilation[1]}, p.groups);
    EXPECT_TRUE(matches(y, r, name.str()));
  });
}

int64_t macs(const ConvCase& p, bool transpose) {
  return transpose ? p.n * p.c * p.h * p.w * p.og() * p.kh * p.kw : p.n * p.o * p.oh() * p.ow() * p.k();
}

// ---- geometries --------------------------------------------------------------------

const std::vector<Named>& conv2d_cases() {
  static const std::vector<Named> cases = {
      {"1x1", {.n = 1, .c = 17, .h = 8, .w = 8, .o = 33, .kh = 1, .kw = 1}},
      {"1x1 stride 2", {.n = 2, .c = 3, .h = 9, .w = 9, .o = 8, .kh = 1, .kw = 1, .stride = {2, 2}}},
      {"1x1 batch 3, odd size, O over tiles", {.n = 3, .c = 33, .h = 13, .w = 11, .o = 64, .kh = 1, .kw = 1}},
      {"1x1 padded", {.n = 1, .c = 5, .h = 4, .w = 3, .o = 6, .kh = 1, .kw = 1, .pad = {1, 2, 1, 2}}},
      {"3x3 pad 1, C=3, O=64", {.n = 3, .c = 3, .h = 13, .w = 11, .o = 64, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}}},
      {"3x3 stride 2 pad 1, O=96",
       {.n = 1, .c = 17, .h = 13, .w = 11, .o = 96, .kh = 3, .kw = 3, .stride = {2, 2}, .pad = {1, 1, 1, 1}}},
      {"3x3 no padding", {.n = 2, .c = 33, .h = 9, .w = 10, .o = 17, .kh = 3, .kw = 3}},
      {"3x3 K=576, O=96", {.n = 1, .c = 64, .h = 6, .w = 7, .o = 96, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}}},
      {"3x3 dilation 2 pad 2",
       {.n = 2, .c = 8, .h = 12, .w = 10, .o = 16, .kh = 3, .kw = 3, .pad = {2, 2, 2, 2}, .dilation = {2, 2}}},
      {"3x3 stride 2 dilation 2",
       {.n = 1, .c = 8, .h = 15, .w = 14, .o = 12, .kh = 3, .kw = 3, .stride = {2, 2}, .pad = {2, 1, 2, 1},
        .dilation = {2, 2}}},
      {"7x7 stride 2 pad 3, C=3, O=64",
       {.n = 1, .c = 3, .h = 23, .w = 21, .o = 64, .kh = 7, .kw = 7, .stride = {2, 2}, .pad = {3, 3, 3, 3}}},
      {"7x7 stride 2 pad 3, batch 3",
       {.n = 3, .c = 3, .h = 16, .w = 15, .o = 8, .kh = 7, .kw = 7, .stride = {2, 2}, .pad = {3, 3, 3, 3}}},
      {"padding larger than the kernel", {.n = 1, .c = 4, .h = 5, .w = 6, .o = 5, .kh = 3, .kw = 3, .pad = {4, 5, 4, 5}}},
      {"padding larger than the kernel, stride 3",
       {.n = 2, .c = 3, .h = 4, .w = 4, .o = 6, .kh = 2, .kw = 2, .stride = {3, 3}, .pad = {3, 3, 3, 3}}},
      {"asymmetric padding", {.n = 2, .c = 5, .h = 7, .w = 9, .o = 6, .kh = 3, .kw = 2, .pad = {0, 1, 2, 3}}},
      {"asymmetric padding, stride 2",
       {.n = 1, .c = 17, .h = 8, .w = 9, .o = 9, .kh = 3, .kw = 3, .stride = {2, 2}, .pad = {1, 0, 0, 1}}},
      {"symmetric padding as four values",
       {.n = 1, .c = 3, .h = 6, .w = 7, .o = 4, .kh = 3, .kw = 3, .pad = {1, 2, 1, 2}, .four_pads = true}},
      {"1x5, stride (1,2), dilation (2,1)",
       {.n = 2, .c = 6, .h = 9, .w = 17, .o = 10, .kh = 1, .kw = 5, .stride = {1, 2}, .pad = {0, 2, 0, 2},
        .dilation = {2, 1}}},
      {"5x1, dilation (2,1)",
       {.n = 1, .c = 4, .h = 11, .w = 6, .o = 7, .kh = 5, .kw = 1, .pad = {4, 0, 4, 0}, .dilation = {2, 1}}},
      {"groups 2", {.n = 2, .c = 8, .h = 9, .w = 9, .o = 12, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}, .groups = 2}},
      {"groups 2, 17 channels per group",
       {.n = 1, .c = 34, .h = 7, .w = 6, .o = 66, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}, .groups = 2}},
      {"groups 4 stride 2",
       {.n = 1, .c = 16, .h = 8, .w = 7, .o = 32, .kh = 3, .kw = 3, .stride = {2, 2}, .pad = {1, 1, 1, 1}, .groups = 4}},
      {"groups 4, 1x1", {.n = 3, .c = 12, .h = 5, .w = 5, .o = 8, .kh = 1, .kw = 1, .groups = 4}},
      {"depthwise 3x3, C=33",
       {.n = 2, .c = 33, .h = 9, .w = 11, .o = 33, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}, .groups = 33}},
      {"depthwise, multiplier 2, stride 2",
       {.n = 1, .c = 17, .h = 10, .w = 10, .o = 34, .kh = 3, .kw = 3, .stride = {2, 2}, .pad = {1, 1, 1, 1},
        .groups = 17}},
      {"depthwise 5x5 dilation 2",
       {.n = 3, .c = 8, .h = 11, .w = 9, .o = 8, .kh = 5, .kw = 5, .pad = {4, 4, 4, 4}, .dilation = {2, 2}, .groups = 8}},
      {"depthwise 7x7, asymmetric padding",
       {.n = 1, .c = 3, .h = 13, .w = 11, .o = 3, .kh = 7, .kw = 7, .pad = {3, 2, 1, 0}, .groups = 3}},
      {"depthwise, multiplier 3, no padding", {.n = 2, .c = 4, .h = 6, .w = 5, .o = 12, .kh = 2, .kw = 3, .groups = 4}},
      {"the kernel covers the input", {.n = 2, .c = 6, .h = 5, .w = 5, .o = 7, .kh = 5, .kw = 5}},
      {"one channel", {.n = 1, .c = 1, .h = 6, .w = 7, .o = 1, .kh = 3, .kw = 3}},
      {"1x1 input, padded 3x3", {.n = 1, .c = 4, .h = 1, .w = 1, .o = 3, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}}},
  };
  return cases;
}

const std::vector<Named>& conv1d_cases() {
  static const std::vector<Named> cases = {
      {"k3 pad 1", {.n = 2, .c = 3, .w = 20, .o = 8, .kw = 3, .pad = {0, 1, 0, 1}}},
      {"k1, O over tiles", {.n = 1, .c = 33, .w = 9, .o = 64, .kw = 1}},
      {"k5 stride 2 dilation 2 pad 4",
       {.n = 1, .c = 17, .w = 31, .o = 33, .kw = 5, .stride = {1, 2}, .pad = {0, 4, 0, 4}, .dilation = {1, 2}}},
      {"asymmetric padding {1, 2}", {.n = 3, .c = 4, .w = 11, .o = 5, .kw = 4, .pad = {0, 1, 0, 2}}},
      {"padding {2, 2} as two values", {.n = 1, .c = 3, .w = 6, .o = 2, .kw = 3, .pad = {0, 2, 0, 2}, .four_pads = true}},
      {"groups 2", {.n = 2, .c = 8, .w = 13, .o = 12, .kw = 3, .pad = {0, 1, 0, 1}, .groups = 2}},
      {"depthwise k7 pad 3", {.n = 1, .c = 16, .w = 19, .o = 16, .kw = 7, .pad = {0, 3, 0, 3}, .groups = 16}},
      {"depthwise multiplier 2 stride 3", {.n = 2, .c = 5, .w = 17, .o = 10, .kw = 3, .stride = {1, 3}, .groups = 5}},
      {"padding larger than the kernel", {.n = 1, .c = 2, .w = 3, .o = 3, .kw = 2, .pad = {0, 5, 0, 5}}},
  };
  return cases;
}

const std::vector<Named>& conv_transpose2d_cases() {
  static const std::vector<Named> cases = {
      {"3x3", {.n = 2, .c = 4, .h = 5, .w = 5, .o = 6, .kh = 3, .kw = 3}},
      {"1x1", {.n = 1, .c = 17, .h = 4, .w = 5, .o = 33, .kh = 1, .kw = 1}},
      {"1x1 stride 2 (outputs no input reaches)",
       {.n = 1, .c = 3, .h = 4, .w = 3, .o = 5, .kh = 1, .kw = 1, .stride = {2, 2}}},
      {"3x3 stride 2 pad 1 output_padding 1",
       {.n = 1, .c = 8, .h = 7, .w = 6, .o = 4, .kh = 3, .kw = 3, .stride = {2, 2}, .pad = {1, 1, 1, 1},
        .output_padding = {1, 1}}},
      {"4x4 stride 2 pad 1 (2x upsampling)",
       {.n = 2, .c = 16, .h = 4, .w = 4, .o = 8, .kh = 4, .kw = 4, .stride = {2, 2}, .pad = {1, 1, 1, 1}}},
      {"3x3 stride 2, O=64 over tiles",
       {.n = 1, .c = 17, .h = 4, .w = 4, .o = 64, .kh = 3, .kw = 3, .stride = {2, 2}, .pad = {1, 1, 1, 1},
        .output_padding = {1, 0}}},
      {"stride 3 > kernel 2", {.n = 1, .c = 3, .h = 3, .w = 4, .o = 2, .kh = 2, .kw = 2, .stride = {3, 3}}},
      {"groups 2",
       {.n = 1, .c = 8, .h = 5, .w = 6, .o = 6, .kh = 3, .kw = 3, .stride = {2, 2}, .pad = {1, 1, 1, 1}, .groups = 2}},
      {"groups 4", {.n = 2, .c = 12, .h = 4, .w = 3, .o = 8, .kh = 2, .kw = 3, .groups = 4}},
      {"dilation 2 stride 2 output_padding 1",
       {.n = 1, .c = 5, .h = 6, .w = 5, .o = 7, .kh = 3, .kw = 3, .stride = {2, 2}, .pad = {2, 2, 2, 2},
        .dilation = {2, 2}, .output_padding = {1, 1}}},
      {"output_padding 1 >= stride 1 but < dilation 2",
       {.n = 1, .c = 3, .h = 5, .w = 5, .o = 4, .kh = 3, .kw = 3, .dilation = {2, 2}, .output_padding = {1, 1}}},
      {"asymmetric padding",
       {.n = 2, .c = 3, .h = 6, .w = 7, .o = 5, .kh = 3, .kw = 3, .stride = {2, 2}, .pad = {1, 0, 0, 2}}},
      {"depthwise",
       {.n = 1, .c = 8, .h = 5, .w = 5, .o = 8, .kh = 3, .kw = 3, .stride = {2, 2}, .pad = {1, 1, 1, 1}, .groups = 8,
        .output_padding = {1, 1}}},
      {"depthwise multiplier 2", {.n = 2, .c = 6, .h = 4, .w = 5, .o = 12, .kh = 3, .kw = 2, .groups = 6}},
      {"odd size, batch 3", {.n = 3, .c = 3, .h = 13, .w = 11, .o = 4, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}}},
  };
  return cases;
}

// A random conv2d geometry whose output is at least 1x1 and whose cost
// stays small: groups 1 (half the time), 2, 4 or depthwise (multiplier 1
// or 2), kernels 1 to 7, stride 1 to 3, dilation 1 or 2, padding 0 to 4
// (a third of the time asymmetric), batch 1 to 3.
ConvCase random_conv2d_case(std::mt19937& rng, bool transpose) {
  auto pick = [&](uint32_t n) { return static_cast<int64_t>(rng() % n); };
  for (;;) {
    ConvCase p;
    p.n = 1 + pick(3);
    const int64_t kind = pick(8);
    static constexpr int64_t kCg[] = {1, 2, 3, 5, 8, 17, 33};
    static constexpr int64_t kOg[] = {1, 3, 8, 17, 32, 64};
    static constexpr int64_t kK[] = {1, 2, 3, 3, 5, 7};
    if (kind < 4) {
      p.groups = 1;
    } else if (kind < 7) {
      p.groups = kind == 4 ? 2 : 4;
    } else {
      p.groups = 1 + pick(24);  // depthwise
    }
    const int64_t cg = kind == 7 ? 1 : kCg[pick(7)];
    // Output channels per group; with groups, about the same total.
    int64_t og = kind == 7 ? 1 + pick(2) : kOg[pick(6)];
    if (kind != 7 && p.groups > 1) og = std::max<int64_t>(1, og / p.groups);
    p.c = cg * p.groups;
    p.o = og * p.groups;
    p.kh = kK[pick(6)];
    p.kw = pick(3) == 0 ? kK[pick(6)] : p.kh;
    p.stride = {1 + pick(3), 1 + pick(3)};
    if (pick(2)) p.stride[1] = p.stride[0];
    p.dilation = {1 + pick(2), 1 + pick(2)};
    if (pick(2)) p.dilation[1] = p.dilation[0];
    const bool asym = pick(3) == 0;
    p.pad[0] = pick(5);
    p.pad[1] = pick(5);
    p.pad[2] = asym ? pick(5) : p.pad[0];
    p.pad[3] = asym ? pick(5) : p.pad[1];
    p.four_pads = !asym && pick(5) == 0;
    if (transpose) {
      // Output at least 1: (h - 1) s - pt - pb + d (k - 1) + op + 1 >= 1.
      for (int d = 0; d < 2; ++d) {
        const int64_t lim = std::max(p.stride[d], p.dilation[d]);
        p.output_padding[d] = pick(static_cast<uint32_t>(lim));
      }
      p.h = 1 + pick(9);
      p.w = 1 + pick(9);
      if (p.toh() < 1 || p.tow() < 1) continue;
    } else {
      const int64_t eh = p.dilation[0] * (p.kh - 1) + 1, ew = p.dilation[1] * (p.kw - 1) + 1;
      p.h = std::max<int64_t>(1, eh - p.pad[0] - p.pad[2]) + pick(13);
      p.w = std::max<int64_t>(1, ew - p.pad[1] - p.pad[3]) + pick(13);
    }
    if (macs(p, transpose) > 1'500'000) continue;
    return p;
  }
}

// ---- suites under both backends -------------------------------------------------------

class ConvOps2d : public wt::BothBackends {};
class ConvOps1d : public wt::BothBackends {};
class ConvOpsTranspose2d : public wt::BothBackends {};
class ConvOpsOperands : public wt::BothBackends {};

TEST_P(ConvOps2d, NamedGeometries) {
  uint32_t seed = 1;
  for (const Named& c : conv2d_cases())
    for (DType t : kFloatTypes) {
      expect_conv2d(t, c.p, (seed & 1) != 0, seed, c.name);
      seed += 10;
    }
}

// Every named geometry again with the bias the first run lacked (and
// without the one it had), in float32.
TEST_P(ConvOps2d, NamedGeometriesOtherBias) {
  uint32_t seed = 1;
  for (const Named& c : conv2d_cases()) {
    expect_conv2d(kF32, c.p, (seed & 1) == 0, seed + 5, c.name);
    seed += 20;
  }
}

TEST_P(ConvOps2d, RandomGeometries) {
  std::mt19937 rng(20250115);
  for (int i = 0; i < 40; ++i) {
    const ConvCase p = random_conv2d_case(rng, false);
    const DType t = rng() % 2 ? kF64 : kF32;
    const bool bias = rng() % 2;
    expect_conv2d(t, p, bias, 1000 + 7 * static_cast<uint32_t>(i), "random case " + std::to_string(i));
  }
}

// Large enough (over 2^24 flops, 16 or more column tiles) that the JIT
// splits one image's columns between threads, each preparing only the rows
// of the padded image it reads (stride 1 and 2, dilation 2).
TEST_P(ConvOps2d, ColumnsSplitBetweenThreads) {
  const ConvCase cases[] = {
      {.n = 1, .c = 32, .h = 40, .w = 40, .o = 32, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}},
      {.n = 1, .c = 16, .h = 64, .w = 63, .o = 64, .kh = 3, .kw = 3, .stride = {2, 2}, .pad = {1, 0, 1, 2},
       .four_pads = true},
      {.n = 1, .c = 24, .h = 45, .w = 44, .o = 40, .kh = 3, .kw = 3, .pad = {2, 2, 2, 2}, .dilation = {2, 2}},
  };
  uint32_t seed = 500;
  for (const ConvCase& p : cases) expect_conv2d(kF32, p, true, seed++, "columns split between threads");
}

TEST_P(ConvOps2d, EmptyBatch) {
  for (DType t : kFloatTypes) {
    const ConvCase p{.n = 0, .c = 3, .h = 5, .w = 5, .o = 4, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}};
    expect_conv2d(t, p, true, 3, "empty batch");
  }
}

TEST_P(ConvOps1d, NamedGeometries) {
  uint32_t seed = 100;
  for (const Named& c : conv1d_cases())
    for (DType t : kFloatTypes) {
      expect_conv1d(t, c.p, (seed & 1) != 0, seed, c.name);
      seed += 11;
    }
}

TEST_P(ConvOps1d, RandomGeometries) {
  std::mt19937 rng(777);
  auto pick = [&](uint32_t n) { return static_cast<int64_t>(rng() % n); };
  for (int i = 0; i < 20; ++i) {
    ConvCase p;
    p.n = 1 + pick(3);
    p.groups = pick(3) == 0 ? 1 + pick(4) : 1;
    p.c = p.groups * (1 + pick(17));
    p.o = p.groups * (1 + pick(40));
    p.kw = 1 + pick(7);
    p.stride[1] = 1 + pick(3);
    p.dilation[1] = 1 + pick(3);
    p.pad[1] = pick(5);
    p.pad[3] = pick(3) == 0 ? pick(5) : p.pad[1];
    p.w = std::max<int64_t>(1, p.dilation[1] * (p.kw - 1) + 1 - p.pad[1] - p.pad[3]) + pick(30);
    const DType t = pick(2) ? kF64 : kF32;
    expect_conv1d(t, p, pick(2) != 0, 2000 + 5 * static_cast<uint32_t>(i), "random case " + std::to_string(i));
  }
}

TEST_P(ConvOpsTranspose2d, NamedGeometries) {
  uint32_t seed = 300;
  for (const Named& c : conv_transpose2d_cases())
    for (DType t : kFloatTypes) {
      expect_conv_transpose2d(t, c.p, (seed & 1) != 0, seed, c.name);
      seed += 13;
    }
}

TEST_P(ConvOpsTranspose2d, RandomGeometries) {
  std::mt19937 rng(4242);
  for (int i = 0; i < 30; ++i) {
    const ConvCase p = random_conv2d_case(rng, true);
    const DType t = rng() % 2 ? kF64 : kF32;
    const bool bias = rng() % 2;
    expect_conv_transpose2d(t, p, bias, 3000 + 7 * static_cast<uint32_t>(i), "random case " + std::to_string(i));
  }
}

// conv_transpose2d is conv2d's adjoint: <conv2d(x, w), y> = <x,
// conv_transpose2d(y, w)> for the same attributes, with the output
// padding that gives x's size back. Checked in float64 on the library's
// results (both sides computed by wok), within the two sums' bounds.
TEST_P(ConvOpsTranspose2d, AdjointOfConv2d) {
  const std::vector<ConvCase> cases = {
      {.n = 2, .c = 6, .h = 9, .w = 8, .o = 4, .kh = 3, .kw = 3, .stride = {2, 2}, .pad = {1, 1, 1, 1}},
      {.n = 1, .c = 4, .h = 7, .w = 10, .o = 6, .kh = 3, .kw = 2, .stride = {2, 3}, .pad = {1, 0, 2, 1},
       .dilation = {1, 2}, .groups = 2},
  };
  for (const ConvCase& p : cases) {
    const Ref x = random_ref(kF64, p.x_shape(), 50), w = random_ref(kF64, p.w_shape(), 51);
    const Ref y = random_ref(kF64, {p.n, p.o, p.oh(), p.ow()}, 52);
    // conv_transpose2d(y) has y's "input" [N, O, OH, OW] and weight [O, C/g, KH, KW].
    ConvCase t = p;
    t.c = p.o;
    t.o = p.c;
    t.h = p.oh();
    t.w = p.ow();
    t.output_padding = {p.h - t.toh() + t.output_padding[0], p.w - t.tow() + t.output_padding[1]};
    ASSERT_EQ(t.toh(), p.h) << p.str();
    ASSERT_EQ(t.tow(), p.w) << p.str();
    const std::vector<double> cx = wok::conv2d(tensor_of(x), tensor_of(w), {}, p.stride_arg(), p.padding_arg(),
                                               p.dilation_arg(), p.groups)
                                       .to_vector<double>();
    const std::vector<double> ty = wok::conv_transpose2d(tensor_of(y), tensor_of(w), {}, t.stride_arg(),
                                                         t.padding_arg(), t.output_padding_arg(), t.groups,
                                                         t.dilation_arg())
                                       .to_vector<double>();
    double lhs = 0, rhs = 0, mag = 0;
    for (size_t i = 0; i < cx.size(); ++i) lhs += cx[i] * y.v[i], mag += std::fabs(cx[i] * y.v[i]);
    for (size_t i = 0; i < ty.size(); ++i) rhs += x.v[i] * ty[i], mag += std::fabs(x.v[i] * ty[i]);
    EXPECT_NEAR(lhs, rhs, 1e-10 * (mag + 1)) << "adjoint " << p.str();
  }
}

// Operands that are views or computed: a strided slice of x, an
// elementwise result as x, a permuted weight.
TEST_P(ConvOpsOperands, ViewsAndComputedOperands) {
  const ConvCase p{.n = 2, .c = 5, .h = 7, .w = 6, .o = 9, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}};
  for (DType t : kFloatTypes) {
    const Ref w = random_ref(t, p.w_shape(), 61);
    // x = big[..., ::2]: every other column of [N, C, H, 2W].
    const Ref big = random_ref(t, {p.n, p.c, p.h, 2 * p.w}, 60);
    Ref x = random_ref(t, p.x_shape(), 0);
    for (size_t i = 0; i < x.v.size(); ++i) x.v[i] = big.v[2 * i];
    EXPECT_TRUE(matches(wok::conv2d(wok::slice(tensor_of(big), 3, 0, 2 * p.w, 2), tensor_of(w), {}, p.stride_arg(),
                                    p.padding_arg()),
                        ref_conv2d(x, w, p), "conv2d(x[..., ::2], w) " + wt::dname(t)));
    // x = relu(x0): exact, so the reference reads relu's values.
    const Ref x0 = random_ref(t, p.x_shape(), 62);
    EXPECT_TRUE(matches(wok::conv2d(wok::relu(tensor_of(x0)), tensor_of(w), {}, p.stride_arg(), p.padding_arg()),
                        ref_conv2d(ref_relu(x0), w, p), "conv2d(relu(x), w) " + wt::dname(t)));
    // weight = permute(stored [Cg, O, KH, KW], [1, 0, 2, 3]).
    const Ref ws = random_ref(t, {p.cg(), p.o, p.kh, p.kw}, 63);
    Ref wp = random_ref(t, p.w_shape(), 0);
    for (int64_t o = 0; o < p.o; ++o)
      for (int64_t c = 0; c < p.cg(); ++c)
        for (int64_t k = 0; k < p.kh * p.kw; ++k)
          wp.v[static_cast<size_t>((o * p.cg() + c) * p.kh * p.kw + k)] =
              ws.v[static_cast<size_t>((c * p.o + o) * p.kh * p.kw + k)];
    const Ref x1 = random_ref(t, p.x_shape(), 64);
    EXPECT_TRUE(matches(wok::conv2d(tensor_of(x1), wok::permute(tensor_of(ws), {1, 0, 2, 3}), {}, p.stride_arg(),
                                    p.padding_arg()),
                        ref_conv2d(x1, wp, p), "conv2d(x, permute(w)) " + wt::dname(t)));
  }
}

// Mixed and integer operands promote.
TEST_P(ConvOpsOperands, DTypes) {
  const ConvCase p{.n = 1, .c = 4, .h = 6, .w = 5, .o = 6, .kh = 3, .kw = 3, .stride = {2, 1}, .pad = {1, 1, 1, 1}};
  // float32 x, float64 weight and bias: float64.
  const Ref x = random_ref(kF32, p.x_shape(), 70), w = random_ref(kF64, p.w_shape(), 71), b = random_ref(kF64, {p.o}, 72);
  Ref r = ref_add(ref_conv2d(x, w, p), ref_reshape(b, {p.o, 1, 1}));
  EXPECT_TRUE(matches(wok::conv2d(tensor_of(x), tensor_of(w), tensor_of(b), p.stride_arg(), p.padding_arg()), r,
                      "conv2d(float32, float64) + float64 bias"));
  // int32 operands compute in floating point like sqrt and the other float
  // ops: in float_result_type(int32), float64 (NumPy's rule). Small
  // integers: exact products and sums.
  const std::vector<int32_t> xi = wt::random_values<int32_t>(static_cast<size_t>(wok::numel(p.x_shape())), -5, 5, 73);
  const std::vector<int32_t> wi = wt::random_values<int32_t>(static_cast<size_t>(wok::numel(p.w_shape())), -5, 5, 74);
  const Ref xr{p.x_shape(), kF64, std::vector<double>(xi.begin(), xi.end()), std::vector<double>(xi.size(), 0.0)};
  const Ref wr{p.w_shape(), kF64, std::vector<double>(wi.begin(), wi.end()), std::vector<double>(wi.size(), 0.0)};
  EXPECT_TRUE(matches(wok::conv2d(wok::from_vector(xi, p.x_shape()), wok::from_vector(wi, p.w_shape()), {},
                                  p.stride_arg(), p.padding_arg()),
                      ref_conv2d(xr, wr, p), "conv2d(int32, int32)"));
}

INSTANTIATE_TEST_SUITE_P(, ConvOps2d, wt::kBothBackends, wt::backend_param_name);
INSTANTIATE_TEST_SUITE_P(, ConvOps1d, wt::kBothBackends, wt::backend_param_name);
INSTANTIATE_TEST_SUITE_P(, ConvOpsTranspose2d, wt::kBothBackends, wt::backend_param_name);
INSTANTIATE_TEST_SUITE_P(, ConvOpsOperands, wt::kBothBackends, wt::backend_param_name);

// ---- errors -------------------------------------------------------------------------------

using wt::throws_naming;

using V = std::vector<int64_t>;

// conv2d of zeros of these shapes and attributes.
auto conv2d_of(Shape xs, Shape ws, V stride = {1, 1}, V padding = {0, 0}, V dilation = {1, 1}, int64_t groups = 1,
               Tensor bias = {}) {
  return [=] { wok::conv2d(wok::zeros(xs), wok::zeros(ws), bias, stride, padding, dilation, groups); };
}

TEST(ConvErrors, ChannelsDifferFromTheWeights) {
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of({1, 6, 8, 8}, {4, 4, 3, 3}),
                                             {"conv2d", "[1, 6, 8, 8]", "[4, 4, 3, 3]"}));
  // With groups 2 the weight expects 2 x 2 = 4 input channels.
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of({1, 6, 8, 8}, {4, 2, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 2),
                                             {"conv2d", "[1, 6, 8, 8]", "[4, 2, 3, 3]"}));
}

TEST(ConvErrors, GroupsDoNotDivideTheChannels) {
  // C = 6, groups 4.
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of({1, 6, 8, 8}, {4, 1, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 4),
                                             {"conv2d", "[1, 6, 8, 8]", "[4, 1, 3, 3]"}));
  // O = 6, groups 4 (C = 8 matches 2 per group).
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of({1, 8, 8, 8}, {6, 2, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 4),
                                             {"conv2d", "[1, 8, 8, 8]", "[6, 2, 3, 3]"}));
  // groups 0 and negative.
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of({1, 8, 8, 8}, {6, 8, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 0),
                                             {"conv2d", "groups", "[1, 8, 8, 8]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of({1, 8, 8, 8}, {6, 8, 3, 3}, {1, 1}, {0, 0}, {1, 1}, -2),
                                             {"conv2d", "groups", "[1, 8, 8, 8]"}));
}

TEST(ConvErrors, WrongRank) {
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of({6, 8, 8}, {4, 6, 3, 3}), {"conv2d", "[6, 8, 8]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of({1, 1, 6, 8, 8}, {4, 6, 3, 3}), {"conv2d", "[1, 1, 6, 8, 8]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of({1, 6, 8, 8}, {4, 6, 3}), {"conv2d", "[4, 6, 3]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([] { wok::conv2d(wok::zeros({}), wok::zeros({1, 1, 1, 1})); },
                                             {"conv2d"}));
}

TEST(ConvErrors, KernelLargerThanThePaddedInput) {
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of({1, 3, 4, 4}, {2, 3, 5, 5}),
                                             {"conv2d", "[1, 3, 4, 4]", "[2, 3, 5, 5]"}));
  // Padding 1 makes it fit; dilation 3 (7x7) with padding 1 (6x6) does not.
  EXPECT_NO_THROW(conv2d_of({1, 3, 4, 4}, {2, 3, 5, 5}, {1, 1}, {1, 1})());
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of({1, 3, 4, 4}, {2, 3, 3, 3}, {1, 1}, {1, 1}, {3, 3}),
                                             {"conv2d", "[1, 3, 4, 4]", "[2, 3, 3, 3]"}));
  // One dim only: 4 + 0 + 1 < 6 wide.
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of({1, 3, 9, 4}, {2, 3, 3, 6}, {1, 1}, {0, 0, 0, 1}),
                                             {"conv2d", "[1, 3, 9, 4]", "[2, 3, 3, 6]"}));
  // An empty kernel.
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of({1, 3, 4, 4}, {2, 3, 0, 3}), {"conv2d", "[2, 3, 0, 3]"}));
}

// Each message names the op, the attribute's value and the operands' shapes.
TEST(ConvErrors, BadAttributeLengthsAndValues) {
  const Shape xs{1, 3, 8, 8}, ws{4, 3, 3, 3};
  auto names = [](const char* attr, const char* value) {
    return std::vector<std::string>{"conv2d", attr, value, "[1, 3, 8, 8]", "[4, 3, 3, 3]"};
  };
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of(xs, ws, {1}), names("stride", "[1]")));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of(xs, ws, {1, 1, 1}), names("stride", "[1, 1, 1]")));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of(xs, ws, {1, 1}, {1}), names("padding", "[1]")));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of(xs, ws, {1, 1}, {1, 1, 1}), names("padding", "[1, 1, 1]")));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of(xs, ws, {1, 1}, {1, 1, 1, 1, 1}),
                                             names("padding", "[1, 1, 1, 1, 1]")));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of(xs, ws, {1, 1}, {0, 0}, {2}), names("dilation", "[2]")));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of(xs, ws, {1, 1}, {0, 0}, {1, 1, 1}),
                                             names("dilation", "[1, 1, 1]")));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of(xs, ws, {0, 1}), names("stride", "[0, 1]")));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of(xs, ws, {1, -1}), names("stride", "[1, -1]")));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of(xs, ws, {1, 1}, {-1, 0}), names("padding", "-1")));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of(xs, ws, {1, 1}, {0, 0}, {0, 1}), names("dilation", "[0, 1]")));
}

TEST(ConvErrors, BiasOfTheWrongLength) {
  const Shape xs{1, 3, 8, 8}, ws{4, 3, 3, 3};
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of(xs, ws, {1, 1}, {0, 0}, {1, 1}, 1, wok::zeros({5})),
                                             {"conv2d", "bias", "[5]", "[1, 3, 8, 8]", "[4, 3, 3, 3]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of(xs, ws, {1, 1}, {0, 0}, {1, 1}, 1, wok::zeros({4, 1})),
                                             {"conv2d", "bias", "[4, 1]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv2d_of(xs, ws, {1, 1}, {0, 0}, {1, 1}, 1, wok::zeros({})),
                                             {"conv2d", "bias"}));
}

TEST(ConvErrors, Conv1d) {
  auto conv1d_of = [](Shape xs, Shape ws, V stride = {1}, V padding = {0}, V dilation = {1}, int64_t groups = 1,
                      Tensor bias = {}) {
    return [=] { wok::conv1d(wok::zeros(xs), wok::zeros(ws), bias, stride, padding, dilation, groups); };
  };
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv1d_of({1, 3, 8, 8}, {4, 3, 3}), {"conv1d", "[1, 3, 8, 8]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv1d_of({1, 3, 8}, {4, 3, 3, 3}), {"conv1d", "[4, 3, 3, 3]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv1d_of({1, 3, 8}, {4, 3, 3}, {1, 1}), {"conv1d", "stride"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv1d_of({1, 3, 8}, {4, 3, 3}, {1}, {1, 1, 1}), {"conv1d", "padding"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv1d_of({1, 3, 8}, {4, 3, 3}, {1}, {0}, {1, 1}), {"conv1d", "dilation"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv1d_of({1, 3, 8}, {4, 3, 3}, {1}, {0}, {1}, 1, wok::zeros({3})),
                                             {"conv1d", "bias", "[3]"}));
  // Errors the underlying conv2d finds are still conv1d's, with conv1d's shapes.
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv1d_of({1, 6, 8}, {4, 4, 3}), {"conv1d", "[1, 6, 8]", "[4, 4, 3]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(conv1d_of({1, 3, 4}, {4, 3, 5}), {"conv1d", "[1, 3, 4]", "[4, 3, 5]"}));
}

TEST(ConvErrors, ConvTranspose2d) {
  auto convt_of = [](Shape xs, Shape ws, V stride = {1, 1}, V padding = {0, 0}, V output_padding = {0, 0},
                     int64_t groups = 1, V dilation = {1, 1}, Tensor bias = {}) {
    return [=] {
      wok::conv_transpose2d(wok::zeros(xs), wok::zeros(ws), bias, stride, padding, output_padding, groups, dilation);
    };
  };
  // output_padding must be smaller than the stride or the dilation.
  EXPECT_TRUE(throws_naming<wok::ShapeError>(convt_of({1, 4, 5, 5}, {4, 2, 3, 3}, {2, 2}, {1, 1}, {2, 2}),
                                             {"conv_transpose2d", "output_padding", "[2, 2]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(convt_of({1, 4, 5, 5}, {4, 2, 3, 3}, {2, 2}, {1, 1}, {0, 3}),
                                             {"conv_transpose2d", "output_padding", "[0, 3]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(convt_of({1, 4, 5, 5}, {4, 2, 3, 3}, {1, 1}, {0, 0}, {1, 0}),
                                             {"conv_transpose2d", "output_padding", "[1, 0]"}));
  EXPECT_NO_THROW(convt_of({1, 4, 5, 5}, {4, 2, 3, 3}, {1, 1}, {0, 0}, {1, 0}, 1, {2, 1})());  // < dilation 2
  EXPECT_TRUE(throws_naming<wok::ShapeError>(convt_of({1, 4, 5, 5}, {4, 2, 3, 3}, {2, 2}, {0, 0}, {1}),
                                             {"conv_transpose2d", "output_padding"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(convt_of({1, 4, 5, 5}, {4, 2, 3, 3}, {2, 2}, {0, 0}, {-1, 0}),
                                             {"conv_transpose2d", "output_padding"}));
  // The weight's first dim is the input's channels.
  EXPECT_TRUE(throws_naming<wok::ShapeError>(convt_of({1, 4, 5, 5}, {3, 2, 3, 3}),
                                             {"conv_transpose2d", "[1, 4, 5, 5]", "[3, 2, 3, 3]"}));
  // groups 3 does not divide 4 channels.
  EXPECT_TRUE(throws_naming<wok::ShapeError>(convt_of({1, 4, 5, 5}, {4, 2, 3, 3}, {1, 1}, {0, 0}, {0, 0}, 3),
                                             {"conv_transpose2d", "[1, 4, 5, 5]"}));
  // Padding that removes more than the kernel adds: (1 - 1) 1 - 2 + 0 + 1 = -1.
  EXPECT_TRUE(throws_naming<wok::ShapeError>(convt_of({1, 2, 1, 1}, {2, 3, 1, 1}, {1, 1}, {1, 1}),
                                             {"conv_transpose2d", "[1, 2, 1, 1]", "[2, 3, 1, 1]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(convt_of({2, 5, 5}, {2, 3, 1, 1}), {"conv_transpose2d", "[2, 5, 5]"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>(convt_of({1, 4, 5, 5}, {4, 2, 3, 3}, {2}), {"conv_transpose2d", "stride"}));
  // The bias has O = weight[1] * groups values.
  EXPECT_TRUE(throws_naming<wok::ShapeError>(
      convt_of({1, 4, 5, 5}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {0, 0}, 2, {1, 1}, wok::zeros({3})),
      {"conv_transpose2d", "bias", "[3]"}));
  EXPECT_NO_THROW(convt_of({1, 4, 5, 5}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {0, 0}, 2, {1, 1}, wok::zeros({6}))());
}

}  // namespace
