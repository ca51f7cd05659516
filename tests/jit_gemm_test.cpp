// matmul (a generated GEMM under the JIT, the precompiled kernel otherwise)
// against a float64 reference: shape classes, edge sizes, operand layouts
// (transposes, views, broadcast batches), the elementwise epilogues that
// consume its result, seeded random matmul + epilogue programs, the launch
// counts of the fused groups, the two backends agreeing, and its errors.
//
// Every float check is per element against a bound that grows with K (see
// dot_bound in bounded_reference.h) and with what each epilogue step does to
// the error already there (see the Ref functions below).
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bounded_reference.h"
#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

using namespace wref;

// ---- reference arrays ---------------------------------------------------------

Ref ref_permute(const Ref& r, const std::vector<int64_t>& dims) {
  const wok::Strides st = wok::contiguous_strides(r.shape);
  Shape shape;
  wok::Strides strides;
  for (int64_t d : dims) {
    shape.push_back(r.shape[static_cast<size_t>(d)]);
    strides.push_back(st[static_cast<size_t>(d)]);
  }
  return gather(r, shape, strides, 0);
}

Ref ref_swap_last2(const Ref& r) {
  std::vector<int64_t> dims(r.shape.size());
  for (size_t d = 0; d < dims.size(); ++d) dims[d] = static_cast<int64_t>(d);
  std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
  return ref_permute(r, dims);
}

// x[start:stop:step] along `axis`, for in-range bounds and step > 0.
Ref ref_slice(const Ref& r, size_t axis, int64_t start, int64_t stop, int64_t step) {
  wok::Strides strides = wok::contiguous_strides(r.shape);
  Shape shape = r.shape;
  shape[axis] = (stop - start + step - 1) / step;
  const int64_t offset = start * strides[axis];
  strides[axis] *= step;
  return gather(r, shape, strides, offset);
}

// NumPy matmul of the references (1-D operands promoted, batch dims
// broadcast). The bound is dot_bound plus the inputs' own errors carried
// through the sum: sum_p (e_a |b| + |a| e_b + e_a e_b).
Ref ref_matmul(Ref a, Ref b) {
  const bool vec_a = a.shape.size() == 1, vec_b = b.shape.size() == 1;
  if (vec_a) a.shape.insert(a.shape.begin(), 1);
  if (vec_b) b.shape.push_back(1);
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
  const Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  const Shape batch = *wok::broadcast_shapes(ba, bb);
  const wok::Strides sa = wok::broadcast_strides(ba, batch), sb = wok::broadcast_strides(bb, batch);
  Ref out;
  out.dtype = promoted(a.dtype, b.dtype);
  out.shape = batch;
  if (!vec_a) out.shape.push_back(m);
  if (!vec_b) out.shape.push_back(n);
  const int64_t nbatch = wok::numel(batch);
  out.v.assign(static_cast<size_t>(nbatch * m * n), 0.0);
  out.err.assign(out.v.size(), 0.0);
  std::vector<double> bt(static_cast<size_t>(k * n)), bt_err(bt.size());  // b's matrix, column-major
  for (int64_t bi = 0; bi < nbatch; ++bi) {
    int64_t rem = bi, oa = 0, ob = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      oa += idx * sa[d];
      ob += idx * sb[d];
    }
    const double* av = a.v.data() + oa * m * k;
    const double* ae = a.err.data() + oa * m * k;
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) {
        bt[static_cast<size_t>(j * k + p)] = b.v[static_cast<size_t>(ob * k * n + p * n + j)];
        bt_err[static_cast<size_t>(j * k + p)] = b.err[static_cast<size_t>(ob * k * n + p * n + j)];
      }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0, mag = 0, carried = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double x = av[i * k + p], ex = ae[i * k + p];
          const double y = bt[static_cast<size_t>(j * k + p)], ey = bt_err[static_cast<size_t>(j * k + p)];
          acc += x * y;
          mag += (std::fabs(x) + ex) * (std::fabs(y) + ey);
          carried += ex * std::fabs(y) + std::fabs(x) * ey + ex * ey;
        }
        const size_t o = static_cast<size_t>((bi * m + i) * n + j);
        out.v[o] = acc;
        out.err[o] = carried + dot_bound(out.dtype, k, mag);
      }
  }
  return out;
}

// s * r for a scalar s exactly representable in r's dtype.
Ref ref_scale(Ref r, double s) {
  const double eps = eps_of(r.dtype);
  for (size_t i = 0; i < r.v.size(); ++i) {
    r.v[i] *= s;
    r.err[i] = std::fabs(s) * r.err[i] + 2 * eps * std::fabs(r.v[i]);
  }
  return r;
}

// exp(clamp(x, -3, 3)): clamp moves an error by at most itself; exp turns
// an error e into at most exp(y) * expm1(e).
Ref ref_exp_clamped(Ref r) {
  const double eps = eps_of(r.dtype), tiny = tiny_of(r.dtype);
  for (size_t i = 0; i < r.v.size(); ++i) {
    const double y = std::exp(std::clamp(r.v[i], -3.0, 3.0));
    r.v[i] = y;
    r.err[i] = y * std::expm1(r.err[i]) + kTranscendentalUlps * eps * y + tiny;
  }
  return r;
}

