// The widening adapter over a device's own scratch and conversions
// (DeviceWidening in runtime/widening.h): what it asks of the device, in
// which dtypes, and that every scratch buffer is handed back, also when the
// kernel throws. The CUDA one is this adapter with device memory and the
// cast kernel; tests/cuda_gpu_test.cpp runs it on a GPU.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "wok/runtime/error.h"
#include "wok/runtime/half.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/widening.h"

namespace {

using wok::DType;
using wok::TensorRef;

// Host scratch and conversions, with a log of what the adapter asked for.
struct RecordingDevice {
  std::vector<size_t> scratch_bytes;
  std::vector<std::pair<DType, DType>> converts;
  std::vector<size_t> released;  // holders per release call

  wok::DeviceWidening widening(const std::string& name = "test") {
    const wok::DeviceWidening& host = wok::host_widening();
    return {name,
            [this, &host](const wok::KernelContext& ctx, size_t bytes) {
              scratch_bytes.push_back(bytes);
              return host.scratch(ctx, bytes);
            },
            [this, &host](const wok::KernelContext& ctx, const TensorRef& from, const TensorRef& to) {
              converts.emplace_back(from.dtype, to.dtype);
              host.convert(ctx, from, to);
            },
            [this](const wok::KernelContext&, std::vector<std::shared_ptr<void>>& holders) {
              released.push_back(holders.size());
              holders.clear();
            }};
  }
};

// add's kernel for float32 only: refuses anything else, so a test sees
// what the adapter handed it.
void add_float32(const wok::KernelContext& ctx) {
  for (const TensorRef& t : ctx.inputs)
    if (t.dtype != DType::kFloat32) throw std::logic_error("input not widened");
  if (ctx.outputs[0].dtype != DType::kFloat32) throw std::logic_error("output not widened");
  const float* a = ctx.inputs[0].as<float>();
  const float* b = ctx.inputs[1].as<float>();
  float* y = ctx.outputs[0].as<float>();
  for (int64_t i = 0; i < ctx.outputs[0].numel(); ++i) y[i] = a[i] + b[i];
}

TEST(WideningAdapter, UsesTheDevicesScratchAndConversionsAndReleasesEveryBuffer) {
  const wok::RegisteredOp& add = wok::OpRegistry::global().get("add");
  RecordingDevice dev;
  const wok::KernelFn fn = wok::widening_kernel(add_float32, wok::dtype_bit(DType::kFloat32), {}, dev.widening());
  const wok::Shape shape{3};
  std::vector<wok::half> a{wok::half(1.0f), wok::half(2048.0f), wok::half(0.1f)};
  std::vector<wok::half> b{wok::half(0.25f), wok::half(1.0f), wok::half(0.2f)}, y(3);
  const TensorRef in[] = {{a.data(), &shape, DType::kFloat16}, {b.data(), &shape, DType::kFloat16}};
  const TensorRef out[] = {{y.data(), &shape, DType::kFloat16}};
  const wok::Attrs attrs;
  fn(wok::KernelContext{add, attrs, in, out, wok::Device::cpu()});

  // Each operand widened into float32 scratch, the result rounded once.
  EXPECT_EQ(dev.scratch_bytes, (std::vector<size_t>{12, 12, 12}));
  EXPECT_EQ(dev.converts, (std::vector<std::pair<DType, DType>>{
                              {DType::kFloat16, DType::kFloat32},
                              {DType::kFloat16, DType::kFloat32},
                              {DType::kFloat32, DType::kFloat16}}));
  EXPECT_EQ(dev.released, (std::vector<size_t>{3}));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(y[i].bits, wok::half(float(a[i]) + float(b[i])).bits) << i;  // 2048 + 1 rounds to 2048 once

  // Operands of the native dtype go straight through: no scratch.
  std::vector<float> fa{1, 2, 3}, fb{4, 5, 6}, fy(3);
  const TensorRef fin[] = {{fa.data(), &shape, DType::kFloat32}, {fb.data(), &shape, DType::kFloat32}};
  const TensorRef fout[] = {{fy.data(), &shape, DType::kFloat32}};
  fn(wok::KernelContext{add, attrs, fin, fout, wok::Device::cpu()});
  EXPECT_EQ(fy, (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(dev.scratch_bytes.size(), 3u);
  EXPECT_EQ(dev.released.size(), 1u);
}

TEST(WideningAdapter, ReleasesTheScratchWhenTheKernelThrows) {
  const wok::RegisteredOp& add = wok::OpRegistry::global().get("add");
  RecordingDevice dev;
  const wok::KernelFn fn = wok::widening_kernel([](const wok::KernelContext&) { throw wok::DeviceError("launch failed"); },
                                                wok::dtype_bit(DType::kFloat32), {}, dev.widening());
  const wok::Shape shape{2};
  std::vector<wok::bfloat16> a(2), b(2), y(2);
  const TensorRef in[] = {{a.data(), &shape, DType::kBFloat16}, {b.data(), &shape, DType::kBFloat16}};
  const TensorRef out[] = {{y.data(), &shape, DType::kBFloat16}};
  const wok::Attrs attrs;
  EXPECT_THROW(fn(wok::KernelContext{add, attrs, in, out, wok::Device::cpu()}), wok::DeviceError);
  EXPECT_EQ(dev.released, (std::vector<size_t>{3}));  // both inputs' and the output's
}

TEST(WideningAdapter, ADtypeWithoutAComputeDtypeIsRefusedNamingTheDevice) {
  const wok::RegisteredOp& add = wok::OpRegistry::global().get("add");
  RecordingDevice dev;
  const wok::KernelFn fn =
      wok::widening_kernel(add_float32, wok::dtype_bit(DType::kFloat32), {}, dev.widening("CUDA"));
  const wok::Shape shape{2};
  std::vector<uint64_t> a(2), b(2), y(2);
  const TensorRef in[] = {{a.data(), &shape, DType::kUInt64}, {b.data(), &shape, DType::kUInt64}};
  const TensorRef out[] = {{y.data(), &shape, DType::kUInt64}};
  const wok::Attrs attrs;
  try {
    fn(wok::KernelContext{add, attrs, in, out, wok::Device::cpu()});
    FAIL() << "expected a DTypeError";
  } catch (const wok::DTypeError& e) {
    EXPECT_STREQ(e.what(), "the CUDA kernel of op 'add' does not take uint64");
  }
  EXPECT_TRUE(dev.scratch_bytes.empty());
  EXPECT_EQ(dev.released, (std::vector<size_t>{0}));
}

// The CUDA kernels' widening is set once, when the built-in CUDA kernels
// are registered (with or without a GPU: registering touches no driver).
TEST(WideningAdapter, ADevicesWideningIsSetOnce) {
  RecordingDevice dev;
  for (wok::DeviceType d : {wok::DeviceType::kCPU, wok::DeviceType::kCUDA})
    EXPECT_THROW(wok::OpRegistry::global().set_device_widening(d, dev.widening()), wok::RegistryError);
}

}  // namespace
