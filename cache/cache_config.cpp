#include "wok/cache/cache_config.h"

#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <vector>

#include "wok/runtime/observe/events.h"

namespace wok::cache {

namespace {

std::string env(const char* name, const std::string& fallback = "") {
  const char* s = std::getenv(name);
  return s ? std::string(s) : fallback;
}

uint64_t parse_bytes(const std::string& text) {
  // "1000000", "512K", "64M", "2G": binary units, as du and ls print them.
  if (text.empty()) return 0;
  char* end = nullptr;
  unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) {
    warn("ignoring WOK_CACHE_MAX_BYTES=" + text + " (expected a number of bytes, e.g. 500M)");
    return 0;
  }
  switch (std::toupper(static_cast<unsigned char>(*end))) {
    case 'K':
      n <<= 10;
      break;
    case 'M':
      n <<= 20;
      break;
    case 'G':
      n <<= 30;
      break;
    default:
      break;
  }
  return n;
}

struct State {
  std::mutex mu;
  std::optional<CacheConfig> config;
};

State& state() {
  static State* s = new State();  // leaked: kernels may be cached while statics are destroyed
  return *s;
}

}  // namespace

std::string default_cache_directory() {
  std::string xdg = env("XDG_CACHE_HOME");
  if (!xdg.empty()) return xdg + "/wok";
  std::string home = env("HOME");
  if (home.empty())
    if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) home = pw->pw_dir;
  if (home.empty()) return "";
  return home + "/.cache/wok";
}

CacheConfig config_from_env() {
  CacheConfig c;
  // Set but empty turns the store off; unset means the default place.
  c.directory = std::getenv("WOK_CACHE_DIR") ? env("WOK_CACHE_DIR") : default_cache_directory();
  c.max_bytes = parse_bytes(env("WOK_CACHE_MAX_BYTES"));
  c.record_path = env("WOK_RECORD");
  std::string strict = env("WOK_STRICT");
  c.strict = !strict.empty() && strict != "0";
  return c;
}

CacheConfig cache_config() {
  State& s = state();
  std::lock_guard lock(s.mu);
  if (!s.config) s.config = config_from_env();
  return *s.config;
}

void set_cache_config(const CacheConfig& config) {
  State& s = state();
  std::lock_guard lock(s.mu);
  s.config = config;
}

// WOK_LOG belongs to the event stream's logger (runtime/observe/log.h): a
// cache line is an event, printed by the logger when WOK_LOG has "cache"
// and seen by any other subscriber (a trace) too.
bool log_enabled(std::string_view topic) {
  return observe::log_topic_enabled(topic) ||
         (topic == "cache" && WOK_OBSERVING(observe::EventKind::kCacheLog));
}

void log_event(std::string_view line) {
  if (!WOK_OBSERVING(observe::EventKind::kCacheLog)) return;
  observe::Event e;
  e.kind = observe::EventKind::kCacheLog;
  e.detail = std::string(line);
  observe::emit(std::move(e));
}

void warn(std::string_view line) {
  // One fprintf per line, so lines from several threads do not interleave.
  std::fprintf(stderr, "wok cache: %.*s\n", static_cast<int>(line.size()), line.data());
}

}  // namespace wok::cache
