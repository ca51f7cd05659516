// NCCL opened at run time (runtime/dist/nccl_loader.h) and the CUDA
// collectives over it (runtime/dist/nccl_collective.h). Without a GPU:
// the loader finds the library (where one is installed), names what is
// missing, agrees with nccl.h, and a CUDA collective fails with a clear
// error. With a GPU (scripts/gpu-check): a one-rank communicator runs
// every collective on wok's CUDA tensors.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "wok/runtime/cuda/cuda_stream.h"
#include "wok/runtime/dist/group_table.h"
#include "wok/runtime/dist/nccl_collective.h"
#include "wok/runtime/dist/nccl_loader.h"
#include "wok/runtime/op_registry.h"

namespace {

namespace wd = wok::dist;
namespace abi = wok::dist::nccl_abi;
using wok::Device;
using wok::DType;
using wok::Tensor;

const char* const kNcclFiles[] = {"/usr/local/cuda/lib/libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2",
                                  "/usr/lib/x86_64-linux-gnu/libnccl.so.2", "/usr/lib/aarch64-linux-gnu/libnccl.so.2"};
const char* const kNcclHeader = "/usr/local/cuda/include/nccl.h";

bool nccl_file_present() {
  for (const char* f : kNcclFiles)
    if (std::filesystem::exists(f)) return true;
  return false;
}

// The library from the default search (fresh, whatever WOK_NCCL_PATH says),
// or a skip when none is installed here.
#define WOK_LOAD_NCCL_OR_SKIP(var)                                                                \
  absl::StatusOr<const wd::Nccl*> var##_or = wd::load_nccl_from("");                              \
  if (!var##_or.ok() && !nccl_file_present())                                                     \
    GTEST_SKIP() << "no NCCL installed: " << var##_or.status().message();                         \
  ASSERT_TRUE(var##_or.ok()) << var##_or.status().message();                                      \
  const wd::Nccl& var = **var##_or

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(NcclLoader, FindsTheLibraryWhenInstalled) {
  WOK_LOAD_NCCL_OR_SKIP(n);
  EXPECT_FALSE(n.path.empty());
  for (void* fn : {reinterpret_cast<void*>(n.api.ncclAllReduce), reinterpret_cast<void*>(n.api.ncclCommInitRank),
                   reinterpret_cast<void*>(n.api.ncclGroupEnd), reinterpret_cast<void*>(n.api.ncclRecv)})
    EXPECT_NE(fn, nullptr);
  // The process-wide copy agrees unless WOK_NCCL_PATH points elsewhere.
  if (!std::getenv("WOK_NCCL_PATH")) {
    EXPECT_TRUE(wd::nccl_available()) << wd::nccl_unavailable_reason();
    EXPECT_EQ(wd::nccl_unavailable_reason(), "");
  }
}

TEST(NcclLoader, MissingPathNamesWokNcclPath) {
  const std::string path = "/nonexistent/wok-test/libnccl.so.2";
  absl::StatusOr<const wd::Nccl*> n = wd::load_nccl_from(path);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), absl::StatusCode::kNotFound);
  const std::string msg(n.status().message());
  EXPECT_NE(msg.find("NCCL is not available"), std::string::npos) << msg;
  EXPECT_NE(msg.find("WOK_NCCL_PATH"), std::string::npos) << msg;
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST(NcclLoader, ALibraryThatIsNotNcclNamesTheMissingSymbols) {
  absl::StatusOr<const wd::Nccl*> n = wd::load_nccl_from("libm.so.6");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string msg(n.status().message());
  EXPECT_NE(msg.find("libm.so.6"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ncclGetVersion"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ncclCommInitRank"), std::string::npos) << msg;
}

TEST(NcclLoader, VersionStringFollowsNcclsEncoding) {
  wd::Nccl n;
  n.version = 22703;
  EXPECT_EQ(n.version_str(), "2.27.3");
  n.version = 21003;
  EXPECT_EQ(n.version_str(), "2.10.3");
  n.version = 2804;
  EXPECT_EQ(n.version_str(), "2.8.4");
}

TEST(NcclLoader, VersionIsPlausible) {
  WOK_LOAD_NCCL_OR_SKIP(n);
  EXPECT_GE(n.version, 2700) << n.version;  // 2.7.0: send/recv
  EXPECT_LT(n.version, 1000000) << n.version;
  EXPECT_TRUE(std::regex_match(n.version_str(), std::regex(R"(2\.\d+\.\d+)"))) << n.version_str();
  int again = 0;
  ASSERT_EQ(n.api.ncclGetVersion(&again), abi::kSuccess);
  EXPECT_EQ(again, n.version);
  // The header next to this library, when it is the same release.
  if (std::filesystem::exists(kNcclHeader) && n.path.rfind("/usr/local/cuda/", 0) == 0) {
    std::smatch m;
    const std::string h = read_file(kNcclHeader);
    if (std::regex_search(h, m, std::regex(R"(#define NCCL_VERSION_CODE (\d+))"))) {
      EXPECT_EQ(std::stoi(m[1]), n.version) << n.path << " vs " << kNcclHeader;
    }
  }
}

// The declarations of nccl_loader.h against nccl.h's own, read as text (wok
// builds without NCCL's headers, and nccl.h needs CUDA's).
TEST(NcclLoader, DeclarationsMatchNcclHeader) {
  if (!std::filesystem::exists(kNcclHeader)) GTEST_SKIP() << "no " << kNcclHeader;
  const std::string h = read_file(kNcclHeader);
  auto value = [&](const std::string& name) {
    std::smatch m;
    if (!std::regex_search(h, m, std::regex("\\b" + name + "\\s*=\\s*(\\d+)"))) return -1;
    return std::stoi(m[1]);
  };
  EXPECT_EQ(value("ncclSuccess"), abi::kSuccess);
  EXPECT_EQ(value("ncclInProgress"), abi::kInProgress);
  EXPECT_EQ(value("ncclInt8"), abi::kInt8);
  EXPECT_EQ(value("ncclUint8"), abi::kUint8);
  EXPECT_EQ(value("ncclInt32"), abi::kInt32);
  EXPECT_EQ(value("ncclInt64"), abi::kInt64);
  EXPECT_EQ(value("ncclFloat32"), abi::kFloat32);
  EXPECT_EQ(value("ncclFloat64"), abi::kFloat64);
  EXPECT_EQ(value("ncclSum"), abi::kSum);
  EXPECT_EQ(value("ncclProd"), abi::kProd);
  EXPECT_EQ(value("ncclMax"), abi::kMax);
  EXPECT_EQ(value("ncclMin"), abi::kMin);
  EXPECT_EQ(value("ncclAvg"), abi::kAvg);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(h, m, std::regex(R"(#define NCCL_UNIQUE_ID_BYTES (\d+))")));
  EXPECT_EQ(static_cast<size_t>(std::stoi(m[1])), sizeof(abi::UniqueId));
}

// No GPU is needed to make an id (it names a bootstrap socket); where this
// machine cannot, the failure carries NCCL's error string.
TEST(NcclLoader, UniqueIdWorksOrNamesNcclsError) {
  WOK_LOAD_NCCL_OR_SKIP(n);
  abi::UniqueId id{};
  const abi::Result r = n.api.ncclGetUniqueId(&id);
  if (r == abi::kSuccess) {
    bool nonzero = false;
    for (char c : id.internal) nonzero |= c != 0;
    EXPECT_TRUE(nonzero);
    return;
  }
  const std::string text = n.error_text("ncclGetUniqueId", r);
  EXPECT_EQ(text.rfind("ncclGetUniqueId failed: ", 0), 0u) << text;
  EXPECT_GT(text.size(), std::string("ncclGetUniqueId failed: ").size()) << text;
}

TEST(NcclCollective, EveryCollectiveHasACudaKernel) {
  for (const char* op : {"dist.all_reduce", "dist.all_gather", "dist.reduce_scatter", "dist.broadcast",
                         "dist.all_to_all", "dist.send", "dist.recv"}) {
    const wok::RegisteredOp* r = wok::OpRegistry::global().find(op);
    ASSERT_NE(r, nullptr) << op;
    EXPECT_NE(r->kernel(wok::DeviceType::kCUDA), nullptr) << op;
  }
}

// Without a GPU a CUDA collective reports the missing device, naming it,
// instead of handing host pointers to NCCL.
TEST(NcclCollective, WithoutAGpuRaisesAClearError) {
  if (wok::cuda_available()) GTEST_SKIP() << "a CUDA device is present (NcclGpu tests cover it)";
  std::vector<float> in(4, 1.0f), out(4, 0.0f);
  wok::Shape shape = {4};
  wd::CollectiveCall call;
  call.group = wok::dist::world().id();
  call.in = in.data();
  call.out = out.data();
  call.in_shape = &shape;
  call.out_shape = &shape;
  try {
    wd::run_nccl_collective(call, 0, nullptr);
    FAIL() << "expected an error";
  } catch (const wok::Error& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(dynamic_cast<const wok::DeviceError*>(&e) || dynamic_cast<const wok::DistError*>(&e)) << msg;
    EXPECT_NE(msg.find("CUDA"), std::string::npos) << msg;
  }
  // Nothing in the NCCL path may have touched the host buffers.
  EXPECT_EQ(out, std::vector<float>(4, 0.0f));
  // A CUDA tensor cannot be made here at all.
  EXPECT_THROW(
      {
        Tensor t = wok::zeros({4}, DType::kFloat32, Device::cuda(0));
        wok::eval({wok::dist::all_reduce(t)});
      },
      wok::Error);
}

// ---- on a GPU: one rank (scripts/gpu-check) ----------------------------------------------

class NcclGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    WOK_SKIP_WITHOUT_GPU();
    if (!wd::nccl_available()) GTEST_SKIP() << wd::nccl_unavailable_reason();
    if (wok::dist::size() != 1) GTEST_SKIP() << "run in a single process";
  }
};

