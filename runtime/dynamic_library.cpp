#include "wok/runtime/dynamic_library.h"

#include <dlfcn.h>

namespace wok {

OpenedLibrary open_first_library(const std::vector<std::string>& candidates, int flags, std::string_view note) {
  OpenedLibrary lib;
  for (const std::string& c : candidates) {
    if ((lib.handle = dlopen(c.c_str(), flags))) {
      lib.path = c;
      return lib;
    }
    const char* err = dlerror();
    lib.tried += "\n  " + c + std::string(note) + ": " + (err ? err : "not found");
  }
  return lib;
}

}  // namespace wok
