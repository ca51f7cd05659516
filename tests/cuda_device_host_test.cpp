// The device library's uint64 primitives (templates/wok_device.cuh)
// compiled as host C++ and checked against the CPU's kernels, value for
// value: uint64 has no wider compute dtype, so its CUDA kernels call these
// overloads directly (wrapping arithmetic, unsigned division without the
// INT_MIN / -1 rule, logical shifts, the float-to-uint64 casts of Note
// [Float to integer casts]). Without a GPU this is the only place they
// run; NVRTC compiles every op on uint64 in cuda_formula_kernel_test.cpp.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

namespace device {
#define WOK_DEVICE inline
// The launch geometry the library's index helpers read: unused here.
struct Dim3 {
  unsigned x = 0;
};
inline Dim3 blockIdx, blockDim, gridDim, threadIdx;
// CUDA declares these in the global namespace; the host's are in std.
using std::isinf;
using std::isnan;
using std::signbit;
#include "../templates/wok_device.cuh"
#undef WOK_DEVICE
}  // namespace device

namespace {

namespace dw = device::wok;
using wok::DType;
using wok::Tensor;
using u64 = unsigned long long;

// Edges of the unsigned range and of int64's, small values and divisors.
std::vector<u64> samples() {
  const u64 max = std::numeric_limits<u64>::max();
  return {0, 1, 2, 3, 7, 63, 64, 65, 255, 0x80000000ull, 0xFFFFFFFFull, 0x100000000ull, (1ull << 53) + 1,
          0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull, 0x8000000000000001ull, max - 1, max};
}

struct Pairs {
  std::vector<u64> a, b;
};
Pairs all_pairs() {
  Pairs p;
  for (u64 x : samples())
    for (u64 y : samples()) p.a.push_back(x), p.b.push_back(y);
  return p;
}

std::vector<u64> on_cpu(const Tensor& t) {
  std::vector<uint64_t> v = t.to_vector<uint64_t>();
  return std::vector<u64>(v.begin(), v.end());
}

Tensor u64_tensor(const std::vector<u64>& v) { return wt::tensor(std::vector<uint64_t>(v.begin(), v.end())); }

TEST(CudaDeviceOnTheHost, Uint64ArithmeticDivisionAndShiftsMatchTheCpu) {
  const Pairs p = all_pairs();
  const Tensor a = u64_tensor(p.a), b = u64_tensor(p.b);
  struct Binary {
    const char* name;
    Tensor (*cpu)(const Tensor&, const Tensor&);
    u64 (*dev)(u64, u64);
  };
  const Binary ops[] = {
      {"add", [](const Tensor& x, const Tensor& y) { return wok::add(x, y); }, [](u64 x, u64 y) { return dw::add(x, y); }},
      {"sub", [](const Tensor& x, const Tensor& y) { return wok::sub(x, y); }, [](u64 x, u64 y) { return dw::sub(x, y); }},
      {"mul", [](const Tensor& x, const Tensor& y) { return wok::mul(x, y); }, [](u64 x, u64 y) { return dw::mul(x, y); }},
      {"maximum", [](const Tensor& x, const Tensor& y) { return wok::maximum(x, y); },
       [](u64 x, u64 y) { return dw::maximum(x, y); }},
      {"minimum", [](const Tensor& x, const Tensor& y) { return wok::minimum(x, y); },
       [](u64 x, u64 y) { return dw::minimum(x, y); }},
      {"pow", [](const Tensor& x, const Tensor& y) { return wok::pow(x, y); }, [](u64 x, u64 y) { return dw::pow_(x, y); }},
      {"fmod", [](const Tensor& x, const Tensor& y) { return wok::fmod(x, y); }, [](u64 x, u64 y) { return dw::fmod_(x, y); }},
      {"floor_divide", [](const Tensor& x, const Tensor& y) { return wok::floor_divide(x, y); },
       [](u64 x, u64 y) { return dw::floor_div(x, y); }},
      {"bitwise_left_shift", [](const Tensor& x, const Tensor& y) { return wok::bitwise_left_shift(x, y); },
       [](u64 x, u64 y) { return dw::shl(x, y); }},
      {"bitwise_right_shift", [](const Tensor& x, const Tensor& y) { return wok::bitwise_right_shift(x, y); },
       [](u64 x, u64 y) { return dw::shr(x, y); }},
  };
  for (const Binary& op : ops) {
    const std::vector<u64> cpu = on_cpu(op.cpu(a, b));
    ASSERT_EQ(cpu.size(), p.a.size()) << op.name;
    for (size_t i = 0; i < cpu.size(); ++i)
      ASSERT_EQ(op.dev(p.a[i], p.b[i]), cpu[i]) << op.name << "(" << p.a[i] << ", " << p.b[i] << ")";
  }
  const Tensor x = u64_tensor(samples());
  const std::vector<u64> neg = on_cpu(wok::neg(x)), abs = on_cpu(wok::abs(x));
  for (size_t i = 0; i < samples().size(); ++i) {
    EXPECT_EQ(dw::neg(samples()[i]), neg[i]) << "neg(" << samples()[i] << ")";
    EXPECT_EQ(dw::abs(samples()[i]), abs[i]) << "abs(" << samples()[i] << ")";
  }
}

TEST(CudaDeviceOnTheHost, FloatToUint64CastsMatchTheCpu) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> d = {0.0,   -0.0,   0.7,    1.5,     -1.5,    -1.0,   255.9,  0x1p53,        0x1p63 - 1024,
                                 0x1p63, 0x1p63 + 2048, 1e19, 0x1p64 - 2048, 0x1p64, 1e30, -1e30, inf, -inf, nan};
  const std::vector<uint64_t> from_double = wok::cast(wt::tensor(d), DType::kUInt64).to_vector<uint64_t>();
  std::vector<float> f(d.begin(), d.end());
  const std::vector<uint64_t> from_float = wok::cast(wt::tensor(f), DType::kUInt64).to_vector<uint64_t>();
  for (size_t i = 0; i < d.size(); ++i) {
    EXPECT_EQ(dw::cast<u64>(d[i]), from_double[i]) << "double " << d[i];
    EXPECT_EQ(dw::cast<u64>(f[i]), from_float[i]) << "float " << f[i];
  }
  // And back: to float64, float32 and the half types, rounded once.
  const Tensor x = u64_tensor(samples());
  const std::vector<double> to_double = wok::cast(x, DType::kFloat64).to_vector<double>();
  const std::vector<float> to_float = wok::cast(x, DType::kFloat32).to_vector<float>();
  const std::vector<wok::half> to_half = wok::cast(x, DType::kFloat16).to_vector<wok::half>();
  const std::vector<wok::bfloat16> to_bf16 = wok::cast(x, DType::kBFloat16).to_vector<wok::bfloat16>();
  for (size_t i = 0; i < samples().size(); ++i) {
    const u64 v = samples()[i];
    EXPECT_EQ(dw::cast<double>(v), to_double[i]) << v;
    EXPECT_EQ(dw::cast<float>(v), to_float[i]) << v;
    EXPECT_EQ(dw::cast<dw::f16>(v).bits, to_half[i].bits) << v;
    EXPECT_EQ(dw::cast<dw::bf16>(v).bits, to_bf16[i].bits) << v;
  }
}

}  // namespace