void* device_ptr(const Tensor& t) { return t.impl()->storage()->data(); }

Tensor on_gpu(const Tensor& t) {
  Tensor g = t.to(Device::cuda(0));
  wok::eval({g});
  return g;
}

// The loader's declarations at work: a communicator of one and an
// all_reduce on wok's device memory, straight through the API table.
TEST_F(NcclGpu, OneRankCommunicatorThroughTheLoader) {
  const wd::Nccl& n = **wd::nccl();
  wok::cuda::set_device(0);
  abi::UniqueId id{};
  ASSERT_EQ(n.api.ncclGetUniqueId(&id), abi::kSuccess) << n.error_text("ncclGetUniqueId", -1);
  abi::Comm comm = nullptr;
  abi::Result r = n.api.ncclCommInitRank(&comm, 1, id, 0);
  ASSERT_EQ(r, abi::kSuccess) << n.error_text("ncclCommInitRank", r);
  Tensor x = on_gpu(wok::from_vector(std::vector<float>{1, 2, 3, 4}, {4}));
  Tensor y = on_gpu(wok::full({4}, wok::Scalar(-1.0f)));
  wok::cuda::CudaStream& s = wok::cuda::current_stream(0);
  r = n.api.ncclAllReduce(device_ptr(x), device_ptr(y), 4, abi::kFloat32, abi::kSum, comm, s.handle());
  ASSERT_EQ(r, abi::kSuccess) << n.error_text("ncclAllReduce", r, comm);
  s.synchronize();
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  abi::Result async = -1;
  EXPECT_EQ(n.api.ncclCommGetAsyncError(comm, &async), abi::kSuccess);
  EXPECT_EQ(async, abi::kSuccess);
  EXPECT_EQ(n.api.ncclCommDestroy(comm), abi::kSuccess);
}

