// Which implementation runs a fragment: generated (JIT) or precompiled
// kernels. Chosen with wok::set_backend or WOK_BACKEND=jit|precompiled.
#pragma once

#include <string_view>

#include "wok/runtime/device.h"
#include "wok/runtime/fragment.h"

namespace wok {

enum class Backend : uint8_t { kJit = 0, kPrecompiled = 1 };

std::string_view backend_name(Backend b);

void set_backend(Backend b);
// The backend in effect: set_backend's, else WOK_BACKEND's, else JIT where
// the host supports it.
Backend backend();

// Backends install their runner per (backend, device type) at start-up.
void install_runner(Backend b, DeviceType device, FragmentRunner* runner);
// The runner that serves `device` now; falls back to precompiled (with a
// one-time notice) when the chosen backend has no runner for the device.
FragmentRunner& runner_for(Device device);

}  // namespace wok
