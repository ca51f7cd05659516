// A private, empty kernel store for each persistent-cache test.
#pragma once

#include <gtest/gtest.h>

#include "cache_test_util.h"

namespace cache_test {

// Built beside wok_tests (tests/CMakeLists.txt).
inline std::string helper_path() { return WOK_CACHE_TEST_HELPER; }
inline std::string tool_path() { return WOK_CACHE_TOOL; }

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
    saved_ = wok::cache::cache_config();
    root_ = make_temp_dir("wok_cache_test");
    store_ = root_ + "/store";
    wok::cache::CacheConfig c;
    c.directory = store_;
    wok::cache::set_cache_config(c);
    wok::cache::DiskStore::global().set_directory_for_testing(store_);
    wok::set_backend(wok::Backend::kJit);
    forget_in_memory();
    wok::reset_stats();
  }
  void TearDown() override {
    if (root_.empty()) return;
    wok::cache::DiskStore::global().set_write_hook_for_testing(nullptr);
    wok::cache::set_cache_config(saved_);
    wok::cache::DiskStore::global().set_directory_for_testing(saved_.directory);
    forget_in_memory();
    ::chmod(root_.c_str(), 0700);
    remove_dir(root_);
  }

  void set_config(void (*change)(wok::cache::CacheConfig&)) {
    wok::cache::CacheConfig c = wok::cache::cache_config();
    change(c);
    wok::cache::set_cache_config(c);
  }

  // Runs program `p` as a fresh process would: nothing compiled in memory.
  int run_fresh(int p) {
    forget_in_memory();
    return run_program(p);
  }

  // Environment for a child using `store`.
  std::vector<std::string> child_env(const std::string& store, std::vector<std::string> more = {}) const {
    more.push_back("WOK_CACHE_DIR=" + store);
    return more;
  }

  wok::cache::CacheConfig saved_;
  std::string root_, store_;
};

}  // namespace cache_test