std::string case_name(DType t, const Shape& sa, const Shape& sb) {
  return wt::dname(t) + " " + wok::shape_str(sa) + " @ " + wok::shape_str(sb);
}

// matmul of random [-1, 1] operands of these shapes against the reference.
void expect_matmul(DType t, const Shape& sa, const Shape& sb, uint32_t seed = 1) {
  const Ref a = random_ref(t, sa, seed), b = random_ref(t, sb, seed + 1000);
  EXPECT_TRUE(matches(wok::matmul(tensor_of(a), tensor_of(b)), ref_matmul(a, b), case_name(t, sa, sb)));
}

// ---- epilogue steps -------------------------------------------------------------

enum class Ep { kBiasRow, kBiasCol, kScale, kRelu, kGelu, kSilu, kSigmoid, kTanh, kResidual, kExpClamped };
constexpr Ep kAllEps[] = {Ep::kBiasRow, Ep::kBiasCol, Ep::kScale,    Ep::kRelu,     Ep::kGelu,
                          Ep::kSilu,    Ep::kSigmoid, Ep::kTanh,     Ep::kResidual, Ep::kExpClamped};

std::string ep_name(Ep e) {
  switch (e) {
    case Ep::kBiasRow: return "+bias[N]";
    case Ep::kBiasCol: return "+bias[M,1]";
    case Ep::kScale: return "*scalar";
    case Ep::kRelu: return "relu";
    case Ep::kGelu: return "gelu";
    case Ep::kSilu: return "silu";
    case Ep::kSigmoid: return "sigmoid";
    case Ep::kTanh: return "tanh";
    case Ep::kResidual: return "+residual";
    case Ep::kExpClamped: return "exp(clamp(-3,3))";
  }
  return "?";
}

// Records step `e` on `t` and applies it to the reference `r` (of t's
// shape, rank 2 or more). Operands are random, from `seed`.
void apply(Ep e, Tensor& t, Ref& r, uint32_t seed) {
  const int64_t n = r.shape.back(), m = r.shape[r.shape.size() - 2];
  switch (e) {
    case Ep::kBiasRow:
    case Ep::kBiasCol:
    case Ep::kResidual: {
      const Shape s = e == Ep::kBiasRow ? Shape{n} : e == Ep::kBiasCol ? Shape{m, 1} : r.shape;
      const Ref b = random_ref(r.dtype, s, seed);
      t = t + tensor_of(b);
      r = ref_add(r, b);
      break;
    }
    case Ep::kScale: {
      static constexpr double kScales[] = {0.5, -1.25, 3.0, -0.375};
      const double s = kScales[seed % 4];
      t = t * s;
      r = ref_scale(r, s);
      break;
    }
    case Ep::kRelu:
      t = wok::relu(t);
      r = ref_unary(r, [](double x) { return std::max(x, 0.0); }, 1.0, kTranscendentalUlps, false);
      break;
    case Ep::kGelu:  // |gelu'| <= 1.13
      t = wok::gelu(t);
      r = ref_unary(r, gelu_ref, 1.2, kTranscendentalUlps, true);
      break;
    case Ep::kSilu:  // |silu'| <= 1.1
      t = wok::silu(t);
      r = ref_unary(r, [](double x) { return x * sigmoid_ref(x); }, 1.2, kTranscendentalUlps, true);
      break;
    case Ep::kSigmoid:
      t = wok::sigmoid(t);
      r = ref_unary(r, sigmoid_ref, 0.25, kTranscendentalUlps, false);
      break;
    case Ep::kTanh:
      t = wok::tanh(t);
      r = ref_unary(r, [](double x) { return std::tanh(x); }, 1.0, kTranscendentalUlps, false);
      break;
    case Ep::kExpClamped:
      t = wok::exp(wok::clamp(t, -3.0, 3.0));
      r = ref_exp_clamped(r);
      break;
  }
}

// ---- suites under both backends -------------------------------------------------------

class JitGemmShapes : public wt::BothBackends {};
class JitGemmEdges : public wt::BothBackends {};
class JitGemmLayouts : public wt::BothBackends {};
class JitGemmEpilogue : public wt::BothBackends {};
class JitGemmRandom : public wt::BothBackends {};
class JitGemmDTypes : public wt::BothBackends {};

TEST_P(JitGemmShapes, SmallSquares) {
  for (DType t : kFloatTypes)
    for (int64_t s : {32, 64, 128}) expect_matmul(t, {s, s}, {s, s}, static_cast<uint32_t>(s));
}

TEST_P(JitGemmShapes, TwoD) {
  for (DType t : kFloatTypes) {
    expect_matmul(t, {1, 1}, {1, 1});
    expect_matmul(t, {7, 13}, {13, 5});
    expect_matmul(t, {45, 77}, {77, 90});
  }
}

