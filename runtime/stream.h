// Streams and events on the CPU.
//
// A Stream is an in-order work queue served by a thread of its own; an
// Event marks a point in a stream's work (or the end of any task) that
// others can wait on, and carries the error if the work failed. The CUDA
// backend maps the same interface onto CUDA streams and events.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace wok {

class Event {
 public:
  // Marks the event complete, with the failure of the work it tracks if any.
  void complete(std::exception_ptr error = nullptr);
  bool query() const;  // complete yet?
  // Blocks until complete; rethrows the tracked work's failure.
  void wait() const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

using EventPtr = std::shared_ptr<Event>;

class Stream {
 public:
  explicit Stream(int id);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  int id() const { return id_; }
  // Runs `work` after everything enqueued before it. An exception thrown by
  // work is kept and reported by the next event recorded on this stream.
  void enqueue(std::function<void()> work);
  // An event that completes when the work enqueued so far has run.
  EventPtr record();
  // Work enqueued after this call starts only once `e` is complete.
  void wait_event(EventPtr e);
  void synchronize();

 private:
  void loop();

  const int id_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::exception_ptr pending_error_;  // touched only by the worker
  bool stop_ = false;
  std::thread worker_;
};

// Streams handed out round-robin, like PyTorch's pool. Size from
// WOK_NUM_STREAMS (default 4).
class StreamPool {
 public:
  static StreamPool& global();
  explicit StreamPool(int size);
  int size() const { return static_cast<int>(streams_.size()); }
  Stream& next();
  Stream& at(int i) { return *streams_[i % streams_.size()]; }
  // The stream every plan runs its collectives on (wok::dist), outside the
  // rotation: one stream, so that the collectives of plans run one after
  // another are issued in that order on this process, as on every other
  // (Note [The communication lane] in jit/plan_lanes.cpp). Its id is size().
  Stream& communication() { return *communication_; }

 private:
  std::vector<std::unique_ptr<Stream>> streams_;
  std::unique_ptr<Stream> communication_;
  std::atomic<unsigned> next_{0};
};

}  // namespace wok
