// The CUDA driver API, opened at run time.
//
// wok links no CUDA library: libcuda.so.1 is opened with dlopen the first
// time CUDA is needed, and every entry point wok uses is resolved then. A
// machine without the driver (or without a GPU) builds, tests and runs wok
// on the CPU; any use of a CUDA device there raises wok::DeviceError naming
// what is missing. The few driver types and constants wok needs are declared
// here, so building needs no CUDA header either.
//
// WOK_CUDA_DRIVER_PATH overrides the library opened (tests point it at a
// path that does not exist to see the "no driver" report).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace wok {

// Public queries (also in frontend/cuda_api.h). None of them throws: with no
// driver or no device, cuda_available() is false and the count is 0.
bool cuda_available();
int cuda_device_count();
// Why CUDA cannot be used here ("" when it can): names the missing library,
// entry point, or device.
std::string cuda_unavailable_reason();

namespace cuda {

// ---- driver types, declared as the driver ABI defines them ---------------------
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;

inline constexpr CUresult kSuccess = 0;
inline constexpr CUresult kErrorOutOfMemory = 2;
inline constexpr CUresult kErrorNoDevice = 100;
inline constexpr CUresult kErrorNotReady = 600;
inline constexpr int kAttrMultiprocessorCount = 16;
inline constexpr int kAttrComputeCapabilityMajor = 75;
inline constexpr int kAttrComputeCapabilityMinor = 76;
inline constexpr unsigned kStreamNonBlocking = 0x1;
inline constexpr unsigned kEventDisableTiming = 0x2;
inline constexpr unsigned kMemHostAllocPortable = 0x1;

// The entry points wok calls, resolved from libcuda.so.1.
struct DriverApi {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int* version);
  CUresult (*cuGetErrorName)(CUresult error, const char** name);
  CUresult (*cuGetErrorString)(CUresult error, const char** text);
  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
  CUresult (*cuDeviceGetName)(char* name, int len, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
  CUresult (*cuDeviceTotalMem)(size_t* bytes, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* ctx, CUdevice device);
  CUresult (*cuCtxSetCurrent)(CUcontext ctx);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc)(CUdeviceptr* ptr, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr ptr);
  CUresult (*cuMemGetInfo)(size_t* free, size_t* total);
  CUresult (*cuMemHostAlloc)(void** ptr, size_t bytes, unsigned flags);
  CUresult (*cuMemFreeHost)(void* ptr);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyDtoHAsync)(void* dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream stream);
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image);
  CUresult (*cuModuleGetFunction)(CUfunction* fn, CUmodule module, const char* name);
  CUresult (*cuLaunchKernel)(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned shared_bytes, CUstream stream, void** params, void** extra);
  CUresult (*cuStreamCreate)(CUstream* stream, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream stream);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuStreamQuery)(CUstream stream);
  CUresult (*cuStreamWaitEvent)(CUstream stream, CUevent event, unsigned flags);
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent event);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventQuery)(CUevent event);
  CUresult (*cuEventSynchronize)(CUevent event);
};

// The driver, loaded and initialized on first use; throws wok::DeviceError
// with cuda_unavailable_reason() when it cannot be used.
const DriverApi& driver();

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)", or the number if the driver
// cannot name it.
std::string error_text(CUresult r);
// Throws wok::DeviceError("<what>: <error_text>") unless r is success.
void check(CUresult r, const char* what);

struct DeviceInfo {
  std::string name;
  int major = 0, minor = 0;   // compute capability
  int multiprocessors = 0;
  size_t total_memory = 0;
  int arch() const { return major * 10 + minor; }  // 90 for sm_90
};

// Throws wok::DeviceError for an index out of range or no driver.
const DeviceInfo& device_info(int device);
// Throws unless `device` names a CUDA device present here; the message says
// what is missing.
void require_device(int device);
// Makes the device's primary context current on the calling thread (the
// driver keeps one per thread; this is a no-op when it already is).
void set_device(int device);

// The driver version as 13000 for 13.0; 0 without a driver.
int driver_version();

}  // namespace cuda

// Compute capability (major, minor) and name of a device; throw
// wok::DeviceError when it is absent.
std::pair<int, int> cuda_compute_capability(int device = 0);
std::string cuda_device_name(int device = 0);

}  // namespace wok
