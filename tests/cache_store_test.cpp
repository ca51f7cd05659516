// The persistent kernel store: round trips, every kind of damage, eviction,
// strict mode, unusable directories and writers killed mid-write.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <regex>

#include "cache_test_fixture.h"
#include "wok/cache/cpu_feature_mask.h"
#include "wok/cache/entry_format.h"
#include "wok/cache/maintenance.h"

namespace {

using namespace cache_test;
namespace wc = wok::cache;

// Every test process gets a fresh store of its own unless WOK_TEST_CACHE_DIR
// names one: counts of compiled kernels (jit_fusion_test, jit_concurrency_
// test) must not depend on what an earlier run left in ~/.cache/wok, and
// tests must not leave files behind.
class PrivateCacheDir : public ::testing::Environment {
 public:
  void SetUp() override {
    if (const char* keep = std::getenv("WOK_TEST_CACHE_DIR"); keep && *keep) {
      wc::DiskStore::global().set_directory_for_testing(keep);
      return;
    }
    dir_ = make_temp_dir("wok_tests_cache");
    wc::DiskStore::global().set_directory_for_testing(dir_);
    ::setenv("WOK_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (dir_.empty()) return;
    wc::DiskStore::global().flush();  // writes still queued would find the directory gone
    remove_dir(dir_);
  }

 private:
  std::string dir_;
};
[[maybe_unused]] ::testing::Environment* const kPrivateCacheDir =
    ::testing::AddGlobalTestEnvironment(new PrivateCacheDir());

using CacheStore = CacheTest;

TEST_F(CacheStore, RoundTripLoadsEveryKernelWithoutCompiling) {
  for (int p = 0; p < 6; ++p) ASSERT_EQ(run_program(p), 0) << p;
  EXPECT_EQ(wok::stats().kernels_compiled, 6);
  EXPECT_EQ(wok::stats().disk_misses, 6);
  EXPECT_EQ(wok::stats().disk_writes, 6);
  EXPECT_EQ(entry_files(store_).size(), 6u);

  forget_in_memory();
  wok::reset_stats();
  for (int p = 0; p < 6; ++p) ASSERT_EQ(run_program(p), 0) << p;
  wok::RuntimeStats s = wok::stats();
  EXPECT_EQ(s.kernels_compiled, 0) << s.str();
  EXPECT_EQ(s.disk_hits, 6);
  EXPECT_EQ(s.disk_writes, 0);
  EXPECT_EQ(s.corrupt_entries, 0);
  EXPECT_NE(s.str().find("disk cache         6 hits"), std::string::npos) << s.str();

  absl::StatusOr<std::vector<wc::EntryInfo>> entries = wc::list_entries(store_);
  ASSERT_TRUE(entries.ok());
  for (const wc::EntryInfo& e : *entries) {
    EXPECT_TRUE(e.status.ok()) << e.key << ": " << e.status;
    ASSERT_TRUE(e.header.has_value());
    EXPECT_EQ(e.header->backend, "x86-64");
    EXPECT_EQ(e.header->isa, wok::cpu_isa_name(wok::host_cpu_isa()));
    EXPECT_EQ(wc::key_of(e.header->signature), e.key);
  }
}

TEST_F(CacheStore, EntryFormatRejectsEveryDamagedByte) {
  wc::EntryHeader h;
  h.wok_version = "1";
  h.signature = "sig";
  std::vector<uint8_t> payload = {1, 2, 3, 4, 5, 6, 7, 8};
  std::string good = wc::encode_entry(h, payload);
  ASSERT_TRUE(wc::decode_entry(good).ok());
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit : {0, 7}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      EXPECT_FALSE(wc::decode_entry(bad).ok()) << "byte " << i << " bit " << bit;
    }
    EXPECT_FALSE(wc::decode_entry(good.substr(0, i)).ok()) << "truncated to " << i;
  }
  EXPECT_FALSE(wc::decode_entry(good + "x").ok());
}

// ---- damage -------------------------------------------------------------------------

