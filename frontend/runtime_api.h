// Runtime controls for users: backend switch, counters, memory, limits.
#pragma once

#include "wok/runtime/backend.h"
#include "wok/runtime/evaluator.h"
#include "wok/runtime/host_allocator.h"
#include "wok/runtime/stats.h"

namespace wok {

// The host allocator's counters (runtime/host_allocator.h).
MemoryStats memory_stats();
// Returns cached host blocks to the OS.
void empty_cache();

// Checks every CPU kernel's writes against its op's inferred output shape
// (WOK_VERIFY_KERNELS=1; Note [Verifying kernel outputs] in runtime/kernel_verify.h).
void set_verify_kernels(bool on);
bool verify_kernels();

}  // namespace wok
