#include "wok/runtime/capture.h"

#include <atomic>

#include "wok/runtime/error.h"

namespace wok {

namespace {
thread_local const CaptureScope* t_capture = nullptr;
std::atomic<uint64_t> g_next_capture_id{1};
}  // namespace

CaptureScope::CaptureScope(std::string function)
    : function_(std::move(function)), id_(g_next_capture_id.fetch_add(1, std::memory_order_relaxed)),
      outer_(t_capture) {
  t_capture = this;
}

CaptureScope::~CaptureScope() { t_capture = outer_; }

const CaptureScope* current_capture() { return t_capture; }

void refuse_during_capture(std::string_view what) {
  const CaptureScope* c = t_capture;
  if (!c) return;
  throw CaptureError(std::string(what) + " while wok::compile traces " + c->function() +
                     ": a captured function runs as one recorded graph, so it cannot read tensor values or "
                     "branch on them (the value of the first call would be reused by every later call). Read "
                     "the data outside the function, pass what it decides as an argument, or call the "
                     "function without wok::compile");
}

CaptureSuspend::CaptureSuspend() : saved_(t_capture) { t_capture = nullptr; }
CaptureSuspend::~CaptureSuspend() { t_capture = saved_; }

}  // namespace wok
