// The call site of what this thread is doing in wok now: the outermost open
// CallSiteScope or CallerScope (Note [Call sites] in frontend/dispatch.h).
// The frontend's scopes write it; it lives in the runtime so that what the
// runtime creates outside an op (a ready tensor's entry in the live-tensor
// registry, runtime/observe/live_tensors.h) can be named by it too.
#pragma once

#include <source_location>

namespace wok::observe {

struct ThreadCallSite {
  std::source_location site{};   // valid while site_open
  bool site_open = false;        // an explicit CallSiteScope is open
  const void* caller = nullptr;  // the outermost CallerScope's return address
};

// constinit: read without the TLS wrapper call on the dispatch path.
extern constinit thread_local ThreadCallSite t_call_site;

}  // namespace wok::observe
