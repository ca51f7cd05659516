#include "wok/runtime/stream.h"

#include <string>

#include "wok/runtime/observe/events.h"

#include <cstdlib>

namespace wok {

void Event::complete(std::exception_ptr error) {
  {
    std::lock_guard lock(mu_);
    done_ = true;
    error_ = std::move(error);
  }
  cv_.notify_all();
}

bool Event::query() const {
  std::lock_guard lock(mu_);
  return done_;
}

void Event::wait() const {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return done_; });
  if (error_) std::rethrow_exception(error_);
}

Stream::Stream(int id) : id_(id), worker_([this] { loop(); }) {}

Stream::~Stream() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void Stream::enqueue(std::function<void()> work) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(work));
  }
  cv_.notify_one();
}

EventPtr Stream::record() {
  auto e = std::make_shared<Event>();
  // The worker hands any failure since the last event to this one.
  enqueue([this, e] {
    std::exception_ptr err = std::move(pending_error_);
    pending_error_ = nullptr;
    e->complete(err);
  });
  return e;
}

void Stream::wait_event(EventPtr e) {
  enqueue([this, e] {
    try {
      e->wait();
    } catch (...) {
      // Work that depended on failed work has failed too.
      if (!pending_error_) pending_error_ = std::current_exception();
    }
  });
}

void Stream::synchronize() { record()->wait(); }

void Stream::loop() {
  // Events from work on this stream land on the stream's own track.
  observe::set_thread_name("stream " + std::to_string(id_));
  observe::set_current_stream(id_);
  for (;;) {
    std::function<void()> work;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      work();
    } catch (...) {
      if (!pending_error_) pending_error_ = std::current_exception();
    }
  }
}

StreamPool& StreamPool::global() {
  // Leaked like the thread pool: no joins after main returns.
  static StreamPool* pool = [] {
    int n = 4;
    if (const char* s = std::getenv("WOK_NUM_STREAMS"))
      if (int v = std::atoi(s); v > 0) n = v;
    return new StreamPool(n);
  }();
  return *pool;
}

StreamPool::StreamPool(int size) {
  for (int i = 0; i < size; ++i) streams_.push_back(std::make_unique<Stream>(i));
  communication_ = std::make_unique<Stream>(size);
}

Stream& StreamPool::next() { return *streams_[next_.fetch_add(1, std::memory_order_relaxed) % streams_.size()]; }

}  // namespace wok
