// Deployment with the persistent kernel cache: fragment records, manifests,
// warm-up, bundles, many processes on one store, and the wok-cache tool.
#include <fcntl.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <set>

#include "cache_test_fixture.h"
#include "wok/cache/fragment_serialization.h"
#include "wok/cache/maintenance.h"
#include "wok/cache/manifest.h"
#include "wok/runtime/op_registry.h"

namespace {

using namespace cache_test;
namespace wc = wok::cache;

// ---- fragment records ---------------------------------------------------------------

const wok::RegisteredOp& all_attrs_op() {
  static const wok::RegisteredOp& op = []() -> const wok::RegisteredOp& {
    wok::OpDef def;
    def.name = "cache test/all attrs";  // a space, to be escaped
    def.inputs = {"x"};
    def.attrs = {{"flag", wok::AttrType::kBool, false},
                 {"n", wok::AttrType::kInt, int64_t{0}},
                 {"x", wok::AttrType::kFloat, 0.0},
                 {"axes", wok::AttrType::kInts, std::vector<int64_t>{}},
                 {"dt", wok::AttrType::kDType, wok::DType::kFloat32},
                 {"s", wok::AttrType::kScalar, wok::Scalar(0)},
                 {"text", wok::AttrType::kString, std::string()}};
    def.infer_shape = [](std::span<const wok::Shape> in, const wok::Attrs&) { return std::vector<wok::Shape>{in[0]}; };
    def.infer_dtype = [](std::span<const wok::DType> in, const wok::Attrs&) { return std::vector<wok::DType>{in[0]}; };
    return wok::register_op(std::move(def));
  }();
  return op;
}

struct HandMadeFragment {
  wok::Attrs attrs;
  wok::Fragment fragment;
};

std::unique_ptr<HandMadeFragment> hand_made(double x, const std::string& text) {
  const wok::RegisteredOp& op = all_attrs_op();
  auto h = std::make_unique<HandMadeFragment>();
  h->attrs = wok::bind_attrs(op.name(), op.def().attrs,
                             {{"flag", true},
                              {"n", int64_t{-7}},
                              {"x", x},
                              {"axes", std::vector<int64_t>{1, -2, 0}},
                              {"dt", wok::DType::kInt64},
                              {"s", wok::Scalar(2.5f)},
                              {"text", text}});
  wok::TensorMeta m;
  m.shape = {3, 4};
  wok::TensorMeta scalar;
  scalar.dtype = wok::DType::kFloat64;
  h->fragment.values = {m, m, scalar};
  h->fragment.nodes = {{&op, &h->attrs, {0}, {1}}};
  h->fragment.inputs = {0, 2};
  h->fragment.outputs = {1};
  return h;
}

TEST(CacheFragmentRecord, RoundTripsEveryAttributeTypeExactly) {
  for (double x :
       {0.1, -0.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), 5e-324}) {
    auto h = hand_made(x, "a b%c\n\t\x01 \xc3\xa9");
    std::string text = wc::serialize_fragment(h->fragment);
    EXPECT_EQ(text.find('\n'), std::string::npos) << text;
    absl::StatusOr<std::unique_ptr<wc::OwnedFragment>> back = wc::deserialize_fragment(text);
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
    EXPECT_EQ(wc::serialize_fragment((*back)->fragment), text);
    EXPECT_EQ(wok::fragment_signature((*back)->fragment), wok::fragment_signature(h->fragment))
        << "bit-exact attributes, same op, same wiring";
    EXPECT_EQ((*back)->fragment.nodes[0].attrs->get_string("text"), "a b%c\n\t\x01 \xc3\xa9");
  }
  auto empty = hand_made(1.0, "");
  absl::StatusOr<std::unique_ptr<wc::OwnedFragment>> back =
      wc::deserialize_fragment(wc::serialize_fragment(empty->fragment));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->fragment.nodes[0].attrs->get_string("text"), "");
}

