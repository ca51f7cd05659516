#include "wok/jit/async_compile.h"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>

#include "wok/jit/plan_cache.h"
#include "wok/runtime/observe/events.h"
#include "wok/runtime/signature.h"

namespace wok::jit {

namespace {

struct Job {
  std::unique_ptr<OwnedFragment> owned;
  CpuIsa isa;
  std::string key;
};

// Note [The compile thread]
// One thread, started on first use and never joined (like the stream pool,
// it is leaked: a build may be running while the process exits). Builds
// go through the ordinary plan and kernel caches, so a synchronous
// evaluation racing a background build of the same program waits for the
// same kernel compile instead of doing it twice.
struct State {
  std::mutex mu;
  std::condition_variable cv;       // wakes the thread
  std::condition_variable idle_cv;  // wakes waiters
  std::deque<Job> queue;
  std::unordered_set<std::string> pending, failed;
  bool busy = false;
  bool started = false;
};

State& state() {
  static State* s = new State();
  return *s;
}

std::atomic<int> g_setting{-1};  // -1: not set; use the environment

void emit(const std::string& program, const std::string& what, int64_t dur_ns = 0) {
  if (!WOK_OBSERVING(observe::EventKind::kAsyncCompile)) return;
  observe::Event e;
  e.kind = observe::EventKind::kAsyncCompile;
  e.name = program;
  e.detail = what;
  e.dur_ns = dur_ns;
  observe::emit(std::move(e));
}

std::string short_key(const std::string& key) { return hash128(key).hex().substr(0, 8); }

void compile_loop() {
  observe::set_thread_name("compile");
  State& s = state();
  for (;;) {
    Job job;
    {
      std::unique_lock lock(s.mu);
      s.cv.wait(lock, [&] { return !s.queue.empty(); });
      job = std::move(s.queue.front());
      s.queue.pop_front();
      s.busy = true;
    }
    int64_t start = observe::now_ns();
    std::string failure;
    try {
      absl::StatusOr<std::shared_ptr<const Plan>> plan = PlanCache::global().get_or_build(job.owned->fragment, job.isa);
      if (!plan.ok()) failure = std::string(plan.status().message());
    } catch (const std::exception& e) {  // an internal error of the pipeline
      failure = e.what();
    }
    const bool ok = failure.empty();
    if (ok) {
      emit(short_key(job.key), "ready", observe::now_ns() - start);
    } else {
      std::fprintf(stderr, "wok: background compile failed (the next evaluation compiles it in the foreground): %s\n",
                   failure.c_str());
      emit(short_key(job.key), "failed: " + failure, observe::now_ns() - start);
    }
    {
      std::lock_guard lock(s.mu);
      s.pending.erase(job.key);
      if (!ok) s.failed.insert(job.key);
      s.busy = false;
    }
    s.idle_cv.notify_all();
  }
}

}  // namespace

bool async_compile_enabled() {
  int v = g_setting.load(std::memory_order_relaxed);
  if (v >= 0) return v != 0;
  static const bool from_env = [] {
    const char* s = std::getenv("WOK_ASYNC_COMPILE");
    return s && *s && std::string(s) != "0";
  }();
  return from_env;
}

void set_async_compile(bool on) { g_setting.store(on ? 1 : 0); }

bool compile_in_background(const Fragment& f, CpuIsa isa) {
  std::string key = fragment_signature(f);
  key.push_back(static_cast<char>(isa));
  State& s = state();
  {
    std::lock_guard lock(s.mu);
    if (s.failed.erase(key)) return false;
    if (!s.pending.insert(key).second) return true;  // already queued or running
    s.queue.push_back({own_fragment(f), isa, key});
    if (!s.started) {
      s.started = true;
      std::thread(compile_loop).detach();
    }
  }
  s.cv.notify_one();
  emit(short_key(key), "queued; running on precompiled kernels meanwhile");
  return true;
}

void wait_for_background_compiles() {
  State& s = state();
  std::unique_lock lock(s.mu);
  s.idle_cv.wait(lock, [&] { return s.queue.empty() && !s.busy; });
}

}  // namespace wok::jit
