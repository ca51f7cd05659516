# Precompiled headers: the standard library and Abseil headers that nearly
# every source of wok includes, and for the test executables GoogleTest and
# wok.h as well, parsed once per target instead of once per source.
#
# Why: parsing them is about 2.3 s of each library source's compile
# (cse.cpp: 2.1 s of 3.0 s at -O3) and 5 to 7 s of each test's, and a
# fresh clone builds three trees (Release, ASan+UBSan, TSan) on two cores
# inside CI's 90 minutes. A precompiled header hides a missing #include of
# a header it holds; the installed-package check of scripts/test compiles
# tests/consumer without one.
#
# WOK_PRECOMPILE_HEADERS=OFF builds without them.
option(WOK_PRECOMPILE_HEADERS "Precompile the common standard, Abseil and GoogleTest headers" ON)

set(WOK_PCH_STD_HEADERS
  <algorithm> <atomic> <cmath> <cstdint> <cstdio> <cstdlib> <cstring> <functional> <limits> <map>
  <memory> <mutex> <optional> <span> <sstream> <string> <string_view> <type_traits> <unordered_map>
  <utility> <vector>)

# The library's sources (and the precompiled kernels'): standard library and
# Abseil's status types, nothing of wok's own, so a source still names each
# wok header it uses.
function(wok_precompile_library_headers target)
  if(WOK_PRECOMPILE_HEADERS)
    target_precompile_headers(${target} PRIVATE ${WOK_PCH_STD_HEADERS} <absl/status/status.h>
                              <absl/status/statusor.h>)
  endif()
endfunction()

# Test executables: the above, GoogleTest, and wok's public header.
function(wok_precompile_test_headers target)
  if(WOK_PRECOMPILE_HEADERS)
    target_precompile_headers(${target} PRIVATE ${WOK_PCH_STD_HEADERS} <absl/status/status.h>
                              <absl/status/statusor.h> <gtest/gtest.h> <wok/wok.h>)
  endif()
endfunction()
