#include "wok/jit/plan_cache.h"

#include <mutex>
#include <unordered_map>

#include "wok/cache/manifest.h"
#include "wok/jit/recompile_reason.h"
#include "wok/jit/signature.h"
#include "wok/runtime/observe/events.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/stats.h"

namespace wok::jit {

namespace {
void put(std::string& s, int64_t x) { s.append(reinterpret_cast<const char*>(&x), sizeof x); }

void append_nodes_and_ends(std::string& s, const Fragment& f, bool with_attrs) {
  for (const FragmentNode& n : f.nodes) {
    s += n.op->name();
    s.push_back('(');
    for (int v : n.inputs) put(s, v);
    s.push_back(')');
    for (int v : n.outputs) put(s, v);
    // A constant's value is a launch parameter, not part of the plan.
    if (with_attrs && n.op->def().kind != OpKind::kCreation) n.attrs->append_signature(s);
  }
  s.push_back('<');
  for (int v : f.inputs) put(s, v);
  s.push_back('>');
  for (int v : f.outputs) put(s, v);
}
}  // namespace

void append_fragment_wiring(std::string& s, const Fragment& f, bool with_attrs) {
  put(s, static_cast<int64_t>(f.values.size()));
  append_nodes_and_ends(s, f, with_attrs);
}

std::string fragment_signature(const Fragment& f) {
  std::string s;
  put(s, static_cast<int64_t>(f.values.size()));
  for (const TensorMeta& m : f.values) {
    s.push_back(static_cast<char>(m.dtype));
    s.push_back(static_cast<char>(m.device.type));
    put(s, m.device.index);
    put(s, static_cast<int64_t>(m.shape.size()));
    for (int64_t d : m.shape) put(s, d);
  }
  append_nodes_and_ends(s, f, /*with_attrs=*/true);
  return s;
}

struct PlanCache::Impl {
  struct Entry {
    std::string signature;
    std::shared_ptr<const Plan> plan;
  };
  mutable std::mutex mu;
  std::unordered_map<Key128, std::vector<Entry>, Key128Hash> entries;
  size_t count = 0;
};

PlanCache::PlanCache() : impl_(new Impl()) {}

PlanCache& PlanCache::global() {
  static PlanCache* cache = new PlanCache();  // leaked: plans hold kernels (Note [Kernel lifetime])
  return *cache;
}

namespace {
void emit_plan_hit(const Key128& key) {
  if (!WOK_OBSERVING(observe::EventKind::kPlanCache)) return;
  observe::Event e;
  e.kind = observe::EventKind::kPlanCache;
  e.hit = true;
  e.name = key.hex().substr(0, 8);
  e.id = key.lo;
  observe::emit(std::move(e));
}
}  // namespace

std::shared_ptr<const Plan> PlanCache::find(const Fragment& f, CpuIsa isa) {
  std::string signature = fragment_signature(f);
  signature.push_back(static_cast<char>(isa));
  Key128 key = hash128(signature);
  std::lock_guard lock(impl_->mu);
  if (auto it = impl_->entries.find(key); it != impl_->entries.end())
    for (const Impl::Entry& e : it->second)
      if (e.signature == signature) {
        detail::counters().plan_cache_hits.fetch_add(1, std::memory_order_relaxed);
        emit_plan_hit(key);
        return e.plan;
      }
  return nullptr;
}

std::shared_ptr<const Plan> PlanCache::get_or_build(const Fragment& f, CpuIsa isa) {
  std::string signature = fragment_signature(f);
  signature.push_back(static_cast<char>(isa));
  Key128 key = hash128(signature);
  auto& counters = detail::counters();
  {
    std::lock_guard lock(impl_->mu);
    if (auto it = impl_->entries.find(key); it != impl_->entries.end())
      for (const Impl::Entry& e : it->second)
        if (e.signature == signature) {
          counters.plan_cache_hits.fetch_add(1, std::memory_order_relaxed);
          emit_plan_hit(key);
          return e.plan;
        }
  }
  counters.plan_cache_misses.fetch_add(1, std::memory_order_relaxed);
  // Always explained, so that a listener that starts later still sees
  // reasons against the programs traced before it.
  PlanMiss miss = explain_plan_miss(f, isa);
  if (WOK_OBSERVING(observe::EventKind::kPlanCache)) {
    observe::Event e;
    e.kind = observe::EventKind::kPlanCache;
    e.name = miss.name;
    e.detail = miss.reason;
    e.id = miss.program;
    observe::emit(std::move(e));
  }
  // Built outside the lock; two threads racing on one new program both
  // build it (kernels still compile once) and the first insert wins.
  std::shared_ptr<const Plan> plan = build_plan(f, isa);
  // WOK_RECORD: every fragment with generated kernels, even ones the disk
  // store already had, so a manifest recorded on a warm machine is complete.
  if (plan->kernels > 0) cache::record_fragment(f);
  std::lock_guard lock(impl_->mu);
  auto& bucket = impl_->entries[key];
  for (const Impl::Entry& e : bucket)
    if (e.signature == signature) return e.plan;
  bucket.push_back({std::move(signature), plan});
  ++impl_->count;
  return plan;
}

size_t PlanCache::size() const {
  std::lock_guard lock(impl_->mu);
  return impl_->count;
}

void PlanCache::clear() {
  std::lock_guard lock(impl_->mu);
  impl_->entries.clear();
  impl_->count = 0;
}

}  // namespace wok::jit
