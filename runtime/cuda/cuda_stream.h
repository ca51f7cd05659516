// CUDA streams and events: the CPU's Stream/Event/StreamPool
// (runtime/stream.h) mapped onto the driver's.
//
// Each device has a pool of non-blocking streams handed out round-robin,
// like PyTorch's (WOK_NUM_STREAMS, default 4). A runner takes one stream per
// lane of a fragment and orders lanes with events: an event recorded on one
// stream after a kernel, waited on by another before a kernel that reads
// its result (cuStreamWaitEvent: the wait is on the device, the host does
// not block). Events come from a per-device pool, so replays create none.
//
// Precompiled kernels take no stream argument (runtime/kernel.h): they
// launch on the calling thread's current stream, set by a StreamGuard.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "wok/runtime/cuda/cuda_driver.h"
#include "wok/runtime/storage.h"

namespace wok::cuda {

class CudaStream {
 public:
  CudaStream(int device, int id);
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  int device() const { return device_; }
  int id() const { return id_; }
  CUstream handle() const { return stream_; }
  // Blocks until everything enqueued so far has run; throws
  // wok::DeviceError with the driver's error if some of it failed.
  void synchronize() const;
  bool query() const;  // all done?

 private:
  const int device_, id_;
  CUstream stream_ = nullptr;
};

// A point in a stream's work. Recycled through the device's event pool.
class CudaEvent {
 public:
  explicit CudaEvent(int device);
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  // Marks the point after the work enqueued on `s` so far.
  void record(const CudaStream& s);
  // Work enqueued on `s` after this call starts once the recorded point is
  // reached; the host does not wait.
  void block(const CudaStream& s) const;
  bool query() const;
  void synchronize() const;
  CUevent handle() const { return event_; }

 private:
  const int device_;
  CUevent event_ = nullptr;
};

class CudaStreamPool {
 public:
  // The pool of cuda:<device>, created on first use.
  static CudaStreamPool& for_device(int device);

  int size() const { return static_cast<int>(streams_.size()); }
  CudaStream& next();  // round-robin
  CudaStream& at(int i) { return *streams_[static_cast<size_t>(i) % streams_.size()]; }

 private:
  CudaStreamPool(int device, int size);
  std::vector<std::unique_ptr<CudaStream>> streams_;
  std::atomic<unsigned> next_{0};
};

// Makes `stream` the calling thread's current stream for its device while
// alive; guards nest. Buffers a kernel must keep alive until its work has
// run (reduction scratch) are handed to keep_alive() and released by the
// outermost guard's owner after synchronizing (Note [Stream-ordered reuse]
// in cuda_allocator.h).
class StreamGuard {
 public:
  explicit StreamGuard(CudaStream& stream);
  // Buffers kept alive go to `keep`, which the caller releases after it has
  // synchronized the stream itself.
  StreamGuard(CudaStream& stream, std::vector<StoragePtr>* keep);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

  // Synchronizes the stream and releases what was kept alive under it.
  void synchronize();

 private:
  CudaStream* previous_;
  std::vector<StoragePtr>* previous_keep_;
  std::vector<StoragePtr> keep_;
  CudaStream& stream_;
};

// The stream set by the innermost StreamGuard on this thread; without one,
// stream 0 of the device's pool.
CudaStream& current_stream(int device);
// Holds `s` until the current guard synchronizes; without a guard, waits
// for the current stream first and releases at once.
void keep_alive(StoragePtr s);

}  // namespace wok::cuda
