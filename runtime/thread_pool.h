// The runtime's worker threads and the parallel_for that kernels split work
// with. The calling thread always takes part, so a pool of N threads has
// N - 1 workers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace wok {

class ThreadPool {
 public:
  // Threads from WOK_NUM_THREADS, else the hardware's count.
  static ThreadPool& global();

  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  // Caps how many threads parallel_for uses from now on (1..num_threads());
  // 0 restores all. Benchmarks compare 1 and 2 threads in one process.
  void set_max_threads(int n) { max_threads_.store(n); }
  int max_threads() const;

  // Calls fn(begin, end) over disjoint chunks covering [0, n), each at least
  // `grain` long (but the last), on up to `max_threads` threads (0: all).
  // Runs inline when there is a single chunk or when called from inside
  // another parallel_for.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn,
                    int max_threads = 0);

 private:
  struct Job {
    const std::function<void(int64_t, int64_t)>* fn = nullptr;
    int64_t n = 0;
    int64_t chunk = 0;
    int64_t num_chunks = 0;
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> done{0};
  };

  void worker_loop();
  static void run_chunks(Job& job);

  int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  Job* job_ = nullptr;
  uint64_t generation_ = 0;
  int active_workers_ = 0;
  bool stop_ = false;
  std::mutex submit_mu_;  // one parallel_for at a time; others run inline
  std::atomic<int> max_threads_{0};
};

// ThreadPool::global().parallel_for(...)
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// Threads wok's kernels may use (WOK_NUM_THREADS at start, else all cores).
void set_num_threads(int n);
int num_threads();

}  // namespace wok
