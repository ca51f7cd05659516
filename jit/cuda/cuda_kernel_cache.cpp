#include "wok/jit/cuda/cuda_kernel_cache.h"

#include <future>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "wok/jit/cuda/cuda_renderer.h"
#include "wok/jit/cuda/nvrtc_loader.h"
#include "wok/jit/dump.h"
#include "wok/runtime/stats.h"

namespace wok::jit::cuda {

using BinaryResult = absl::StatusOr<std::shared_ptr<const CudaKernelBinary>>;

struct CudaKernelCache::Impl {
  struct Entry {
    std::string signature;
    std::shared_future<BinaryResult> result;
  };
  mutable std::mutex mu;
  std::unordered_map<Key128, std::vector<Entry>, Key128Hash> entries;
  size_t count = 0;
};

CudaKernelCache::CudaKernelCache() : impl_(new Impl()) {}

CudaKernelCache& CudaKernelCache::global() {
  static CudaKernelCache* cache = new CudaKernelCache();  // leaked: Note [CUDA teardown] in runtime/cuda/cuda_allocator.h
  return *cache;
}

absl::StatusOr<std::string> CudaKernelCache::signature_of(const FusedKernelSpec& spec, int arch) {
  absl::StatusOr<const Nvrtc*> nv = nvrtc();
  if (!nv.ok()) return nv.status();
  std::string s = "wok ";
  s += wok_version();
  s += " cuda sm_" + std::to_string(arch) + " nvrtc " + (*nv)->version_str() + " tpl " + templates_fingerprint();
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
  absl::StatusOr<CudaBinary> bin = compile_cuda(kernel->source, kernel->name, arch);
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
  std::promise<BinaryResult> promise;
  {
    std::unique_lock lock(impl_->mu);
    auto& bucket = impl_->entries[key];
    for (const Impl::Entry& e : bucket) {
      if (e.signature != *signature) continue;  // a hash collision: not ours
      std::shared_future<BinaryResult> result = e.result;
      lock.unlock();
      counters.cache_hits.fetch_add(1, std::memory_order_relaxed);
      return result.get();
    }
    bucket.push_back({*signature, promise.get_future().share()});
    ++impl_->count;
  }
  counters.cache_misses.fetch_add(1, std::memory_order_relaxed);
  BinaryResult result = compile(spec, arch, *signature, key);
  promise.set_value(result);
  if (!result.ok()) {  // failures are not cached: waiters got this one, the next call tries again
    std::lock_guard lock(impl_->mu);
    auto& bucket = impl_->entries[key];
    for (auto it = bucket.begin(); it != bucket.end(); ++it)
      if (it->signature == *signature) {
        bucket.erase(it);
        --impl_->count;
        break;
      }
  }
  return result;
}

size_t CudaKernelCache::size() const {
  std::lock_guard lock(impl_->mu);
  return impl_->count;
}

void CudaKernelCache::clear() {
  std::lock_guard lock(impl_->mu);
  impl_->entries.clear();
  impl_->count = 0;
}

}  // namespace wok::jit::cuda