struct Damage {
  const char* name;
  void (*apply)(const std::string& path);
  int64_t dir_errors = 0;  // the damage also makes the rebuilt entry unwritable
};

std::string reencode(const std::string& path, void (*change)(wc::EntryHeader&)) {
  std::string bytes = read_text(path);
  absl::StatusOr<wc::DecodedEntry> e = wc::decode_entry(bytes);
  if (!e.ok()) return "";
  wc::EntryHeader h = e->header;
  change(h);
  std::vector<uint8_t> payload(e->payload.begin(), e->payload.end());
  return wc::encode_entry(h, payload);
}

void flip(const std::string& path, long offset) {
  std::string b = read_text(path);
  size_t at = offset >= 0 ? static_cast<size_t>(offset) : b.size() + offset;
  b[at] = static_cast<char>(b[at] ^ 0x10);
  write_text(path, b);
}

const Damage kDamages[] = {
    {"TruncatedToHalf", [](const std::string& p) { write_text(p, read_text(p).substr(0, read_text(p).size() / 2)); }},
    {"TruncatedInHeader", [](const std::string& p) { write_text(p, read_text(p).substr(0, 20)); }},
    {"Empty", [](const std::string& p) { write_text(p, ""); }},
    {"TrailingBytes", [](const std::string& p) { write_text(p, read_text(p) + "junk"); }},
    {"FlippedPayloadBit", [](const std::string& p) { flip(p, -1); }},
    {"FlippedHeaderBit", [](const std::string& p) { flip(p, 60); }},
    {"FlippedChecksumBit", [](const std::string& p) { flip(p, 24); }},
    {"WrongMagic", [](const std::string& p) { flip(p, 0); }},
    {"WrongFormatVersion",
     [](const std::string& p) {
       std::string b = read_text(p);
       b[8] = 2;
       write_text(p, b);
     }},
    {"OtherWokVersion",
     [](const std::string& p) { write_text(p, reencode(p, [](wc::EntryHeader& h) { h.wok_version = "0.0.1"; })); }},
    {"OtherGeneratorHash",
     [](const std::string& p) {
       write_text(p, reencode(p, [](wc::EntryHeader& h) { h.generator = "0123456789abcdef"; }));
     }},
    {"OtherCompiler",
     [](const std::string& p) { write_text(p, reencode(p, [](wc::EntryHeader& h) { h.compiler = "asmjit 0.1"; })); }},
    {"CpuFeaturesThisHostLacks",
     [](const std::string& p) {
       write_text(p, reencode(p, [](wc::EntryHeader& h) { h.cpu_features |= 1ull << 62; }));
     }},
    {"OtherSignatureUnderThisKey",
     [](const std::string& p) { write_text(p, reencode(p, [](wc::EntryHeader& h) { h.signature += "!"; })); }},
    {"NotAnEntry", [](const std::string& p) { write_text(p, "#!/bin/sh\necho this is not a kernel\n"); }},
    {"Symlink",
     [](const std::string& p) {
       ::unlink(p.c_str());
       (void)::symlink("/etc/hostname", p.c_str());
     }},
    {"Directory",
     [](const std::string& p) {
       ::unlink(p.c_str());
       ::mkdir(p.c_str(), 0700);
       write_text(p + "/x", "x");
     },
     1},
};

class CacheDamage : public CacheTest, public ::testing::WithParamInterface<Damage> {};

