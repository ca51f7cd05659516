#include "wok/runtime/thread_pool.h"

#include <string>

#include "wok/runtime/observe/events.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace wok {

namespace {
thread_local bool t_inside_parallel = false;

int threads_from_env() {
  if (const char* s = std::getenv("WOK_NUM_THREADS")) {
    int n = std::atoi(s);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}
}  // namespace

ThreadPool& ThreadPool::global() {
  // Leaked on purpose: kernels may still run from static destructors, and
  // joining threads after main returns is a source of hangs at exit.
  static ThreadPool* pool = new ThreadPool(threads_from_env());
  return *pool;
}

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run_chunks(Job& job) {
  for (;;) {
    int64_t c = job.next.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.num_chunks) return;
    int64_t begin = c * job.chunk;
    int64_t end = std::min(job.n, begin + job.chunk);
    (*job.fn)(begin, end);
    job.done.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::worker_loop() {
  static std::atomic<int> next_worker{1};
  observe::set_thread_name("pool " + std::to_string(next_worker.fetch_add(1)));
  t_inside_parallel = true;
  uint64_t seen = 0;
  for (;;) {
    Job* job;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stop_ || (job_ && generation_ != seen); });
      if (stop_) return;
      seen = generation_;
      job = job_;
      ++active_workers_;
    }
    run_chunks(*job);
    {
      std::lock_guard lock(mu_);
      --active_workers_;
    }
    finished_.notify_all();
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn,
                              int max_threads) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int threads = this->max_threads();
  if (max_threads > 0) threads = std::min(threads, max_threads);
  int64_t max_chunks = (n + grain - 1) / grain;
  if (threads <= 1 || max_chunks <= 1 || t_inside_parallel) {
    fn(0, n);
    return;
  }
  std::unique_lock submit(submit_mu_, std::try_to_lock);
  if (!submit.owns_lock()) {  // another thread is using the workers
    fn(0, n);
    return;
  }
  // A few chunks per thread even out threads that start late.
  int64_t num_chunks = std::min<int64_t>(max_chunks, threads * 4);
  Job job;
  job.fn = &fn;
  job.n = n;
  job.chunk = (n + num_chunks - 1) / num_chunks;
  job.num_chunks = (n + job.chunk - 1) / job.chunk;
  {
    std::lock_guard lock(mu_);
    job_ = &job;
    ++generation_;
  }
  wake_.notify_all();
  t_inside_parallel = true;
  run_chunks(job);
  t_inside_parallel = false;
  std::unique_lock lock(mu_);
  job_ = nullptr;  // late workers find nothing and go back to sleep
  finished_.wait(lock, [&] {
    return active_workers_ == 0 && job.done.load(std::memory_order_acquire) == job.num_chunks;
  });
}

int ThreadPool::max_threads() const {
  int cap = max_threads_.load();
  return cap > 0 ? std::min(cap, num_threads_) : num_threads_;
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  ThreadPool::global().parallel_for(n, grain, fn);
}

void set_num_threads(int n) { ThreadPool::global().set_max_threads(n); }
int num_threads() { return ThreadPool::global().max_threads(); }

}  // namespace wok
