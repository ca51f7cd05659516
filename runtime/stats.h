// Process-wide runtime counters: wok::stats() and wok::reset_stats().
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace wok {

// Why a fragment was evaluated.
enum class EvalReason : uint8_t { kDataRead = 0, kEvalCall, kNodeLimit, kByteLimit };
inline constexpr int kNumEvalReasons = 4;
std::string_view eval_reason_name(EvalReason r);

struct RuntimeStats {
  int64_t evaluations = 0;        // fragments run
  int64_t evaluations_by_reason[kNumEvalReasons] = {};
  int64_t nodes_evaluated = 0;    // graph nodes in those fragments
  int64_t kernel_launches = 0;    // precompiled kernel calls + generated kernel runs
  int64_t kernels_compiled = 0;   // generated kernels built (JIT)
  int64_t cache_hits = 0;         // kernel cache lookups that found a kernel
  int64_t cache_misses = 0;       // ... that had to compile
  int64_t plan_cache_hits = 0;    // traced fragments that reused a compiled plan
  int64_t plan_cache_misses = 0;
  double compile_ms = 0;          // total time spent compiling kernels

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
  std::atomic<int64_t> compile_ns{0};
};
StatCounters& counters();
}  // namespace detail

}  // namespace wok
