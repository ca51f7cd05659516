// Copies between host memory and GPUs.
//
// Host <-> device copies go through pinned (page-locked) staging buffers:
// DMA engines read and write only pinned memory, and the driver would
// otherwise stage pageable memory itself, one small synchronous piece at a
// time. Each device has two pinned chunks and a copy stream of its own, so
// the memcpy into one chunk overlaps the DMA out of the other. Copies
// return once the data has landed.
#pragma once

#include <cstddef>

#include "wok/runtime/device.h"

namespace wok::cuda {

// Bytes per pinned staging chunk (two per device).
inline constexpr size_t kStagingChunk = size_t{4} << 20;

void copy_host_to_device(void* dst, const void* src, size_t bytes, int device);
void copy_device_to_host(void* dst, const void* src, size_t bytes, int device);
// Between two buffers on GPUs (the same or another).
void copy_device_to_device(void* dst, int dst_device, const void* src, int src_device, size_t bytes);

// Any direction: cpu or cuda on either side.
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes);

}  // namespace wok::cuda
