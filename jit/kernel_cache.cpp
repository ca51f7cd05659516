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

#include "wok/cache/build_info.h"
#include "wok/cache/cache_config.h"
#include "wok/cache/cpu_feature_mask.h"
#include "wok/cache/disk_store.h"
#include "wok/jit/once_cache.h"
#include "wok/jit/x86/instr_emitter.h"
#include "wok/jit/x86/x86_codegen.h"
#include "wok/runtime/dump.h"
#include "wok/runtime/observe/events.h"
#include "wok/runtime/stats.h"

namespace wok::jit {

using KernelResult = absl::StatusOr<std::shared_ptr<const CompiledKernel>>;

struct KernelCache::Impl {
  OnceCache<KernelResult> kernels;
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
  if (x86::uses_avx512_bf16(spec, isa)) s += "+avx512bf16";
  s += " gen ";
  s += cache::generator_hash();  // a changed generator never reuses old code
  s += '\n';
  s += spec.signature();
  return s;
}

namespace {

// What a disk entry for this kernel says about itself
// (Note [Cache entry format] in cache/entry_format.h).
cache::EntryHeader entry_header(const FusedKernelSpec& spec, CpuIsa isa, const std::string& signature) {
  cache::EntryHeader h;
  h.wok_version = wok_version();
  h.generator = cache::generator_hash();
  h.compiler = cache::x86_compiler_id();
  h.backend = "x86-64";
  h.isa = cpu_isa_name(isa);
  h.cpu_features = cache::features_required(isa);
  if (x86::uses_avx512_bf16(spec, isa)) h.cpu_features |= cache::kFeatureAvx512Bf16;
  h.signature = signature;
  h.description = spec.str();
  std::string dtypes = "in", dims, ops;
  for (size_t i = 0; i < spec.input_dtypes.size(); ++i) {
    dtypes += (i ? "," : " ") + std::string(dtype_name(spec.input_dtypes[i]));
    dims += i ? " " : "";
    for (bool b : spec.input_broadcast[i]) dims += b ? 'b' : '.';
  }
  dtypes += "; params";
  for (size_t i = 0; i < spec.param_dtypes.size(); ++i)
    dtypes += (i ? "," : " ") + std::string(dtype_name(spec.param_dtypes[i]));
  dtypes += "; out";
  for (int i = 0; i < spec.num_outputs(); ++i)
    dtypes += (i ? "," : " ") + std::string(dtype_name(spec.output_dtype(i)));
  for (const ScalarInstr& in : spec.program.instrs) {
    if (in.op == ScalarOp::kInput || in.op == ScalarOp::kConst) continue;
    ops += (ops.empty() ? "" : " ") + std::string(scalar_op_name(in.op));
    if (in.op == ScalarOp::kCast) ops += ":" + std::string(dtype_name(in.dtype));
  }
  std::string kind = h.description.substr(0, h.description.find(','));  // "fused kernel", "row kernel"
  h.details = {{"kind", kind},     {"rank", std::to_string(spec.rank)}, {"dtypes", dtypes},
               {"broadcast", dims}, {"ops", ops}};
  return h;
}

// The kernel from the disk store, or generated (and then stored).
KernelResult load_or_compile(const FusedKernelSpec& spec, CpuIsa isa, const std::string& signature,
                             const Key128& key) {
  auto& c = detail::counters();
  std::string listing;
  const bool observed = WOK_OBSERVING(observe::EventKind::kCompileEnd) ||
                        WOK_OBSERVING(observe::EventKind::kCompileBegin) ||
                        WOK_OBSERVING(observe::EventKind::kKernelCache);
  const std::string name = observed ? spec.short_name(key.hex()) : std::string();
  auto generate = [&]() -> absl::StatusOr<std::vector<uint8_t>> {
    auto start = std::chrono::steady_clock::now();
    if (WOK_OBSERVING(observe::EventKind::kCompileBegin)) {
      observe::Event e;
      e.kind = observe::EventKind::kCompileBegin;
      e.name = name.empty() ? spec.short_name(key.hex()) : name;
      observe::emit(std::move(e));
    }
    absl::StatusOr<x86::MachineCode> code = x86::generate_x86(spec, isa, dump_enabled());
    if (!code.ok()) return code.status();
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
    if (WOK_OBSERVING(observe::EventKind::kCompileEnd)) {
      observe::Event e;
      e.kind = observe::EventKind::kCompileEnd;
      e.name = name.empty() ? spec.short_name(key.hex()) : name;
      e.dur_ns = ns;
      e.bytes = static_cast<int64_t>(code->bytes.size());
      e.detail = std::string(cpu_isa_name(isa));
      observe::emit(std::move(e));
    }
    c.kernels_compiled.fetch_add(1, std::memory_order_relaxed);
    c.compile_ns.fetch_add(ns, std::memory_order_relaxed);
    listing = std::move(code->listing);
    return std::move(code->bytes);
  };
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<cache::DiskStore::Found> code =
      cache::DiskStore::global().get_or_build(entry_header(spec, isa, signature), generate);
  if (!code.ok()) return code.status();
  if (WOK_OBSERVING(observe::EventKind::kKernelCache)) {
    observe::Event e;
    e.kind = observe::EventKind::kKernelCache;
    e.name = name.empty() ? spec.short_name(key.hex()) : name;
    e.id = key.lo;
    e.detail = code->source == cache::DiskStore::Source::kDisk ? "not in memory; loaded from the disk cache"
               : cache::cache_config().directory.empty()      ? "new signature; compiled (disk cache off)"
                                                               : "new signature; compiled, then written to the disk cache";
    observe::emit(std::move(e));
  }
  absl::StatusOr<KernelFn> fn = x86::load_machine_code(code->payload);
  if (!fn.ok()) return fn.status();
  auto kernel = std::make_shared<CompiledKernel>();
  kernel->fn = *fn;
  kernel->key = key;
  kernel->signature = signature;
  kernel->name = spec.short_name(key.hex());
  kernel->lanes = x86::choose_lanes(spec, isa == CpuIsa::kAvx512);
  kernel->row_scratch_per_column = x86::row_scratch_bytes_per_column(spec);
  kernel->code_bytes = code->payload.size();
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  kernel->compile_ms = static_cast<double>(ns) / 1e6;  // a disk load's time, when loaded
  if (dump_enabled()) {
    bool loaded = code->source == cache::DiskStore::Source::kDisk;
    write_dump(kernel->name + ".txt", spec.str() + (loaded ? "(loaded from the disk cache)\n" : ""));
    if (!loaded) write_dump(kernel->name + ".s", listing);
  }
  return std::shared_ptr<const CompiledKernel>(std::move(kernel));
}

}  // namespace

KernelResult KernelCache::get(const FusedKernelSpec& spec, CpuIsa isa) {
  std::string signature = signature_of(spec, isa);
  Key128 key = hash128(signature);
  auto& counters = detail::counters();
  OnceCache<KernelResult>::Outcome outcome;
  KernelResult result = impl_->kernels.get(
      key, signature,
      [&] {
        counters.cache_misses.fetch_add(1, std::memory_order_relaxed);
        return load_or_compile(spec, isa, signature, key);
      },
      &outcome);
  if (outcome == OnceCache<KernelResult>::Outcome::kHit) {
    counters.cache_hits.fetch_add(1, std::memory_order_relaxed);
    if (WOK_OBSERVING(observe::EventKind::kKernelCache)) {
      observe::Event ev;
      ev.kind = observe::EventKind::kKernelCache;
      ev.hit = true;
      ev.name = spec.short_name(key.hex());
      ev.id = key.lo;
      observe::emit(std::move(ev));
    }
  }
  return result;
}

size_t KernelCache::size() const { return impl_->kernels.size(); }

void KernelCache::clear() { impl_->kernels.clear(); }

}  // namespace wok::jit
