// wok::report(): where the time went and why things compiled, as tables.
//
// Collection is a subscriber, on from the start with WOK_REPORT=1 (which
// also prints the report at exit) or from wok::collect_report(true).
// Without it the report still shows the always-on counters (evaluations by
// trigger, compiles, peak memory).
#pragma once

#include <cstdint>
#include <string>

#include "wok/runtime/observe/events.h"

namespace wok::observe {

void collect_report(bool on);
bool collecting_report();
void reset_report();
// The tables: per kernel (launches, total and mean time, GB/s), per program
// (plans built and why: the top recompilers), compiles, evaluations by
// trigger, shadow-mode differences, peak memory.
std::string report_text();

// "1.50 MiB": how the reports print sizes.
std::string bytes_str(int64_t bytes);
// `s` padded with spaces to `width` (at least one): the reports' columns.
std::string pad(std::string s, size_t width);

// Called once at start-up for WOK_REPORT=1: collects, prints at exit.
void start_env_report();

}  // namespace wok::observe
