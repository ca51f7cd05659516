// Shared by the wok benchmarks: best-of-N reporting, default flags, and
// the small helpers the Markdown tables printed after a run need.
//
// Ratios are the targets we check, never absolute times (the machines are
// shared and noisy), so every binary keeps the fastest repetition of each
// benchmark and computes its ratios from those numbers, within one run.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "wok/wok.h"

namespace wok_bench {

// Prints and keeps only the fastest repetition of each benchmark; tables
// printed after the run quote the same numbers as the console.
class BestOfReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    const Run* best = nullptr;
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration) continue;  // mean/stddev of reps: not shown
      if (r.error_occurred) {
        ConsoleReporter::ReportRuns({r});
        return;
      }
      if (!best || seconds_per_iteration(r) < seconds_per_iteration(*best)) best = &r;
    }
    if (!best) return;
    best_[best->run_name.function_name] = *best;
    ConsoleReporter::ReportRuns({*best});
  }

  // Seconds per iteration of the fastest repetition; NaN if it did not run
  // (filtered out, or failed).
  double seconds(const std::string& name) const {
    auto it = best_.find(name);
    return it == best_.end() ? NAN : seconds_per_iteration(it->second);
  }
  // A user counter of the fastest repetition (rates are already per second).
  double counter(const std::string& name, const std::string& key) const {
    auto it = best_.find(name);
    if (it == best_.end()) return NAN;
    auto c = it->second.counters.find(key);
    return c == it->second.counters.end() ? NAN : static_cast<double>(c->second.value);
  }

 private:
  static double seconds_per_iteration(const Run& r) {
    return r.iterations > 0 ? r.real_accumulated_time / static_cast<double>(r.iterations) : NAN;
  }
  std::map<std::string, Run> best_;
};

// benchmark::Initialize, with `defaults` ("--flag=value") added for flags
// the command line does not set, so `--benchmark_repetitions=1` still works.
inline void init(int* argc, char*** argv, const std::vector<std::string>& defaults) {
  static std::vector<std::string> storage;
  static std::vector<char*> args;
  for (int i = 0; i < *argc; ++i) storage.emplace_back((*argv)[i]);
  for (const std::string& d : defaults) {
    std::string flag = d.substr(0, d.find('=') + 1);
    bool given = false;
    for (int i = 1; i < *argc; ++i) given |= std::strncmp((*argv)[i], flag.c_str(), flag.size()) == 0;
    if (!given) storage.push_back(d);
  }
  for (std::string& s : storage) args.push_back(s.data());
  args.push_back(nullptr);
  *argc = static_cast<int>(storage.size());
  *argv = args.data();
  benchmark::Initialize(argc, *argv);
}

// A memcpy split over wok's pool like its kernels are: the bandwidth
// reference the elementwise numbers are read against.
inline void parallel_memcpy(void* dst, const void* src, int64_t bytes) {
  constexpr int64_t kGrainBytes = int64_t{1} << 16;
  wok::parallel_for(bytes, kGrainBytes, [&](int64_t b, int64_t e) {
    std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, static_cast<size_t>(e - b));
  });
}

// A 64-byte aligned buffer from wok's own allocator (same huge-page advice
// as tensor buffers), touched once so page faults stay out of the timing.
class HostBuffer {
 public:
  explicit HostBuffer(size_t bytes) : bytes_(bytes), p_(wok::HostAllocator::global().allocate(bytes)) {
    std::memset(p_, 0, bytes_);
  }
  ~HostBuffer() { wok::HostAllocator::global().deallocate(p_, bytes_); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  template <typename T>
  T* as() const { return static_cast<T*>(p_); }

 private:
  size_t bytes_;
  void* p_;
};

// "12.3", or "n/a" for a benchmark that did not run.
inline std::string fmt(double v, int digits = 2) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace wok_bench
