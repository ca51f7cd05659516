// Time from process start to first result with the persistent kernel cache,
// for a program that needs 24 distinct generated kernels
// (bench/cache_startup_child.cpp), in one run:
//   cold    an empty cache: every kernel is compiled (and written)
//   warm    the cache the cold run left: every kernel is loaded from disk
//   bundle  a fresh cache filled by importing a bundle exported from the
//           warm one (the deployment path); the import's own time is shown
//   off     WOK_CACHE_DIR set empty: compiled, nothing written (reference)
// Each mode runs kReps times, interleaved; the table shows the median and
// the fastest. The clock starts before fork() and stops when the child's
// result line arrives, so exec, dynamic loading and runtime start-up count.
//
// Run: bench_cache_startup [REPS]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "wok/cache/bundle.h"
#include "wok/cache/file_util.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Run {
  double ms = 0;
  std::string line;  // the child's output
};

// Starts the child with WOK_CACHE_DIR=`dir` and times it to its first line.
Run run_child(const std::string& dir) {
  int out[2];
  if (::pipe(out) != 0) std::abort();
  auto start = Clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("WOK_CACHE_DIR", dir.c_str(), 1);
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::close(out[1]);
    ::execl(BENCH_CACHE_STARTUP_CHILD, BENCH_CACHE_STARTUP_CHILD, static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  Run r;
  char buf[256];
  ssize_t n;
  while (r.line.find('\n') == std::string::npos && (n = ::read(out[0], buf, sizeof buf)) > 0) r.line.append(buf, n);
  r.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || r.line.empty()) {
    std::fprintf(stderr, "bench_cache_startup: the child failed: %s\n", r.line.c_str());
    std::exit(1);
  }
  if (!r.line.empty() && r.line.back() == '\n') r.line.pop_back();
  return r;
}

long long field(const std::string& line, const char* name) {
  size_t at = line.find(std::string(name) + "=");
  return at == std::string::npos ? -1 : std::atoll(line.c_str() + at + std::string(name).size() + 1);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  char pattern[] = "/tmp/wok_bench_cache.XXXXXX";
  if (!::mkdtemp(pattern)) return 1;
  std::string root = pattern;
  std::map<std::string, std::vector<double>> ms;
  std::map<std::string, std::string> last;
  std::vector<double> import_ms;
  int64_t bundle_bytes = 0;
  for (int rep = 0; rep < reps; ++rep) {
    std::string store = root + "/store" + std::to_string(rep);
    std::string deployed = root + "/deployed" + std::to_string(rep);
    std::string bundle = root + "/kernels" + std::to_string(rep) + ".wokb";
    Run off = run_child("");
    Run cold = run_child(store);
    Run warm = run_child(store);
    absl::StatusOr<wok::cache::BundleReport> out = wok::cache::export_bundle(store, bundle);
    auto t0 = Clock::now();
    absl::StatusOr<wok::cache::BundleReport> in = wok::cache::import_bundle(bundle, deployed);
    import_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!out.ok() || !in.ok()) {
      std::fprintf(stderr, "bench_cache_startup: export/import failed\n");
      return 1;
    }
    bundle_bytes = out->bytes;
    Run deployed_run = run_child(deployed);
    for (auto& [name, run] :
         std::map<std::string, Run*>{{"off", &off}, {"cold", &cold}, {"warm", &warm}, {"bundle", &deployed_run}}) {
      ms[name].push_back(run->ms);
      last[name] = run->line;
    }
  }
  (void)wok::cache::remove_tree(root);
  if (field(last["cold"], "result") != field(last["bundle"], "result") ||
      last["cold"].substr(0, last["cold"].find(' ')) != last["warm"].substr(0, last["warm"].find(' ')) ||
      last["cold"].substr(0, last["cold"].find(' ')) != last["bundle"].substr(0, last["bundle"].find(' '))) {
    std::fprintf(stderr, "bench_cache_startup: results differ between modes\n");
    return 1;
  }

  std::printf("\nProcess start to first result, 24 distinct generated kernels, %d runs per mode\n\n", reps);
  std::printf("| mode | median ms | fastest ms | kernels compiled | loaded from disk |\n|---|---|---|---|---|\n");
  for (const char* mode : {"off", "cold", "warm", "bundle"}) {
    std::printf("| %s | %.1f | %.1f | %lld | %lld |\n", mode, median(ms[mode]),
                *std::min_element(ms[mode].begin(), ms[mode].end()), field(last[mode], "compiled"),
                field(last[mode], "disk_hits"));
  }
  std::printf("\nbundle: %lld bytes, import %.2f ms (median)\n", static_cast<long long>(bundle_bytes),
              median(import_ms));
  std::printf("cold / warm: %.2fx\n", median(ms["cold"]) / median(ms["warm"]));
  return 0;
}