TEST_P(JitGemmShapes, Batched) {
  for (DType t : kFloatTypes) {
    expect_matmul(t, {3, 17, 40}, {3, 40, 29});
    expect_matmul(t, {5, 8, 16}, {5, 16, 8});
    expect_matmul(t, {2, 2, 33, 9}, {2, 2, 9, 31});
  }
}

TEST_P(JitGemmShapes, BroadcastBatch) {
  for (DType t : kFloatTypes) {
    expect_matmul(t, {3, 20, 33}, {33, 18});        // rank 3 against rank 2
    expect_matmul(t, {20, 33}, {4, 33, 18});        // rank 2 against rank 3
    expect_matmul(t, {2, 1, 9, 21}, {1, 3, 21, 14});  // both broadcast
    expect_matmul(t, {1, 5, 7}, {3, 7, 6});
  }
}

TEST_P(JitGemmShapes, SmallMAndGemv) {
  for (DType t : kFloatTypes) {
    for (int64_t m : {1, 8, 16})
      for (auto [k, n] : {std::pair<int64_t, int64_t>{96, 200}, {300, 520}, {131, 257}})
        expect_matmul(t, {m, k}, {k, n}, static_cast<uint32_t>(m + k));
    expect_matmul(t, {150}, {150, 230});  // vector @ matrix
    expect_matmul(t, {230, 150}, {150});  // matrix @ vector
    expect_matmul(t, {3, 1, 200}, {200, 70});
  }
}

TEST_P(JitGemmShapes, SingleColumnAndSingleInner) {
  for (DType t : kFloatTypes) {
    expect_matmul(t, {37, 90}, {90, 1});    // N = 1
    expect_matmul(t, {200, 300}, {300, 1});
    expect_matmul(t, {37, 1}, {1, 45});     // K = 1: outer product
    expect_matmul(t, {130, 1}, {1, 260});
    expect_matmul(t, {1, 300}, {300, 1});   // M = N = 1
  }
}

TEST_P(JitGemmShapes, SeveralCacheBlocks) {
  expect_matmul(kF32, {300, 513}, {513, 257}, 11);   // K past 512, M and N over several tiles
  expect_matmul(kF64, {300, 513}, {513, 257}, 12);
  expect_matmul(kF32, {129, 1100}, {1100, 70}, 13);  // K over two blocks and a remainder
}

TEST_P(JitGemmShapes, EmptyAndZeroInner) {
  for (DType t : kFloatTypes) {
    expect_matmul(t, {0, 5}, {5, 3});
    expect_matmul(t, {4, 5}, {5, 0});
    expect_matmul(t, {4, 0}, {0, 3});  // K = 0: zeros
    expect_matmul(t, {2, 0, 4}, {2, 4, 3});
    // K = 0 with an epilogue: the bias alone.
    const Ref a = random_ref(t, {4, 0}, 1), b = random_ref(t, {0, 6}, 2), bias = random_ref(t, {6}, 3);
    Tensor y = wok::relu(wok::matmul(tensor_of(a), tensor_of(b)) + tensor_of(bias));
    EXPECT_TRUE(matches(y,
                        ref_unary(ref_add(ref_matmul(a, b), bias), [](double x) { return std::max(x, 0.0); }, 1,
                                  kTranscendentalUlps, false),
                        "relu(matmul(K=0) + bias)"));
  }
}

TEST_P(JitGemmEdges, EveryM) {
  for (DType t : kFloatTypes)
    for (int64_t m = 1; m <= 17; ++m) expect_matmul(t, {m, 19}, {19, 33}, static_cast<uint32_t>(m));
}

TEST_P(JitGemmEdges, EveryN) {
  for (DType t : kFloatTypes)
    for (int64_t n = 1; n <= 17; ++n) expect_matmul(t, {21, 33}, {33, n}, static_cast<uint32_t>(n));
}

TEST_P(JitGemmEdges, EveryK) {
  for (DType t : kFloatTypes)
    for (int64_t k = 1; k <= 17; ++k) expect_matmul(t, {21, k}, {k, 35}, static_cast<uint32_t>(k));
}

TEST_P(JitGemmEdges, Primes) {
  for (DType t : kFloatTypes) {
    for (int64_t p : {31, 37, 61, 67, 97, 131}) {
      const uint32_t s = static_cast<uint32_t>(p);
      expect_matmul(t, {p, 19}, {19, 33}, s);
      expect_matmul(t, {21, 33}, {33, p}, s);
      expect_matmul(t, {21, p}, {p, 35}, s);
    }
    expect_matmul(t, {31, 37}, {37, 61});
    expect_matmul(t, {131, 97}, {97, 67});
  }
}

