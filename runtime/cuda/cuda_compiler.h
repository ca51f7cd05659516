// NVRTC in one module: compiles CUDA source (a rendered fused kernel, or a
// precompiled kernel family built at run time) for one GPU architecture.
//
// For an architecture NVRTC knows, the result is a cubin (SASS) from
// nvrtcGetCUBIN; for a newer GPU than NVRTC knows, PTX for the newest
// virtual architecture below it, which the driver compiles at load. Source
// and NVRTC log go to WOK_DUMP_DIR when set. A failure returns a status
// carrying the log and the offending source lines.
#pragma once

#include <string>
#include <vector>

#include <absl/status/statusor.h>

namespace wok::cuda {

struct CudaBinary {
  std::vector<char> image;  // cubin, or PTX text with a terminating 0
  bool is_cubin = false;
  std::string target;       // "sm_90", or "compute_90" for PTX
  std::string log;          // NVRTC's log (warnings), possibly empty
  double compile_ms = 0;
};

// `name` names the program in NVRTC's messages and the dump files
// (<name>.cu, <name>.nvrtc.log). `arch` is 80 for sm_80.
absl::StatusOr<CudaBinary> compile_cuda(const std::string& source, const std::string& name, int arch);

// The options every wok kernel is compiled with, for the docs and tests.
std::vector<std::string> nvrtc_options(const std::string& target);

// The embedded headers a rendered or precompiled source includes, as
// NVRTC wants them: names and contents side by side.
struct EmbeddedHeaders {
  std::vector<const char*> names;
  std::vector<const char*> contents;
};
const EmbeddedHeaders& device_headers();
// A hash of every embedded template and kernel source: part of each cubin
// signature, so an edited template never reuses an old cubin.
const std::string& templates_fingerprint();

}  // namespace wok::cuda
