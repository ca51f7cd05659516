// wok::dist on one machine, over shared memory, against the MPI library's
// own collectives (issue 19). Run under mpirun with 2 ranks or more
// (bench/dist.sh runs 2 and 4):
//   mpirun --allow-run-as-root --oversubscribe -np 4 build/bench/bench_dist
//
// (a) all_reduce bandwidth: float32 sum, 1 KiB to 64 MiB. wok's side is what
//     a user writes, `wok::eval({wok::dist::all_reduce(x)})` on a ready x,
//     so its time includes recording the op, finding the cached plan and
//     handing the call to the communication stream; MPI's side is
//     MPI_Allreduce on the same input buffer. Algorithm bandwidth: bytes of
//     one rank's buffer / time. Target: wok at least 95% of MPI from 64 KiB.
//     wok issues MPI_Iallreduce (Note [Arrive, then exchange] in
//     runtime/dist/collective.cpp), whose algorithms are not
//     MPI_Allreduce's, so the table also times MPI_Iallreduce + MPI_Wait:
//     wok against it is wok's own cost.
// (b) overlap: `wok::eval({matmul(a, b), all_reduce(x)})`, the two
//     independent, against eval(matmul) then eval(all_reduce). The matmul's
//     size is picked so that it takes about as long alone as the all_reduce
//     does. Target: overlapped / sequential at most 0.8.
//
// Note [Timing collectives]
// A sample is k calls between two barriers, with k chosen per size so that
// a sample lasts about kSampleSeconds; its time is the slowest rank's. Each
// round times every variant once, the order alternating from round to round
// so that both sides see the same load; the tables show the best round of
// each (the least disturbed on a shared machine) and, for (b), also the
// median of the per-round ratios. Ranks share the cores: unless
// WOK_NUM_THREADS is set, each rank's wok uses cores / ranks threads.
//
// Environment: WOK_BENCH_ROUNDS=N (default 15), WOK_BENCH_MAX_BYTES=N
// (largest all_reduce, default 64 MiB), WOK_BENCH_OVERLAP_BYTES=N (the
// all_reduce of (b), default 8 MiB).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "wok/wok.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kSampleSeconds = 0.03;

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoll(v, nullptr, 10) : fallback;
}

double max_over_ranks(double seconds) {
  double worst = 0;
  MPI_Allreduce(&seconds, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

// Seconds per call of `f`, k calls between barriers, the slowest rank's.
double time_calls(int k, const std::function<void()>& f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = Clock::now();
  for (int i = 0; i < k; ++i) f();
  const double t = std::chrono::duration<double>(Clock::now() - t0).count();
  return max_over_ranks(t) / k;
}

// Calls per sample so that a sample lasts about kSampleSeconds (the same on
// every rank: the time is the slowest rank's).
int calls_per_sample(const std::function<void()>& f) {
  const double once = std::min(time_calls(1, f), time_calls(1, f));
  return static_cast<int>(std::clamp(std::ceil(kSampleSeconds / std::max(once, 1e-9)), 1.0, 2000.0));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v[v.size() / 2];
}

std::string size_label(int64_t bytes) {
  char buf[32];
  if (bytes >= (1 << 20)) std::snprintf(buf, sizeof buf, "%lld MiB", static_cast<long long>(bytes >> 20));
  else std::snprintf(buf, sizeof buf, "%lld KiB", static_cast<long long>(bytes >> 10));
  return buf;
}

// A ready float32 tensor of `n` values, different on each rank.
wok::Tensor rank_input(int64_t n, int rank) {
  wok::Tensor x = wok::rand({n}, 1000 + static_cast<uint64_t>(rank));
  wok::eval({x});
  return x;
}

// /proc/loadavg's first three fields: how busy the shared machine was.
std::string load_average() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (!f) return "unknown";
  double l1 = 0, l5 = 0, l15 = 0;
  const int got = std::fscanf(f, "%lf %lf %lf", &l1, &l5, &l15);
  std::fclose(f);
  if (got != 3) return "unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %.2f %.2f", l1, l5, l15);
  return buf;
}

// ---- (a) all_reduce bandwidth ----------------------------------------------------------

