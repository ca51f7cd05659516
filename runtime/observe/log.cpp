#include "wok/runtime/observe/log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "wok/runtime/observe/symbolize.h"
#include "wok/runtime/stats.h"

namespace wok::observe {

uint64_t log_topic_mask(std::string_view topic) {
  if (topic == "compile")
    return bit(EventKind::kCompileEnd) | bit(EventKind::kAsyncCompile) | bit(EventKind::kCapture);
  if (topic == "cache") return bit(EventKind::kCacheLog) | bit(EventKind::kPlanCache) | bit(EventKind::kKernelCache);
  if (topic == "eval") return bit(EventKind::kEvalEnd);
  if (topic == "pass") return bit(EventKind::kPass);
  if (topic == "launch") return bit(EventKind::kLaunchEnd);
  if (topic == "alloc") return bit(EventKind::kAlloc) | bit(EventKind::kFree);
  if (topic == "op") return bit(EventKind::kOpRecorded);
  if (topic == "shadow") return bit(EventKind::kShadow);
  if (topic == "async") return bit(EventKind::kAsyncCompile);
  if (topic == "all") return kAllEvents & ~bit(EventKind::kLaunchBegin) & ~bit(EventKind::kCompileBegin) &
                             ~bit(EventKind::kEvalBegin);
  return 0;
}

std::string site_str(const std::source_location& site) {
  const char* file = site.file_name();
  if (!file || !*file || site.line() == 0) return "";
  // The operators (a * b) are inline in ops.h: their site says nothing.
  std::string_view f(file);
  if (f.ends_with("frontend/ops.h")) return "";
  if (auto slash = f.rfind('/'); slash != std::string_view::npos) f = f.substr(slash + 1);
  return std::string(f) + ":" + std::to_string(site.line());
}

std::string site_str(const std::source_location& site, const void* caller) {
  std::string s = site_str(site);
  return s.empty() ? describe_code_address(caller) : s;
}

namespace {
std::string ms(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  return buf;
}
}  // namespace

std::string format_log_line(const Event& e) {
  std::string s = "wok ";
  switch (e.kind) {
    case EventKind::kCacheLog: return "wok cache: " + e.detail;  // the persistent cache's own wording
    case EventKind::kOpRecorded: {
      std::string site = site_str(e.site, e.caller);
      return s + "op: #" + std::to_string(e.id) + " " + e.name + (site.empty() ? "" : " at " + site);
    }
    case EventKind::kEvalBegin:
    case EventKind::kEvalEnd:
      return s + "eval: #" + std::to_string(e.id) + " " + std::to_string(e.count) + " nodes, " +
             std::string(eval_reason_name(static_cast<EvalReason>(e.reason))) + ", on " + e.name +
             (e.kind == EventKind::kEvalEnd ? ", " + ms(e.dur_ns) : "") + (e.detail.empty() ? "" : " (" + e.detail + ")");
    case EventKind::kPass: return s + "pass: " + e.name + " " + ms(e.dur_ns);
    case EventKind::kPlanCache:
      return s + "cache: plan " + (e.hit ? "hit " : "miss ") + e.name + (e.hit ? "" : ": " + e.detail);
    case EventKind::kKernelCache:
      return s + "cache: kernel " + (e.hit ? "hit " : "miss ") + e.name + (e.hit ? "" : ": " + e.detail);
    case EventKind::kCompileBegin: return s + "compile: start " + e.name;
    case EventKind::kCompileEnd:
      return s + "compile: " + e.name + " " + ms(e.dur_ns) + ", " + std::to_string(e.bytes) + " bytes of code" +
             (e.detail.empty() ? "" : " (" + e.detail + ")");
    case EventKind::kLaunchBegin:
    case EventKind::kLaunchEnd: {
      char buf[64];
      double gbs = e.dur_ns > 0 ? static_cast<double>(e.bytes) / static_cast<double>(e.dur_ns) : 0;
      std::snprintf(buf, sizeof buf, ", %.2f GB/s", gbs);
      return s + "launch: " + e.name + " stream " + std::to_string(e.stream) + ", " + std::to_string(e.bytes) +
             " bytes, " + ms(e.dur_ns) + buf;
    }
    case EventKind::kAlloc:
    case EventKind::kFree:
      return s + (e.kind == EventKind::kAlloc ? "alloc: " : "free: ") + std::to_string(e.bytes) + " bytes, " +
             std::to_string(e.live_bytes) + " live";
    case EventKind::kShadow: {
      char buf[96];
      std::snprintf(buf, sizeof buf, "max abs %.3g, max ulp %.3g", e.max_abs, e.max_ulp);
      return s + "shadow: " + (e.warn ? "WARNING " : "") + e.name + " " + buf + (e.detail.empty() ? "" : " (" + e.detail + ")");
    }
    case EventKind::kAsyncCompile: return s + "async-compile: " + e.name + " " + e.detail;
    case EventKind::kCapture:
      return s + "compile: " + (e.hit ? "derived " : "traced ") + e.name + ", " + std::to_string(e.count) + " nodes, " + ms(e.dur_ns) + " (" +
             e.detail + ")";
    case EventKind::kNumKinds: break;
  }
  return s + "?";
}

void start_env_logger() {
  const char* env = std::getenv("WOK_LOG");
  if (!env || !*env) return;
  uint64_t mask = 0;
  for (std::string_view t : {"compile", "cache", "eval", "pass", "launch", "alloc", "op", "shadow", "async", "all"})
    if (log_topic_enabled(t)) mask |= log_topic_mask(t);
  if (!mask) return;
  subscribe(mask, [](const Event& e) {
    std::string line = format_log_line(e);
    std::fprintf(stderr, "%s\n", line.c_str());  // one call per line: threads do not interleave
  });
}

}  // namespace wok::observe