TEST_P(CacheDamage, IsDetectedCountedLoggedOnceAndRebuilt) {
  const Damage& d = GetParam();
  ASSERT_EQ(run_program(4), 0);
  std::vector<std::string> files = entry_files(store_);
  ASSERT_EQ(files.size(), 1u);
  d.apply(files[0]);

  wok::reset_stats();
  ::testing::internal::CaptureStderr();
  int wrong = run_fresh(4);
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(wrong, 0) << "damage must never give a wrong result";
  wok::RuntimeStats s = wok::stats();
  EXPECT_EQ(s.corrupt_entries, 1) << s.str();
  EXPECT_EQ(s.disk_hits, 0);
  EXPECT_EQ(s.kernels_compiled, 1) << "the kernel is rebuilt";
  EXPECT_EQ(s.disk_errors, d.dir_errors) << log;
  size_t first = log.find("ignoring " + files[0]);
  EXPECT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("ignoring", first + 1), std::string::npos) << "logged once: " << log;

  if (d.dir_errors == 0) {
    // The rebuilt entry replaced the damaged file, and loads.
    absl::StatusOr<wc::VerifyReport> v = wc::verify_store(store_, false);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->damaged, 0);
    EXPECT_EQ(v->sound, 1);
    wok::reset_stats();
    EXPECT_EQ(run_fresh(4), 0);
    EXPECT_EQ(wok::stats().disk_hits, 1);
    EXPECT_EQ(wok::stats().kernels_compiled, 0);
  } else {
    // It could not be replaced: found again, counted again, not said again.
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(run_fresh(4), 0);
    EXPECT_EQ(::testing::internal::GetCapturedStderr().find("ignoring"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, CacheDamage, ::testing::ValuesIn(kDamages),
                         [](const ::testing::TestParamInfo<Damage>& info) { return std::string(info.param.name); });

// ---- eviction -----------------------------------------------------------------------

void set_mtime(const std::string& path, int64_t seconds_ago) {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  timespec t[2] = {now, now};
  t[0].tv_sec -= seconds_ago;
  t[1].tv_sec -= seconds_ago;
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), t, 0), 0);
}