// Partial register tiles in both directions, with an epilogue that reads a
// row and a column operand at the tile's edge.
TEST_P(JitGemmEdges, PartialTilesWithEpilogue) {
  for (DType t : kFloatTypes)
    for (int64_t m = 1; m <= 17; ++m)
      for (int64_t n : {1, 2, 3, 7, 8, 9, 15, 16, 17}) {
        const uint32_t s = static_cast<uint32_t>(m * 100 + n);
        const Ref a = random_ref(t, {m, 19}, s), b = random_ref(t, {19, n}, s + 1);
        Tensor y = wok::matmul(tensor_of(a), tensor_of(b));
        Ref r = ref_matmul(a, b);
        apply(Ep::kBiasRow, y, r, s + 2);
        apply(Ep::kBiasCol, y, r, s + 3);
        apply(Ep::kRelu, y, r, s + 4);
        EXPECT_TRUE(matches(y, r, "relu(matmul + bias[N] + bias[M,1]) " + case_name(t, a.shape, b.shape)));
      }
}

// matmul(a, b) where a and b are views of stored arrays; `ra`, `rb` the
// views' values.
void expect_views(const Tensor& a, const Ref& ra, const Tensor& b, const Ref& rb, const std::string& what) {
  EXPECT_TRUE(matches(wok::matmul(a, b), ref_matmul(ra, rb), what + " " + case_name(ra.dtype, ra.shape, rb.shape)));
}

TEST_P(JitGemmLayouts, TransposedB) {
  for (DType t : kFloatTypes)
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{33, 47, 65}, {1, 80, 40}, {64, 64, 64}, {5, 3, 600}}) {
      const Ref a = random_ref(t, {m, k}, 1), bs = random_ref(t, {n, k}, 2);
      expect_views(tensor_of(a), a, tensor_of(bs).transpose(), ref_swap_last2(bs), "a @ b.T");
    }
}

TEST_P(JitGemmLayouts, TransposedA) {
  for (DType t : kFloatTypes)
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{33, 47, 65}, {80, 1, 40}, {17, 130, 9}}) {
      const Ref as = random_ref(t, {k, m}, 3), b = random_ref(t, {k, n}, 4);
      expect_views(tensor_of(as).transpose(), ref_swap_last2(as), tensor_of(b), b, "a.T @ b");
    }
}

TEST_P(JitGemmLayouts, BothTransposed) {
  for (DType t : kFloatTypes)
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{33, 47, 65}, {16, 16, 16}, {70, 9, 130}}) {
      const Ref as = random_ref(t, {k, m}, 5), bs = random_ref(t, {n, k}, 6);
      expect_views(tensor_of(as).transpose(), ref_swap_last2(as), tensor_of(bs).transpose(), ref_swap_last2(bs),
                   "a.T @ b.T");
    }
}

TEST_P(JitGemmLayouts, BatchedTransposeOfLastTwo) {
  for (DType t : kFloatTypes) {
    const Ref as = random_ref(t, {3, 40, 21}, 7), bs = random_ref(t, {3, 29, 40}, 8), b = random_ref(t, {3, 40, 29}, 9);
    const Tensor at = wok::transpose(tensor_of(as), -1, -2), bt = wok::transpose(tensor_of(bs), -1, -2);
    expect_views(at, ref_swap_last2(as), tensor_of(b), b, "transpose(a,-1,-2) @ b");
    expect_views(at, ref_swap_last2(as), bt, ref_swap_last2(bs), "transpose(a,-1,-2) @ transpose(b,-1,-2)");
    const Ref a2 = random_ref(t, {2, 1, 13, 40}, 10);
    expect_views(tensor_of(a2), a2, bt, ref_swap_last2(bs), "a @ transpose(b,-1,-2), broadcast batch");
  }
}

TEST_P(JitGemmLayouts, BroadcastTo) {
  for (DType t : kFloatTypes) {
    const Ref a = random_ref(t, {4, 11, 30}, 11), b = random_ref(t, {30, 25}, 12);
    expect_views(tensor_of(a), a, tensor_of(b).broadcast_to({4, 30, 25}), ref_broadcast(b, {4, 30, 25}),
                 "a @ broadcast_to(b)");
    const Ref a1 = random_ref(t, {1, 11, 30}, 13), b3 = random_ref(t, {4, 30, 25}, 14);
    expect_views(tensor_of(a1).broadcast_to({4, 11, 30}), ref_broadcast(a1, {4, 11, 30}), tensor_of(b3), b3,
                 "broadcast_to(a) @ b");
    // Every row of a the same (a stride-0 dim inside the matrix).
    const Ref row = random_ref(t, {1, 30}, 15);
    expect_views(tensor_of(row).broadcast_to({19, 30}), ref_broadcast(row, {19, 30}), tensor_of(b), b,
                 "broadcast_to(row, [19, 30]) @ b");
  }
}