TEST(CacheFragmentRecord, RejectsInconsistentRecordsWithAReason) {
  auto h = hand_made(1.0, "t");
  std::string text = wc::serialize_fragment(h->fragment);
  auto fails = [](const std::string& t, const std::string& why) {
    absl::StatusOr<std::unique_ptr<wc::OwnedFragment>> r = wc::deserialize_fragment(t);
    EXPECT_FALSE(r.ok()) << t;
    if (!r.ok()) {
      EXPECT_NE(std::string(r.status().message()).find(why), std::string::npos) << r.status();
    }
  };
  auto replace = [&text](const std::string& from, const std::string& to) {
    std::string t = text;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? t : t.replace(at, from.size(), to);
  };
  fails(replace("cache%20test", "no%20such"), "not registered");
  fails(replace("float32/cpu/3x4 float32/cpu/3x4", "float32/cpu/3x4 float32/cpu/3x5"), "output 0");
  fails(replace("float32/cpu/3x4 float32/cpu/3x4", "float32/cpu/3x4 int32/cpu/3x4"), "output 0");
  fails(replace(" b1 ", " i1 "), "must be bool");
  fails(replace(" I 2 0 2", " I 1 2"), "before it is defined");
  fails(replace("F1 ", "F2 "), "version-1");
  fails(text + " 7", "after the outputs");
  fails(replace(" O 1 1", " O 1 9"), "outside");
}

TEST(CacheFragmentRecord, NoTruncationOrJunkTokenCrashes) {
  auto h = hand_made(0.5, "x");
  std::string text = wc::serialize_fragment(h->fragment);
  for (size_t n = 0; n < text.size(); ++n) (void)wc::deserialize_fragment(text.substr(0, n));
  std::vector<std::string> tokens;
  for (size_t pos = 0; pos < text.size();) {
    size_t sp = text.find(' ', pos);
    tokens.push_back(text.substr(pos, sp - pos));
    pos = sp == std::string::npos ? text.size() : sp + 1;
  }
  const char* junk[] = {"",
                        "-1",
                        "2147483648",
                        "99999999999999999999",
                        "x",
                        "%",
                        "%z",
                        "%4",
                        "a/b/c",
                        "float32/cpu/-1",
                        "float32/gpu/3",
                        "s",
                        "sfloat32:",
                        "l1,,2",
                        "f0",
                        "bnan",
                        "V",
                        "N"};
  for (size_t t = 0; t < tokens.size(); ++t)
    for (const char* j : junk) {
      std::string mutated;
      for (size_t k = 0; k < tokens.size(); ++k) {
        if (k) mutated += ' ';
        mutated += k == t ? std::string(j) : tokens[k];
      }
      // Some mutations are harmless (one valid id for another); none may crash.
      (void)wc::deserialize_fragment(mutated);
    }
  EXPECT_TRUE(wc::deserialize_fragment(text).ok());
}

// ---- manifests and warm-up ----------------------------------------------------------

class CacheDeploy : public CacheTest {
 protected:
  void deploy_and_run_strict(const std::string& mode);
};

