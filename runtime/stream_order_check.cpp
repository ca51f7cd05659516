#include "wok/runtime/stream_order_check.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string_view>

namespace wok {

namespace {
std::atomic<bool>& check_flag() {
  static std::atomic<bool> flag = [] {
    const char* env = std::getenv("WOK_CHECK_STREAMS");
    return env && *env && std::string_view(env) != "0";
  }();
  return flag;
}

bool overlaps(const BufferAccess& a, const BufferAccess& b) {
  return a.buffer == b.buffer && a.begin < b.end && b.begin < a.end;
}
}  // namespace

bool check_streams_enabled() { return check_flag().load(std::memory_order_relaxed); }
void set_check_streams(bool on) { check_flag().store(on, std::memory_order_relaxed); }

const char* hazard_kind_text(StreamHazard::Kind kind) {
  switch (kind) {
    case StreamHazard::Kind::kReadAfterWrite: return "reads bytes written";
    case StreamHazard::Kind::kWriteAfterRead: return "overwrites bytes still being read";
    case StreamHazard::Kind::kWriteAfterWrite: return "overwrites bytes written";
  }
  return "?";
}

StreamOrderChecker::StreamOrderChecker(int streams) : clocks_(static_cast<size_t>(streams), Clock(streams, 0)) {}

bool StreamOrderChecker::ordered_before(const Touch& t, int stream) const {
  return t.stream == stream || clocks_[stream][t.stream] >= t.time;
}

int StreamOrderChecker::record(int stream) {
  events_.push_back(clocks_[stream]);
  return static_cast<int>(events_.size()) - 1;
}

void StreamOrderChecker::wait(int stream, int event) {
  Clock& c = clocks_[stream];
  const Clock& e = events_[event];
  for (size_t i = 0; i < c.size(); ++i) c[i] = std::max(c[i], e[i]);
}

std::optional<StreamHazard> StreamOrderChecker::enqueue(int stream, int step, std::span<const BufferAccess> accesses) {
  const Touch now{stream, ++clocks_[stream][stream], step};
  std::optional<StreamHazard> hazard;
  auto report = [&](StreamHazard::Kind kind, const BufferAccess& a, const Range& r, const Touch& earlier) {
    if (hazard) return;
    hazard = StreamHazard{kind, step, stream, a, earlier.step, earlier.stream, r.bytes.begin, r.bytes.end};
  };
  // Reads first: a step that reads and writes the same bytes (in place)
  // reads what was there before.
  for (const BufferAccess& a : accesses) {
    if (a.write) continue;
    Range* exact = nullptr;
    for (Range& r : ranges_) {
      if (!overlaps(a, r.bytes)) continue;
      if (r.last_write && !ordered_before(*r.last_write, stream))
        report(StreamHazard::Kind::kReadAfterWrite, a, r, *r.last_write);
      if (r.bytes.begin == a.begin && r.bytes.end == a.end) exact = &r;
    }
    if (!exact) {
      ranges_.push_back(Range{a, std::nullopt, {}});
      exact = &ranges_.back();
    }
    auto mine = std::find_if(exact->reads.begin(), exact->reads.end(), [&](const Touch& t) { return t.stream == stream; });
    if (mine != exact->reads.end()) *mine = now;
    else exact->reads.push_back(now);
  }
  for (const BufferAccess& a : accesses) {
    if (!a.write) continue;
    for (const Range& r : ranges_) {
      if (!overlaps(a, r.bytes)) continue;
      if (r.last_write && !ordered_before(*r.last_write, stream))
        report(StreamHazard::Kind::kWriteAfterWrite, a, r, *r.last_write);
      for (const Touch& t : r.reads)
        if (t.step != step && !ordered_before(t, stream)) report(StreamHazard::Kind::kWriteAfterRead, a, r, t);
    }
    // Ranges this write covers have no history left that matters: any
    // later access is checked against this write, which is ordered after
    // them (or the hazard above is reported).
    std::erase_if(ranges_, [&](const Range& r) {
      return r.bytes.buffer == a.buffer && a.begin <= r.bytes.begin && r.bytes.end <= a.end;
    });
    ranges_.push_back(Range{a, now, {}});
  }
  return hazard;
}

}  // namespace wok