TEST_P(JitGemmLayouts, SlicedAndPermuted) {
  for (DType t : kFloatTypes) {
    const Ref as = random_ref(t, {30, 81}, 16), b = random_ref(t, {40, 23}, 17);
    // Every other column of a: k = 40, inner stride 2.
    expect_views(wok::slice(tensor_of(as), 1, 1, 81, 2), ref_slice(as, 1, 1, 81, 2), tensor_of(b), b,
                 "a[:, 1::2] @ b");
    // Rows 3..27 of a, and b's columns 5..22.
    const Ref a2 = random_ref(t, {30, 40}, 18);
    expect_views(wok::slice(tensor_of(a2), 0, 3, 27), ref_slice(a2, 0, 3, 27, 1), wok::slice(tensor_of(b), 1, 5, 22),
                 ref_slice(b, 1, 5, 22, 1), "a[3:27] @ b[:, 5:22]");
    // [M, B, K] permuted to [B, M, K].
    const Ref p = random_ref(t, {12, 3, 40}, 19), b3 = random_ref(t, {3, 40, 23}, 20);
    expect_views(wok::permute(tensor_of(p), {1, 0, 2}), ref_permute(p, {1, 0, 2}), tensor_of(b3), b3,
                 "permute(a, [1, 0, 2]) @ b");
  }
}

TEST_P(JitGemmLayouts, TransposedWithEpilogue) {
  for (DType t : kFloatTypes) {
    const Ref a = random_ref(t, {37, 50}, 21), bs = random_ref(t, {43, 50}, 22);
    Tensor y = wok::matmul(tensor_of(a), tensor_of(bs).transpose());
    Ref r = ref_matmul(a, ref_swap_last2(bs));
    apply(Ep::kBiasRow, y, r, 23);
    apply(Ep::kRelu, y, r, 24);
    EXPECT_TRUE(matches(y, r, "relu(a @ b.T + bias) " + wt::dname(t)));
  }
}

// The result of an elementwise chain as a GEMM input.
TEST_P(JitGemmLayouts, ElementwiseInputs) {
  for (DType t : kFloatTypes) {
    const Ref a = random_ref(t, {29, 41}, 25), b = random_ref(t, {41, 35}, 26);
    Tensor y = wok::matmul(tensor_of(a) * 2.0 + 1.0, wok::tanh(tensor_of(b)));
    Ref ra = a;  // a * 2 + 1: 2a is exact, the + 1 rounds once
    for (size_t i = 0; i < ra.v.size(); ++i) {
      ra.v[i] = ra.v[i] * 2 + 1;
      ra.err[i] = 2 * eps_of(t) * (std::fabs(ra.v[i]) + 2);
    }
    const Ref rb = ref_unary(b, [](double x) { return std::tanh(x); }, 1, kTranscendentalUlps, false);
    EXPECT_TRUE(matches(y, ref_matmul(ra, rb), "matmul(a * 2 + 1, tanh(b)) " + wt::dname(t)));
  }
}

TEST_P(JitGemmEpilogue, EachStep) {
  for (DType t : kFloatTypes)
    for (Ep e : kAllEps)
      for (auto [sa, sb] : {std::pair<Shape, Shape>{{37, 53}, {53, 45}}, {{2, 9, 70}, {70, 33}}, {{1, 300}, {300, 17}}}) {
        const Ref a = random_ref(t, sa, 30), b = random_ref(t, sb, 31);
        Tensor y = wok::matmul(tensor_of(a), tensor_of(b));
        Ref r = ref_matmul(a, b);
        apply(e, y, r, 32);
        EXPECT_TRUE(matches(y, r, ep_name(e) + " of " + case_name(t, sa, sb)));
      }
}

TEST_P(JitGemmEpilogue, Casts) {
  // float32 GEMM + bias, then float64: the conversion is exact.
  const Ref a = random_ref(kF32, {33, 70}, 40), b = random_ref(kF32, {70, 21}, 41), bias = random_ref(kF32, {21}, 42);
  Tensor y = (wok::matmul(tensor_of(a), tensor_of(b)) + tensor_of(bias)).astype(kF64);
  Ref r = ref_add(ref_matmul(a, b), bias);
  r.dtype = kF64;
  EXPECT_TRUE(matches(y, r, "astype(matmul + bias, float64)"));

  // To int32 (truncation): any integer between trunc(lo) and trunc(hi) of
  // the reference's interval is right.
  for (DType t : kFloatTypes) {
    const Ref x = random_ref(t, {25, 60}, 43), w = random_ref(t, {60, 19}, 44);
    Tensor yi = wok::cast(wok::matmul(tensor_of(x), tensor_of(w)) * 8.0, DType::kInt32);
    const Ref ri = ref_scale(ref_matmul(x, w), 8);
    ASSERT_EQ(yi.dtype(), DType::kInt32);
    ASSERT_EQ(yi.shape(), ri.shape);
    const std::vector<int32_t> got = yi.to_vector<int32_t>();
    int bad = 0;
    for (size_t i = 0; i < got.size() && bad < 8; ++i) {
      const double lo = std::trunc(ri.v[i] - ri.err[i]), hi = std::trunc(ri.v[i] + ri.err[i]);
      if (got[i] >= lo && got[i] <= hi) continue;
      ++bad;
      ADD_FAILURE() << "cast(matmul * 8, int32) " << wt::dname(t) << " element " << i << ": got " << got[i]
                    << ", want trunc(" << ri.v[i] << " +- " << ri.err[i] << ")";
    }
  }
}

