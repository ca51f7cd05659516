// What wok's own allocators tell the sanitizers. A caching allocator hides
// a use after free (the block is still mapped) and an overrun inside its
// size class from AddressSanitizer; under ASan they poison what they cache
// and the slack past each request, so both are reported again.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define WOK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WOK_ASAN 1
#endif
#endif
#ifndef WOK_ASAN
#define WOK_ASAN 0
#endif

#if WOK_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace wok {

inline constexpr bool kAsanBuild = WOK_ASAN != 0;

inline void asan_poison(const void* p, size_t bytes) noexcept {
#if WOK_ASAN
  __asan_poison_memory_region(p, bytes);
#else
  (void)p, (void)bytes;
#endif
}

inline void asan_unpoison(const void* p, size_t bytes) noexcept {
#if WOK_ASAN
  __asan_unpoison_memory_region(p, bytes);
#else
  (void)p, (void)bytes;
#endif
}

}  // namespace wok
