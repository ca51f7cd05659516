#include "wok/jit/plan_cache.h"

#include <optional>
#include <shared_mutex>
#include <unordered_map>

#include <absl/status/statusor.h>

#include "wok/cache/manifest.h"
#include "wok/jit/once_cache.h"
#include "wok/jit/recompile_reason.h"
#include "wok/runtime/fragment_signature.h"
#include "wok/runtime/observe/events.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/signature.h"
#include "wok/runtime/stats.h"

namespace wok::jit {

// Plans are built by build_plan, which throws on failure; the cache hands
// that exception to every caller waiting for the same plan.
using PlanResult = absl::StatusOr<std::shared_ptr<const Plan>>;

// Plans by the fragments' recorded keys (Note [Signatures hashed while
// recording] in runtime/fragment.h), each with the fragment it was found
// for, against which a later fragment with the same key is compared.
struct RecordedPlan {
  std::unique_ptr<OwnedFragment> reference;
  CpuIsa isa;
  Key128 signature_key;  // the key of the plan's signature, for events
  std::shared_ptr<const Plan> plan;
};

struct PlanCache::Impl {
  OnceCache<PlanResult> plans;
  std::shared_mutex recorded_mu;
  std::unordered_multimap<Key128, RecordedPlan, Key128Hash> recorded;
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

namespace {
std::string plan_signature(const Fragment& f, CpuIsa isa) {
  std::string signature = fragment_signature(f);
  signature.push_back(static_cast<char>(isa));
  return signature;
}

void count_hit(const Key128& signature_key) {
  detail::counters().plan_cache_hits.fetch_add(1, std::memory_order_relaxed);
  emit_plan_hit(signature_key);
}
}  // namespace

std::shared_ptr<const Plan> PlanCache::find_recorded(const Fragment& f, CpuIsa isa) {
  const Key128* key = f.recorded_key.get();
  if (!key) return nullptr;
  std::shared_lock lock(impl_->recorded_mu);
  auto [begin, end] = impl_->recorded.equal_range(*key);
  for (auto it = begin; it != end; ++it) {
    const RecordedPlan& r = it->second;
    if (r.isa != isa || !same_signature(f, r.reference->fragment)) continue;
    detail::counters().plan_cache_recorded_hits.fetch_add(1, std::memory_order_relaxed);
    count_hit(r.signature_key);
    return r.plan;
  }
  return nullptr;
}

void PlanCache::remember_recorded(const Fragment& f, CpuIsa isa, const Key128& signature_key,
                                  std::shared_ptr<const Plan> plan) {
  const Key128* key = f.recorded_key.get();
  if (!key) return;
  auto reference = own_fragment(f);
  std::unique_lock lock(impl_->recorded_mu);
  auto [begin, end] = impl_->recorded.equal_range(*key);
  for (auto it = begin; it != end; ++it)
    if (it->second.isa == isa && same_signature(f, it->second.reference->fragment)) return;  // another thread's
  impl_->recorded.emplace(*key, RecordedPlan{std::move(reference), isa, signature_key, std::move(plan)});
}

std::shared_ptr<const Plan> PlanCache::find(const Fragment& f, CpuIsa isa) {
  if (std::shared_ptr<const Plan> plan = find_recorded(f, isa)) return plan;
  std::string signature = plan_signature(f, isa);
  Key128 key = hash128(signature);
  std::optional<PlanResult> plan = impl_->plans.find(key, signature);
  if (!plan) return nullptr;
  count_hit(key);
  remember_recorded(f, isa, key, **plan);
  return **plan;
}

absl::StatusOr<std::shared_ptr<const Plan>> PlanCache::get_or_build(const Fragment& f, CpuIsa isa) {
  if (std::shared_ptr<const Plan> plan = find_recorded(f, isa)) return plan;
  std::string signature = plan_signature(f, isa);
  Key128 key = hash128(signature);
  auto& counters = detail::counters();
  OnceCache<PlanResult>::Outcome outcome;
  PlanResult plan = impl_->plans.get(
      key, signature,
      [&]() -> PlanResult {
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
        PlanResult built = build_plan(f, isa);
        // WOK_RECORD: every fragment with generated kernels, even ones the disk
        // store already had, so a manifest recorded on a warm machine is complete.
        if (built.ok() && (*built)->kernels > 0) cache::record_fragment(f);
        return built;
      },
      &outcome);
  if (outcome == OnceCache<PlanResult>::Outcome::kHit) count_hit(key);
  if (plan.ok()) remember_recorded(f, isa, key, *plan);
  return plan;
}

size_t PlanCache::size() const { return impl_->plans.size(); }

void PlanCache::clear() {
  {
    std::unique_lock lock(impl_->recorded_mu);
    impl_->recorded.clear();
  }
  impl_->plans.clear();
}

}  // namespace wok::jit
