// The stream-ordering checker behind WOK_CHECK_STREAMS=1: finds two pieces
// of work on different streams that touch the same bytes with no event
// ordering them (docs/troubleshooting.md, "wrong results now and then").
//
// Note [Checking stream order]
// A missing event between streams is the bug the article warns about most:
// the program is right almost every time, and wrong when the scheduler
// happens to run the reader before the writer. Waiting for the race to
// happen makes a flaky check, so the checker does not watch the work run;
// it watches the work being *enqueued* and decides from the ordering alone
// whether a race is possible, which gives the same answer on every run.
//
// Ordering is tracked with vector clocks. Each stream counts the work
// enqueued on it; its clock says, per stream, how much of that stream's
// work is known to come before the next thing enqueued here. Recording an
// event snapshots the stream's clock; waiting for one merges the snapshot
// into the waiting stream's clock. Happens-before is then transitive for
// free: a wait for an event recorded after a wait sees everything the
// first wait saw.
//
// Each byte range touched remembers its last write (stream, clock, step)
// and the reads since, one per stream. A read needs the last write ordered
// before it; a write needs the last write and every read since ordered
// before it (a write after a read matters as much: the arena hands the
// same bytes to a later value once the earlier one's readers are done,
// Note [Arena reuse across lanes] in jit/plan_memory.cpp, and a writer
// that does not wait for those readers corrupts what they read). Work on
// one stream is ordered by the stream itself.
//
// The checker knows nothing about plans or devices: streams are small
// numbers, buffers are numbered spaces of bytes. The CPU replay on pooled
// streams and the CUDA replay feed it through jit/plan_order_check.h; the
// collectives' communication stream will be one more stream number. The
// cost is a vector-clock merge per wait and a scan of the touched ranges
// per step, paid only with the switch on.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace wok {

// WOK_CHECK_STREAMS (read once) unless set_check_streams overrode it.
bool check_streams_enabled();
void set_check_streams(bool on);

// One byte range of a numbered buffer, read or written by a step.
struct BufferAccess {
  uint64_t buffer = 0;
  int64_t begin = 0, end = 0;  // bytes [begin, end)
  bool write = false;
  int tag = -1;  // the caller's name for what lives there (a plan's value), for reports
};

// Two steps on different streams touching overlapping bytes, unordered.
struct StreamHazard {
  enum class Kind { kReadAfterWrite, kWriteAfterRead, kWriteAfterWrite } kind;
  int step = -1, stream = -1;              // the step being enqueued
  BufferAccess access;                     // what it touches
  int other_step = -1, other_stream = -1;  // the earlier step it is not ordered after
  int64_t other_begin = 0, other_end = 0;  // the bytes that one touched
};

const char* hazard_kind_text(StreamHazard::Kind kind);

class StreamOrderChecker {
 public:
  explicit StreamOrderChecker(int streams);

  // `step` is enqueued on `stream` and touches `accesses`. Returns the
  // first hazard, if any; the accesses are recorded either way.
  std::optional<StreamHazard> enqueue(int stream, int step, std::span<const BufferAccess> accesses);
  // An event recorded on `stream` now; its number, for wait().
  int record(int stream);
  // Work enqueued on `stream` from now on runs after event `event`.
  void wait(int stream, int event);

 private:
  using Clock = std::vector<uint64_t>;
  struct Touch {
    int stream = -1;
    uint64_t time = 0;
    int step = -1;
  };
  struct Range {
    BufferAccess bytes;
    std::optional<Touch> last_write;
    std::vector<Touch> reads;  // since the last write, at most one per stream
  };
  bool ordered_before(const Touch& t, int stream) const;

  std::vector<Clock> clocks_;  // per stream
  std::vector<Clock> events_;  // snapshots
  std::vector<Range> ranges_;
};

}  // namespace wok
