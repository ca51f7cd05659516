// The JIT's int8, uint8, int16, uint16 and uint32 kernels (Note [Narrow
// integers in registers] in jit/x86/vec_emitter.h): one generated kernel
// per fused program, with the bits of the precompiled kernels, which widen
// each op's operands to int32 (uint32: int64) and wrap its result. Lengths of every tail, values
// across each type's range, chains whose intermediates overflow, casts
// between the narrow types and from floats (quantization: nan, infinities
// and out-of-range values), and reductions of widened values.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Tensor;

class JitNarrowInts : public wt::JitLaunchCounts {};

constexpr DType kNarrow[] = {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16, DType::kUInt32};

// n values of t spread over its whole range (both ends included), as a
// tensor of shape `shape` (numel n).
Tensor spread(DType t, wok::Shape shape, uint32_t seed) {
  const int64_t n = wok::numel(shape);
  std::vector<int64_t> v(static_cast<size_t>(n));
  const int64_t lo = t == DType::kInt8 ? -128 : t == DType::kInt16 ? -32768 : 0;
  const int64_t hi = t == DType::kInt8    ? 127
                     : t == DType::kUInt8  ? 255
                     : t == DType::kInt16  ? 32767
                     : t == DType::kUInt16 ? 65535
                                           : 4294967295;
  uint32_t s = seed * 2654435761u + 7;
  for (int64_t k = 0; k < n; ++k) {
    s = s * 1664525u + 1013904223u;
    const int64_t r = static_cast<int64_t>(static_cast<uint64_t>(s) % static_cast<uint64_t>(hi - lo + 1));
    v[static_cast<size_t>(k)] = k % 7 == 0 ? lo : k % 7 == 1 ? hi : lo + r;
  }
  Tensor x = wok::cast(wok::from_vector(v, shape), t);
  wok::eval({x});
  return x;
}

// Bits of every result equal between the JIT and the precompiled kernels,
// and the JIT runs `launches` kernels (1: the program is one generated
// kernel; 0: not checked, for programs left to the precompiled kernels).
void expect_same_as_precompiled(const std::string& what, const std::function<Tensor()>& program, int launches = 1) {
  wok::set_backend(wok::Backend::kJit);
  const Tensor jit = program();
  if (launches > 0) EXPECT_EQ(wt::JitLaunchCounts::launches_of({jit}), launches) << what << ": generated kernels";
  wok::set_backend(wok::Backend::kPrecompiled);
  const Tensor pre = program();
  wok::eval({pre});
  wok::set_backend(wok::Backend::kJit);
  ASSERT_EQ(jit.dtype(), pre.dtype()) << what;
  wok::visit_any_dtype(jit.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> j = jit.to_vector<T>(), p = pre.to_vector<T>();
    ASSERT_EQ(j.size(), p.size()) << what;
    for (size_t k = 0; k < j.size(); ++k) {
      if constexpr (std::is_same_v<T, bool>) ASSERT_EQ(j[k], p[k]) << what << " at " << k;
      else ASSERT_EQ(std::memcmp(&j[k], &p[k], sizeof(T)), 0) << what << " at " << k;
    }
  });
}

TEST_F(JitNarrowInts, ChainsWrapLikeThePrecompiledKernels) {
  for (DType t : kNarrow) {
    for (int64_t n : {1, 3, 7, 8, 15, 16, 17, 31, 33, 64, 1000, 4099}) {
      const Tensor a = spread(t, {n}, 1), b = spread(t, {n}, 2);
      const std::string what = std::string(wok::dtype_name(t)) + "[" + std::to_string(n) + "] ";
      // Overflowing intermediates: each op wraps before the next reads it.
      expect_same_as_precompiled(what + "(a + b) * 3 - (a ^ b)", [&] { return (a + b) * 3 - wok::bitwise_xor(a, b); });
      expect_same_as_precompiled(what + "where(a < b, max(a, b) * 2, -min(a, b))",
                                 [&] { return wok::where(wok::lt(a, b), wok::maximum(a, b) * 2, -wok::minimum(a, b)); });
      expect_same_as_precompiled(what + "abs(a - b) & (a | 5)",
                                 [&] { return wok::bitwise_and(wok::abs(a - b), wok::bitwise_or(a, 5)); });
      // uint32 divides in int64, which the JIT leaves to the precompiled
      // kernels (x86 has no vector integer division to build it from).
      expect_same_as_precompiled(what + "floor_divide(a, b) + remainder(a * 7, b)",
                                 [&] { return wok::floor_divide(a, b) + wok::remainder(a * 7, b); },
                                 t == DType::kUInt32 ? 0 : 1);
      for (DType u : kNarrow)
        expect_same_as_precompiled(what + "cast(cast(a * 5, " + std::string(wok::dtype_name(u)) + "), t) + 1",
                                   [&] { return wok::cast(wok::cast(a * 5, u), t) + 1; });
    }
  }
}