uint64_t file_size(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

TEST_F(CacheStore, EvictsLeastRecentlyUsedFirst) {
  std::vector<std::string> entry;  // entry[i] holds program i's kernel
  for (int p = 0; p < 3; ++p) {
    ASSERT_EQ(run_program(p), 0);
    for (const std::string& f : entry_files(store_))
      if (std::find(entry.begin(), entry.end(), f) == entry.end()) entry.push_back(f);
  }
  ASSERT_EQ(entry.size(), 3u);
  set_mtime(entry[0], 300);
  set_mtime(entry[1], 200);
  set_mtime(entry[2], 100);
  // Using program 0 makes its entry the most recent.
  ASSERT_EQ(run_fresh(0), 0);
  ASSERT_EQ(wok::stats().disk_hits, 1);

  uint64_t s0 = file_size(entry[0]), s1 = file_size(entry[1]), s2 = file_size(entry[2]);
  wok::reset_stats();
  wc::StoreLayout layout(store_);
  EXPECT_EQ(wc::evict_least_recent(layout, s0 + s1 + s2 - 1, ""), 1);
  EXPECT_FALSE(std::filesystem::exists(entry[1])) << "least recently used";
  EXPECT_TRUE(std::filesystem::exists(entry[0]));
  EXPECT_TRUE(std::filesystem::exists(entry[2]));
  EXPECT_EQ(wc::evict_least_recent(layout, s0, ""), 1);
  EXPECT_FALSE(std::filesystem::exists(entry[2]));
  EXPECT_TRUE(std::filesystem::exists(entry[0]));
  EXPECT_EQ(wok::stats().disk_evictions, 2);

  // WOK_CACHE_MAX_BYTES: a write evicts down to the bound, keeping the new entry.
  set_config([](wc::CacheConfig& c) { c.max_bytes = 1; });
  ASSERT_EQ(run_fresh(5), 0);
  std::vector<std::string> left = entry_files(store_);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_NE(left[0], entry[0]);
}

// ---- strict mode --------------------------------------------------------------------

TEST_F(CacheStore, StrictModeRaisesOnAMissNamingTheSignature) {
  set_config([](wc::CacheConfig& c) { c.strict = true; });
  std::string message;
  try {
    run_program(0);
  } catch (const wok::Error& e) {
    message = e.what();
  }
  ASSERT_FALSE(message.empty()) << "a strict miss must raise wok::Error";
  EXPECT_NE(message.find("WOK_STRICT"), std::string::npos) << message;
  EXPECT_NE(message.find("fused kernel, rank"), std::string::npos) << "readable signature: " << message;
  EXPECT_NE(message.find("exp"), std::string::npos) << message;
  std::smatch key;
  ASSERT_TRUE(std::regex_search(message, key, std::regex("[0-9a-f]{32}"))) << message;
  EXPECT_EQ(wok::stats().kernels_compiled, 0);

  // The miss is recorded for `wok-cache explain KEY`.
  absl::StatusOr<std::string> why = wc::explain_key(store_, key.str());
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_NE(why->find("recorded miss"), std::string::npos) << *why;

  // With the kernel in the store, strict mode runs it.
  set_config([](wc::CacheConfig& c) { c.strict = false; });
  ASSERT_EQ(run_fresh(0), 0);
  set_config([](wc::CacheConfig& c) { c.strict = true; });
  wok::reset_stats();
  EXPECT_EQ(run_fresh(0), 0);
  EXPECT_EQ(wok::stats().kernels_compiled, 0);
  EXPECT_EQ(wok::stats().disk_hits, 1);
}

TEST_F(CacheStore, ExplainNamesTheFieldsTheNearestEntryDiffers) {
  ASSERT_EQ(run_program(0), 0);  // exp, float32
  ASSERT_EQ(run_program(1), 0);  // exp, float64
  std::vector<std::string> files = entry_files(store_);
  ASSERT_EQ(files.size(), 2u);
  std::string name = std::filesystem::path(files[0]).filename().string();
  absl::StatusOr<std::string> why = wc::explain_key(store_, name.substr(0, 32));
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_NE(why->find("would load it"), std::string::npos) << *why;
  EXPECT_NE(why->find("nearest stored entry"), std::string::npos) << *why;
  std::string nearest = why->substr(why->find("nearest stored entry"));
  EXPECT_NE(nearest.find("dtypes (stored '"), std::string::npos) << nearest;
  EXPECT_EQ(nearest.find("isa ("), std::string::npos) << "only the dtypes differ: " << nearest;
  EXPECT_EQ(nearest.find("ops ("), std::string::npos) << "only the dtypes differ: " << nearest;

  // An entry for another ISA differs in the ISA.
  std::string bytes = read_text(files[0]);
  absl::StatusOr<wc::DecodedEntry> e = wc::decode_entry(bytes);
  ASSERT_TRUE(e.ok());
  wc::EntryHeader want = e->header;
  want.isa = "avx9000";
  std::string near = wc::nearest_entry(store_, want, "");
  EXPECT_NE(near.find("isa (stored '"), std::string::npos) << near;
  EXPECT_TRUE(absl::IsNotFound(wc::explain_key(store_, std::string(32, '0')).status()));
}

// ---- directories we may not use -----------------------------------------------------

// Runs the helper as an unprivileged user (root ignores permission bits).
ChildResult run_unprivileged(const std::string& store, const std::string& programs, const std::string& out) {
  return run_child({helper_path(), "--as-nobody", programs}, {"WOK_CACHE_DIR=" + store}, out);
}

void give_to_nobody(const std::string& root, const std::string& store) {
  ASSERT_EQ(::chmod(root.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(store.c_str(), 0700), 0);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(store.c_str(), 65534, 65534), 0);
  }
}

TEST_F(CacheStore, ReadOnlyDirectoryLoadsButWritesNothing) {
  give_to_nobody(root_, store_);
  ChildResult fill = run_unprivileged(store_, "0,1", root_ + "/fill.txt");
  ASSERT_EQ(fill.exit_code, 0) << fill.out;
  ASSERT_EQ(entry_files(store_).size(), 2u) << fill.out;
  for (const char* sub : {"/kernels", "/locks", "/tmp", "/misses", ""})
    ASSERT_EQ(::chmod((store_ + sub).c_str(), 0555), 0);

  ChildResult r = run_unprivileged(store_, "0,1,2", root_ + "/ro.txt");
  EXPECT_EQ(r.exit_code, 0) << "results must be right: " << r.out;
  EXPECT_EQ(r.value("disk_hits"), 2) << r.out;
  EXPECT_EQ(r.value("compiled"), 1) << r.out;
  EXPECT_EQ(r.value("writes"), 0) << r.out;
  EXPECT_GE(r.value("errors"), 1) << r.out;
  EXPECT_EQ(r.value("corrupt"), 0) << r.out;
  EXPECT_EQ(entry_files(store_).size(), 2u) << "nothing is written";
  EXPECT_NE(r.out.find("cannot save kernels"), std::string::npos) << r.out;
  for (const char* sub : {"", "/kernels", "/locks", "/tmp", "/misses"}) ::chmod((store_ + sub).c_str(), 0700);
}

