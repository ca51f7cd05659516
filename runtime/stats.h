// Process-wide runtime counters: wok::stats() and wok::reset_stats().
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace wok {

// Why a fragment was evaluated.
enum class EvalReason : uint8_t { kDataRead = 0, kEvalCall, kNodeLimit, kByteLimit, kCompiledCall };
inline constexpr int kNumEvalReasons = 5;
std::string_view eval_reason_name(EvalReason r);

struct RuntimeStats {
  int64_t evaluations = 0;        // fragments run
  int64_t evaluations_by_reason[kNumEvalReasons] = {};
  int64_t nodes_evaluated = 0;    // graph nodes in those fragments
  int64_t kernel_launches = 0;    // precompiled kernel calls + generated kernel runs
  int64_t kernels_compiled = 0;   // generated kernels built (JIT)
  int64_t cache_hits = 0;         // kernel cache lookups that found a kernel
  int64_t cache_misses = 0;       // ... that did not: loaded from disk or compiled
  int64_t plan_cache_hits = 0;    // traced fragments that reused a compiled plan
  int64_t plan_cache_misses = 0;
  // Of the hits, those found by the key hashed while recording, without
  // building the fragment's signature (Note [Signatures hashed while
  // recording] in runtime/fragment.h).
  int64_t plan_cache_recorded_hits = 0;
  double compile_ms = 0;          // total time spent compiling kernels
  // The persistent kernel cache (cache/disk_store.h), behind cache_misses.
  int64_t disk_hits = 0;          // kernels loaded from disk (not compiled)
  int64_t disk_misses = 0;        // kernels not on disk: compiled, then written
  int64_t disk_writes = 0;        // entries written
  int64_t disk_lock_waits = 0;    // misses that waited for another process building the kernel
  int64_t disk_evictions = 0;     // entries removed to stay under WOK_CACHE_MAX_BYTES
  int64_t corrupt_entries = 0;    // entries found but rejected: damaged, stale, or for another CPU
  int64_t disk_errors = 0;        // cache directory unreadable or unwritable

  std::string str() const;        // one line per counter
};

RuntimeStats stats();
void reset_stats();

namespace detail {
// The live counters; kernels and backends bump them.
struct StatCounters {
  std::atomic<int64_t> evaluations{0};
  std::atomic<int64_t> evaluations_by_reason[kNumEvalReasons] = {};
  std::atomic<int64_t> nodes_evaluated{0};
  std::atomic<int64_t> kernel_launches{0};
  std::atomic<int64_t> kernels_compiled{0};
  std::atomic<int64_t> cache_hits{0};
  std::atomic<int64_t> cache_misses{0};
  std::atomic<int64_t> plan_cache_hits{0};
  std::atomic<int64_t> plan_cache_misses{0};
  std::atomic<int64_t> plan_cache_recorded_hits{0};
  std::atomic<int64_t> compile_ns{0};
  std::atomic<int64_t> disk_hits{0};
  std::atomic<int64_t> disk_misses{0};
  std::atomic<int64_t> disk_writes{0};
  std::atomic<int64_t> disk_lock_waits{0};
  std::atomic<int64_t> disk_evictions{0};
  std::atomic<int64_t> corrupt_entries{0};
  std::atomic<int64_t> disk_errors{0};
};
StatCounters& counters();
}  // namespace detail

}  // namespace wok
