// NCCL, opened at run time like Open MPI (runtime/dist/mpi_loader.h) and
// the CUDA driver (runtime/cuda/cuda_driver.h): wok links no CUDA library,
// so a build without NCCL runs everything but CUDA collectives, and those
// raise wok::DistError naming what is missing. The few NCCL types wok uses
// are declared here, as nccl.h defines them (NCCL's ABI is stable across
// 2.x); tests/nccl_loader_test.cpp checks them against nccl.h when that
// header is present.
//
// The library is looked for as WOK_NCCL_PATH when set (tests set it to a
// path that does not exist to see NCCL missing), else as libnccl.so.2,
// libnccl.so on the loader's path, else under /usr/local/cuda.
#pragma once

#include <cstddef>
#include <string>

#include <absl/status/statusor.h>

namespace wok::dist {

namespace nccl_abi {
using Result = int;  // ncclResult_t
struct ncclComm;
using Comm = ncclComm*;  // ncclComm_t
// ncclUniqueId: opaque bytes made by one rank and handed to the others.
struct UniqueId {
  char internal[128];
};
inline constexpr Result kSuccess = 0;
inline constexpr Result kInProgress = 7;
// ncclDataType_t (the members wok's dtypes map to).
enum DataType : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9
};
// ncclRedOp_t (kAvg since NCCL 2.10).
enum RedOp : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };
}  // namespace nccl_abi

// Streams are cudaStream_t (a CUstream_st*), passed as void*: the ABI is
// the same and this header stays free of the driver's.
struct NcclApi {
  nccl_abi::Result (*ncclGetVersion)(int* version);
  nccl_abi::Result (*ncclGetUniqueId)(nccl_abi::UniqueId* id);
  nccl_abi::Result (*ncclCommInitRank)(nccl_abi::Comm* comm, int nranks, nccl_abi::UniqueId id, int rank);
  nccl_abi::Result (*ncclCommDestroy)(nccl_abi::Comm comm);
  nccl_abi::Result (*ncclCommAbort)(nccl_abi::Comm comm);
  nccl_abi::Result (*ncclCommGetAsyncError)(nccl_abi::Comm comm, nccl_abi::Result* error);
  const char* (*ncclGetErrorString)(nccl_abi::Result result);
  // Absent before NCCL 2.13: the detail behind the last error.
  const char* (*ncclGetLastError)(nccl_abi::Comm comm);
  nccl_abi::Result (*ncclAllReduce)(const void* in, void* out, size_t count, int type, int op, nccl_abi::Comm comm,
                                void* stream);
  nccl_abi::Result (*ncclAllGather)(const void* in, void* out, size_t in_count, int type, nccl_abi::Comm comm, void* stream);
  nccl_abi::Result (*ncclReduceScatter)(const void* in, void* out, size_t out_count, int type, int op, nccl_abi::Comm comm,
                                    void* stream);
  nccl_abi::Result (*ncclBroadcast)(const void* in, void* out, size_t count, int type, int root, nccl_abi::Comm comm,
                                void* stream);
  nccl_abi::Result (*ncclSend)(const void* in, size_t count, int type, int peer, nccl_abi::Comm comm, void* stream);
  nccl_abi::Result (*ncclRecv)(void* out, size_t count, int type, int peer, nccl_abi::Comm comm, void* stream);
  nccl_abi::Result (*ncclGroupStart)();
  nccl_abi::Result (*ncclGroupEnd)();
};

struct Nccl {
  NcclApi api{};
  std::string path;  // what was opened
  int version = 0;   // ncclGetVersion: 22703 for 2.27.3 (21003 style since 2.9, 2803 before)

  std::string version_str() const;  // "2.27.3"
  // "ncclAllReduce failed: unhandled system error (<NCCL's last error>)".
  std::string error_text(const char* call, nccl_abi::Result r, nccl_abi::Comm comm = nullptr) const;
};

// The loaded library, or an error naming the paths tried and the missing
// symbols. Loaded once, from WOK_NCCL_PATH when set.
absl::StatusOr<const Nccl*> nccl();
bool nccl_available();
// "" when available, else why not.
std::string nccl_unavailable_reason();
// The same search from scratch, for tests (never cached): `path_override`
// as if it were WOK_NCCL_PATH, or the default candidates when empty.
absl::StatusOr<const Nccl*> load_nccl_from(const std::string& path_override);

}  // namespace wok::dist
