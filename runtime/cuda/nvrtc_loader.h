// NVRTC, opened at run time like the driver (runtime/cuda/cuda_driver.h):
// wok links no CUDA library, and the NVRTC types it needs are declared here.
//
// The library is looked for as WOK_NVRTC_PATH when set (tests set it to a
// path that does not exist to see NVRTC missing), else as libnvrtc.so.13,
// .12, .11.2, libnvrtc.so on the loader's path, else under /usr/local/cuda.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <absl/status/statusor.h>

namespace wok::cuda {

using nvrtcResult = int;
struct _nvrtcProgram;
using nvrtcProgram = _nvrtcProgram*;
inline constexpr nvrtcResult kNvrtcSuccess = 0;

struct NvrtcApi {
  nvrtcResult (*nvrtcVersion)(int* major, int* minor);
  const char* (*nvrtcGetErrorString)(nvrtcResult result);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram* prog, const char* src, const char* name, int num_headers,
                                    const char* const* headers, const char* const* include_names);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram* prog);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram prog, int num_options, const char* const* options);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram prog, size_t* size);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram prog, char* log);
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram prog, size_t* size);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram prog, char* ptx);
  // Absent before CUDA 11.1/11.2; then only PTX is produced.
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram prog, size_t* size);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram prog, char* cubin);
  nvrtcResult (*nvrtcGetNumSupportedArchs)(int* count);
  nvrtcResult (*nvrtcGetSupportedArchs)(int* archs);
};

struct Nvrtc {
  NvrtcApi api{};
  std::string path;                // what was opened
  int major = 0, minor = 0;        // nvrtcVersion
  std::vector<int> supported_archs;  // 75, 80, 86, 89, 90, ... (empty if the library cannot say)

  std::string version_str() const { return std::to_string(major) + "." + std::to_string(minor); }
  // Can produce a cubin (SASS) for sm_<arch>; otherwise compile_cuda falls
  // back to PTX for the newest virtual arch at or below it.
  bool supports(int arch) const;
};

// The loaded library, or an error naming what is missing. Loaded once.
absl::StatusOr<const Nvrtc*> nvrtc();
bool nvrtc_available();
// "" when available, else why not.
std::string nvrtc_unavailable_reason();

}  // namespace wok::cuda
