// Opening a library at run time, as wok does for everything it must not
// link (CUDA's driver, NVRTC, NCCL, Open MPI): the first of a list of
// candidates that loads, and what each failed attempt said.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wok {

struct OpenedLibrary {
  void* handle = nullptr;  // null when no candidate loaded
  std::string path;        // the candidate that loaded
  std::string tried;       // "\n  <candidate><note>: <dlerror>" per failed candidate
};

// dlopen of each candidate with `flags` until one loads; `note` follows
// each candidate's name in `tried` (" (WOK_NCCL_PATH)"). Never closed by
// wok: kernels, communicators and plugins from it live until exit.
OpenedLibrary open_first_library(const std::vector<std::string>& candidates, int flags, std::string_view note = "");

}  // namespace wok
