#include "wok/runtime/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "wok/runtime/error.h"

namespace wok {
namespace cuda {

namespace {

// Everything known about the driver after the one attempt to load it.
struct DriverState {
  bool ok = false;
  std::string reason;  // why not ok
  DriverApi api{};
  int version = 0;
  std::vector<DeviceInfo> devices;
  std::unique_ptr<std::once_flag[]> ctx_once;
  std::vector<CUcontext> contexts;
};

std::string error_text_with(const DriverApi& a, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (a.cuGetErrorName) a.cuGetErrorName(r, &name);
  if (a.cuGetErrorString) a.cuGetErrorString(r, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(r);
  if (text) s += std::string(" (") + text + ")";
  return s;
}

const char* library_path() {
  const char* s = std::getenv("WOK_CUDA_DRIVER_PATH");
  return s && *s ? s : "libcuda.so.1";
}

// Resolves `names` in order (versioned names first) into `slot`.
template <typename Fn>
bool resolve(void* lib, Fn& slot, std::initializer_list<const char*> names, std::string& missing) {
  for (const char* n : names)
    if (void* p = dlsym(lib, n)) {
      slot = reinterpret_cast<Fn>(p);
      return true;
    }
  missing += (missing.empty() ? "" : ", ") + std::string(*names.begin());
  return false;
}

DriverState* load() {
  auto* s = new DriverState();
  const char* path = library_path();
  // Never closed: kernels and buffers may be released after main returns.
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = dlerror();
    s->reason = std::string("no CUDA driver: cannot load ") + path + " (" + (err ? err : "unknown error") +
                "); install the NVIDIA driver or use the CPU";
    return s;
  }
  DriverApi& a = s->api;
  std::string missing;
  resolve(lib, a.cuInit, {"cuInit"}, missing);
  resolve(lib, a.cuDriverGetVersion, {"cuDriverGetVersion"}, missing);
  resolve(lib, a.cuGetErrorName, {"cuGetErrorName"}, missing);
  resolve(lib, a.cuGetErrorString, {"cuGetErrorString"}, missing);
  resolve(lib, a.cuDeviceGetCount, {"cuDeviceGetCount"}, missing);
  resolve(lib, a.cuDeviceGet, {"cuDeviceGet"}, missing);
  resolve(lib, a.cuDeviceGetName, {"cuDeviceGetName"}, missing);
  resolve(lib, a.cuDeviceGetAttribute, {"cuDeviceGetAttribute"}, missing);
  resolve(lib, a.cuDeviceTotalMem, {"cuDeviceTotalMem_v2", "cuDeviceTotalMem"}, missing);
  resolve(lib, a.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, missing);
  resolve(lib, a.cuCtxSetCurrent, {"cuCtxSetCurrent"}, missing);
  resolve(lib, a.cuCtxSynchronize, {"cuCtxSynchronize"}, missing);
  resolve(lib, a.cuMemAlloc, {"cuMemAlloc_v2"}, missing);
  resolve(lib, a.cuMemFree, {"cuMemFree_v2"}, missing);
  resolve(lib, a.cuMemGetInfo, {"cuMemGetInfo_v2"}, missing);
  resolve(lib, a.cuMemHostAlloc, {"cuMemHostAlloc"}, missing);
  resolve(lib, a.cuMemFreeHost, {"cuMemFreeHost"}, missing);
  resolve(lib, a.cuMemcpyHtoDAsync, {"cuMemcpyHtoDAsync_v2"}, missing);
  resolve(lib, a.cuMemcpyDtoHAsync, {"cuMemcpyDtoHAsync_v2"}, missing);
  resolve(lib, a.cuMemcpyAsync, {"cuMemcpyAsync"}, missing);
  resolve(lib, a.cuMemsetD8Async, {"cuMemsetD8Async"}, missing);
  resolve(lib, a.cuModuleLoadData, {"cuModuleLoadData"}, missing);
  resolve(lib, a.cuModuleGetFunction, {"cuModuleGetFunction"}, missing);
  resolve(lib, a.cuLaunchKernel, {"cuLaunchKernel"}, missing);
  resolve(lib, a.cuStreamCreate, {"cuStreamCreate"}, missing);
  resolve(lib, a.cuStreamDestroy, {"cuStreamDestroy_v2", "cuStreamDestroy"}, missing);
  resolve(lib, a.cuStreamSynchronize, {"cuStreamSynchronize"}, missing);
  resolve(lib, a.cuStreamQuery, {"cuStreamQuery"}, missing);
  resolve(lib, a.cuStreamWaitEvent, {"cuStreamWaitEvent"}, missing);
  resolve(lib, a.cuEventCreate, {"cuEventCreate"}, missing);
  resolve(lib, a.cuEventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"}, missing);
  resolve(lib, a.cuEventRecord, {"cuEventRecord"}, missing);
  resolve(lib, a.cuEventQuery, {"cuEventQuery"}, missing);
  resolve(lib, a.cuEventSynchronize, {"cuEventSynchronize"}, missing);
  if (!missing.empty()) {
    s->reason = std::string("CUDA driver ") + path + " is too old or incomplete: missing " + missing;
    return s;
  }
  a.cuDriverGetVersion(&s->version);
  if (CUresult r = a.cuInit(0); r != kSuccess) {
    s->reason = std::string("CUDA driver ") + path + " loaded but cuInit failed: " + error_text_with(a, r) +
                (r == kErrorNoDevice ? " (no CUDA device on this machine)" : "");
    return s;
  }
  int count = 0;
  if (CUresult r = a.cuDeviceGetCount(&count); r != kSuccess || count == 0) {
    s->reason = std::string("CUDA driver loaded, but it reports no CUDA device") +
                (r == kSuccess ? "" : " (" + error_text_with(a, r) + ")");
    return s;
  }
  for (int i = 0; i < count; ++i) {
    DeviceInfo info;
    CUdevice dev = 0;
    char name[256] = {};
    if (a.cuDeviceGet(&dev, i) != kSuccess || a.cuDeviceGetName(name, sizeof name, dev) != kSuccess ||
        a.cuDeviceGetAttribute(&info.major, kAttrComputeCapabilityMajor, dev) != kSuccess ||
        a.cuDeviceGetAttribute(&info.minor, kAttrComputeCapabilityMinor, dev) != kSuccess ||
        a.cuDeviceGetAttribute(&info.multiprocessors, kAttrMultiprocessorCount, dev) != kSuccess ||
        a.cuDeviceTotalMem(&info.total_memory, dev) != kSuccess) {
      s->reason = "CUDA driver cannot query device " + std::to_string(i);
      return s;
    }
    info.name = name;
    s->devices.push_back(std::move(info));
  }
  s->contexts.assign(s->devices.size(), nullptr);
  s->ctx_once.reset(new std::once_flag[s->devices.size()]);
  s->ok = true;
  return s;
}

DriverState& state() {
  // Leaked with the library handle: see Note [CUDA teardown] in cuda_allocator.h.
  static DriverState* s = load();
  return *s;
}

}  // namespace

std::string error_text(CUresult r) { return error_text_with(state().api, r); }

void check(CUresult r, const char* what) {
  if (r != kSuccess) throw DeviceError(std::string(what) + ": " + error_text(r));
}

const DriverApi& driver() {
  DriverState& s = state();
  if (!s.ok) throw DeviceError(s.reason);
  return s.api;
}

int driver_version() { return state().version; }

const DeviceInfo& device_info(int device) {
  DriverState& s = state();
  if (!s.ok) throw DeviceError("cuda:" + std::to_string(device) + " is not available: " + s.reason);
  if (device < 0 || device >= static_cast<int>(s.devices.size()))
    throw DeviceError("cuda:" + std::to_string(device) + " does not exist: this machine has " +
                      std::to_string(s.devices.size()) + " CUDA device(s)");
  return s.devices[device];
}

void require_device(int device) { device_info(device); }

void set_device(int device) {
  thread_local int current = -1;
  if (current == device) return;
  require_device(device);
  DriverState& s = state();
  std::call_once(s.ctx_once[device], [&] {
    CUdevice dev = 0;
    check(s.api.cuDeviceGet(&dev, device), "cuDeviceGet");
    check(s.api.cuDevicePrimaryCtxRetain(&s.contexts[device], dev), "cuDevicePrimaryCtxRetain");
  });
  check(s.api.cuCtxSetCurrent(s.contexts[device]), "cuCtxSetCurrent");
  current = device;
}

}  // namespace cuda

bool cuda_available() { return cuda::state().ok; }

int cuda_device_count() { return cuda::state().ok ? static_cast<int>(cuda::state().devices.size()) : 0; }

std::string cuda_unavailable_reason() { return cuda::state().ok ? std::string() : cuda::state().reason; }

std::pair<int, int> cuda_compute_capability(int device) {
  const cuda::DeviceInfo& d = cuda::device_info(device);
  return {d.major, d.minor};
}

std::string cuda_device_name(int device) { return cuda::device_info(device).name; }

}  // namespace wok
