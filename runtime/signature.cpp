#include "wok/runtime/signature.h"

#include <xxhash.h>

#include <cstdio>

#ifndef WOK_VERSION
#define WOK_VERSION "dev"
#endif

namespace wok {

std::string Key128::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(hi),
                static_cast<unsigned long long>(lo));
  return buf;
}

Key128 hash128(std::string_view bytes) {
  XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  return {h.high64, h.low64};
}

uint64_t hash64(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

std::string_view wok_version() { return WOK_VERSION; }

}  // namespace wok
