#include "wok/runtime/dist/mpi_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "wok/runtime/dynamic_library.h"

namespace wok::dist {

namespace {

// The library must define each symbol, but the address used is the one
// the process's global scope gives. A program that also links libmpi and
// names MPI_COMM_WORLD gets a copy relocation: the handle's storage moves
// into the executable, libmpi itself uses that copy, and the library's own
// symbol is a stale duplicate that only dlsym(lib) sees.
template <typename T>
void resolve(void* lib, T& slot, const char* name, std::string& missing) {
  void* own = dlsym(lib, name);
  void* global = own ? dlsym(RTLD_DEFAULT, name) : nullptr;
  slot = reinterpret_cast<T>(global ? global : own);
  if (!slot) missing += (missing.empty() ? "" : ", ") + std::string(name);
}

}  // namespace

std::string Mpi::error_text(const char* call, int code) const {
  char text[mpi::kMaxErrorString + 1] = {};
  int length = 0;
  if (api.Error_string(code, text, &length) != mpi::kSuccess) return std::string(call) + " failed (code " + std::to_string(code) + ")";
  return std::string(call) + " failed: " + std::string(text, static_cast<size_t>(length));
}

absl::StatusOr<const Mpi*> load_mpi_library(const std::string& path_override) {
  std::vector<std::string> candidates;
  if (!path_override.empty())
    candidates.push_back(path_override);
  else
    candidates = {"libmpi.so.40", "libmpi.so"};
  // RTLD_GLOBAL: Open MPI's components (plugins it opens itself) resolve
  // libmpi's symbols.
  OpenedLibrary opened = open_first_library(candidates, RTLD_NOW | RTLD_GLOBAL);
  void* lib = opened.handle;
  if (!lib)
    return absl::NotFoundError(
        "MPI is not available: cannot load Open MPI's library (install openmpi-bin and libopenmpi3, or set "
        "WOK_MPI_PATH to libmpi.so); tried:" +
        opened.tried);
  // Kept until exit, like the library (reachable: a loaded table is never
  // freed, a refused one is).
  auto owned = std::make_unique<Mpi>();
  Mpi* m = owned.get();
  m->path = opened.path;
  std::string missing;
  MpiApi& a = m->api;
  resolve(lib, a.Initialized, "MPI_Initialized", missing);
  resolve(lib, a.Finalized, "MPI_Finalized", missing);
  resolve(lib, a.Init_thread, "MPI_Init_thread", missing);
  resolve(lib, a.Finalize, "MPI_Finalize", missing);
  resolve(lib, a.Comm_rank, "MPI_Comm_rank", missing);
  resolve(lib, a.Comm_size, "MPI_Comm_size", missing);
  resolve(lib, a.Comm_dup, "MPI_Comm_dup", missing);
  resolve(lib, a.Comm_split, "MPI_Comm_split", missing);
  resolve(lib, a.Comm_set_errhandler, "MPI_Comm_set_errhandler", missing);
  resolve(lib, a.Error_string, "MPI_Error_string", missing);
  resolve(lib, a.Get_library_version, "MPI_Get_library_version", missing);
  resolve(lib, a.Isend, "MPI_Isend", missing);
  resolve(lib, a.Irecv, "MPI_Irecv", missing);
  resolve(lib, a.Test, "MPI_Test", missing);
  resolve(lib, a.Testall, "MPI_Testall", missing);
  resolve(lib, a.Iallreduce, "MPI_Iallreduce", missing);
  resolve(lib, a.Iallgather, "MPI_Iallgather", missing);
  resolve(lib, a.Ireduce_scatter_block, "MPI_Ireduce_scatter_block", missing);
  resolve(lib, a.Ibcast, "MPI_Ibcast", missing);
  resolve(lib, a.Ialltoall, "MPI_Ialltoall", missing);
  // Open MPI's predefined handles are the addresses of its globals; an
  // MPI whose handles are not (MPICH's are integers) lacks these symbols.
  MpiHandles& h = m->h;
  resolve(lib, h.comm_world, "ompi_mpi_comm_world", missing);
  resolve(lib, h.errors_return, "ompi_mpi_errors_return", missing);
  resolve(lib, h.byte, "ompi_mpi_byte", missing);
  resolve(lib, h.c_bool, "ompi_mpi_c_bool", missing);
  resolve(lib, h.int8, "ompi_mpi_int8_t", missing);
  resolve(lib, h.uint8, "ompi_mpi_uint8_t", missing);
  resolve(lib, h.int16, "ompi_mpi_int16_t", missing);
  resolve(lib, h.uint16, "ompi_mpi_uint16_t", missing);
  resolve(lib, h.int32, "ompi_mpi_int32_t", missing);
  resolve(lib, h.uint32, "ompi_mpi_uint32_t", missing);
  resolve(lib, h.int64, "ompi_mpi_int64_t", missing);
  resolve(lib, h.uint64, "ompi_mpi_uint64_t", missing);
  resolve(lib, h.float32, "ompi_mpi_float", missing);
  resolve(lib, h.float64, "ompi_mpi_double", missing);
  resolve(lib, h.sum, "ompi_mpi_op_sum", missing);
  resolve(lib, h.prod, "ompi_mpi_op_prod", missing);
  resolve(lib, h.max, "ompi_mpi_op_max", missing);
  resolve(lib, h.min, "ompi_mpi_op_min", missing);
  resolve(lib, h.land, "ompi_mpi_op_land", missing);
  resolve(lib, h.lor, "ompi_mpi_op_lor", missing);
  if (!missing.empty())
    return absl::FailedPreconditionError("MPI library " + opened.path +
                                         " is not an Open MPI wok can use (Open MPI 3 or newer): it lacks " + missing);
  char version[257] = {};
  int length = 0;
  if (a.Get_library_version(version, &length) == mpi::kSuccess) {
    std::string v(version, static_cast<size_t>(length));
    m->version = v.substr(0, v.find_first_of(",\n"));
  }
  static auto* kept = new std::vector<std::unique_ptr<Mpi>>();
  static std::mutex kept_mu;
  std::lock_guard lock(kept_mu);
  kept->push_back(std::move(owned));
  return m;
}

absl::StatusOr<const Mpi*> mpi_library() {
  static const absl::StatusOr<const Mpi*> loaded = [] {
    const char* p = std::getenv("WOK_MPI_PATH");
    return load_mpi_library(p ? p : "");
  }();
  return loaded;
}

}  // namespace wok::dist
