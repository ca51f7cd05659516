#include "wok/runtime/observe/trace_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "wok/runtime/error.h"
#include "wok/runtime/observe/log.h"
#include "wok/runtime/stats.h"

namespace wok::observe {

namespace {

// Kept events, in arrival order. Leaked: streams may emit during exit.
struct TraceState {
  std::mutex mu;
  bool on = false;
  std::string path;
  uint64_t sub = 0;
  std::vector<Event> events;
};

TraceState& state() {
  static TraceState* s = new TraceState();
  return *s;
}

// Everything but the *Begin kinds: spans are written whole from their *End.
constexpr uint64_t kTraceMask = kAllEvents & ~bit(EventKind::kLaunchBegin) & ~bit(EventKind::kCompileBegin) &
                                ~bit(EventKind::kEvalBegin);

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string us(int64_t ns) { return num(static_cast<double>(ns) / 1e3); }

void write_locked(TraceState& s) {
  std::string json = trace_json(s.events);
  s.events.clear();
  std::FILE* f = std::fopen(s.path.c_str(), "wb");
  if (!f) throw Error("wok: cannot write the trace to '" + s.path + "': " + std::strerror(errno));
  size_t n = std::fwrite(json.data(), 1, json.size(), f);
  bool ok = n == json.size() && std::fclose(f) == 0;
  if (!ok) throw Error("wok: cannot write the trace to '" + s.path + "': " + std::strerror(errno));
}

}  // namespace

std::string json_escape(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string trace_json(const std::vector<Event>& events) {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  out += "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"wok\"}}";
  std::set<uint32_t> threads;
  for (const Event& e : events) threads.insert(e.thread);
  for (uint32_t t : threads)
    out += ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(t) + ",\"name\":\"thread_name\",\"args\":{\"name\":\"" +
           json_escape(thread_name(t)) + "\"}}";
  for (const Event& e : events) {
    std::string head = ",\n{\"pid\":1,\"tid\":" + std::to_string(e.thread) + ",";
    auto span = [&](const std::string& cat, const std::string& name, const std::string& args) {
      out += head + "\"ph\":\"X\",\"cat\":\"" + cat + "\",\"name\":\"" + json_escape(name) + "\",\"ts\":" +
             us(e.t_ns - e.dur_ns) + ",\"dur\":" + us(e.dur_ns) + ",\"args\":{" + args + "}}";
    };
    auto instant = [&](const std::string& cat, const std::string& name, const std::string& args) {
      out += head + "\"ph\":\"i\",\"s\":\"t\",\"cat\":\"" + cat + "\",\"name\":\"" + json_escape(name) +
             "\",\"ts\":" + us(e.t_ns) + ",\"args\":{" + args + "}}";
    };
    auto str_arg = [](const char* k, std::string_view v) { return "\"" + std::string(k) + "\":\"" + json_escape(v) + "\""; };
    switch (e.kind) {
      case EventKind::kOpRecorded:
        instant("op", e.name, str_arg("site", site_str(e.site, e.caller)) + ",\"node\":" + std::to_string(e.id));
        break;
      case EventKind::kEvalEnd:
        span("eval", "eval #" + std::to_string(e.id),
             str_arg("reason", eval_reason_name(static_cast<EvalReason>(e.reason))) + "," + str_arg("runner", e.name) +
                 ",\"nodes\":" + std::to_string(e.count) + (e.detail.empty() ? "" : "," + str_arg("note", e.detail)));
        break;
      case EventKind::kPass: span("pass", e.name, ""); break;
      case EventKind::kPlanCache:
      case EventKind::kKernelCache:
        instant("cache", std::string(e.kind == EventKind::kPlanCache ? "plan " : "kernel ") + (e.hit ? "hit" : "miss"),
                str_arg("name", e.name) + "," + str_arg("reason", e.detail));
        break;
      case EventKind::kCompileEnd:
        span("compile", "compile " + e.name, str_arg("how", e.detail) + ",\"code_bytes\":" + std::to_string(e.bytes));
        break;
      case EventKind::kLaunchEnd: {
        double gbs = e.dur_ns > 0 ? static_cast<double>(e.bytes) / static_cast<double>(e.dur_ns) : 0;
        span(e.shadow_run ? "shadow launch" : "launch", e.name,
             "\"stream\":" + std::to_string(e.stream) + ",\"bytes\":" + std::to_string(e.bytes) +
                 ",\"elements\":" + std::to_string(e.count) + ",\"GB/s\":" + num(gbs) +
                 (e.detail.empty() ? "" : "," + str_arg("group", e.detail)));
        break;
      }
      case EventKind::kAlloc:
      case EventKind::kFree:
        out += head + "\"ph\":\"C\",\"name\":\"host memory\",\"ts\":" + us(e.t_ns) +
               ",\"args\":{\"live bytes\":" + std::to_string(e.live_bytes) + "}}";
        break;
      case EventKind::kShadow:
        instant("shadow", e.name,
                "\"max_abs\":" + num(e.max_abs) + ",\"max_ulp\":" + num(e.max_ulp) + ",\"warning\":" +
                    (e.warn ? "true" : "false"));
        break;
      case EventKind::kAsyncCompile: instant("compile", "async " + e.detail, str_arg("program", e.name)); break;
      case EventKind::kCacheLog: instant("cache", "disk cache", str_arg("message", e.detail)); break;
      case EventKind::kCapture:
        span("compile", (e.hit ? "derive " : "capture ") + e.name, str_arg("why", e.detail));
        break;
      default: break;
    }
  }
  out += "\n]}\n";
  return out;
}

void start_trace(const std::string& path) {
  if (path.empty()) throw ArgumentError("wok::start_trace: the path is empty");
  stop_trace();
  TraceState& s = state();
  {
    std::lock_guard lock(s.mu);
    s.on = true;
    s.path = path;
    s.events.clear();
  }
  s.sub = subscribe(kTraceMask, [](const Event& e) {
    TraceState& st = state();
    std::lock_guard lock(st.mu);
    if (st.on) st.events.push_back(e);
  });
}

void stop_trace() {
  TraceState& s = state();
  uint64_t sub;
  {
    std::lock_guard lock(s.mu);
    if (!s.on) return;
    sub = s.sub;
    s.sub = 0;
  }
  unsubscribe(sub);
  std::lock_guard lock(s.mu);
  s.on = false;
  write_locked(s);
}

bool tracing() {
  TraceState& s = state();
  std::lock_guard lock(s.mu);
  return s.on;
}

void start_env_trace(const std::string& path) {
  start_trace(path);
  std::atexit([] {
    try {
      stop_trace();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
    }
  });
}

}  // namespace wok::observe