// gelu(matmul(x, w) + b) * 0.5 + r.
TEST_P(JitGemmEpilogue, Chain) {
  for (DType t : kFloatTypes) {
    const Ref x = random_ref(t, {50, 64}, 50), w = random_ref(t, {64, 72}, 51);
    const Ref b = random_ref(t, {72}, 52), res = random_ref(t, {50, 72}, 53);
    Tensor y = wok::gelu(wok::matmul(tensor_of(x), tensor_of(w)) + tensor_of(b)) * 0.5 + tensor_of(res);
    const Ref h = ref_unary(ref_add(ref_matmul(x, w), b), gelu_ref, 1.2, kTranscendentalUlps, true);
    const Ref r = ref_add(ref_scale(h, 0.5), res);
    EXPECT_TRUE(matches(y, r, "gelu(matmul(x, w) + b) * 0.5 + r " + wt::dname(t)));
  }
}

// The matmul's own result is read besides the epilogue's: both must be
// right, so a fused kernel has to store the plain product too.
TEST_P(JitGemmEpilogue, ProductAlsoRead) {
  for (DType t : kFloatTypes) {
    const Ref a = random_ref(t, {40, 30}, 60), b = random_ref(t, {30, 50}, 61);
    Tensor p = wok::matmul(tensor_of(a), tensor_of(b));
    Tensor y = p, z = p;
    Ref rp = ref_matmul(a, b), ry = rp, rz = rp;
    apply(Ep::kBiasRow, y, ry, 62);
    apply(Ep::kTanh, y, ry, 63);
    apply(Ep::kScale, z, rz, 64);
    wok::eval({p, y, z});
    EXPECT_TRUE(matches(p, rp, "matmul " + wt::dname(t)));
    EXPECT_TRUE(matches(y, ry, "tanh(matmul + bias) " + wt::dname(t)));
    EXPECT_TRUE(matches(z, rz, "matmul * scalar " + wt::dname(t)));
  }
}

// Operands that broadcast the product up: the epilogue's output is larger
// than the GEMM's.
TEST_P(JitGemmEpilogue, EpilogueBroadcastsTheProduct) {
  for (DType t : kFloatTypes) {
    const Ref a = random_ref(t, {17, 30}, 70), b = random_ref(t, {30, 23}, 71);
    const Ref big = random_ref(t, {3, 17, 23}, 72), col3 = random_ref(t, {3, 1, 1}, 73);
    Tensor y = wok::relu(wok::matmul(tensor_of(a), tensor_of(b)) + tensor_of(big)) * tensor_of(col3);
    Ref r = ref_unary(ref_add(ref_matmul(a, b), big), [](double x) { return std::max(x, 0.0); }, 1,
                      kTranscendentalUlps, false);
    // * col3: like ref_scale, per batch.
    const Ref c = ref_broadcast(col3, r.shape);
    for (size_t i = 0; i < r.v.size(); ++i) {
      r.v[i] *= c.v[i];
      r.err[i] = std::fabs(c.v[i]) * r.err[i] + 2 * eps_of(t) * std::fabs(r.v[i]);
    }
    EXPECT_TRUE(matches(y, r, "relu(matmul [17, 23] + [3, 17, 23]) * [3, 1, 1] " + wt::dname(t)));
  }
}

// ~30 seeded random matmuls (sizes, dtype, transposed operands, batch),
// each followed by 0-4 random epilogue steps.
TEST_P(JitGemmRandom, MatmulsWithEpilogueChains) {
  std::mt19937 rng(20240611);
  auto pick = [&](uint32_t n) { return static_cast<int64_t>(rng() % n); };
  for (int c = 0; c < 30; ++c) {
    const DType t = pick(2) ? kF64 : kF32;
    const int64_t m = 1 + pick(80), n = 1 + pick(80), k = 1 + pick(80);
    const int64_t batch = pick(4) == 0 ? 1 + pick(3) : 0;  // 0: 2-D
    const bool ta = pick(3) == 0, tb = pick(3) == 0;
    std::vector<Ep> steps(static_cast<size_t>(pick(5)));
    for (Ep& e : steps) e = kAllEps[pick(std::size(kAllEps))];

    Shape sa = ta ? Shape{k, m} : Shape{m, k}, sb = tb ? Shape{n, k} : Shape{k, n};
    if (batch) {
      sa.insert(sa.begin(), batch);
      sb.insert(sb.begin(), batch);
    }
    const uint32_t seed = static_cast<uint32_t>(1000 * c);
    const Ref as = random_ref(t, sa, seed), bs = random_ref(t, sb, seed + 1);
    Tensor a = tensor_of(as), b = tensor_of(bs);
    if (ta) a = wok::transpose(a, -1, -2);
    if (tb) b = wok::transpose(b, -1, -2);
    Tensor y = wok::matmul(a, b);
    Ref r = ref_matmul(ta ? ref_swap_last2(as) : as, tb ? ref_swap_last2(bs) : bs);
    std::string what = "case " + std::to_string(c) + ": " + wt::dname(t) + " m=" + std::to_string(m) +
                       " n=" + std::to_string(n) + " k=" + std::to_string(k) + " batch=" + std::to_string(batch) +
                       (ta ? " a.T" : "") + (tb ? " b.T" : "") + " then";
    for (size_t s = 0; s < steps.size(); ++s) {
      apply(steps[s], y, r, seed + 10 + static_cast<uint32_t>(s));
      what += " ";
      what += ep_name(steps[s]);
    }
    EXPECT_TRUE(matches(y, r, what));
  }
}