// Returns false when wok's result differs from MPI's.
bool bench_bandwidth(int rank, int rounds, int64_t max_bytes) {
  if (rank == 0) {
    std::printf("\n### all_reduce (float32, sum): wok::dist against MPI_Allreduce\n\n");
    std::printf("best of %d rounds; algorithm bandwidth = bytes per rank / time\n\n", rounds);
    std::printf("| size | MPI_Allreduce us | MPI_Iallreduce us | wok us | MPI_Allreduce GB/s | wok GB/s | "
                "wok / MPI_Allreduce | wok / MPI_Iallreduce |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  }
  bool all_match = true;
  for (int64_t bytes = 1 << 10; bytes <= max_bytes; bytes *= 4) {
    const int64_t n = bytes / 4;
    const wok::Tensor x = rank_input(n, rank);
    const float* in = x.data<float>();
    std::vector<float> out(static_cast<size_t>(n));
    auto mpi = [&] { MPI_Allreduce(in, out.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); };
    auto mpi_nb = [&] {
      MPI_Request request;
      MPI_Iallreduce(in, out.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    };
    auto wok_call = [&] { wok::eval({wok::dist::all_reduce(x)}); };

    // Warm up both (wok compiles and caches its plan here) and check that
    // they agree: the same sums, up to the order of the additions.
    mpi();
    const std::vector<float> got = wok::dist::all_reduce(x).to_vector<float>();
    float worst = 0;
    for (size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, std::abs(got[i] - out[i]) / std::max(1.0f, std::abs(out[i])));
    const bool match = worst <= 1e-5f;
    all_match = all_match && match;

    mpi_nb();
    const int k_mpi = calls_per_sample(mpi), k_nb = calls_per_sample(mpi_nb), k_wok = calls_per_sample(wok_call);
    double best_mpi = INFINITY, best_nb = INFINITY, best_wok = INFINITY;
    auto time_mpi = [&] { best_mpi = std::min(best_mpi, time_calls(k_mpi, mpi)); };
    auto time_nb = [&] { best_nb = std::min(best_nb, time_calls(k_nb, mpi_nb)); };
    auto time_wok = [&] { best_wok = std::min(best_wok, time_calls(k_wok, wok_call)); };
    for (int r = 0; r < rounds; ++r) {
      if (r % 2 == 0) {
        time_mpi(), time_wok(), time_nb();
      } else {
        time_nb(), time_wok(), time_mpi();
      }
    }
    if (rank == 0) {
      std::printf("| %s | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f%s |\n", size_label(bytes).c_str(),
                  best_mpi * 1e6, best_nb * 1e6, best_wok * 1e6, bytes / best_mpi / 1e9, bytes / best_wok / 1e9,
                  best_mpi / best_wok, best_nb / best_wok, match ? "" : " (results differ!)");
      std::fflush(stdout);
    }
  }
  return all_match;
}

// ---- (b) overlap ---------------------------------------------------------------------------

void bench_overlap(int rank, int rounds, int64_t ar_bytes) {
  const wok::Tensor x = rank_input(ar_bytes / 4, rank);
  auto all_reduce = [&] { wok::eval({wok::dist::all_reduce(x)}); };
  all_reduce();
  const int k_ar = calls_per_sample(all_reduce);

  // The square matmul whose time alone is closest to the all_reduce's
  // (ratios compared in log space), each candidate timed in alternation
  // with the all_reduce so that both see the same load. Every rank sees the
  // same slowest-rank times, so every rank picks the same size.
  int64_t pick = 0;
  double pick_gap = INFINITY;
  for (int64_t m : {128, 192, 256, 320, 384, 448, 512, 640, 768, 896, 1024, 1280, 1536, 2048}) {
    const wok::Tensor a = wok::rand({m, m}, 1), b = wok::rand({m, m}, 2);
    wok::eval({a, b});
    auto mm = [&] { wok::eval({wok::matmul(a, b)}); };
    mm();
    const int k_mm = calls_per_sample(mm);
    double t_mm = INFINITY, t_ar = INFINITY;
    for (int i = 0; i < 3; ++i) {
      t_mm = std::min(t_mm, time_calls(k_mm, mm));
      t_ar = std::min(t_ar, time_calls(k_ar, all_reduce));
    }
    const double gap = std::abs(std::log(t_mm / t_ar));
    if (gap < pick_gap) pick = m, pick_gap = gap;
    if (t_mm > t_ar) break;
  }

  const wok::Tensor a = wok::rand({pick, pick}, 1), b = wok::rand({pick, pick}, 2);
  wok::eval({a, b});
  auto mm = [&] { wok::eval({wok::matmul(a, b)}); };
  auto sequential = [&] {
    wok::eval({wok::matmul(a, b)});
    wok::eval({wok::dist::all_reduce(x)});
  };
  auto overlapped = [&] { wok::eval({wok::matmul(a, b), wok::dist::all_reduce(x)}); };
  overlapped();
  sequential();
  const int k = calls_per_sample(sequential);
  const int k_mm = calls_per_sample(mm);

  double best_mm = INFINITY, best_ar = INFINITY, best_seq = INFINITY, best_ovl = INFINITY;
  std::vector<double> ratios;
  for (int r = 0; r < rounds; ++r) {
    best_mm = std::min(best_mm, time_calls(k_mm, mm));
    best_ar = std::min(best_ar, time_calls(k_ar, all_reduce));
    double seq, ovl;
    if (r % 2 == 0) {
      seq = time_calls(k, sequential);
      ovl = time_calls(k, overlapped);
    } else {
      ovl = time_calls(k, overlapped);
      seq = time_calls(k, sequential);
    }
    best_seq = std::min(best_seq, seq);
    best_ovl = std::min(best_ovl, ovl);
    ratios.push_back(ovl / seq);
  }
  if (rank == 0) {
    const long long m = static_cast<long long>(pick);
    std::printf("\n### overlap: an independent matmul beside an all_reduce\n\n");
    std::printf("matmul float32 [%lld, %lld] x [%lld, %lld]; all_reduce float32 sum of %s; best of %d rounds\n\n", m,
                m, m, m, size_label(ar_bytes).c_str(), rounds);
    std::printf("| plan | ms |\n|---|---:|\n");
    std::printf("| matmul alone | %.2f |\n", best_mm * 1e3);
    std::printf("| all_reduce alone | %.2f |\n", best_ar * 1e3);
    std::printf("| sequential: eval(matmul), then eval(all_reduce) | %.2f |\n", best_seq * 1e3);
    std::printf("| overlapped: eval({matmul, all_reduce}) | %.2f |\n", best_ovl * 1e3);
    std::printf("| matmul alone + all_reduce alone | %.2f |\n", (best_mm + best_ar) * 1e3);
    std::printf("\noverlapped / sequential: %.2f (best rounds), %.2f (median of per-round ratios); target <= 0.8\n",
                best_ovl / best_seq, median(ratios));
    std::printf("overlapped / (matmul alone + all_reduce alone): %.2f\n", best_ovl / (best_mm + best_ar));
    std::fflush(stdout);
  }
}

}  // namespace

int main() {
  wok::dist::init();  // starts MPI under mpirun; the MPI calls below share it
  const int rank = wok::dist::rank(), size = wok::dist::size();
  if (size < 2) {
    std::fprintf(stderr,
                 "bench_dist compares collectives between processes: run it under mpirun with 2 ranks or more,\n"
                 "  mpirun --allow-run-as-root --oversubscribe -np 4 %s   (or bench/dist.sh)\n",
                 "build/bench/bench_dist");
    return 2;
  }
  int mpi_up = 0;
  MPI_Initialized(&mpi_up);
  if (!mpi_up) {
    std::fprintf(stderr, "bench_dist: wok::dist::init() did not start MPI\n");
    return 2;
  }

  // Ranks share the machine's cores.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int local = static_cast<int>(env_int("OMPI_COMM_WORLD_LOCAL_SIZE", size));
  if (!std::getenv("WOK_NUM_THREADS")) wok::set_num_threads(std::max(1, cores / local));
  const int rounds = static_cast<int>(std::max<int64_t>(1, env_int("WOK_BENCH_ROUNDS", 15)));
  if (rank == 0) {
    std::printf("## bench_dist: %d ranks on one machine (%d cores, %d on this node), wok threads per rank: %d\n", size,
                cores, local, wok::num_threads());
    std::printf("load average at the start (1, 5, 15 min): %s\n", load_average().c_str());
    std::fflush(stdout);
  }
  const bool ok = bench_bandwidth(rank, rounds, env_int("WOK_BENCH_MAX_BYTES", int64_t{64} << 20));
  bench_overlap(rank, rounds, env_int("WOK_BENCH_OVERLAP_BYTES", int64_t{8} << 20));
  if (rank == 0) std::printf("\nload average at the end: %s\n", load_average().c_str());
  wok::dist::finalize();
  if (!ok && rank == 0) std::fprintf(stderr, "bench_dist: wok's all_reduce differs from MPI_Allreduce\n");
  return ok ? 0 : 1;
}
