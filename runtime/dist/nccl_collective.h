// Collectives on CUDA tensors over NCCL (opened at run time:
// runtime/dist/nccl_loader.h).
#pragma once

#include "wok/runtime/dist/collective.h"

namespace wok {
class OpRegistry;
}

namespace wok::dist {

// Enqueues `call` (buffers on cuda:<device>) on `cuda_stream` over the
// communicator of (call.group, device), made on first use (Note [NCCL
// communicators] in nccl_collective.cpp). Like any CUDA kernel it returns
// once the work is enqueued: the output is complete when the stream
// reaches it. Throws DistError naming the call, the group and what failed
// (NCCL missing on some rank, an NCCL error), DeviceError for the device.
void run_nccl_collective(const CollectiveCall& call, int device, void* cuda_stream);

// Registers the CUDA kernels of the collective ops (each runs
// run_nccl_collective on the calling thread's current stream). Cheap: NCCL
// loads on first use.
void register_nccl_collective_kernels(OpRegistry& r);

}  // namespace wok::dist
