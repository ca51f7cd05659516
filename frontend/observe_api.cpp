#include "wok/frontend/observe_api.h"

#include "wok/jit/async_compile.h"
#include "wok/jit/shadow.h"
#include "wok/runtime/observe/live_tensors.h"
#include "wok/runtime/observe/report.h"
#include "wok/runtime/observe/trace_writer.h"

namespace wok {

uint64_t subscribe(uint64_t kinds, std::function<void(const observe::Event&)> fn) {
  return observe::subscribe(kinds, std::move(fn));
}
void unsubscribe(uint64_t id) { observe::unsubscribe(id); }

void start_trace(const std::string& path) { observe::start_trace(path); }
void stop_trace() { observe::stop_trace(); }

void report(std::FILE* out) {
  std::string text = observe::report_text();
  std::fputs(text.c_str(), out);
  std::fflush(out);
}
std::string report_string() { return observe::report_text(); }
void collect_report(bool on) { observe::collect_report(on); }
void reset_report() { observe::reset_report(); }

std::string memory_report() { return observe::memory_report_text(); }
void print_memory_report(std::FILE* out) {
  std::string text = observe::memory_report_text();
  std::fputs(text.c_str(), out);
  std::fflush(out);
}
void track_live_tensors(bool on) { observe::track_live_tensors(on); }

void set_shadow(int every_n) { jit::set_shadow(every_n); }
void set_async_compile(bool on) { jit::set_async_compile(on); }
bool async_compile() { return jit::async_compile_enabled(); }
void wait_for_compiles() { jit::wait_for_background_compiles(); }

}  // namespace wok
