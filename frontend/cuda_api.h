// CUDA queries and controls for users. Everything here works on machines
// without a GPU or driver: the queries say so (cuda_available() is false and
// cuda_unavailable_reason() names what is missing), and the calls that need
// a device throw wok::DeviceError with that reason.
#pragma once

#include <string>
#include <utility>

#include "wok/runtime/cuda/cuda_driver.h"  // cuda_available, cuda_device_count, ...
#include "wok/runtime/host_allocator.h"    // MemoryStats

namespace wok {

// The caching device allocator's counters for cuda:<device>
// (runtime/cuda/cuda_allocator.h), in the host allocator's terms.
MemoryStats cuda_memory_stats(int device = 0);
void cuda_reset_peak_memory(int device = 0);
// Returns cached device blocks to the driver.
void cuda_empty_cache(int device = 0);
// Waits for all work on the device.
void cuda_synchronize(int device = 0);

// The CUDA JIT's compiler: whether NVRTC could be loaded, and its version
// ("13.0"), or why not.
bool nvrtc_available();
std::string nvrtc_version();
std::string nvrtc_unavailable_reason();

}  // namespace wok
