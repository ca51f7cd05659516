#include "wok/runtime/cuda/nvrtc_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>

#include "wok/runtime/dynamic_library.h"

namespace wok::cuda {

namespace {

template <typename Fn>
void resolve(void* lib, Fn& slot, const char* name, std::string* missing) {
  slot = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!slot && missing) *missing += (missing->empty() ? "" : ", ") + std::string(name);
}

absl::StatusOr<const Nvrtc*> load() {
  std::vector<std::string> candidates;
  if (const char* p = std::getenv("WOK_NVRTC_PATH"); p && *p) {
    candidates.push_back(p);
  } else {
    candidates = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so",
                  "/usr/local/cuda/lib64/libnvrtc.so"};
  }
  OpenedLibrary opened = open_first_library(candidates, RTLD_NOW | RTLD_LOCAL);
  void* lib = opened.handle;
  if (!lib)
    return absl::NotFoundError("NVRTC is not available: cannot load the NVRTC library (install the CUDA toolkit's "
                               "NVRTC or set WOK_NVRTC_PATH); tried:" + opened.tried);
  auto* n = new Nvrtc();  // leaked with the library
  n->path = opened.path;
  NvrtcApi& a = n->api;
  std::string missing;
  resolve(lib, a.nvrtcVersion, "nvrtcVersion", &missing);
  resolve(lib, a.nvrtcGetErrorString, "nvrtcGetErrorString", &missing);
  resolve(lib, a.nvrtcCreateProgram, "nvrtcCreateProgram", &missing);
  resolve(lib, a.nvrtcDestroyProgram, "nvrtcDestroyProgram", &missing);
  resolve(lib, a.nvrtcCompileProgram, "nvrtcCompileProgram", &missing);
  resolve(lib, a.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", &missing);
  resolve(lib, a.nvrtcGetProgramLog, "nvrtcGetProgramLog", &missing);
  resolve(lib, a.nvrtcGetPTXSize, "nvrtcGetPTXSize", &missing);
  resolve(lib, a.nvrtcGetPTX, "nvrtcGetPTX", &missing);
  resolve(lib, a.nvrtcGetCUBINSize, "nvrtcGetCUBINSize", nullptr);
  resolve(lib, a.nvrtcGetCUBIN, "nvrtcGetCUBIN", nullptr);
  resolve(lib, a.nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs", nullptr);
  resolve(lib, a.nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs", nullptr);
  if (!missing.empty())
    return absl::FailedPreconditionError("NVRTC library " + opened.path + " lacks " + missing);
  a.nvrtcVersion(&n->major, &n->minor);
  int count = 0;
  if (a.nvrtcGetNumSupportedArchs && a.nvrtcGetSupportedArchs && a.nvrtcGetNumSupportedArchs(&count) == 0 &&
      count > 0) {
    n->supported_archs.resize(static_cast<size_t>(count));
    if (a.nvrtcGetSupportedArchs(n->supported_archs.data()) != 0) n->supported_archs.clear();
    std::sort(n->supported_archs.begin(), n->supported_archs.end());
  }
  return static_cast<const Nvrtc*>(n);
}

const absl::StatusOr<const Nvrtc*>& loaded() {
  static const absl::StatusOr<const Nvrtc*>* result = new absl::StatusOr<const Nvrtc*>(load());
  return *result;
}

}  // namespace

bool Nvrtc::supports(int arch) const {
  if (!api.nvrtcGetCUBIN) return false;
  if (supported_archs.empty()) return true;  // cannot tell: try, and report the log if it fails
  return std::find(supported_archs.begin(), supported_archs.end(), arch) != supported_archs.end();
}

absl::StatusOr<const Nvrtc*> nvrtc() { return loaded(); }

bool nvrtc_available() { return loaded().ok(); }

std::string nvrtc_unavailable_reason() {
  return loaded().ok() ? std::string() : std::string(loaded().status().message());
}

}  // namespace wok::cuda
