// No first-call stall (WOK_ASYNC_COMPILE=1, wok::set_async_compile): a
// fragment whose plan is not built yet runs at once on the precompiled
// kernels while its plan (passes, fused kernels) is built on a background
// thread; evaluations after that find the plan in the cache and run the
// fused kernels. JIT and precompiled results agree bitwise
// (docs/numerics.md), so switching changes no result.
#pragma once

#include "wok/runtime/cpu_features.h"
#include "wok/runtime/fragment.h"

namespace wok::jit {

// On when set_async_compile(true) ran, else when WOK_ASYNC_COMPILE is set
// and not "0".
bool async_compile_enabled();
void set_async_compile(bool on);

// Queues a plan build for `f` (copied) on the compile thread unless one is
// queued or running for the same signature. Returns false when an earlier
// background build of this signature failed: the caller should then build
// synchronously, so the error reaches the user.
bool compile_in_background(const Fragment& f, CpuIsa isa);

// Blocks until the compile thread has nothing queued or running.
void wait_for_background_compiles();

}  // namespace wok::jit
