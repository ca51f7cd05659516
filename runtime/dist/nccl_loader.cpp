#include "wok/runtime/dist/nccl_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "wok/runtime/dynamic_library.h"

namespace wok::dist {

namespace {

template <typename Fn>
void resolve(void* lib, Fn& slot, const char* name, std::string* missing) {
  slot = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!slot && missing) *missing += (missing->empty() ? "" : ", ") + std::string(name);
}

}  // namespace

std::string Nccl::version_str() const {
  // NCCL_VERSION_CODE: X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z since 2.9.
  const int major = version >= 10000 ? version / 10000 : version / 1000;
  const int minor = version >= 10000 ? version % 10000 / 100 : version % 1000 / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(version % 100);
}

std::string Nccl::error_text(const char* call, nccl_abi::Result r, nccl_abi::Comm comm) const {
  const char* text = api.ncclGetErrorString ? api.ncclGetErrorString(r) : nullptr;
  std::string s = std::string(call) + " failed: " + (text ? text : "NCCL error " + std::to_string(r));
  // The last error is process-wide when comm is null; it names the cause
  // ("Duplicate GPU detected", "socket connect failed", ...).
  if (api.ncclGetLastError)
    if (const char* last = api.ncclGetLastError(comm); last && *last) s += " (" + std::string(last) + ")";
  return s;
}

absl::StatusOr<const Nccl*> load_nccl_from(const std::string& path_override) {
  std::vector<std::string> candidates;
  if (!path_override.empty())
    candidates.push_back(path_override);
  else
    candidates = {"libnccl.so.2", "libnccl.so", "/usr/local/cuda/lib/libnccl.so.2",
                  "/usr/local/cuda/lib64/libnccl.so.2"};
  OpenedLibrary opened =
      open_first_library(candidates, RTLD_NOW | RTLD_LOCAL, path_override.empty() ? "" : " (WOK_NCCL_PATH)");
  void* lib = opened.handle;
  if (!lib)
    return absl::NotFoundError(
        "NCCL is not available: cannot load NCCL's library (install NCCL (libnccl2) or set "
        "WOK_NCCL_PATH to libnccl.so.2); tried:" +
        opened.tried);
  // Kept until exit, like the library (reachable: a loaded table is never
  // freed, a refused one is).
  auto owned = std::make_unique<Nccl>();
  Nccl* n = owned.get();
  n->path = opened.path;
  NcclApi& a = n->api;
  std::string missing;
  resolve(lib, a.ncclGetVersion, "ncclGetVersion", &missing);
  resolve(lib, a.ncclGetUniqueId, "ncclGetUniqueId", &missing);
  resolve(lib, a.ncclCommInitRank, "ncclCommInitRank", &missing);
  resolve(lib, a.ncclCommDestroy, "ncclCommDestroy", &missing);
  resolve(lib, a.ncclCommAbort, "ncclCommAbort", &missing);
  resolve(lib, a.ncclCommGetAsyncError, "ncclCommGetAsyncError", &missing);
  resolve(lib, a.ncclGetErrorString, "ncclGetErrorString", &missing);
  resolve(lib, a.ncclGetLastError, "ncclGetLastError", nullptr);
  resolve(lib, a.ncclAllReduce, "ncclAllReduce", &missing);
  resolve(lib, a.ncclAllGather, "ncclAllGather", &missing);
  resolve(lib, a.ncclReduceScatter, "ncclReduceScatter", &missing);
  resolve(lib, a.ncclBroadcast, "ncclBroadcast", &missing);
  resolve(lib, a.ncclSend, "ncclSend", &missing);
  resolve(lib, a.ncclRecv, "ncclRecv", &missing);
  resolve(lib, a.ncclGroupStart, "ncclGroupStart", &missing);
  resolve(lib, a.ncclGroupEnd, "ncclGroupEnd", &missing);
  if (!missing.empty())
    return absl::FailedPreconditionError("NCCL library " + opened.path +
                                         " is not an NCCL wok can use (NCCL 2.7 or newer): it lacks " + missing);
  if (a.ncclGetVersion(&n->version) != nccl_abi::kSuccess) n->version = 0;
  static auto* kept = new std::vector<std::unique_ptr<Nccl>>();
  static std::mutex kept_mu;
  std::lock_guard lock(kept_mu);
  kept->push_back(std::move(owned));
  return static_cast<const Nccl*>(n);
}

absl::StatusOr<const Nccl*> nccl() {
  static const absl::StatusOr<const Nccl*>* loaded = new absl::StatusOr<const Nccl*>([] {
    const char* p = std::getenv("WOK_NCCL_PATH");
    return load_nccl_from(p ? p : "");
  }());
  return *loaded;
}

bool nccl_available() { return nccl().ok(); }

std::string nccl_unavailable_reason() {
  absl::StatusOr<const Nccl*> n = nccl();
  return n.ok() ? std::string() : std::string(n.status().message());
}

}  // namespace wok::dist
