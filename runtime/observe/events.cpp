#include "wok/runtime/observe/events.h"

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "wok/runtime/observe/log.h"
#include "wok/runtime/observe/report.h"
#include "wok/runtime/observe/trace_writer.h"

namespace wok::observe {

namespace detail {
std::atomic<uint64_t> g_listening{0};
}  // namespace detail

namespace {

struct Sub {
  uint64_t id;
  uint64_t mask;
  Subscriber fn;
};
using SubList = std::vector<std::shared_ptr<const Sub>>;

// Note [Subscriber list]
// Emitters take a snapshot of the list under a mutex and call subscribers
// without it, so a subscriber may unsubscribe (itself or others) and a slow
// one does not block subscribe(). Leaked: streams may emit during exit.
struct Registry {
  std::mutex mu;
  std::shared_ptr<const SubList> subs = std::make_shared<const SubList>();
  uint64_t next_id = 1;
  std::mutex names_mu;
  std::vector<std::string> thread_names;
};

Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

void recompute_mask_locked(Registry& r) {
  uint64_t mask = 0;
  for (const auto& s : *r.subs) mask |= s->mask;
  detail::g_listening.store(mask, std::memory_order_relaxed);
}

const std::chrono::steady_clock::time_point g_epoch = std::chrono::steady_clock::now();
std::atomic<uint32_t> g_next_thread{0};
thread_local uint32_t t_thread = UINT32_MAX;
thread_local int t_stream = -1;
thread_local int t_shadow_run = 0;

}  // namespace

std::string_view event_kind_name(EventKind k) {
  switch (k) {
    case EventKind::kOpRecorded: return "op";
    case EventKind::kEvalBegin: return "eval-begin";
    case EventKind::kEvalEnd: return "eval";
    case EventKind::kPass: return "pass";
    case EventKind::kPlanCache: return "plan-cache";
    case EventKind::kKernelCache: return "kernel-cache";
    case EventKind::kCompileBegin: return "compile-begin";
    case EventKind::kCompileEnd: return "compile";
    case EventKind::kLaunchBegin: return "launch-begin";
    case EventKind::kLaunchEnd: return "launch";
    case EventKind::kAlloc: return "alloc";
    case EventKind::kFree: return "free";
    case EventKind::kShadow: return "shadow";
    case EventKind::kAsyncCompile: return "async-compile";
    case EventKind::kCacheLog: return "cache";
    case EventKind::kCapture: return "capture";
    case EventKind::kNumKinds: break;
  }
  return "?";
}

uint64_t subscribe(uint64_t mask, Subscriber fn) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto list = std::make_shared<SubList>(*r.subs);
  uint64_t id = r.next_id++;
  list->push_back(std::make_shared<const Sub>(Sub{id, mask & kAllEvents, std::move(fn)}));
  r.subs = std::move(list);
  recompute_mask_locked(r);
  return id;
}

void unsubscribe(uint64_t id) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto list = std::make_shared<SubList>();
  for (const auto& s : *r.subs)
    if (s->id != id) list->push_back(s);
  r.subs = std::move(list);
  recompute_mask_locked(r);
}

void emit(Event e) {
  if (e.t_ns == 0) e.t_ns = now_ns();
  e.thread = thread_id();
  if (e.stream < 0) e.stream = t_stream;
  if (t_shadow_run) e.shadow_run = true;
  Registry& r = registry();
  std::shared_ptr<const SubList> subs;
  {
    std::lock_guard lock(r.mu);
    subs = r.subs;
  }
  const uint64_t b = bit(e.kind);
  for (const auto& s : *subs)
    if (s->mask & b) s->fn(e);
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - g_epoch).count();
}

uint32_t thread_id() {
  if (t_thread == UINT32_MAX) t_thread = g_next_thread.fetch_add(1, std::memory_order_relaxed);
  return t_thread;
}

void set_thread_name(std::string name) {
  uint32_t id = thread_id();
  Registry& r = registry();
  std::lock_guard lock(r.names_mu);
  if (r.thread_names.size() <= id) r.thread_names.resize(id + 1);
  r.thread_names[id] = std::move(name);
}

std::string thread_name(uint32_t thread) {
  Registry& r = registry();
  std::lock_guard lock(r.names_mu);
  if (thread < r.thread_names.size() && !r.thread_names[thread].empty()) return r.thread_names[thread];
  return "thread " + std::to_string(thread);
}

ShadowRunScope::ShadowRunScope() { ++t_shadow_run; }
ShadowRunScope::~ShadowRunScope() { --t_shadow_run; }

void set_current_stream(int stream) { t_stream = stream; }
int current_stream() { return t_stream; }

bool log_topic_enabled(std::string_view topic) {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> out;
    std::string word;
    const char* env = std::getenv("WOK_LOG");
    for (char ch : std::string(env ? env : "") + ",") {
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-') {
        word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
      } else if (!word.empty()) {
        out.push_back(word);
        word.clear();
      }
    }
    return out;
  }();
  for (const std::string& w : words)
    if (w == topic || w == "all") return true;
  return false;
}

namespace detail {
void start_from_env() {
  static std::once_flag once;
  std::call_once(once, [] {
    start_env_logger();
    if (const char* path = std::getenv("WOK_TRACE"); path && *path) start_env_trace(path);
    if (const char* rep = std::getenv("WOK_REPORT"); rep && *rep && std::string(rep) != "0") start_env_report();
  });
}

namespace {
// The environment's subscribers exist from the start of the process: this
// file is always linked in (every emit site reads g_listening).
const bool g_started = (start_from_env(), true);
}  // namespace
}  // namespace detail

}  // namespace wok::observe
