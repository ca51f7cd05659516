// How the persistent kernel cache behaves, from the environment:
//
//   WOK_CACHE_DIR        the store (default $XDG_CACHE_HOME/wok, else
//                        ~/.cache/wok, created 0700); set but empty: no store
//   WOK_CACHE_MAX_BYTES  size bound; the least recently used entries go first
//   WOK_RECORD=file      append every fragment that needs generated kernels
//                        to this manifest (cache/manifest.h)
//   WOK_STRICT=1         compiling a kernel is an error naming its signature
//   WOK_LOG=cache        one stderr line per cache event; WOK_LOG is a list
//                        ("cache,compile"), words it does not know are ignored;
//                        parsed and printed by runtime/observe/log.h
//
// The environment is read once. Tests and the wok-cache tool change the
// settings with set_cache_config().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wok::cache {

struct CacheConfig {
  std::string directory;    // empty: the disk store is off
  uint64_t max_bytes = 0;   // 0: unbounded
  std::string record_path;  // empty: not recording
  bool strict = false;
};

// The settings in effect (the environment's, unless set_cache_config ran).
CacheConfig cache_config();
void set_cache_config(const CacheConfig& config);
// What the environment says, read now.
CacheConfig config_from_env();

// The default store when WOK_CACHE_DIR is unset: $XDG_CACHE_HOME/wok, else
// $HOME/.cache/wok, else the password database's home; "" if none is known.
std::string default_cache_directory();

// Whether WOK_LOG lists `topic` (or "all"). Read once.
bool log_enabled(std::string_view topic);

// A kCacheLog event: "wok cache: <line>" on stderr when WOK_LOG has "cache".
void log_event(std::string_view line);
// "wok cache: <line>" on stderr always: damage, unusable directories.
// Callers decide what is worth saying once.
void warn(std::string_view line);

}  // namespace wok::cache
