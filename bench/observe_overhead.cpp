// What the event stream costs the dispatcher (runtime/observe/events.h).
//
// Measured, per recorded op, on 16-element float32 tensors:
//  - record: a chain of 1000 alternating adds and muls recorded, never
//    evaluated (the dispatcher alone: checks, shape and dtype rules, node,
//    the op-recorded emit site);
//  - record+eval: a chain of 100 ops recorded and evaluated under the
//    precompiled backend (adds the evaluator, launch and allocator sites);
// each with no listener, with a subscriber that does nothing, and with a
// trace being written (wok::start_trace; restarted every 50 iterations,
// outside the timed region, so the buffered trace stays small).
// For the comparison with a build whose emit sites are compiled out
// (-DWOK_EVENTS=OFF), run bench/event_overhead.sh: it builds that variant
// and runs this binary from both builds in alternation.
//
// Output: Google Benchmark's table, then one line per benchmark
//   observe_overhead <name> <ns per op, median of repetitions>
// ns per op is the benchmarking thread's CPU time (see thread_seconds).
//
// Run: bench_observe_overhead [--benchmark_repetitions=N] [--benchmark_filter=REGEX]
#include <benchmark/benchmark.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "wok/wok.h"

namespace {

constexpr int kRecordChain = 1000;
constexpr int kEvalChain = 100;
constexpr int kTraceRestart = 50;

enum Listener { kNone = 0, kNoOp = 1, kTrace = 2 };
const char* listener_name(int l) { return l == kNone ? "no listener" : l == kNoOp ? "no-op subscriber" : "trace"; }

// Timing: this thread's CPU time, not the wall clock. The figures compare
// two builds on a shared machine; CPU time leaves out the time other
// processes hold the core (the 16-element kernels run on the caller's
// thread, so nothing of the work is missed).
double thread_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::mutex g_mu;
std::map<std::string, std::vector<double>> g_ns_per_op;

std::string trace_path() {
  return (std::filesystem::temp_directory_path() / ("wok_observe_bench_" + std::to_string(::getpid()) + ".json"))
      .string();
}

// Sets up and tears down the listener around a benchmark.
class ListenerScope {
 public:
  explicit ListenerScope(int kind) : kind_(kind) {
    if (kind_ == kNoOp) id_ = wok::subscribe(wok::observe::kAllEvents, [](const wok::observe::Event&) {});
    if (kind_ == kTrace) wok::start_trace(trace_path());
  }
  void maybe_restart(benchmark::State& state, int64_t iteration) {
    if (kind_ != kTrace || iteration % kTraceRestart != 0) return;
    state.PauseTiming();
    wok::stop_trace();
    wok::start_trace(trace_path());
    state.ResumeTiming();
  }
  ~ListenerScope() {
    if (kind_ == kNoOp) wok::unsubscribe(id_);
    if (kind_ == kTrace) {
      wok::stop_trace();
      std::filesystem::remove(trace_path());
    }
  }

 private:
  int kind_;
  uint64_t id_ = 0;
};

void record_result(const std::string& name, benchmark::State& state, double seconds, int64_t ops) {
  if (ops == 0) return;
  std::lock_guard lock(g_mu);
  g_ns_per_op[name].push_back(seconds * 1e9 / static_cast<double>(ops));
  state.counters["ns/op"] = seconds * 1e9 / static_cast<double>(ops);
}

void BM_Record(benchmark::State& state) {
  wok::set_backend(wok::Backend::kPrecompiled);
  wok::Tensor x = wok::rand({16}, 1);
  wok::Tensor b = wok::rand({16}, 2);
  x.to_vector<float>();
  b.to_vector<float>();
  ListenerScope listener(static_cast<int>(state.range(0)));
  double seconds = 0;
  int64_t ops = 0, it = 0;
  for (auto _ : state) {
    listener.maybe_restart(state, ++it);
    double t0 = thread_seconds();
    wok::Tensor y = x;
    for (int i = 0; i < kRecordChain; ++i) y = (i & 1) ? y * b : y + b;
    seconds += thread_seconds() - t0;
    ops += kRecordChain;
    benchmark::DoNotOptimize(y);
    state.PauseTiming();
    y = wok::Tensor();  // freeing the graph is not dispatch
    state.ResumeTiming();
  }
  record_result(std::string("record/") + listener_name(static_cast<int>(state.range(0))), state, seconds, ops);
}

void BM_RecordEval(benchmark::State& state) {
  wok::set_backend(wok::Backend::kPrecompiled);
  wok::Tensor x = wok::rand({16}, 1);
  wok::Tensor b = wok::rand({16}, 2);
  x.to_vector<float>();
  b.to_vector<float>();
  ListenerScope listener(static_cast<int>(state.range(0)));
  double seconds = 0;
  int64_t ops = 0, it = 0;
  for (auto _ : state) {
    listener.maybe_restart(state, ++it);
    double t0 = thread_seconds();
    wok::Tensor y = x;
    for (int i = 0; i < kEvalChain; ++i) y = (i & 1) ? y * b : y + b;
    wok::eval({y});
    y = wok::Tensor();
    seconds += thread_seconds() - t0;
    ops += kEvalChain;
  }
  record_result(std::string("record+eval/") + listener_name(static_cast<int>(state.range(0))), state, seconds, ops);
}

BENCHMARK(BM_Record)->Arg(kNone)->Arg(kNoOp)->Arg(kTrace)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RecordEval)->Arg(kNone)->Arg(kNoOp)->Arg(kTrace)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (auto& [name, v] : g_ns_per_op) {
    std::sort(v.begin(), v.end());
    std::printf("observe_overhead %s %.2f\n", name.c_str(), v[v.size() / 2]);
  }
  return 0;
}