TEST_F(CacheDeploy, RecordsEachFragmentOnceAndWarmsUpAnotherStore) {
  std::string manifest = root_ + "/manifest.txt";
  wc::CacheConfig c = wc::cache_config();
  c.record_path = manifest;
  wc::set_cache_config(c);
  for (int round = 0; round < 2; ++round)
    for (int p = 0; p < 6; ++p) ASSERT_EQ(run_fresh(p), 0);
  set_config([](wc::CacheConfig& c) { c.record_path = ""; });

  absl::StatusOr<std::vector<wc::ManifestRecord>> records = wc::read_manifest(manifest);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 6u);
  int lines = 0;
  for (char ch : read_text(manifest)) lines += ch == '\n';
  EXPECT_EQ(lines, 6) << "a fragment already in the manifest is not appended again";
  for (const wc::ManifestRecord& r : *records) EXPECT_TRUE(r.fragment.ok()) << r.fragment.status();

  // Damaged lines are skipped with a reason, the rest still warm up.
  std::string text = read_text(manifest);
  std::string torn = text.substr(0, text.find('\n'));
  torn[torn.size() - 3] ^= 1;
  write_text(manifest, text + "# a comment\n\nthis is not a record\n" + torn + "\n");

  std::string other = root_ + "/other";
  wc::DiskStore::global().set_directory_for_testing(other);
  forget_in_memory();
  wok::reset_stats();
  wok::WarmupResult w = wok::warmup(manifest);
  EXPECT_EQ(w.fragments, 6);
  EXPECT_EQ(w.kernels, 6);
  EXPECT_EQ(w.compiled, 6);
  EXPECT_EQ(w.loaded, 0);
  ASSERT_EQ(w.skipped.size(), 2u);
  EXPECT_NE(w.skipped[1].find("checksum"), std::string::npos) << w.skipped[1];
  EXPECT_EQ(entry_files(other).size(), 6u);

  // The warmed store serves the programs: nothing compiles.
  wok::reset_stats();
  for (int p = 0; p < 6; ++p) ASSERT_EQ(run_fresh(p), 0);
  EXPECT_EQ(wok::stats().kernels_compiled, 0);
  EXPECT_EQ(wok::stats().disk_hits, 6);

  forget_in_memory();
  w = wok::warmup(manifest);
  EXPECT_EQ(w.compiled, 0);
  EXPECT_EQ(w.loaded, 6);
  EXPECT_THROW(wok::warmup(root_ + "/no such manifest"), wok::Error);
}

// ---- bundles ------------------------------------------------------------------------

TEST_F(CacheDeploy, BundleRoundTripAndDamagedBundlesChangeNothing) {
  for (int p = 0; p < 4; ++p) ASSERT_EQ(run_program(p), 0);
  std::string bundle = root_ + "/kernels.wokb";
  wok::BundleResult out = wok::export_cache(bundle);
  EXPECT_EQ(out.entries, 4);
  EXPECT_EQ(static_cast<uintmax_t>(out.bytes), std::filesystem::file_size(bundle));

  std::string target = root_ + "/target";
  wc::DiskStore::global().set_directory_for_testing(target);
  wok::BundleResult in = wok::import_cache(bundle);
  EXPECT_EQ(in.entries, 4);
  absl::StatusOr<wc::VerifyReport> v = wc::verify_store(target, false);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->sound, 4);
  wok::reset_stats();
  for (int p = 0; p < 4; ++p) ASSERT_EQ(run_fresh(p), 0);
  EXPECT_EQ(wok::stats().kernels_compiled, 0);

  std::string good = read_text(bundle);
  std::mt19937 rng(7);
  std::vector<std::string> bad = {good.substr(0, good.size() / 2), good.substr(0, 10), "", good + "x"};
  for (int i = 0; i < 8; ++i) {
    std::string b = good;
    b[rng() % b.size()] ^= static_cast<char>(1 << (rng() % 8));
    bad.push_back(b);
  }
  for (size_t i = 0; i < bad.size(); ++i) {
    std::string store = root_ + "/damaged" + std::to_string(i);
    wc::DiskStore::global().set_directory_for_testing(store);
    write_text(bundle, bad[i]);
    EXPECT_THROW(wok::import_cache(bundle), wok::Error) << "bundle " << i;
    EXPECT_TRUE(entry_files(store).empty()) << "bundle " << i;
  }
}

// ---- other processes ----------------------------------------------------------------

