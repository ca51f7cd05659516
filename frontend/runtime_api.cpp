#include "wok/frontend/runtime_api.h"

namespace wok {

MemoryStats memory_stats() { return HostAllocator::global().stats(); }
void empty_cache() { HostAllocator::global().empty_cache(); }

}  // namespace wok
