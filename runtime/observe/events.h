// The runtime's one event stream: typed events that the recorder, the
// evaluator, the JIT, the kernel cache, the streams and the allocator emit,
// and that subscribers (the trace writer, the reporter, the logger, tests)
// consume.
//
// Note [Cost of an event nobody hears]
// Every emit site is written as
//
//   if (WOK_OBSERVING(observe::EventKind::kLaunchEnd)) { ...build and emit... }
//
// WOK_OBSERVING is one relaxed load of a 64-bit mask (a bit per kind, set
// while some subscriber wants that kind) and one test: a predictable branch
// when nobody listens. Building the Event (strings, clock reads) happens
// only inside the branch. With the CMake option WOK_EVENTS=OFF the macro is
// the constant false and the compiler drops the emit sites altogether.
//
// Subscribers run synchronously on the emitting thread, which may be any
// thread (streams, the thread pool, the compile thread): they must be
// thread-safe, quick, and must not call back into wok's tensor API.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <source_location>
#include <string>
#include <string_view>

namespace wok::observe {

enum class EventKind : uint8_t {
  kOpRecorded = 0,  // an op call became a graph node (name, site, id)
  kEvalBegin,       // a fragment starts evaluating (reason, nodes, runner)
  kEvalEnd,         // ... and is done (duration)
  kPass,            // a JIT pass ran over a fragment (name, duration)
  kPlanCache,       // fragment plan lookup: hit, or miss with its reason
  kKernelCache,     // fused-kernel lookup: hit, or miss (disk load / compile)
  kCompileBegin,    // a fused kernel starts compiling (or loading from disk)
  kCompileEnd,      // ... and is ready (duration, code bytes)
  kLaunchBegin,     // a kernel starts (name, stream, bytes moved)
  kLaunchEnd,       // ... and ends (duration, GB/s)
  kAlloc,           // a host buffer was handed out (bytes, live bytes after)
  kFree,            // ... and given back
  kShadow,          // shadow mode compared a fused kernel with precompiled ones
  kAsyncCompile,    // a plan compiles in the background / is ready
  kCacheLog,        // a persistent kernel cache message (cache/)
  kCapture,         // wok::compile traced a function, or derived it for new sizes (hit) (name, nodes, why)
  kNumKinds
};
inline constexpr int kNumEventKinds = static_cast<int>(EventKind::kNumKinds);
std::string_view event_kind_name(EventKind k);

constexpr uint64_t bit(EventKind k) { return uint64_t{1} << static_cast<int>(k); }
inline constexpr uint64_t kAllEvents = (uint64_t{1} << kNumEventKinds) - 1;

// One event. Which fields mean something depends on the kind; the rest
// stay at their defaults.
struct Event {
  EventKind kind = EventKind::kOpRecorded;
  int64_t t_ns = 0;         // steady clock, since the process's first event
  int64_t dur_ns = 0;       // *End events: how long since the matching *Begin
  uint32_t thread = 0;      // small per-thread number (thread_name() names it)
  int stream = -1;          // CPU stream running the work; -1: none
  std::string name;         // op, pass, kernel or runner name
  std::string detail;       // reason, outcome, fused group, message
  std::source_location site{};  // kOpRecorded: the user's call site (wok::call, CallSiteScope)
  const void* caller = nullptr; // ... or the return address into the user's code (named op functions)
  uint64_t id = 0;          // node id (kOpRecorded), evaluation id (kEval*), signature hash (caches)
  int64_t count = 0;        // nodes (kEval*), elements (kLaunch*)
  int64_t bytes = 0;        // bytes moved (kLaunch*), allocated (kAlloc/kFree), code (kCompileEnd)
  int64_t live_bytes = 0;   // kAlloc/kFree: bytes in live buffers afterwards
  int reason = -1;          // kEval*: EvalReason
  bool hit = false;         // kPlanCache, kKernelCache; kCapture: derived, not traced
  double max_abs = 0, max_ulp = 0;  // kShadow
  bool warn = false;        // kShadow beyond the documented bound
  std::string repro;        // kShadow: the fragment, serialized (cache/fragment_serialization.h)
  bool shadow_run = false;  // emitted by shadow mode's reference run (not the program's own work)
};

using Subscriber = std::function<void(const Event&)>;

// Subscribes to the kinds in `mask` (bits from bit()); returns an id for
// unsubscribe. Safe from any thread, at any time.
uint64_t subscribe(uint64_t mask, Subscriber fn);
void unsubscribe(uint64_t id);

// Delivers `e` to the subscribers of its kind, filling t_ns (if 0), thread
// and stream. Call it only inside WOK_OBSERVING(kind).
void emit(Event e);

// Monotonic nanoseconds on the event clock.
int64_t now_ns();
// This thread's number in events, and the names threads gave themselves.
uint32_t thread_id();
void set_thread_name(std::string name);
std::string thread_name(uint32_t thread);
// The CPU stream whose worker is this thread (-1 on other threads).
void set_current_stream(int stream);
int current_stream();

// Marks the events this thread emits while alive as shadow_run.
class ShadowRunScope {
 public:
  ShadowRunScope();
  ~ShadowRunScope();
  ShadowRunScope(const ShadowRunScope&) = delete;
  ShadowRunScope& operator=(const ShadowRunScope&) = delete;
};

// Parsed WOK_LOG: whether it lists `topic` (or "all"). Read once.
bool log_topic_enabled(std::string_view topic);

namespace detail {
extern std::atomic<uint64_t> g_listening;  // bit per kind with a subscriber
// Starts the environment's subscribers (WOK_TRACE, WOK_REPORT, WOK_LOG) once.
void start_from_env();
}  // namespace detail

inline bool listening(EventKind k) {
  return (detail::g_listening.load(std::memory_order_relaxed) & bit(k)) != 0;
}

// Runs `launch` between the launch-begin and launch-end events of `e` (its
// name, detail, bytes and count filled in by the caller); the end event
// carries the duration. Call it only when launch events are listened to.
template <typename Launch>
void emit_timed_launch(Event e, Launch&& launch) {
  e.kind = EventKind::kLaunchBegin;
  if (listening(EventKind::kLaunchBegin)) emit(e);
  const int64_t start = now_ns();
  launch();
  e.kind = EventKind::kLaunchEnd;
  e.t_ns = now_ns();
  e.dur_ns = e.t_ns - start;
  emit(std::move(e));
}

}  // namespace wok::observe

#ifndef WOK_EVENTS
#define WOK_EVENTS 1
#endif
#if WOK_EVENTS
#define WOK_OBSERVING(kind) (__builtin_expect(::wok::observe::listening(kind), 0))
#else
#define WOK_OBSERVING(kind) (false)
#endif