// The deployment path, with the workload run as it is written (eager) or
// through wok::compile: a captured function's plan records into the
// manifest and loads its kernels from the store like any other.
void CacheDeploy::deploy_and_run_strict(const std::string& mode) {
  const std::string& root = root_;
  std::vector<std::string> args = {helper_path()};
  if (!mode.empty()) args.push_back(mode);
  args.push_back("all");
  // Record on a development machine...
  std::string manifest = root + "/app.manifest";
  ChildResult dev =
      run_child(args, child_env(root + "/dev", {"WOK_RECORD=" + manifest}), root + "/dev.txt");
  ASSERT_EQ(dev.exit_code, 0) << dev.out;
  EXPECT_EQ(dev.value("compiled"), kNumPrograms) << dev.out;
  // ...warm up a clean store from the manifest and pack it...
  wc::DiskStore::global().set_directory_for_testing(root + "/build");
  forget_in_memory();
  wok::WarmupResult w = wok::warmup(manifest);
  EXPECT_EQ(w.kernels, kNumPrograms);
  EXPECT_TRUE(w.skipped.empty());
  std::string bundle = root + "/app.wokb";
  EXPECT_EQ(wok::export_cache(bundle).entries, kNumPrograms);
  // ...unpack it on the target...
  std::string target = root + "/target";
  wc::DiskStore::global().set_directory_for_testing(target);
  wok::import_cache(bundle);
  // ...where a fresh process in strict mode runs the workload.
  ChildResult prod = run_child(args, child_env(target, {"WOK_STRICT=1"}), root + "/prod.txt");
  EXPECT_EQ(prod.exit_code, 0) << prod.out;
  EXPECT_EQ(prod.value("compiled"), 0) << prod.out;
  EXPECT_EQ(prod.value("disk_hits"), kNumPrograms) << prod.out;
  EXPECT_EQ(prod.value("wrong"), 0) << prod.out;
}

TEST_F(CacheDeploy, FreshProcessAfterImportCompilesNothing) { deploy_and_run_strict(""); }

TEST_F(CacheDeploy, CompiledFunctionsReplayInStrictModeAfterImport) { deploy_and_run_strict("--compiled"); }

TEST_F(CacheDeploy, EightProcessesShareOneStore) {
  constexpr int kProcs = 8, kEach = 9;
  std::string manifest = root_ + "/shared.manifest";
  int start[2];
  ASSERT_EQ(::pipe2(start, O_CLOEXEC), 0);
  std::vector<Child> children;
  std::vector<std::set<int>> programs(kProcs);
  for (int p = 0; p < kProcs; ++p) {
    std::string list;
    for (int j = 0; j < kEach; ++j) {
      int prog = (3 * p + j) % kNumPrograms;
      programs[p].insert(prog);
      if (j) list += ',';
      list += std::to_string(prog);
    }
    children.push_back(spawn({helper_path(), "--wait-start", list}, child_env(store_, {"WOK_RECORD=" + manifest}),
                             root_ + "/proc" + std::to_string(p) + ".txt", start[0]));
  }
  ::close(start[0]);
  ::close(start[1]);  // go
  int64_t compiled = 0;
  for (int p = 0; p < kProcs; ++p) {
    ChildResult r = wait_for(children[p]);
    EXPECT_EQ(r.exit_code, 0) << "process " << p << ": " << r.out;
    EXPECT_EQ(r.value("wrong"), 0) << r.out;
    EXPECT_EQ(r.value("compiled") + r.value("disk_hits"), r.value("misses")) << r.out;
    EXPECT_EQ(r.value("corrupt"), 0) << r.out;
    compiled += r.value("compiled");
  }
  EXPECT_EQ(compiled, kNumPrograms) << "each kernel compiled by exactly one process";

  absl::StatusOr<wc::VerifyReport> v = wc::verify_store(store_, false);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->damaged, 0);
  EXPECT_EQ(v->sound, kNumPrograms);
  EXPECT_TRUE(wc::list_directory(store_ + "/tmp")->empty()) << "no temporary files left";
  ChildResult tool = run_child({tool_path(), "--dir", store_, "verify"}, {}, root_ + "/verify.txt");
  EXPECT_EQ(tool.exit_code, 0) << tool.out;

  absl::StatusOr<std::vector<wc::ManifestRecord>> records = wc::read_manifest(manifest);
  ASSERT_TRUE(records.ok());
  EXPECT_EQ(records->size(), static_cast<size_t>(kNumPrograms));
  for (const wc::ManifestRecord& r : *records) EXPECT_TRUE(r.fragment.ok()) << r.fragment.status();
}

