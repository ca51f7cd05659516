// Note [Kernel lifetime]
// Compiled kernels are never unloaded: plans hold them, plans are cached
// for the life of the process, and static objects may still run kernels
// while the process exits. The executable memory is released with the
// process.
#include "wok/jit/kernel_cache.h"

#include <chrono>
#include <future>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "wok/jit/dump.h"
#include "wok/jit/x86/x86_codegen.h"
#include "wok/runtime/stats.h"

namespace wok::jit {

using KernelResult = absl::StatusOr<std::shared_ptr<const CompiledKernel>>;

struct KernelCache::Impl {
  struct Entry {
    std::string signature;
    std::shared_future<KernelResult> result;
  };
  mutable std::mutex mu;
  std::unordered_map<Key128, std::vector<Entry>, Key128Hash> entries;
  size_t count = 0;
};

KernelCache::KernelCache() : impl_(new Impl()) {}

KernelCache& KernelCache::global() {
  static KernelCache* cache = new KernelCache();  // leaked: Note [Kernel lifetime]
  return *cache;
}

std::string KernelCache::signature_of(const FusedKernelSpec& spec, CpuIsa isa) {
  std::string s = "wok ";
  s += wok_version();
  s += " x86 ";
  s += cpu_isa_name(isa);
  s += '\n';
  s += spec.signature();
  return s;
}

namespace {

std::string kernel_name(const FusedKernelSpec& spec, const Key128& key) {
  std::string name = "fused";
  int shown = 0;
  for (const ScalarInstr& in : spec.program.instrs) {
    if (in.op == ScalarOp::kInput || in.op == ScalarOp::kConst || in.op == ScalarOp::kCast) continue;
    if (shown++ == 4) {
      name += "_etc";
      break;
    }
    name += "_";
    name += scalar_op_name(in.op);
  }
  return name + "_" + key.hex().substr(0, 8);
}

KernelResult compile(const FusedKernelSpec& spec, CpuIsa isa, const std::string& signature, const Key128& key) {
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<x86::MachineCode> code = x86::generate_x86(spec, isa, dump_enabled());
  if (!code.ok()) return code.status();
  absl::StatusOr<KernelFn> fn = x86::load_machine_code(code->bytes);
  if (!fn.ok()) return fn.status();
  auto kernel = std::make_shared<CompiledKernel>();
  kernel->fn = *fn;
  kernel->key = key;
  kernel->signature = signature;
  kernel->name = kernel_name(spec, key);
  kernel->code_bytes = code->bytes.size();
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  kernel->compile_ms = static_cast<double>(ns) / 1e6;
  auto& c = detail::counters();
  c.kernels_compiled.fetch_add(1, std::memory_order_relaxed);
  c.compile_ns.fetch_add(ns, std::memory_order_relaxed);
  if (dump_enabled()) {
    write_dump(kernel->name + ".txt", spec.str());
    write_dump(kernel->name + ".s", code->listing);
  }
  return std::shared_ptr<const CompiledKernel>(std::move(kernel));
}

}  // namespace

KernelResult KernelCache::get(const FusedKernelSpec& spec, CpuIsa isa) {
  std::string signature = signature_of(spec, isa);
  Key128 key = hash128(signature);
  auto& counters = detail::counters();
  std::promise<KernelResult> promise;
  {
    std::unique_lock lock(impl_->mu);
    auto& bucket = impl_->entries[key];
    for (const Impl::Entry& e : bucket) {
      if (e.signature != signature) continue;  // a hash collision: not ours
      std::shared_future<KernelResult> result = e.result;
      lock.unlock();
      counters.cache_hits.fetch_add(1, std::memory_order_relaxed);
      return result.get();  // waits if another thread is still compiling it
    }
    bucket.push_back({signature, promise.get_future().share()});
    ++impl_->count;
  }
  counters.cache_misses.fetch_add(1, std::memory_order_relaxed);
  KernelResult result = compile(spec, isa, signature, key);
  promise.set_value(result);
  return result;
}

size_t KernelCache::size() const {
  std::lock_guard lock(impl_->mu);
  return impl_->count;
}

void KernelCache::clear() {
  std::lock_guard lock(impl_->mu);
  impl_->entries.clear();
  impl_->count = 0;
}

}  // namespace wok::jit
