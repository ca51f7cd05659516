#include "wok/jit/cuda/cuda_kernel_cache.h"

#include <future>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "wok/jit/cuda/cuda_renderer.h"
#include "wok/jit/once_cache.h"
#include "wok/runtime/cuda/nvrtc_loader.h"
#include "wok/runtime/dump.h"
#include "wok/runtime/stats.h"

namespace wok::jit::cuda {

using BinaryResult = absl::StatusOr<std::shared_ptr<const CudaKernelBinary>>;

struct CudaKernelCache::Impl {
  OnceCache<BinaryResult> binaries;
};

CudaKernelCache::CudaKernelCache() : impl_(new Impl()) {}

CudaKernelCache& CudaKernelCache::global() {
  static CudaKernelCache* cache = new CudaKernelCache();  // leaked: Note [CUDA teardown] in runtime/cuda/cuda_allocator.h
  return *cache;
}

absl::StatusOr<std::string> CudaKernelCache::signature_of(const FusedKernelSpec& spec, int arch) {
  absl::StatusOr<const wok::cuda::Nvrtc*> nv = wok::cuda::nvrtc();
  if (!nv.ok()) return nv.status();
  std::string s = "wok ";
  s += wok_version();
  s += " cuda sm_" + std::to_string(arch) + " nvrtc " + (*nv)->version_str() + " tpl " + wok::cuda::templates_fingerprint();
  s += '\n';
  s += spec.signature();
  return s;
}

namespace {

BinaryResult compile(const FusedKernelSpec& spec, int arch, const std::string& signature, const Key128& key) {
  auto kernel = std::make_shared<CudaKernelBinary>();
  kernel->key = key;
  kernel->signature = signature;
  kernel->name = spec.short_name(key.hex());
  absl::StatusOr<RenderedKernel> rendered = render_cuda(spec, kernel->name);
  if (!rendered.ok()) return rendered.status();
  kernel->source = std::move(rendered->source);
  kernel->param_bytes = rendered->param_bytes;
  if (dump_enabled()) write_dump(kernel->name + ".txt", spec.str());
  absl::StatusOr<wok::cuda::CudaBinary> bin = wok::cuda::compile_cuda(kernel->source, kernel->name, arch);
  if (!bin.ok()) return bin.status();
  kernel->binary = std::move(*bin);
  auto& c = detail::counters();
  c.kernels_compiled.fetch_add(1, std::memory_order_relaxed);
  c.compile_ns.fetch_add(static_cast<int64_t>(kernel->binary.compile_ms * 1e6), std::memory_order_relaxed);
  return std::shared_ptr<const CudaKernelBinary>(std::move(kernel));
}

}  // namespace

BinaryResult CudaKernelCache::get(const FusedKernelSpec& spec, int arch) {
  absl::StatusOr<std::string> signature = signature_of(spec, arch);
  if (!signature.ok()) return signature.status();
  Key128 key = hash128(*signature);
  auto& counters = detail::counters();
  OnceCache<BinaryResult>::Outcome outcome;
  BinaryResult result = impl_->binaries.get(
      key, *signature,
      [&] {
        counters.cache_misses.fetch_add(1, std::memory_order_relaxed);
        return compile(spec, arch, *signature, key);
      },
      &outcome);
  if (outcome == OnceCache<BinaryResult>::Outcome::kHit) counters.cache_hits.fetch_add(1, std::memory_order_relaxed);
  return result;
}

size_t CudaKernelCache::size() const { return impl_->binaries.size(); }

void CudaKernelCache::clear() { impl_->binaries.clear(); }

}  // namespace wok::jit::cuda