// ---- wok-cache ----------------------------------------------------------------------

TEST_F(CacheDeploy, ToolCommands) {
  auto tool = [this](std::vector<std::string> args) {
    args.insert(args.begin(), {tool_path(), "--dir", store_});
    return run_child(args, {}, root_ + "/tool.txt");
  };
  ChildResult help = run_child({tool_path(), "--help"}, {}, root_ + "/help.txt");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* cmd : {"list", "stats", "verify", "warmup", "export", "import", "prune", "clear", "explain"}) {
    EXPECT_NE(help.out.find(std::string("  ") + cmd), std::string::npos) << cmd << "\n" << help.out;
    ChildResult h = tool({cmd, "--help"});
    EXPECT_EQ(h.exit_code, 0) << cmd;
    EXPECT_NE(h.out.find(std::string("usage: wok-cache [--dir DIR] ") + cmd), std::string::npos) << h.out;
  }
  EXPECT_EQ(tool({"frobnicate"}).exit_code, 2);

  ASSERT_EQ(run_program(0), 0);
  ASSERT_EQ(run_program(3), 0);
  std::string key = std::filesystem::path(entry_files(store_)[0]).filename().string().substr(0, 32);
  ChildResult list = tool({"list"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.out.find(key), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("x86-64"), std::string::npos) << list.out;
  ChildResult stats = tool({"stats"});
  EXPECT_NE(stats.out.find("entries            2"), std::string::npos) << stats.out;
  EXPECT_EQ(tool({"verify"}).exit_code, 0);
  ChildResult explain = tool({"explain", key});
  EXPECT_EQ(explain.exit_code, 0) << explain.out;
  EXPECT_NE(explain.out.find("nearest stored entry"), std::string::npos) << explain.out;
  EXPECT_NE(tool({"explain", std::string(32, 'f')}).exit_code, 0);

  std::string bundle = root_ + "/tool.wokb";
  EXPECT_EQ(tool({"export", bundle}).exit_code, 0);
  ChildResult imported = run_child({tool_path(), "--dir", root_ + "/imported", "import", bundle}, {}, root_ + "/i.txt");
  EXPECT_EQ(imported.exit_code, 0) << imported.out;
  EXPECT_EQ(entry_files(root_ + "/imported").size(), 2u);

  ChildResult prune = tool({"prune", "--max-bytes", "1"});
  EXPECT_EQ(prune.exit_code, 0) << prune.out;
  EXPECT_TRUE(entry_files(store_).empty());
  EXPECT_NE(tool({"prune", "--max-bytes", "lots"}).exit_code, 0);

  // verify fails on damage; --remove cleans it up.
  std::string path = root_ + "/imported/kernels/" + key + ".wok";
  write_text(path, "junk");
  ChildResult bad = run_child({tool_path(), "--dir", root_ + "/imported", "verify"}, {}, root_ + "/v.txt");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("damaged: " + key), std::string::npos) << bad.out;
  EXPECT_EQ(
      run_child({tool_path(), "--dir", root_ + "/imported", "verify", "--remove"}, {}, root_ + "/v.txt").exit_code, 0);
  EXPECT_EQ(run_child({tool_path(), "--dir", root_ + "/imported", "clear"}, {}, root_ + "/c.txt").exit_code, 0);
  EXPECT_TRUE(entry_files(root_ + "/imported").empty());
}

}  // namespace
