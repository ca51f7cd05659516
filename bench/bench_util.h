// Shared by the wok benchmarks: per-iteration timing, ordered reporting,
// paired ratios, default flags, and helpers for the Markdown tables.
//
// Note [Timing on a shared machine]
// Targets are ratios, never absolute times, and the machines are shared and
// noisy (other jobs take whole cores for seconds at a time). So:
//  - every iteration is timed on its own and kept (samples()); the GB/s
//    tables use the median of all iterations of all repetitions, which a
//    few preempted iterations do not move;
//  - repetitions are interleaved at random, so a burst of load is spread
//    over all benchmarks instead of landing on one;
//  - a ratio checked against a target is measured by alternating the two
//    sides round by round and taking the median of the per-round ratios
//    (paired_ratio): both sides of each round see the same load.
// The console shows Google Benchmark's own numbers for the fastest
// repetition (mean over its iterations).
#pragma once

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "wok/wok.h"

namespace wok_bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Every timed iteration so far, in seconds, by benchmark name.
inline std::map<std::string, std::vector<double>>& samples() {
  static std::map<std::string, std::vector<double>> all;
  return all;
}
// Median seconds per iteration of `name`; NaN if it did not run.
inline double median_seconds(const std::string& name) {
  auto it = samples().find(name);
  return it == samples().end() ? NAN : median(it->second);
}

// The benchmark loop: `body` once per iteration, each timed on its own and
// kept under `name`. Register with ->UseManualTime().
template <typename Body>
void timed_loop(benchmark::State& st, const std::string& name, Body&& body) {
  std::vector<double>& kept = samples()[name];
  for (auto _ : st) {
    auto t0 = Clock::now();
    body();
    double s = seconds_since(t0);
    st.SetIterationTime(s);
    kept.push_back(s);
  }
}

// Median over `rounds` of time(slow) / time(fast), the two run back to back
// in each round (in alternating order) after one warm-up each.
inline double paired_ratio(const std::function<void()>& slow, const std::function<void()>& fast, int rounds) {
  slow();
  fast();
  std::vector<double> ratios;
  for (int r = 0; r < rounds; ++r) {
    double t_slow = 0, t_fast = 0;
    for (int k = 0; k < 2; ++k) {
      bool slow_first = (r + k) % 2 == 0;
      auto t0 = Clock::now();
      (slow_first ? slow : fast)();
      (slow_first ? t_slow : t_fast) = seconds_since(t0);
    }
    ratios.push_back(t_slow / t_fast);
  }
  return median(ratios);
}

// Prints the fastest repetition of each benchmark, all at the end and in
// registration order (random interleaving finishes them in any order).
class OrderedReporter : public benchmark::ConsoleReporter {
 public:
  // Colors only on a terminal: the output is meant to be pasted.
  OrderedReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_ColorTabular : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    const Run* best = nullptr;
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration) continue;  // mean/stddev of reps: not shown
      if (r.error_occurred) {
        best = &r;
        break;
      }
      if (!best || r.GetAdjustedRealTime() < best->GetAdjustedRealTime()) best = &r;
    }
    if (best) finished_.push_back(*best);
  }

  void Finalize() override {
    std::stable_sort(finished_.begin(), finished_.end(), [](const Run& a, const Run& b) {
      return std::tie(a.family_index, a.per_family_instance_index) <
             std::tie(b.family_index, b.per_family_instance_index);
    });
    for (const Run& r : finished_) ConsoleReporter::ReportRuns({r});
    ConsoleReporter::Finalize();
  }

 private:
  std::vector<Run> finished_;
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

// Runs the registered benchmarks (each repetition's fastest run shown, in
// registration order), then `print_tables`: the tail of every wok bench.
inline void run_and_print(const std::function<void()>& print_tables) {
  benchmark::AddCustomContext("wok_threads_max", std::to_string(wok::num_threads()));
  OrderedReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_tables();
  benchmark::Shutdown();
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
  T* as() const {
    return static_cast<T*>(p_);
  }

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

// ---- named variants ---------------------------------------------------------------
// A benchmark binary registers every variant (a program under one backend,
// thread count, or hand-written loop) as one complete run, by name: the
// benchmarks time it, and the target ratios re-time two of them in pairs.

inline std::string name_of(const std::string& what, int threads) { return what + "/t" + std::to_string(threads); }

inline std::map<std::string, std::function<void()>>& variants() {
  static std::map<std::string, std::function<void()>> all;
  return all;
}

// Registers `name`: set the thread count, `setup()`, then `body()` per
// iteration (after one warm-up run: JIT compile, page faults). Reports
// GB/s for `bytes` of traffic per run, and `items` per run when given.
inline void register_variant(const std::string& name, double bytes, int threads, std::function<void()> setup,
                             std::function<void()> body, int64_t items = 0) {
  std::function<void()> run = [=] {
    wok::set_num_threads(threads);
    setup();
    body();
  };
  variants()[name] = run;
  benchmark::RegisterBenchmark(name.c_str(),
                               [=](benchmark::State& st) {
                                 run();
                                 timed_loop(st, name, run);
                                 if (items) st.SetItemsProcessed(items * st.iterations());
                                 st.counters["GB/s"] =
                                     benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
                               })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

// Median over `rounds` paired rounds of time(slow) / time(fast), both
// registered variants at `threads`; NaN if either was filtered out.
inline double paired_variants(const std::string& slow, const std::string& fast, int threads, int rounds) {
  std::string s = name_of(slow, threads), f = name_of(fast, threads);
  if (std::isnan(median_seconds(s)) || std::isnan(median_seconds(f))) return NAN;
  return paired_ratio(variants().at(s), variants().at(f), rounds);
}

}  // namespace wok_bench