// run_nccl_collective over the world (one rank): each collective's result
// is its input, written by NCCL into a buffer that held something else.
TEST_F(NcclGpu, EveryCollectiveOverAGroupOfOne) {
  struct Case {
    wd::CollectiveKind kind;
    wd::ReduceOp reduce;
    DType dtype;
  };
  const Case cases[] = {
      {wd::CollectiveKind::kAllReduce, wd::ReduceOp::kSum, DType::kFloat32},
      {wd::CollectiveKind::kAllReduce, wd::ReduceOp::kMean, DType::kFloat64},
      {wd::CollectiveKind::kAllReduce, wd::ReduceOp::kProd, DType::kInt32},
      {wd::CollectiveKind::kAllReduce, wd::ReduceOp::kMin, DType::kInt64},
      {wd::CollectiveKind::kAllReduce, wd::ReduceOp::kSum, DType::kBool},
      {wd::CollectiveKind::kAllGather, wd::ReduceOp::kSum, DType::kFloat32},
      {wd::CollectiveKind::kReduceScatter, wd::ReduceOp::kMax, DType::kFloat32},
      {wd::CollectiveKind::kBroadcast, wd::ReduceOp::kSum, DType::kInt32},
      {wd::CollectiveKind::kAllToAll, wd::ReduceOp::kSum, DType::kFloat32},
      {wd::CollectiveKind::kSend, wd::ReduceOp::kSum, DType::kFloat32},
  };
  for (const Case& c : cases) {
    wd::CollectiveCall call;
    call.kind = c.kind;
    call.reduce = c.reduce;
    call.dtype = c.dtype;
    call.group = wok::dist::world().id();
    call.peer = 0;
    SCOPED_TRACE(call.kind == wd::CollectiveKind::kAllReduce ? std::string(wd::reduce_op_name(c.reduce))
                                                              : std::string(wd::collective_name(c.kind)));
    Tensor host = wok::cast(wok::from_vector(std::vector<float>{1, 0, 3, 4, 0, 6}, {3, 2}), c.dtype);
    Tensor x = on_gpu(host);
    Tensor y = on_gpu(wok::cast(wok::full({3, 2}, wok::Scalar(7.0f)), c.dtype));
    wok::Shape shape = {3, 2};
    call.in = device_ptr(x);
    call.out = device_ptr(y);
    call.in_shape = &shape;
    call.out_shape = &shape;
    wok::cuda::CudaStream& s = wok::cuda::current_stream(0);
    wd::run_nccl_collective(call, 0, s.handle());
    s.synchronize();
    EXPECT_EQ(wok::cast(y, DType::kFloat64).to_vector<double>(), wok::cast(host, DType::kFloat64).to_vector<double>());
  }
}

