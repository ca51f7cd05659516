// WOK_LOG=compile,cache,eval,...: one stderr line per event of the listed
// kinds. Topics: compile, cache, eval, pass, launch, alloc, op, shadow, async,
// all. The persistent cache's lines (cache/) come through here too.
#pragma once

#include <string>

#include "wok/runtime/observe/events.h"

namespace wok::observe {

// The event kinds a WOK_LOG topic turns on; 0 for an unknown topic.
uint64_t log_topic_mask(std::string_view topic);
// One readable line for an event ("wok compile: fused_exp_... 0.41 ms").
std::string format_log_line(const Event& e);
// "file.cpp:12" with the directories dropped; "" when unknown.
std::string site_str(const std::source_location& site);
// The same, falling back to the return address `caller` when `site` is
// empty (runtime/observe/symbolize.h).
std::string site_str(const std::source_location& site, const void* caller);

// Subscribes the logger for WOK_LOG's topics (called once at start-up).
void start_env_logger();

}  // namespace wok::observe
