// Compiled CUDA kernels by signature, compiled once each: the CUDA
// counterpart of jit/kernel_cache.h, holding binaries (cubin or PTX)
// rather than loaded code. Loading a binary into a device is the runner's
// business (jit/cuda/cuda_jit_runner.cpp), once per device.
//
// Note [CUDA kernel signature]
// A cubin is valid for one GPU architecture and was produced by one NVRTC
// from one set of templates, so the signature is
//   "wok <version> cuda sm_<arch> nvrtc <major.minor> tpl <templates hash>"
// followed by the spec's own signature (which includes the kernel ABI
// version). The full signature is kept beside its 128-bit hash and compared
// on every hit.
#pragma once

#include <memory>
#include <string>

#include <absl/status/statusor.h>

#include "wok/jit/fused_kernel.h"
#include "wok/runtime/cuda/cuda_compiler.h"
#include "wok/runtime/signature.h"

namespace wok::jit::cuda {

struct CudaKernelBinary {
  Key128 key;
  std::string signature;
  std::string name;    // entry point: "fused_<ops>_<hash8>"
  std::string source;  // what NVRTC compiled
  wok::cuda::CudaBinary binary;
  size_t param_bytes = 0;
};

class CudaKernelCache {
 public:
  static CudaKernelCache& global();

  // The kernel for `spec` on sm_<arch>: rendered and compiled on a miss;
  // threads missing on one signature wait for a single compile. Failures
  // are not cached.
  absl::StatusOr<std::shared_ptr<const CudaKernelBinary>> get(const FusedKernelSpec& spec, int arch);

  size_t size() const;
  void clear();  // tests: forget every kernel

  // Fails only when NVRTC is missing (its version is part of the signature).
  static absl::StatusOr<std::string> signature_of(const FusedKernelSpec& spec, int arch);

 private:
  struct Impl;
  CudaKernelCache();
  Impl* impl_;
};

}  // namespace wok::jit::cuda
