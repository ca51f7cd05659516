#include "wok/runtime/cuda/cuda_stream.h"

#include <cstdlib>

#include "wok/runtime/error.h"

namespace wok::cuda {

// ---- streams --------------------------------------------------------------------------

CudaStream::CudaStream(int device, int id) : device_(device), id_(id) {
  set_device(device);
  check(driver().cuStreamCreate(&stream_, kStreamNonBlocking), "cuStreamCreate");
}

CudaStream::~CudaStream() {
  if (stream_) driver().cuStreamDestroy(stream_);
}

void CudaStream::synchronize() const {
  set_device(device_);
  CUresult r = driver().cuStreamSynchronize(stream_);
  if (r != kSuccess)
    throw DeviceError("cuda:" + std::to_string(device_) + " stream " + std::to_string(id_) +
                      ": work failed: " + error_text(r));
}

bool CudaStream::query() const {
  set_device(device_);
  CUresult r = driver().cuStreamQuery(stream_);
  if (r == kSuccess) return true;
  if (r == kErrorNotReady) return false;
  throw DeviceError("cuda:" + std::to_string(device_) + " stream " + std::to_string(id_) + ": " + error_text(r));
}

// ---- events ---------------------------------------------------------------------------

namespace {

// Free events per device (created without timing, the cheapest kind).
struct EventPool {
  std::mutex mu;
  std::vector<std::vector<CUevent>> free;  // by device

  CUevent take(int device) {
    {
      std::lock_guard lock(mu);
      if (free.size() > static_cast<size_t>(device) && !free[device].empty()) {
        CUevent e = free[device].back();
        free[device].pop_back();
        return e;
      }
    }
    set_device(device);
    CUevent e = nullptr;
    check(driver().cuEventCreate(&e, kEventDisableTiming), "cuEventCreate");
    return e;
  }
  void give(int device, CUevent e) {
    std::lock_guard lock(mu);
    if (free.size() <= static_cast<size_t>(device)) free.resize(device + 1);
    free[device].push_back(e);
  }
};

EventPool& event_pool() {
  static EventPool* pool = new EventPool();  // leaked: Note [CUDA teardown]
  return *pool;
}

}  // namespace

CudaEvent::CudaEvent(int device) : device_(device), event_(event_pool().take(device)) {}

CudaEvent::~CudaEvent() { event_pool().give(device_, event_); }

void CudaEvent::record(const CudaStream& s) {
  set_device(device_);
  check(driver().cuEventRecord(event_, s.handle()), "cuEventRecord");
}

void CudaEvent::block(const CudaStream& s) const {
  set_device(s.device());
  check(driver().cuStreamWaitEvent(s.handle(), event_, 0), "cuStreamWaitEvent");
}

bool CudaEvent::query() const {
  CUresult r = driver().cuEventQuery(event_);
  if (r == kSuccess) return true;
  if (r == kErrorNotReady) return false;
  throw DeviceError("cuda:" + std::to_string(device_) + " event: " + error_text(r));
}

void CudaEvent::synchronize() const {
  set_device(device_);
  check(driver().cuEventSynchronize(event_), "cuEventSynchronize");
}

// ---- pools ----------------------------------------------------------------------------

CudaStreamPool::CudaStreamPool(int device, int size) {
  for (int i = 0; i < size; ++i) streams_.push_back(std::make_unique<CudaStream>(device, i));
}

CudaStreamPool& CudaStreamPool::for_device(int device) {
  require_device(device);
  static std::mutex mu;
  static auto* pools = new std::vector<std::unique_ptr<CudaStreamPool>>();  // leaked: Note [CUDA teardown]
  std::lock_guard lock(mu);
  if (pools->size() <= static_cast<size_t>(device)) pools->resize(device + 1);
  auto& p = (*pools)[device];
  if (!p) {
    int n = 4;
    if (const char* s = std::getenv("WOK_NUM_STREAMS"))
      if (int v = std::atoi(s); v > 0) n = v;
    p.reset(new CudaStreamPool(device, n));
  }
  return *p;
}

CudaStream& CudaStreamPool::next() {
  return *streams_[next_.fetch_add(1, std::memory_order_relaxed) % streams_.size()];
}

// ---- current stream -------------------------------------------------------------------

namespace {
thread_local CudaStream* t_current = nullptr;
thread_local std::vector<StoragePtr>* t_keep = nullptr;
}  // namespace

StreamGuard::StreamGuard(CudaStream& stream) : previous_(t_current), previous_keep_(t_keep), stream_(stream) {
  t_current = &stream;
  t_keep = &keep_;
}

StreamGuard::StreamGuard(CudaStream& stream, std::vector<StoragePtr>* keep)
    : previous_(t_current), previous_keep_(t_keep), stream_(stream) {
  t_current = &stream;
  t_keep = keep;
}

StreamGuard::~StreamGuard() {
  if (!keep_.empty()) {
    // Released only once the work that reads them has run; never throws.
    set_device(stream_.device());
    driver().cuStreamSynchronize(stream_.handle());
    keep_.clear();
  }
  t_current = previous_;
  t_keep = previous_keep_;
}

void StreamGuard::synchronize() {
  stream_.synchronize();
  keep_.clear();
}

CudaStream& current_stream(int device) {
  if (t_current && t_current->device() == device) return *t_current;
  return CudaStreamPool::for_device(device).at(0);
}

void keep_alive(StoragePtr s) {
  if (t_keep) {
    t_keep->push_back(std::move(s));
    return;
  }
  current_stream(s->device().index).synchronize();
}

}  // namespace wok::cuda
