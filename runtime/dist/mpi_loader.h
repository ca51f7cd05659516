// Open MPI, opened at run time: wok links no MPI library, so programs that
// never start more than one process need none installed, and a process
// started by mpirun without it gets an error naming what is missing.
//
// The handful of Open MPI types and handles wok uses are declared here.
// Open MPI's handles are pointers to library globals (MPI_COMM_WORLD is
// &ompi_mpi_comm_world), resolved with dlsym like the functions; the
// layouts follow Open MPI's ABI (stable since 3.0), and
// tests/dist_mpi_abi_test.cpp checks them against mpi.h when that
// header is present.
//
// The library is looked for as WOK_MPI_PATH when set, else libmpi.so.40,
// libmpi.so on the loader's path. It is opened RTLD_GLOBAL: Open MPI's
// components are plugins that resolve libmpi's symbols.
#pragma once

#include <cstddef>
#include <string>

#include <absl/status/statusor.h>

namespace wok::dist {

namespace mpi {
struct ompi_communicator_t;
struct ompi_datatype_t;
struct ompi_op_t;
struct ompi_request_t;
struct ompi_errhandler_t;
using Comm = ompi_communicator_t*;
using Datatype = ompi_datatype_t*;
using Op = ompi_op_t*;
using Request = ompi_request_t*;
using Errhandler = ompi_errhandler_t*;
struct Status {
  int source;
  int tag;
  int error;
  int cancelled_;
  size_t ucount_;
};
inline constexpr int kSuccess = 0;
inline constexpr int kThreadSerialized = 2;
inline constexpr int kUndefined = -32766;
inline constexpr int kMaxErrorString = 256;
inline Status* const kStatusIgnore = nullptr;
inline Status* const kStatusesIgnore = nullptr;
}  // namespace mpi

struct MpiApi {
  int (*Initialized)(int* flag);
  int (*Finalized)(int* flag);
  int (*Init_thread)(int* argc, char*** argv, int required, int* provided);
  int (*Finalize)();
  int (*Comm_rank)(mpi::Comm comm, int* rank);
  int (*Comm_size)(mpi::Comm comm, int* size);
  int (*Comm_dup)(mpi::Comm comm, mpi::Comm* out);
  int (*Comm_split)(mpi::Comm comm, int color, int key, mpi::Comm* out);
  int (*Comm_set_errhandler)(mpi::Comm comm, mpi::Errhandler handler);
  int (*Error_string)(int code, char* text, int* length);
  int (*Get_library_version)(char* version, int* length);
  int (*Isend)(const void* buf, int count, mpi::Datatype type, int dest, int tag, mpi::Comm comm,
               mpi::Request* req);
  int (*Irecv)(void* buf, int count, mpi::Datatype type, int source, int tag, mpi::Comm comm, mpi::Request* req);
  int (*Test)(mpi::Request* req, int* flag, mpi::Status* status);
  int (*Testall)(int count, mpi::Request* reqs, int* flag, mpi::Status* statuses);
  int (*Iallreduce)(const void* in, void* out, int count, mpi::Datatype type, mpi::Op op, mpi::Comm comm,
                    mpi::Request* req);
  int (*Iallgather)(const void* in, int in_count, mpi::Datatype in_type, void* out, int out_count,
                    mpi::Datatype out_type, mpi::Comm comm, mpi::Request* req);
  int (*Ireduce_scatter_block)(const void* in, void* out, int count, mpi::Datatype type, mpi::Op op, mpi::Comm comm,
                               mpi::Request* req);
  int (*Ibcast)(void* buf, int count, mpi::Datatype type, int root, mpi::Comm comm, mpi::Request* req);
  int (*Ialltoall)(const void* in, int in_count, mpi::Datatype in_type, void* out, int out_count,
                   mpi::Datatype out_type, mpi::Comm comm, mpi::Request* req);
};

// Open MPI's predefined handles, resolved from its globals.
struct MpiHandles {
  mpi::Comm comm_world;
  mpi::Errhandler errors_return;
  mpi::Datatype byte, c_bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float32, float64;
  mpi::Op sum, prod, max, min, land, lor;
};

struct Mpi {
  MpiApi api{};
  MpiHandles h{};
  std::string path;     // what was opened
  std::string version;  // MPI_Get_library_version's text, first line
  // "MPI_Isend failed: <Open MPI's error string>".
  std::string error_text(const char* call, int code) const;
};

// The loaded library, or an error naming the paths tried and the missing
// symbols. Loaded once.
absl::StatusOr<const Mpi*> mpi_library();
// The same search from scratch, for tests (never cached).
absl::StatusOr<const Mpi*> load_mpi_library(const std::string& path_override);

}  // namespace wok::dist
