#include "wok/jit/warmup.h"

#include "wok/cache/disk_store.h"
#include "wok/cache/manifest.h"
#include "wok/jit/plan.h"
#include "wok/runtime/error.h"
#include "wok/runtime/stats.h"

namespace wok::jit {

std::string WarmupReport::str() const {
  std::string s = std::to_string(fragments) + " fragments, " + std::to_string(kernels) + " kernels (" +
                  std::to_string(compiled) + " compiled, " + std::to_string(loaded) + " from the disk cache)";
  if (!problems.empty()) s += ", " + std::to_string(problems.size()) + " records skipped";
  return s;
}

absl::StatusOr<WarmupReport> warmup_manifest(const std::string& path, CpuIsa isa) {
  if (isa == CpuIsa::kBaseline)
    return absl::FailedPreconditionError("this host has no AVX2: the JIT is off, there is nothing to warm up");
  absl::StatusOr<std::vector<cache::ManifestRecord>> records = cache::read_manifest(path);
  if (!records.ok()) return records.status();
  WarmupReport report;
  auto& c = detail::counters();
  // Counters are process-wide; another thread compiling meanwhile would be
  // counted too, which only matters to the report.
  int64_t compiled0 = c.kernels_compiled.load(), loaded0 = c.disk_hits.load();
  for (const cache::ManifestRecord& rec : *records) {
    if (!rec.fragment.ok()) {
      report.problems.push_back(std::string(rec.fragment.status().message()));
      continue;
    }
    absl::StatusOr<std::shared_ptr<const Plan>> plan = build_plan((*rec.fragment)->fragment, isa);
    if (!plan.ok()) {
      report.problems.push_back("line " + std::to_string(rec.line) + ": " + std::string(plan.status().message()));
      continue;
    }
    ++report.fragments;
    report.kernels += (*plan)->kernels;
  }
  cache::DiskStore::global().flush();  // the store holds every kernel when warm-up returns
  report.compiled = c.kernels_compiled.load() - compiled0;
  report.loaded = c.disk_hits.load() - loaded0;
  return report;
}

}  // namespace wok::jit
