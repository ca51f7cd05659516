#include "wok/cache/build_info.h"

#include <asmjit/core/api-config.h>

#include <string>

#include "wok_generated/generator_hash.inc"  // WOK_GENERATOR_HASH, written by CMake

namespace wok::cache {

std::string_view generator_hash() { return WOK_GENERATOR_HASH; }

std::string_view x86_compiler_id() {
  static const std::string id = "asmjit " + std::to_string(ASMJIT_LIBRARY_VERSION >> 16) + "." +
                                std::to_string((ASMJIT_LIBRARY_VERSION >> 8) & 0xFF) + "." +
                                std::to_string(ASMJIT_LIBRARY_VERSION & 0xFF);
  return id;
}

}  // namespace wok::cache
