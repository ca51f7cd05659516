#include "wok/runtime/dump.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

namespace wok {

namespace {
const std::string& dump_dir() {
  static const std::string dir = [] {
    const char* s = std::getenv("WOK_DUMP_DIR");
    return std::string(s ? s : "");
  }();
  return dir;
}
}  // namespace

bool dump_enabled() { return !dump_dir().empty(); }

void write_dump(const std::string& name, const std::string& content) {
  if (!dump_enabled()) return;
  std::error_code ec;
  std::filesystem::create_directories(dump_dir(), ec);
  std::ofstream out(std::filesystem::path(dump_dir()) / name);
  out << content;
  if (!out) {
    static std::once_flag warned;
    std::call_once(warned, [] {
      std::fprintf(stderr, "wok: cannot write dumps to WOK_DUMP_DIR=%s; continuing without\n", dump_dir().c_str());
    });
  }
}

}  // namespace wok
