#include "wok/frontend/runtime_api.h"

#include "wok/runtime/kernel_verify.h"

namespace wok {

MemoryStats memory_stats() { return HostAllocator::global().stats(); }
void empty_cache() { HostAllocator::global().empty_cache(); }

void set_verify_kernels(bool on) { set_verify_kernels_enabled(on); }
bool verify_kernels() { return verify_kernels_enabled(); }

}  // namespace wok
