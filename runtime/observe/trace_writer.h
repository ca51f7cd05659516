// Chrome / Perfetto trace files from the event stream (WOK_TRACE=file.json,
// wok::start_trace / wok::stop_trace). Open them in ui.perfetto.dev or
// chrome://tracing.
//
// One track per thread; stream workers, pool workers and the compile thread
// name themselves ("stream 2", "pool 5", "compile"), so streams get tracks
// of their own. Spans: evaluations (with their trigger), passes, compiles,
// kernel launches (name = the fused group's kernel, args: bytes, GB/s).
// Instants: op calls with their call site, cache hits and misses, shadow
// results. Counter: live host memory.
#pragma once

#include <string>
#include <vector>

#include "wok/runtime/observe/events.h"

namespace wok::observe {

// Starts collecting; a trace already running is written out first.
// Throws wok::ArgumentError for an empty path.
void start_trace(const std::string& path);
// Writes the collected trace and stops. Throws wok::Error naming the path
// if it cannot be written. No-op when no trace runs.
void stop_trace();
bool tracing();

// The trace JSON for `events`, as stop_trace writes it (tests, tools).
std::string trace_json(const std::vector<Event>& events);
// JSON string escaping ("a\"b" for a"b).
std::string json_escape(std::string_view s);

// Called once at start-up for WOK_TRACE; written at exit.
void start_env_trace(const std::string& path);

}  // namespace wok::observe
