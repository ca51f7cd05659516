#include "wok/runtime/stats.h"

#include <sstream>

namespace wok {

std::string_view eval_reason_name(EvalReason r) {
  switch (r) {
    case EvalReason::kDataRead: return "data read";
    case EvalReason::kEvalCall: return "eval call";
    case EvalReason::kNodeLimit: return "node limit";
    case EvalReason::kByteLimit: return "byte limit";
    case EvalReason::kCompiledCall: return "compiled call";
  }
  return "?";
}

namespace detail {
StatCounters& counters() {
  static StatCounters* c = new StatCounters();
  return *c;
}
}  // namespace detail

RuntimeStats stats() {
  auto& c = detail::counters();
  RuntimeStats s;
  s.evaluations = c.evaluations.load();
  for (int i = 0; i < kNumEvalReasons; ++i) s.evaluations_by_reason[i] = c.evaluations_by_reason[i].load();
  s.nodes_evaluated = c.nodes_evaluated.load();
  s.kernel_launches = c.kernel_launches.load();
  s.kernels_compiled = c.kernels_compiled.load();
  s.cache_hits = c.cache_hits.load();
  s.cache_misses = c.cache_misses.load();
  s.plan_cache_hits = c.plan_cache_hits.load();
  s.plan_cache_misses = c.plan_cache_misses.load();
  s.plan_cache_recorded_hits = c.plan_cache_recorded_hits.load();
  s.compile_ms = static_cast<double>(c.compile_ns.load()) / 1e6;
  s.disk_hits = c.disk_hits.load();
  s.disk_misses = c.disk_misses.load();
  s.disk_writes = c.disk_writes.load();
  s.disk_lock_waits = c.disk_lock_waits.load();
  s.disk_evictions = c.disk_evictions.load();
  s.corrupt_entries = c.corrupt_entries.load();
  s.disk_errors = c.disk_errors.load();
  return s;
}

void reset_stats() {
  auto& c = detail::counters();
  c.evaluations = 0;
  for (auto& r : c.evaluations_by_reason) r = 0;
  c.nodes_evaluated = 0;
  c.kernel_launches = 0;
  c.kernels_compiled = 0;
  c.cache_hits = 0;
  c.cache_misses = 0;
  c.plan_cache_hits = 0;
  c.plan_cache_misses = 0;
  c.plan_cache_recorded_hits = 0;
  c.compile_ns = 0;
  c.disk_hits = 0;
  c.disk_misses = 0;
  c.disk_writes = 0;
  c.disk_lock_waits = 0;
  c.disk_evictions = 0;
  c.corrupt_entries = 0;
  c.disk_errors = 0;
}

std::string RuntimeStats::str() const {
  std::ostringstream out;
  out << "evaluations        " << evaluations << " (";
  for (int i = 0; i < kNumEvalReasons; ++i)
    out << (i ? ", " : "") << eval_reason_name(static_cast<EvalReason>(i)) << ": " << evaluations_by_reason[i];
  out << ")\n"
      << "nodes evaluated    " << nodes_evaluated << "\n"
      << "kernel launches    " << kernel_launches << "\n"
      << "kernels compiled   " << kernels_compiled << "\n"
      << "kernel cache       " << cache_hits << " hits, " << cache_misses << " misses\n"
      << "plan cache         " << plan_cache_hits << " hits (" << plan_cache_recorded_hits
      << " by recorded key), " << plan_cache_misses << " misses\n"
      << "compile time       " << compile_ms << " ms\n"
      << "disk cache         " << disk_hits << " hits, " << disk_misses << " misses, " << disk_writes << " writes, "
      << disk_lock_waits << " lock waits, " << disk_evictions << " evictions\n"
      << "disk cache damage  " << corrupt_entries << " rejected entries, " << disk_errors << " directory errors\n";
  return out.str();
}

}  // namespace wok