TEST_P(JitGemmDTypes, MixedFloatsPromote) {
  const Ref a = random_ref(kF32, {23, 40}, 80), b = random_ref(kF64, {40, 31}, 81);
  EXPECT_TRUE(matches(wok::matmul(tensor_of(a), tensor_of(b)), ref_matmul(a, b), "float32 @ float64"));
  const Ref bias = random_ref(kF32, {31}, 82);
  EXPECT_TRUE(matches(wok::matmul(tensor_of(a), tensor_of(b)) + tensor_of(bias),
                      ref_add(ref_matmul(a, b), bias), "float32 @ float64 + float32 bias"));
}

// Integer matmuls are exact (wrapping), epilogue included.
TEST_P(JitGemmDTypes, Int32WithEpilogue) {
  const int64_t m = 13, k = 29, n = 17;
  const std::vector<int32_t> a = wt::random_values<int32_t>(m * k, -100, 100, 90);
  const std::vector<int32_t> b = wt::random_values<int32_t>(k * n, -100, 100, 91);
  const std::vector<int32_t> bias = wt::random_values<int32_t>(n, -1000, 1000, 92);
  Tensor y = wok::relu(wok::matmul(wok::from_vector(a, {m, k}), wok::from_vector(b, {k, n})) +
                       wok::from_vector(bias, {n})) * 3;
  std::vector<int32_t> want(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = bias[static_cast<size_t>(j)];
      for (int64_t p = 0; p < k; ++p) acc += int64_t{a[static_cast<size_t>(i * k + p)]} * b[static_cast<size_t>(p * n + j)];
      want[static_cast<size_t>(i * n + j)] = static_cast<int32_t>(std::max<int64_t>(acc, 0) * 3);
    }
  EXPECT_TRUE(wt::exact<int32_t>("relu(matmul int32 + bias) * 3", y, want));
}

INSTANTIATE_TEST_SUITE_P(, JitGemmShapes, wt::kBothBackends, wt::backend_param_name);
INSTANTIATE_TEST_SUITE_P(, JitGemmEdges, wt::kBothBackends, wt::backend_param_name);
INSTANTIATE_TEST_SUITE_P(, JitGemmLayouts, wt::kBothBackends, wt::backend_param_name);
INSTANTIATE_TEST_SUITE_P(, JitGemmEpilogue, wt::kBothBackends, wt::backend_param_name);
INSTANTIATE_TEST_SUITE_P(, JitGemmRandom, wt::kBothBackends, wt::backend_param_name);
INSTANTIATE_TEST_SUITE_P(, JitGemmDTypes, wt::kBothBackends, wt::backend_param_name);

// ---- fusion: launch counts under the JIT ------------------------------------------------

// The elementwise chain that consumes a matmul's result runs inside the
// GEMM kernel: one launch per matmul.
class JitGemmFusion : public wt::JitLaunchCounts {};

TEST_F(JitGemmFusion, PlainMatmulIsOneLaunch) {
  const Ref a = random_ref(kF32, {64, 48}, 100), b = random_ref(kF32, {48, 40}, 101);
  Tensor y = wok::matmul(tensor_of(a), tensor_of(b));
  EXPECT_EQ(launches_of({y}), 1);
  EXPECT_TRUE(matches(y, ref_matmul(a, b), "matmul"));
}

TEST_F(JitGemmFusion, BiasReluIsOneLaunch) {
  for (DType t : kFloatTypes) {
    const Ref a = random_ref(t, {64, 48}, 102), b = random_ref(t, {48, 40}, 103), bias = random_ref(t, {40}, 104);
    Tensor y = wok::relu(wok::matmul(tensor_of(a), tensor_of(b)) + tensor_of(bias));
    EXPECT_EQ(launches_of({y}), 1) << "relu(matmul(a, b) + bias) " << wt::dname(t);
    EXPECT_TRUE(matches(y,
                        ref_unary(ref_add(ref_matmul(a, b), bias), [](double x) { return std::max(x, 0.0); }, 1,
                                  kTranscendentalUlps, false),
                        "relu(matmul + bias) " + wt::dname(t)));
  }
}

