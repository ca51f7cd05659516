// The in-memory cache of compiled kernels, keyed by signature.
#pragma once

#include <memory>
#include <string>

#include <absl/status/statusor.h>

#include "wok/jit/fused_kernel.h"
#include "wok/runtime/cpu_features.h"
#include "wok/runtime/signature.h"

namespace wok::jit {

struct CompiledKernel {
  KernelFn fn = nullptr;
  Key128 key;
  std::string signature;  // full canonical signature (hashed into key)
  std::string name;       // short readable name: "fused_<ops>_<hash8>"
  size_t code_bytes = 0;
  double compile_ms = 0;  // generating it, or loading it from the disk store
  int lanes = 0;          // elements per vector step (column kernels tile by it)
  int row_scratch_per_column = 0;  // bytes (KernelArgs::row_scratch)
};

class KernelCache {
 public:
  static KernelCache& global();

  // The kernel for `spec` on `isa`. A miss loads it from the disk store
  // (cache/disk_store.h) or compiles it; when several threads miss on one
  // signature, one does that and the others wait for it. Failures are not
  // cached.
  absl::StatusOr<std::shared_ptr<const CompiledKernel>> get(const FusedKernelSpec& spec, CpuIsa isa);

  size_t size() const;
  void clear();  // tests: forget every kernel (their code stays mapped)

  // The signature a kernel is cached under.
  static std::string signature_of(const FusedKernelSpec& spec, CpuIsa isa);

 private:
  struct Impl;
  KernelCache();
  Impl* impl_;
};

}  // namespace wok::jit
