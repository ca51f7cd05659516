// The per-thread state of a capture in progress (wok::compile tracing a
// function): what the runtime refuses while it lasts.
//
// Note [What a capture refuses]
// A captured function is traced once and its graph replayed on every later
// call. Anything the function computes from tensor *values* during that
// trace (a branch on item(), a size read from to_vector(), a printed
// tensor) would be computed once and silently reused, so each such read
// raises CaptureError while a capture is in progress, naming the read and
// the function. Evaluating is refused for the same reason (wok::eval
// inside the function would run the work during the trace). The pending
// limits (Note [Pending limits] in runtime/evaluator.cpp) do not evaluate
// during a capture: the whole function becomes one fragment, however long.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wok {

class CaptureScope {
 public:
  // `function` names the captured function in errors ("wok::compile'd
  // function #3").
  explicit CaptureScope(std::string function);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

  // Unique per capture; the nodes it records carry it (Node::capture).
  uint64_t id() const { return id_; }
  const std::string& function() const { return function_; }

 private:
  std::string function_;
  uint64_t id_;
  const CaptureScope* outer_;
};

// The innermost capture on this thread, or null.
const CaptureScope* current_capture();
inline bool capturing() { return current_capture() != nullptr; }

// Throws CaptureError naming `what` ("Tensor::item() of a float32[1]
// tensor") when a capture is in progress on this thread.
void refuse_during_capture(std::string_view what);

// Lifts the refusal on this thread for its lifetime: the capture's own
// evaluation of tensors recorded before it began.
class CaptureSuspend {
 public:
  CaptureSuspend();
  ~CaptureSuspend();
  CaptureSuspend(const CaptureSuspend&) = delete;
  CaptureSuspend& operator=(const CaptureSuspend&) = delete;

 private:
  const CaptureScope* saved_;
};

}  // namespace wok
