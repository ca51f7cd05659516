#include "wok/runtime/backend.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "wok/runtime/error.h"
#include "wok/runtime/executor.h"

namespace wok {

namespace {

constexpr int kNumBackends = 2;
std::array<std::array<std::atomic<FragmentRunner*>, kNumDeviceTypes>, kNumBackends> g_runners{};
std::atomic<int> g_chosen{-1};  // -1: not chosen by set_backend

Backend backend_from_env() {
  const char* s = std::getenv("WOK_BACKEND");
  if (!s || !*s) return Backend::kJit;
  std::string v(s);
  if (v == "jit") return Backend::kJit;
  if (v == "precompiled") return Backend::kPrecompiled;
  std::fprintf(stderr, "wok: ignoring WOK_BACKEND=%s (expected 'jit' or 'precompiled')\n", s);
  return Backend::kJit;
}

// The precompiled CPU executor is runtime's own; the layers above install
// theirs (the JIT, CUDA) before they record work (frontend/backends.cpp).
void ensure_installed() {
  static std::once_flag once;
  std::call_once(once, [] {
    static PrecompiledExecutor* cpu_precompiled = new PrecompiledExecutor();
    install_runner(Backend::kPrecompiled, DeviceType::kCPU, cpu_precompiled);
  });
}

}  // namespace

std::string_view backend_name(Backend b) { return b == Backend::kJit ? "jit" : "precompiled"; }

void set_backend(Backend b) { g_chosen.store(static_cast<int>(b)); }

Backend backend() {
  int chosen = g_chosen.load();
  if (chosen >= 0) return static_cast<Backend>(chosen);
  static const Backend from_env = backend_from_env();
  return from_env;
}

void install_runner(Backend b, DeviceType device, FragmentRunner* runner) {
  g_runners[static_cast<int>(b)][static_cast<int>(device)].store(runner);
}

FragmentRunner& runner_for(Device device) {
  ensure_installed();
  Backend b = backend();
  if (FragmentRunner* r = g_runners[static_cast<int>(b)][static_cast<int>(device.type)].load()) return *r;
  if (FragmentRunner* r =
          g_runners[static_cast<int>(Backend::kPrecompiled)][static_cast<int>(device.type)].load()) {
    static std::once_flag notice;
    if (b == Backend::kJit)
      std::call_once(notice, [&] {
        std::fprintf(stderr, "wok: no JIT for %s on this host; using precompiled kernels\n", device.str().c_str());
      });
    return *r;
  }
  throw DeviceError("no backend can run work on " + device.str());
}

}  // namespace wok
