// A child process for the persistent-cache tests: runs some of the test
// programs against the store in WOK_CACHE_DIR and prints its counters.
//
//   wok_cache_helper [--as-nobody] [--wait-start] [--kill-at STAGE] [--compiled] PROGRAMS
//
// PROGRAMS: "all" or a comma-separated list of indices (tests/cache_test_util.h).
// --as-nobody: drop root to uid/gid 65534 first (permission tests under root).
// --wait-start: block until fd 3 reaches end of file (processes started together).
// --kill-at STAGE: SIGKILL this process at that stage of its first cache write.
// --compiled: run each program through wok::compile (traced, then replayed).
// Exit status 0 when every result was right.
#include <grp.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cache_test_util.h"

int main(int argc, char** argv) {
  std::vector<int> programs;
  bool compiled = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--as-nobody") {
      if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)) {
        std::perror("setuid");
        return 3;
      }
    } else if (a == "--wait-start") {
      char byte;
      while (::read(3, &byte, 1) > 0) {
      }
    } else if (a == "--kill-at" && i + 1 < argc) {
      std::string stage = argv[++i];
      wok::cache::DiskStore::global().set_write_hook_for_testing([stage](std::string_view at) {
        if (at == stage) ::raise(SIGKILL);
      });
    } else if (a == "--compiled") {
      compiled = true;
    } else if (a == "all") {
      for (int p = 0; p < cache_test::kNumPrograms; ++p) programs.push_back(p);
    } else {
      for (size_t pos = 0; pos < a.size();) {
        size_t comma = a.find(',', pos);
        programs.push_back(std::stoi(a.substr(pos, comma - pos)));
        pos = comma == std::string::npos ? a.size() : comma + 1;
      }
    }
  }
  wok::set_backend(wok::Backend::kJit);
  int wrong = 0;
  try {
    for (int p : programs) wrong += cache_test::run_program(p, compiled);
  } catch (const wok::Error& e) {
    std::printf("error=%s\n", e.what());
    return 4;
  }
  wok::RuntimeStats s = wok::stats();
  std::printf("compiled=%lld disk_hits=%lld misses=%lld writes=%lld corrupt=%lld errors=%lld waits=%lld wrong=%d\n",
              static_cast<long long>(s.kernels_compiled), static_cast<long long>(s.disk_hits),
              static_cast<long long>(s.cache_misses), static_cast<long long>(s.disk_writes),
              static_cast<long long>(s.corrupt_entries), static_cast<long long>(s.disk_errors),
              static_cast<long long>(s.disk_lock_waits), wrong);
  return wrong == 0 ? 0 : 1;
}
