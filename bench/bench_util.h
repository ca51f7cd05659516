// Shared by the wok benchmarks: per-iteration timing, ordered reporting,
// paired ratios, default flags, helpers for the Markdown tables, and what
// the benchmarks against another library (gemm.cpp, conv.cpp) share.
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
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
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
// kept under `name`; `prep` before each iteration, untimed. Register with
// ->UseManualTime().
template <typename Body, typename Prep>
void timed_loop(benchmark::State& st, const std::string& name, Body&& body, Prep&& prep) {
  std::vector<double>& kept = samples()[name];
  for (auto _ : st) {
    prep();
    auto t0 = Clock::now();
    body();
    double s = seconds_since(t0);
    st.SetIterationTime(s);
    kept.push_back(s);
  }
}
template <typename Body>
void timed_loop(benchmark::State& st, const std::string& name, Body&& body) {
  timed_loop(st, name, body, [] {});
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

// ---- wok against another library ---------------------------------------------------
// bench_gemm (OpenBLAS) and bench_conv (oneDNN): the same timed
// registration, counting JIT compiles inside the timed loops, inputs, the
// result check, the targets table's verdicts, and the re-execution that
// makes the other library's idle threads sleep sooner.

// Values uniform in [-1, 1], evaluated.
inline wok::Tensor uniform(const wok::Shape& shape, uint64_t seed, wok::DType dtype = wok::DType::kFloat32) {
  wok::Tensor t = wok::rand(shape, seed, dtype) * 2.0 - 1.0;
  wok::eval({t});
  return t;
}

// Largest |got - want| over the largest |want|, in float64.
template <typename G, typename W>
double relative_difference(const G* got, const W* want, int64_t n) {
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < n; ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i])));
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  return diff / scale;
}

// A body timed per iteration, and what runs before each iteration, untimed
// (may be empty).
struct Timed {
  std::function<void()> body;
  std::function<void()> prep;
};

// JIT kernels compiled inside register_timed's timed loops, by thread count.
inline std::map<int, int64_t>& timed_compiles() {
  static std::map<int, int64_t> by_threads;
  return by_threads;
}

// Registers name_of(what, threads). Each run first calls set_threads
// (wok's thread count and the other library's); the first run in the
// process gets the body from `make()` and runs it once, prep included,
// untimed (JIT compile, page faults). Then the body is timed per iteration
// (prep before each, untimed), and `work` per iteration is reported as
// `unit` per second.
// A benchmark that runs `body` once untimed (compiling outside the timing),
// then times each iteration of it (timed_loop).
inline void register_warm_timed(const std::string& name, std::function<void()> body, benchmark::TimeUnit unit) {
  benchmark::RegisterBenchmark(name.c_str(),
                               [=](benchmark::State& st) {
                                 body();
                                 timed_loop(st, name, body);
                               })
      ->UseManualTime()
      ->Unit(unit);
}

inline void register_timed(const std::string& what, int threads, const char* unit, double work,
                           void (*set_threads)(int), std::function<Timed()> make) {
  const std::string name = name_of(what, threads);
  auto made = std::make_shared<std::unique_ptr<Timed>>();
  benchmark::RegisterBenchmark(name.c_str(),
                               [=](benchmark::State& st) {
                                 set_threads(threads);
                                 if (!*made) {
                                   *made = std::make_unique<Timed>(make());
                                   if ((*made)->prep) (*made)->prep();
                                   (*made)->body();
                                 }
                                 const Timed& t = **made;
                                 const int64_t c0 = wok::stats().kernels_compiled;
                                 timed_loop(st, name, t.body, [&t] {
                                   if (t.prep) t.prep();
                                 });
                                 timed_compiles()[threads] += wok::stats().kernels_compiled - c0;
                                 st.counters[unit] =
                                     benchmark::Counter(work, benchmark::Counter::kIsIterationInvariantRate);
                               })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

inline std::string verdict(bool ok) { return ok ? "met" : "MISSED"; }
// "met: <figure>" or "MISSED: <figure>"; "n/a" when `value` is NaN (a side
// did not run, e.g. filtered out).
inline std::string target_text(double value, bool ok, const std::string& figure) {
  return std::isnan(value) ? "n/a" : verdict(ok) + ": " + figure;
}

// The checks table's row for the JIT compiles inside the timed loops, at 1
// and 2 threads; returns their total.
inline int64_t print_timed_compiles_row() {
  std::map<int, int64_t>& by_threads = timed_compiles();
  int64_t total = 0;
  for (auto [t, n] : by_threads) total += n;
  std::printf("| JIT kernels compiled inside the timed loops (1 thread / 2 threads) | 0 | %lld / %lld | %s |\n",
              static_cast<long long>(by_threads[1]), static_cast<long long>(by_threads[2]),
              verdict(total == 0).c_str());
  return total;
}

// Sets `var` to `value` and re-executes this binary (by its own path, so
// the process keeps its name) with the same arguments, for a library that
// reads `var` once, when it is loaded. Returns only if that fails, after
// saying so: "<program>: re-executing with <var>=<value> failed; <library>
// threads will spin".
inline void reexec_with_env(char** argv, const char* var, const char* value, const char* program, const char* library) {
  const std::string failure =
      std::string(program) + ": re-executing with " + var + "=" + value + " failed; " + library + " threads will spin";
  setenv(var, value, 1);
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    execv(self, argv);
  }
  std::perror(failure.c_str());
}

}  // namespace wok_bench
