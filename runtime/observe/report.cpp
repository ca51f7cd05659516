#include "wok/runtime/observe/report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "wok/runtime/host_allocator.h"
#include "wok/runtime/observe/live_tensors.h"
#include "wok/runtime/stats.h"

namespace wok::observe {

namespace {

struct KernelRow {
  int64_t launches = 0, total_ns = 0, bytes = 0;
};
struct ProgramRow {
  std::string name;
  int64_t builds = 0;
  std::map<std::string, int64_t> reasons;
};
struct CompileRow {
  int64_t count = 0, total_ns = 0;
};
struct ShadowRow {
  std::string group, repro;
  int64_t runs = 0;
  double max_abs = 0, max_ulp = 0;
  bool warn = false;
};

// Leaked: the WOK_REPORT printer runs at exit.
struct ReportState {
  std::mutex mu;
  uint64_t sub = 0;
  std::map<std::string, KernelRow> kernels;
  std::map<uint64_t, ProgramRow> programs;
  std::map<std::string, CompileRow> compiles;
  std::map<std::string, int64_t> evals_by_runner;
  std::map<std::string, ShadowRow> shadow;
  int64_t kernel_hits = 0, kernel_misses = 0;
};

ReportState& state() {
  static ReportState* s = new ReportState();
  return *s;
}

constexpr uint64_t kReportMask = bit(EventKind::kLaunchEnd) | bit(EventKind::kPlanCache) |
                                 bit(EventKind::kKernelCache) | bit(EventKind::kCompileEnd) |
                                 bit(EventKind::kEvalEnd) | bit(EventKind::kShadow);

void on_event(const Event& e) {
  ReportState& s = state();
  std::lock_guard lock(s.mu);
  switch (e.kind) {
    case EventKind::kLaunchEnd: {
      if (e.shadow_run) break;  // shadow mode's second run is not the program's time
      KernelRow& k = s.kernels[e.name];
      ++k.launches;
      k.total_ns += e.dur_ns;
      k.bytes += e.bytes;
      break;
    }
    case EventKind::kPlanCache:
      if (!e.hit) {
        ProgramRow& p = s.programs[e.id];
        p.name = e.name;
        ++p.builds;
        ++p.reasons[e.detail];
      }
      break;
    case EventKind::kKernelCache: (e.hit ? s.kernel_hits : s.kernel_misses)++; break;
    case EventKind::kCompileEnd: {
      CompileRow& c = s.compiles[e.name];
      ++c.count;
      c.total_ns += e.dur_ns;
      break;
    }
    case EventKind::kEvalEnd: ++s.evals_by_runner[e.name]; break;
    case EventKind::kShadow: {
      ShadowRow& r = s.shadow[e.name];
      ++r.runs;
      if (e.max_ulp > r.max_ulp || e.max_abs > r.max_abs || r.repro.empty()) {
        r.group = e.detail;
        r.repro = e.repro;
      }
      r.max_abs = std::max(r.max_abs, e.max_abs);
      r.max_ulp = std::max(r.max_ulp, e.max_ulp);
      r.warn = r.warn || e.warn;
      break;
    }
    default: break;
  }
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::string pad(std::string s, size_t w) {
  s.append(s.size() < w ? w - s.size() : 1, ' ');
  return s;
}

std::string bytes_str(int64_t b) {
  const char* sign = b < 0 ? "-" : "";
  const double v = static_cast<double>(b < 0 ? -b : b);
  if (v >= (1 << 30)) return sign + fmt("%.2f GiB", v / (1 << 30));
  if (v >= (1 << 20)) return sign + fmt("%.2f MiB", v / (1 << 20));
  if (v >= 1024) return sign + fmt("%.1f KiB", v / 1024);
  return sign + std::to_string(static_cast<int64_t>(v)) + " B";
}

void collect_report(bool on) {
  track_live_tensors(on);  // the report's live-memory section
  ReportState& s = state();
  std::lock_guard lock(s.mu);
  if (on && !s.sub) s.sub = subscribe(kReportMask, on_event);
  if (!on && s.sub) {
    unsubscribe(s.sub);
    s.sub = 0;
  }
}

bool collecting_report() {
  ReportState& s = state();
  std::lock_guard lock(s.mu);
  return s.sub != 0;
}

void reset_report() {
  ReportState& s = state();
  std::lock_guard lock(s.mu);
  s.kernels.clear();
  s.programs.clear();
  s.compiles.clear();
  s.evals_by_runner.clear();
  s.shadow.clear();
  s.kernel_hits = s.kernel_misses = 0;
  reset_growth();
}

namespace {
std::string report_tables() {
  RuntimeStats st = stats();
  MemoryStats mem = HostAllocator::global().stats();
  ReportState& s = state();
  std::lock_guard lock(s.mu);
  std::string out = "wok report\n";

  out += "\nevaluations by trigger: " + std::to_string(st.evaluations) + " (";
  for (int i = 0; i < kNumEvalReasons; ++i)
    out += (i ? ", " : "") + std::string(eval_reason_name(static_cast<EvalReason>(i))) + " " +
           std::to_string(st.evaluations_by_reason[i]);
  out += ")\n";
  if (!s.evals_by_runner.empty()) {
    out += "evaluations by runner:";
    for (auto& [runner, n] : s.evals_by_runner) out += " " + runner + " " + std::to_string(n);
    out += "\n";
  }
  out += "kernels compiled: " + std::to_string(st.kernels_compiled) + " in " + fmt("%.2f ms", st.compile_ms) +
         "; kernel cache " + std::to_string(st.cache_hits) + " hits, " + std::to_string(st.cache_misses) +
         " misses; plan cache " + std::to_string(st.plan_cache_hits) + " hits, " +
         std::to_string(st.plan_cache_misses) + " misses\n";
  out += "peak memory: " + bytes_str(mem.peak_bytes) + " (live now " + bytes_str(mem.current_bytes) + ", reserved " +
         bytes_str(mem.reserved_bytes) + ")\n";

  if (!s.sub && s.kernels.empty() && s.programs.empty()) {
    out += "\n(per-kernel times and recompile reasons: set WOK_REPORT=1 or call wok::collect_report())\n";
    return out;
  }

  // Kernels, by total time.
  std::vector<std::pair<std::string, KernelRow>> kernels(s.kernels.begin(), s.kernels.end());
  std::sort(kernels.begin(), kernels.end(), [](auto& a, auto& b) { return a.second.total_ns > b.second.total_ns; });
  out += "\nkernels (by total time)\n";
  out += pad("kernel", 44) + pad("launches", 10) + pad("total ms", 11) + pad("mean us", 10) + "GB/s\n";
  for (auto& [name, k] : kernels) {
    double gbs = k.total_ns > 0 ? static_cast<double>(k.bytes) / static_cast<double>(k.total_ns) : 0;
    out += pad(name, 44) + pad(std::to_string(k.launches), 10) + pad(fmt("%.3f", k.total_ns / 1e6), 11) +
           pad(fmt("%.2f", k.total_ns / 1e3 / static_cast<double>(k.launches)), 10) + fmt("%.2f", gbs) + "\n";
  }

  // Programs, by how many times their plan was built.
  std::vector<ProgramRow> programs;
  for (auto& [id, p] : s.programs) programs.push_back(p);
  std::stable_sort(programs.begin(), programs.end(), [](auto& a, auto& b) { return a.builds > b.builds; });
  out += "\nprograms compiled (top recompilers first)\n";
  for (const ProgramRow& p : programs) {
    out += "  " + std::to_string(p.builds) + "x " + p.name + "\n";
    for (auto& [why, n] : p.reasons) out += "       " + std::to_string(n) + "x " + why + "\n";
  }
  if (!s.compiles.empty()) {
    out += "\nkernels compiled\n";
    for (auto& [name, c] : s.compiles)
      out += "  " + pad(name, 44) + std::to_string(c.count) + "x, " + fmt("%.2f ms", c.total_ns / 1e6) + "\n";
  }
  if (!s.shadow.empty()) {
    std::vector<std::pair<std::string, ShadowRow>> rows(s.shadow.begin(), s.shadow.end());
    std::sort(rows.begin(), rows.end(), [](auto& a, auto& b) {
      return a.second.max_ulp != b.second.max_ulp ? a.second.max_ulp > b.second.max_ulp
                                                  : a.second.max_abs > b.second.max_abs;
    });
    out += "\nshadow mode: fused kernels against precompiled ones (worst first)\n";
    for (auto& [name, r] : rows) {
      out += "  " + pad(name, 44) + std::to_string(r.runs) + " runs, max abs " + fmt("%.3g", r.max_abs) +
             ", max ulp " + fmt("%.3g", r.max_ulp) + (r.warn ? "  BEYOND BOUND" : "") + "\n";
      if (r.max_ulp > 0 || r.max_abs > 0) {
        out += "      group: " + r.group + "\n";
        out += "      reproducer: " + r.repro + "\n";
      }
    }
  }
  return out;
}
}  // namespace

// The tables, then live memory by call site while it is tracked
// (runtime/observe/live_tensors.h), taken with no report lock held.
std::string report_text() {
  std::string out = report_tables();
  if (tracking_live_tensors()) out += "\n" + memory_report_text();
  return out;
}

void start_env_report() {
  collect_report(true);
  std::atexit([] {
    std::string text = report_text();
    std::fprintf(stderr, "%s", text.c_str());
  });
}

}  // namespace wok::observe