TEST_F(JitNarrowInts, FloatsCastToNarrowTypesAsThePrecompiledKernelsDo) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 127.9f, 128.0f, -128.9f, 255.5f, 256.0f, 300.7f,
                          -300.7f, 32767.5f, 32768.0f, 65535.9f, 65536.0f, 1e9f, -1e9f, 3e9f, 4294967040.0f,
                          4294967296.0f, 1e19f, -1e19f, inf, -inf, nan};
  for (int k = 0; k < 200; ++k) v.push_back(static_cast<float>(k * k) * 1.37f - 20000.0f);
  const Tensor x = wok::from_vector(v);
  for (DType t : kNarrow) {
    const std::string what = "float32 -> " + std::string(wok::dtype_name(t));
    // Quantization: scale, then the cast (x86's conversion, then a wrap:
    // Note [Float to integer casts] in runtime/element_cast.h).
    expect_same_as_precompiled(what, [&] { return wok::cast(x * 1.0f, t); });
    expect_same_as_precompiled(what + " (float64)", [&] { return wok::cast(wok::cast(x, DType::kFloat64) * 2.0, t); });
  }
}

TEST_F(JitNarrowInts, RowsOfWidenedValuesReduceInOneKernel) {
  for (DType t : kNarrow) {
    for (int64_t cols : {5, 16, 100, 1001}) {
      const Tensor a = spread(t, {6, cols}, 3);
      const std::string what = std::string(wok::dtype_name(t)) + "[6, " + std::to_string(cols) + "] ";
      expect_same_as_precompiled(what + "max(cast(a, int32) * 3)",
                                 [&] { return wok::max(wok::cast(a, DType::kInt32) * 3, {1}); });
      expect_same_as_precompiled(what + "sum(cast(a, int64)) per row",
                                 [&] { return wok::sum(wok::cast(a + 1, DType::kInt64), {1}); });
      expect_same_as_precompiled(what + "argmax(a)", [&] { return wok::argmax(a * 3, {1}); });
    }
  }
}

// Dequantization: a narrow integer times a float32 scale computes in
// float32 in both backends, so it fuses. rsqrt(int8) does not: its
// precompiled kernel computes in float64 (Note [Narrow integers read as
// floats] in jit/fusion_policy.cpp), so it stays there, with its bits.
TEST_F(JitNarrowInts, DequantizationFusesAndOpsReadAsAnotherFloatStayPrecompiled) {
  const Tensor scale = wok::from_vector(std::vector<float>{0.0371f, 0.5f, 3.25f});
  for (DType t : kNarrow) {
    const Tensor q = spread(t, {257, 3}, 4);
    const std::string what = std::string(wok::dtype_name(t)) + " ";
    expect_same_as_precompiled(what + "relu(cast(q, float32) * scale + 0.25)",
                               [&] { return wok::relu(wok::cast(q, DType::kFloat32) * scale + 0.25f); });
    expect_same_as_precompiled(what + "q * 0.0371f - 1", [&] { return q * 0.0371f - 1.0f; });
    expect_same_as_precompiled(what + "rsqrt(q + 1)", [&] { return wok::rsqrt(q + 1); }, 0);
    expect_same_as_precompiled(what + "silu(q)", [&] { return wok::silu(q); }, 0);
  }
}

}  // namespace