// The registered CUDA kernel of dist.all_reduce, called as the runtime
// calls it: attributes from the op's schema, the current stream.
TEST_F(NcclGpu, RegisteredKernelRunsOnTheCurrentStream) {
  const wok::RegisteredOp& op = wok::OpRegistry::global().get("dist.all_reduce");
  const wok::KernelFn* fn = op.kernel(wok::DeviceType::kCUDA);
  ASSERT_NE(fn, nullptr);
  std::vector<wok::AttrValue> values;
  for (const wok::AttrSpec& spec : op.def().attrs) {
    if (spec.name == "group") values.emplace_back(int64_t{wok::dist::world().id()});
    else if (spec.name == "size") values.emplace_back(int64_t{1});
    else if (spec.name == "reduce") values.emplace_back(int64_t{static_cast<int>(wd::ReduceOp::kMax)});
    else if (spec.name == "peer") values.emplace_back(int64_t{-1});
    else FAIL() << "unexpected attribute " << spec.name;
  }
  wok::Attrs attrs(&op.def().attrs, values);
  Tensor x = on_gpu(wok::from_vector(std::vector<float>{5, -1, 2}, {3}));
  Tensor y = on_gpu(wok::zeros({3}));
  wok::Shape shape = {3};
  const wok::TensorRef in[] = {{device_ptr(x), &shape, DType::kFloat32}};
  const wok::TensorRef out[] = {{device_ptr(y), &shape, DType::kFloat32}};
  wok::KernelContext ctx{op, attrs, in, out, Device::cuda(0)};
  (*fn)(ctx);
  wok::cuda::current_stream(0).synchronize();
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{5, -1, 2}));
}

// Two ranks under mpirun sharing cuda:0 (scripts/gpu-check on a one-GPU
// machine): NCCL refuses two ranks on one GPU since 2.5 ("Duplicate GPU
// detected"), so this checks that the frontend's all_reduce reaches NCCL
// through the op's CUDA kernel, that making the communicator (two MPI
// exchanges) completes on both ranks, and that the refusal comes back as
// an error on every rank instead of a hang. Where NCCL does allow it, the
// sum must be right.
TEST(NcclGpuTwoRanks, AllReduceOnOneSharedGpu) {
  if (wok::dist::size() != 2) GTEST_SKIP() << "run under mpirun -np 2 (scripts/gpu-check)";
  WOK_SKIP_WITHOUT_GPU();
  if (!wd::nccl_available()) GTEST_SKIP() << wd::nccl_unavailable_reason();
  const int rank = wok::dist::rank();
  Tensor x = wok::full({4}, wok::Scalar(static_cast<float>(rank + 1)), Device::cuda(0));
  try {
    std::vector<float> got = wok::dist::all_reduce(x).to_vector<float>();
    EXPECT_EQ(got, std::vector<float>(4, 3.0f));
    std::printf("rank %d: NCCL ran two ranks on one GPU\n", rank);
  } catch (const wok::Error& e) {
    const std::string msg = e.what();
    std::printf("rank %d: %s\n", rank, msg.c_str());
    EXPECT_NE(msg.find("ncclCommInitRank"), std::string::npos) << msg;
    EXPECT_NE(msg.find("this is rank " + std::to_string(rank)), std::string::npos) << msg;
  }
}

}  // namespace