TEST_F(CacheStore, UnreadableDirectoryMeansCompiling) {
  give_to_nobody(root_, store_);
  ChildResult fill = run_unprivileged(store_, "0,1", root_ + "/fill.txt");
  ASSERT_EQ(fill.exit_code, 0) << fill.out;
  ASSERT_EQ(::chmod(store_.c_str(), 0), 0);
  ChildResult r = run_unprivileged(store_, "0,1", root_ + "/unreadable.txt");
  ::chmod(store_.c_str(), 0700);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.value("compiled"), 2) << r.out;
  EXPECT_EQ(r.value("disk_hits"), 0) << r.out;
  EXPECT_GE(r.value("errors"), 1) << r.out;
}

TEST_F(CacheStore, CacheDirThatIsAFileMeansCompiling) {
  write_text(store_, "not a directory");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run_program(2), 0);
  EXPECT_EQ(run_fresh(3), 0);
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(wok::stats().kernels_compiled, 2);
  EXPECT_EQ(wok::stats().disk_errors, 1) << "one problem, counted and said once: " << log;
  EXPECT_NE(log.find("cannot set up"), std::string::npos) << log;
  ::unlink(store_.c_str());
}

TEST_F(CacheStore, EmptyCacheDirTurnsTheStoreOff) {
  wc::DiskStore::global().set_directory_for_testing("");
  EXPECT_EQ(run_program(6), 0);
  EXPECT_EQ(wok::stats().kernels_compiled, 1);
  EXPECT_EQ(wok::stats().disk_misses, 0);
  EXPECT_FALSE(std::filesystem::exists(store_));
}

// ---- writers killed mid-write -------------------------------------------------------

class CacheKilledWriter : public CacheTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(CacheKilledWriter, LeavesNothingThatLoads) {
  ChildResult r = run_child({helper_path(), "--kill-at", GetParam(), "7"}, child_env(store_), root_ + "/out.txt");
  ASSERT_EQ(r.signal, SIGKILL) << r.out;
  EXPECT_TRUE(entry_files(store_).empty()) << "no entry may appear from a killed write";
  absl::StatusOr<std::vector<wc::DirEntry>> tmp = wc::list_directory(store_ + "/tmp");
  ASSERT_TRUE(tmp.ok());
  ASSERT_EQ(tmp->size(), 1u) << "the killed writer's temporary file";

  EXPECT_EQ(run_fresh(7), 0);
  EXPECT_EQ(wok::stats().kernels_compiled, 1);
  EXPECT_EQ(wok::stats().corrupt_entries, 0);
  absl::StatusOr<wc::VerifyReport> v = wc::verify_store(store_, false);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->sound, 1);
  EXPECT_EQ(v->damaged, 0);

  // prune removes leftovers once they are old enough not to be a live writer's.
  set_mtime((*tmp)[0].path, wc::kLeftoverAgeSeconds + 60);
  absl::StatusOr<wc::PruneReport> pr = wc::prune_store(store_, 0);
  ASSERT_TRUE(pr.ok());
  EXPECT_GE(pr->leftovers_removed, 1);
  EXPECT_TRUE(wc::list_directory(store_ + "/tmp")->empty());
  EXPECT_EQ(entry_files(store_).size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Stages, CacheKilledWriter, ::testing::Values("partial", "before-rename"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param) == "partial" ? "HalfWritten" : "BeforeRename";
                         });

}  // namespace
