// Seeing inside the runtime (docs/observability.md): the event stream,
// traces, the report, shadow mode and background compilation.
//
//   WOK_TRACE=trace.json     write a Perfetto / chrome://tracing trace at exit
//   WOK_REPORT=1             print wok::report() at exit
//   WOK_LOG=compile,cache,eval,...   one stderr line per event of those kinds
//   WOK_SHADOW=N             compare one JIT evaluation in N with precompiled kernels
//   WOK_ASYNC_COMPILE=1      never stall on a compile: run precompiled meanwhile
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "wok/frontend/dispatch.h"
#include "wok/runtime/observe/events.h"

namespace wok {

// wok::Event is a stream event (runtime/stream.h); runtime events are
// wok::observe::Event.
using observe::EventKind;
// Labels every op recorded in the enclosing scope with this line:
//   void block(...) { wok::CallSiteScope here; ... }
using detail::CallSiteScope;

// ---- the event stream -------------------------------------------------------------
// Calls `fn` for every event whose kind is in `kinds` (bits from
// wok::observe::bit, or wok::observe::kAllEvents), on the thread that
// emits it. Returns an id for unsubscribe. See runtime/observe/events.h.
uint64_t subscribe(uint64_t kinds, std::function<void(const observe::Event&)> fn);
void unsubscribe(uint64_t id);
// Subscribes for the lifetime of the object.
class Subscription {
 public:
  Subscription(uint64_t kinds, std::function<void(const observe::Event&)> fn) : id_(::wok::subscribe(kinds, std::move(fn))) {}
  ~Subscription() { ::wok::unsubscribe(id_); }
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;

 private:
  uint64_t id_;
};

// ---- traces ---------------------------------------------------------------------
// Collects a Chrome / Perfetto trace until stop_trace() writes it to `path`
// (a running trace is written first). stop_trace throws wok::Error if the
// file cannot be written.
void start_trace(const std::string& path);
void stop_trace();

// ---- report ---------------------------------------------------------------------
// Per kernel: launches, total and mean time, GB/s; per program: how many
// times its plan was built and why; evaluations by trigger; shadow-mode
// differences; peak memory. Kernel times and reasons are collected while
// collect_report(true) is on (WOK_REPORT=1 turns it on at start).
void report(std::FILE* out = stderr);
std::string report_string();
void collect_report(bool on = true);
void reset_report();

// ---- shadow mode and background compilation ---------------------------------------
// Every `every_n`-th JIT evaluation also runs on the precompiled kernels and
// each fused kernel's outputs are compared (0: off). Overrides WOK_SHADOW.
void set_shadow(int every_n);
// Fragments whose fused kernels are not compiled yet run on precompiled
// kernels while they compile in the background. Overrides WOK_ASYNC_COMPILE.
void set_async_compile(bool on);
bool async_compile();
// Waits until background compiles are done (tests, benchmarks).
void wait_for_compiles();

}  // namespace wok
