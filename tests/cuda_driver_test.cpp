// The CUDA backend on a machine without it: the driver loader reports what
// is missing, every use of a CUDA device raises wok::DeviceError naming it,
// and the CPU is untouched. On a GPU machine these tests check the
// matching positive facts instead.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <string>

#include "cuda_test_util.h"
#include "wok/runtime/cuda/cuda_allocator.h"

namespace {

using wok::Device;
using wok::DType;

// Runs fn, which must throw wok::DeviceError whose message contains every
// one of `parts`.
template <typename Fn>
void expect_device_error(Fn fn, const std::vector<std::string>& parts, const char* what) {
  try {
    fn();
    ADD_FAILURE() << what << ": no error";
  } catch (const wok::DeviceError& e) {
    std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << what << ": " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": wrong exception type: " << e.what();
  }
}

TEST(CudaDriver, ReportsNoDriverCleanly) {
  if (wok::cuda_available()) {
    EXPECT_GT(wok::cuda_device_count(), 0);
    EXPECT_TRUE(wok::cuda_unavailable_reason().empty());
    GTEST_SKIP() << "a CUDA device is present: " << wok::cuda_device_name(0);
  }
  EXPECT_EQ(wok::cuda_device_count(), 0);
  std::string reason = wok::cuda_unavailable_reason();
  ASSERT_FALSE(reason.empty());
  // Either the library is missing, or it is there and says there is no GPU.
  EXPECT_TRUE(reason.find("libcuda.so.1") != std::string::npos || reason.find("no CUDA device") != std::string::npos ||
              reason.find("WOK_CUDA_DRIVER_PATH") != std::string::npos || reason.find("cuInit") != std::string::npos)
      << reason;
  std::printf("[ cuda     ] %s\n", reason.c_str());
}

TEST(CudaDriver, DeviceUseNamesWhatIsMissing) {
  if (wok::cuda_available()) GTEST_SKIP() << "a CUDA device is present";
  const std::string reason = wok::cuda_unavailable_reason();
  const Device gpu = Device::cuda(0);
  expect_device_error([&] { wok::from_vector(std::vector<float>{1, 2, 3}, {3}, gpu); }, {"cuda:0", reason},
                      "from_vector on cuda:0");
  expect_device_error([&] { wok::ones({4}, DType::kFloat32, gpu); }, {reason}, "ones on cuda:0");
  expect_device_error([&] { wok::rand({4}, 1, DType::kFloat32, gpu); }, {reason}, "rand on cuda:0");
  wok::Tensor x = wok::from_vector(std::vector<float>{1, 2, 3});
  expect_device_error([&] { x.to(gpu); }, {"cuda:0", reason}, "to(cuda:0)");
  expect_device_error([&] { (x * 2.0f).to(Device::cuda(1)); }, {"cuda:1"}, "pending tensor to(cuda:1)");
  expect_device_error([&] { wok::cuda_compute_capability(0); }, {reason}, "compute capability");
  expect_device_error([&] { wok::cuda_device_name(0); }, {reason}, "device name");
  expect_device_error([&] { wok::cuda_memory_stats(0); }, {reason}, "memory stats");
  expect_device_error([&] { wok::Storage::allocate(64, gpu); }, {reason}, "Storage::allocate");
  // The CPU is unaffected.
  EXPECT_EQ((x * 2.0f).to_vector<float>(), (std::vector<float>{2, 4, 6}));
}

TEST(CudaDriver, DeviceIndexOutOfRangeIsNamed) {
  WOK_SKIP_WITHOUT_GPU();
  const int n = wok::cuda_device_count();
  expect_device_error([&] { wok::zeros({2}, DType::kFloat32, Device::cuda(n)); },
                      {"cuda:" + std::to_string(n), "does not exist"}, "device past the last");
}

TEST(CudaDriver, QueriesOnAGpu) {
  WOK_SKIP_WITHOUT_GPU();
  for (int i = 0; i < wok::cuda_device_count(); ++i) {
    auto [major, minor] = wok::cuda_compute_capability(i);
    EXPECT_GE(major, 7);
    EXPECT_FALSE(wok::cuda_device_name(i).empty());
    std::printf("[ cuda     ] cuda:%d %s sm_%d%d\n", i, wok::cuda_device_name(i).c_str(), major, minor);
  }
}

TEST(CudaAllocator, SizeClassesMirrorTheHostAllocator) {
  using wok::cuda::CudaAllocator;
  EXPECT_EQ(CudaAllocator::size_class(0), CudaAllocator::kMinBlock);
  EXPECT_EQ(CudaAllocator::size_class(1), CudaAllocator::kMinBlock);
  EXPECT_EQ(CudaAllocator::size_class(512), 512u);
  EXPECT_EQ(CudaAllocator::size_class(513), 1024u);    // steps are never below kMinBlock
  EXPECT_EQ(CudaAllocator::size_class(4097), 5120u);  // 4 steps per power of two
  for (size_t b : {size_t{1000}, size_t{4097}, size_t{1} << 20, (size_t{5} << 20) + 3, size_t{123456789}}) {
    size_t c = CudaAllocator::size_class(b);
    EXPECT_GE(c, b);
    EXPECT_LT(static_cast<double>(c - b), 0.25 * static_cast<double>(b) + 512) << b;
    EXPECT_EQ(CudaAllocator::size_class(c), c) << "classes are fixed points";
  }
  EXPECT_EQ(CudaAllocator::size_class((size_t{9} << 20) + 1) % CudaAllocator::kLargeStep, 0u);
}

}  // namespace
