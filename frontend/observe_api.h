// Seeing inside the runtime (docs/observability.md): the event stream,
// traces, the report, shadow mode and background compilation.
//
//   WOK_TRACE=trace.json     write a Perfetto / chrome://tracing trace at exit
//   WOK_REPORT=1             print wok::report() at exit
//   WOK_LOG=compile,cache,eval,...   one stderr line per event of those kinds
//   WOK_SHADOW=N             compare one JIT evaluation in N with precompiled kernels
//   WOK_ASYNC_COMPILE=1      never stall on a compile: run precompiled meanwhile
//   WOK_CHECK_STREAMS=1      stop at a step not ordered after what it touches
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "wok/frontend/dispatch.h"
#include "wok/runtime/observe/events.h"
#include "wok/runtime/stream_order_check.h"

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

// ---- live memory ------------------------------------------------------------------
// The tensors alive now, grouped by the call site that created them (bytes,
// counts, an example dtype and shape; a buffer shared by views counted
// once), the pending graphs pinning memory with their node counts, and the
// growth warnings: live memory that rose at each of WOK_GROWTH_EVALS (16)
// evaluations in a row of one program. Tensors are tracked while
// track_live_tensors(true) is on (WOK_REPORT=1 and collect_report(true) turn
// it on); wok::report() ends with this section then. See Note [Live tensors
// by call site] in runtime/observe/live_tensors.h.
std::string memory_report();
void print_memory_report(std::FILE* out = stderr);
void track_live_tensors(bool on = true);

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

// ---- stream-ordering checker ------------------------------------------------------
// Every plan that runs on several streams (CPU or CUDA) is checked as it is
// enqueued: a step that touches bytes another stream wrote or is reading,
// with no event ordering the two, stops the run with wok::CheckError naming
// both steps, their streams and call sites (docs/troubleshooting.md).
// set_check_streams(bool) overrides WOK_CHECK_STREAMS=1 (both in
// runtime/stream_order_check.h, included above).
inline bool check_streams() { return check_streams_enabled(); }

}  // namespace wok