// A transformer feed-forward block: matmul(gelu(matmul(x, w1) + b1), w2) + b2 + x.
TEST_F(JitGemmFusion, FeedForwardBlockIsTwoLaunches) {
  const Ref x = random_ref(kF32, {64, 48}, 105), w1 = random_ref(kF32, {48, 96}, 106);
  const Ref b1 = random_ref(kF32, {96}, 107), w2 = random_ref(kF32, {96, 48}, 108), b2 = random_ref(kF32, {48}, 109);
  Tensor tx = tensor_of(x);
  Tensor y = wok::matmul(wok::gelu(wok::matmul(tx, tensor_of(w1)) + tensor_of(b1)), tensor_of(w2)) + tensor_of(b2) + tx;
  EXPECT_EQ(launches_of({y}), 2);
  const Ref h = ref_unary(ref_add(ref_matmul(x, w1), b1), gelu_ref, 1.2, kTranscendentalUlps, true);
  EXPECT_TRUE(matches(y, ref_add(ref_add(ref_matmul(h, w2), b2), x), "feed-forward block"));
}

// ---- backends agree ---------------------------------------------------------------------

// The same matmul + epilogue programs under set_backend(kJit) and
// set_backend(kPrecompiled) (expect_backends_agree): each within the bound
// of the reference, and within twice the bound of each other.
TEST(JitGemmBackends, PrecompiledAndJitAgree) {
  for (DType t : kFloatTypes) {
    const Ref x = random_ref(t, {45, 64}, 110), w = random_ref(t, {64, 70}, 111), ws = random_ref(t, {70, 64}, 112);
    const Ref b = random_ref(t, {70}, 113), res = random_ref(t, {45, 70}, 114);
    const Ref w2 = random_ref(t, {70, 64}, 115);
    const Ref p = ref_matmul(x, w);
    const Ref biased = ref_add(p, b);
    const Ref h = ref_unary(biased, gelu_ref, 1.2, kTranscendentalUlps, true);
    const std::vector<Program> programs = {
        {"matmul", [&] { return wok::matmul(tensor_of(x), tensor_of(w)); }, p},
        {"relu(matmul + b)", [&] { return wok::relu(wok::matmul(tensor_of(x), tensor_of(w)) + tensor_of(b)); },
         ref_unary(biased, [](double v) { return std::max(v, 0.0); }, 1, kTranscendentalUlps, false)},
        {"matmul(x, ws.T) * 0.5 + r",
         [&] { return wok::matmul(tensor_of(x), tensor_of(ws).transpose()) * 0.5 + tensor_of(res); },
         ref_add(ref_scale(ref_matmul(x, ref_swap_last2(ws)), 0.5), res)},
        {"gelu(matmul + b) * 0.5 + r",
         [&] { return wok::gelu(wok::matmul(tensor_of(x), tensor_of(w)) + tensor_of(b)) * 0.5 + tensor_of(res); },
         ref_add(ref_scale(h, 0.5), res)},
        {"matmul(gelu(matmul + b), w2) + x",
         [&] {
           Tensor tx = tensor_of(x);
           return wok::matmul(wok::gelu(wok::matmul(tx, tensor_of(w)) + tensor_of(b)), tensor_of(w2)) + tx;
         },
         ref_add(ref_matmul(h, w2), x)},
    };
    expect_backends_agree(programs, " " + wt::dname(t));
  }
}

// ---- errors -------------------------------------------------------------------------------

using wt::throws_naming;

TEST(JitGemmErrors, InnerDimensionsDiffer) {
  Tensor a = wok::zeros({5, 37}), b = wok::zeros({41, 3});
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::matmul(a, b); }, {"matmul", "37", "41"}));
  Tensor a3 = wok::zeros({2, 5, 37}), b3 = wok::zeros({2, 41, 3});
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::matmul(a3, b3); }, {"matmul", "37", "41"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::matmul(wok::zeros({37}), wok::zeros({41})); },
                                             {"matmul", "37", "41"}));
  // A transposed operand: the sizes named are the view's.
  Tensor bt = wok::zeros({3, 41}).transpose();
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::matmul(a, bt); }, {"matmul", "37", "41"}));
}

TEST(JitGemmErrors, BatchDimsDoNotBroadcast) {
  EXPECT_THROW(wok::matmul(wok::zeros({2, 4, 5}), wok::zeros({3, 5, 4})), wok::ShapeError);
}

TEST(JitGemmErrors, ScalarOperand) {
  EXPECT_THROW(wok::matmul(wok::zeros({}), wok::zeros({3, 3})), wok::ShapeError);
}

// wok::matmul promotes bool operands to int32 before recording (as NumPy
// does); the registered op itself rejects bool.
TEST(JitGemmErrors, BoolOperands) {
  Tensor a = wok::from_vector(std::vector<bool>{true, false, true, true, false, true}, {2, 3});
  Tensor b = wok::from_vector(std::vector<bool>{true, true, false, true, true, false}, {3, 2});
  Tensor y = wok::matmul(a, b);
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_TRUE(wt::exact<int32_t>("matmul(bool, bool)", y, {2, 1, 2, 1}));
  EXPECT_TRUE(throws_naming<wok::DTypeError>([&] { wok::call1("matmul", {a, b}); }, {"matmul", "bool"}));
}

}  // namespace
