// Per-op throughput and dispatch overhead of wok's ops, one op per
// evaluation, under the precompiled backend (the foundation's own kernels)
// and under the JIT.
//
// Measured:
//  - GB/s of every unary and binary op on 2^24 float32 elements, counting
//    the bytes of the inputs read plus the output written; sum/max over all
//    elements and along an axis of a 4096x4096 matrix; transpose of
//    4096x4096; matmul 512x512 in GFLOP/s. A parallel memcpy of 64 MiB is
//    the bandwidth reference: an op far below it is limited by compute or
//    by its kernel, not by memory.
//  - Dispatch overhead on 16-element tensors: a chain of 1000 alternating
//    adds and muls recorded and evaluated, in microseconds per op; and the
//    recording alone (graph built, never evaluated).
// Targets: none fixed here; the table printed last is for reading against
// the memcpy line (an elementwise op at 2 threads should reach most of it).
//
// Timing: Note [Timing on a shared machine] in bench_util.h. GB/s columns
// use the median iteration; the JIT / precompiled column re-times the two
// backends in alternating pairs after the benchmarks (median ratio).
//
// Run: bench_op_throughput [--benchmark_filter=REGEX] [--benchmark_repetitions=N]
#include <functional>

#include "bench_util.h"

namespace {

using wok::Tensor;
constexpr int64_t kN = int64_t{1} << 24;
constexpr int64_t kSide = 4096;  // kSide * kSide == kN
constexpr int64_t kMatmul = 512;
constexpr int kChainOps = 1000;
constexpr int64_t kSmall = 16;
constexpr int kPairedRounds = 9;  // JIT / precompiled column

struct Inputs {
  Tensor x;           // uniform [-4, 4)
  Tensor pos;         // uniform [0.25, 4.25): log, sqrt, rsqrt, reciprocal, pow's base
  Tensor y;           // uniform [-4, 4), the second operand
  Tensor bx, by;      // bool, about half true
  Tensor x2d;         // x as 4096x4096
  Tensor ma, mb;      // 512x512
  Tensor sx, sb, sc;  // 16 elements
};

Inputs make_inputs() {
  Inputs in;
  in.x = wok::rand({kN}, 1) * 8.0f - 4.0f;
  in.pos = wok::rand({kN}, 2) * 4.0f + 0.25f;
  in.y = wok::rand({kN}, 3) * 8.0f - 4.0f;
  in.bx = in.x > 0.0f;
  in.by = in.y > 0.0f;
  in.x2d = in.x.reshape({kSide, kSide});
  in.ma = wok::rand({kMatmul, kMatmul}, 4);
  in.mb = wok::rand({kMatmul, kMatmul}, 5);
  in.sx = wok::rand({kSmall}, 6);
  in.sb = wok::rand({kSmall}, 7);
  in.sc = wok::rand({kSmall}, 8) + 0.5f;
  wok::eval({in.x, in.pos, in.y, in.bx, in.by, in.x2d, in.ma, in.mb, in.sx, in.sb, in.sc});
  return in;
}

struct Backend {
  const char* name;
  wok::Backend value;
};
constexpr Backend kBackends[] = {{"precompiled", wok::Backend::kPrecompiled}, {"jit", wok::Backend::kJit}};

struct Row {
  std::string op;
  double work;  // bytes moved per evaluation, or flops for matmul
  bool flops;
  std::function<void()> run[2];  // one evaluation under kBackends[i], backend set first
};
std::vector<Row> g_rows;

// A benchmark timed per iteration (wok_bench::timed_loop); `setup` runs
// before the loop, `work` is what one iteration moves, counted in `unit`.
void register_timed(const std::string& name, const char* unit, double work, double items, benchmark::TimeUnit time_unit,
                    std::function<void()> setup, std::function<void()> body) {
  benchmark::RegisterBenchmark(name.c_str(),
                               [=](benchmark::State& st) {
                                 setup();
                                 wok_bench::timed_loop(st, name, body);
                                 st.SetItemsProcessed(static_cast<int64_t>(items) * st.iterations());
                                 st.counters[unit] =
                                     benchmark::Counter(work, benchmark::Counter::kIsIterationInvariantRate);
                               })
      ->UseManualTime()
      ->Unit(time_unit);
}

// One op, recorded anew and evaluated each iteration (a ready tensor would
// not run again), under each backend.
void register_op(const std::string& op, double work, double items, std::function<Tensor()> make, bool flops = false) {
  Row row{op, work, flops, {}};
  for (int i = 0; i < 2; ++i) {
    const Backend b = kBackends[i];
    row.run[i] = [make, b] {
      wok::set_backend(b.value);
      wok::eval({make()});
    };
    register_timed(op + "/" + b.name, flops ? "GFLOP/s" : "GB/s", work, items, benchmark::kMillisecond,
                   row.run[i],  // warm-up: JIT compile outside the timing
                   row.run[i]);
  }
  g_rows.push_back(std::move(row));
}

void register_unary(const Inputs& in) {
  struct Case {
    const char* name;
    Tensor (*fn)(const Tensor&);
    bool positive;
  };
  static const Case kCases[] = {
      {"neg", wok::neg, false},
      {"abs", wok::abs, false},
      {"exp", wok::exp, false},
      {"log", wok::log, true},
      {"sqrt", wok::sqrt, true},
      {"rsqrt", wok::rsqrt, true},
      {"sin", wok::sin, false},
      {"cos", wok::cos, false},
      {"tanh", wok::tanh, false},
      {"sigmoid", wok::sigmoid, false},
      {"relu", wok::relu, false},
      {"gelu", wok::gelu, false},
      {"silu", wok::silu, false},
      {"floor", wok::floor, false},
      {"ceil", wok::ceil, false},
      {"round", wok::round, false},
      {"reciprocal", wok::reciprocal, true},
      {"square", wok::square, false},
  };
  for (const Case& c : kCases) {
    const Tensor& x = c.positive ? in.pos : in.x;
    auto fn = c.fn;
    register_op(c.name, 8.0 * kN, kN, [&x, fn] { return fn(x); });
  }
  register_op("cast_f64", 12.0 * kN, kN, [&in] { return wok::cast(in.x, wok::DType::kFloat64); });
}

void register_binary(const Inputs& in) {
  using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
  struct Case {
    const char* name;
    BinaryFn fn;
    double out_bytes;
  };
  static const Case kCases[] = {
      {"add", wok::add, 4},         {"sub", wok::sub, 4},         {"mul", wok::mul, 4}, {"div", wok::div, 4},
      {"maximum", wok::maximum, 4}, {"minimum", wok::minimum, 4}, {"eq", wok::eq, 1},   {"lt", wok::lt, 1},
  };
  for (const Case& c : kCases) {
    BinaryFn fn = c.fn;
    register_op(c.name, (8.0 + c.out_bytes) * kN, kN, [&in, fn] { return fn(in.x, in.y); });
  }
  register_op("pow", 12.0 * kN, kN, [&in] { return wok::pow(in.pos, in.y); });
  register_op("logical_and", 3.0 * kN, kN, [&in] { return wok::logical_and(in.bx, in.by); });
  register_op("where", 13.0 * kN, kN, [&in] { return wok::where(in.bx, in.x, in.y); });
}

void register_reductions_and_more(const Inputs& in) {
  register_op("sum_all", 4.0 * kN, kN, [&in] { return wok::sum(in.x); });
  register_op("max_all", 4.0 * kN, kN, [&in] { return wok::max(in.x); });
  register_op("sum_axis_last", 4.0 * kN + 4.0 * kSide, kN, [&in] { return wok::sum(in.x2d, {-1}); });
  register_op("sum_axis_first", 4.0 * kN + 4.0 * kSide, kN, [&in] { return wok::sum(in.x2d, {0}); });
  register_op("max_axis_last", 4.0 * kN + 4.0 * kSide, kN, [&in] { return wok::max(in.x2d, {-1}); });
  register_op("transpose_4096", 8.0 * kN, kN, [&in] { return wok::transpose(in.x2d); });
  const double flops = 2.0 * kMatmul * kMatmul * kMatmul;
  register_op(
      "matmul_512", flops, kMatmul * kMatmul, [&in] { return wok::matmul(in.ma, in.mb); }, /*flops=*/true);
}

// The bandwidth reference: what a read plus a write of 64 MiB costs here.
void register_memcpy(const wok_bench::HostBuffer& src, const wok_bench::HostBuffer& dst) {
  register_timed(
      "memcpy_ref", "GB/s", 8.0 * kN, kN, benchmark::kMillisecond, [] {},
      [&src, &dst] {
        wok_bench::parallel_memcpy(dst.as<char>(), src.as<char>(), 4 * kN);
        benchmark::ClobberMemory();
      });
}

// A chain of kChainOps alternating adds and muls on 16-element tensors.
Tensor small_chain(const Inputs& in) {
  Tensor t = in.sx;
  for (int i = 0; i < kChainOps; ++i) t = (i % 2 == 0) ? t + in.sb : t * in.sc;
  return t;
}

void register_dispatch(const Inputs& in) {
  for (const Backend& b : kBackends) {
    register_timed(
        std::string("dispatch_chain1000/") + b.name, "ops/s", kChainOps, kChainOps, benchmark::kMicrosecond,
        [&in, b] {
          wok::set_backend(b.value);
          wok::eval({small_chain(in)});
        },
        [&in] { wok::eval({small_chain(in)}); });
  }
  register_timed(
      "record_chain1000", "ops/s", kChainOps, kChainOps, benchmark::kMicrosecond, [] {},
      [&in] {
        Tensor r = small_chain(in);  // dropped unevaluated: the graph is freed
        benchmark::DoNotOptimize(r);
      });
}

void print_tables() {
  using wok_bench::fmt;
  using wok_bench::median_seconds;
  auto rate = [&](const std::string& name, double work) { return work / median_seconds(name) / 1e9; };
  const double memcpy_gbs = rate("memcpy_ref", 8.0 * kN);
  std::printf("\n### Per-op throughput, 2^24 float32 elements, %d threads (median iteration)\n\n", wok::num_threads());
  std::printf("memcpy reference: %s GB/s (read + write)\n\n", fmt(memcpy_gbs, 1).c_str());
  std::printf("| op | bytes/elem | precompiled GB/s | JIT GB/s | JIT / precompiled (paired) | best / memcpy |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  for (const Row& r : g_rows) {
    double pre = rate(r.op + "/precompiled", r.work);
    double jit = rate(r.op + "/jit", r.work);
    std::string of_memcpy = r.flops ? "-" : fmt(std::max(pre, jit) / memcpy_gbs);
    // Throughput ratio = time ratio, re-timed in alternating pairs.
    double ratio = std::isnan(pre + jit) ? NAN : wok_bench::paired_ratio(r.run[0], r.run[1], kPairedRounds);
    std::string bpe = r.flops ? "-" : fmt(r.work / static_cast<double>(kN), 0);
    std::string name = r.flops ? r.op + " (GFLOP/s)" : r.op;
    std::printf("| %s | %s | %s | %s | %s | %s |\n", name.c_str(), bpe.c_str(), fmt(pre, 1).c_str(),
                fmt(jit, 1).c_str(), fmt(ratio).c_str(), of_memcpy.c_str());
  }
  const double us = 1e6 / kChainOps;
  std::printf("\n### Dispatch overhead, 16-element float32, %d-op add/mul chain (us per op)\n\n", kChainOps);
  std::printf("| measurement | precompiled | JIT |\n|---|---:|---:|\n");
  std::printf("| record only (no eval) | %s | %s |\n", fmt(median_seconds("record_chain1000") * us, 3).c_str(),
              fmt(median_seconds("record_chain1000") * us, 3).c_str());
  std::printf("| record + eval | %s | %s |\n", fmt(median_seconds("dispatch_chain1000/precompiled") * us, 3).c_str(),
              fmt(median_seconds("dispatch_chain1000/jit") * us, 3).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  wok_bench::init(
      &argc, &argv,
      {"--benchmark_min_time=0.1", "--benchmark_repetitions=2", "--benchmark_enable_random_interleaving=true"});
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const Inputs in = make_inputs();
  wok_bench::HostBuffer src(4 * kN), dst(4 * kN);
  register_memcpy(src, dst);
  register_unary(in);
  register_binary(in);
  register_reductions_and_more(in);
  register_dispatch(in);
  wok_bench::run_and_print(print_tables);
  return 0;
}
