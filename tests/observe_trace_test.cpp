// Traces: a written trace parses as JSON, with a track per thread and per
// stream, evaluation, compile and launch spans, and launches carrying their
// fused group and GB/s.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "observe_test_util.h"
#include "wok/jit/kernel_cache.h"
#include "wok/jit/plan_cache.h"
#include "wok/runtime/observe/trace_writer.h"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ObserveTrace, JsonEscaping) {
  EXPECT_EQ(wok::observe::json_escape("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
  ot::Json j = ot::JsonParser("{\"a\":[1,2.5e3,\"x\\\"y\",true,null],\"b\":{}}").parse();
  ASSERT_EQ(j.type, ot::Json::Type::kObject);
  EXPECT_EQ(j.get("a")->items.size(), 5u);
  EXPECT_EQ(j.get("a")->items[1].num, 2500);
  EXPECT_EQ(j.get("a")->items[2].str, "x\"y");
  EXPECT_THROW(ot::JsonParser("{\"a\":1,}").parse(), std::runtime_error);
  EXPECT_THROW(ot::JsonParser("[1 2]").parse(), std::runtime_error);
}

TEST(ObserveTrace, WrittenTraceHasTheExpectedTracks) {
  if (!ot::has_jit()) GTEST_SKIP() << "no JIT on this host";
  ot::JitNoDiskCache jit;
  wok::jit::PlanCache::global().clear();  // so this run plans
  wok::jit::KernelCache::global().clear();  // and compiles
  std::string path = (std::filesystem::temp_directory_path() / ("wok_trace_" + std::to_string(::getpid()) + ".json")).string();
  wok::start_trace(path);
  wok::Tensor x = wok::from_vector(std::vector<float>(17 * 31, 0.5f), {17, 31});
  wok::Tensor y = wok::sum(wok::tanh(x) * 3.0f + x, {1});  // one fused row kernel
  std::vector<float> r = y.to_vector<float>();
  wok::Tensor a = wok::from_vector(std::vector<float>(17 * 31, 1.5f), {17, 31});
  wok::Tensor b = wok::sqrt(a) - 1.0f;
  wok::eval_async({b});  // runs on a stream
  b.to_vector<float>();
  wok::stop_trace();
  EXPECT_FALSE(wok::observe::tracing());
  ASSERT_EQ(r.size(), 17u);

  std::string text = read_file(path);
  std::filesystem::remove(path);
  ot::Json doc;
  ASSERT_NO_THROW(doc = ot::JsonParser(text).parse()) << text.substr(0, 400);
  ASSERT_EQ(doc.type, ot::Json::Type::kObject);
  const ot::Json* events = doc.get("traceEvents");
  ASSERT_TRUE(events && events->type == ot::Json::Type::kArray);

  std::set<std::string> thread_names, cats;
  std::set<double> launch_tids, tids_with_names;
  int launches_with_rate = 0, evals = 0, compiles = 0;
  bool stream_launch = false;
  std::map<double, std::string> name_of_tid;
  for (const ot::Json& e : events->items) {
    ASSERT_EQ(e.type, ot::Json::Type::kObject);
    const ot::Json* ph = e.get("ph");
    ASSERT_TRUE(ph) << "every event has a phase";
    if (ph->str == "M" && e.get("name")->str == "thread_name") {
      thread_names.insert(e.get("args")->get("name")->str);
      name_of_tid[e.get("tid")->num] = e.get("args")->get("name")->str;
      continue;
    }
    if (ph->str == "M") continue;
    ASSERT_TRUE(e.get("ts") && e.get("ts")->type == ot::Json::Type::kNumber);
    ASSERT_TRUE(e.get("tid"));
    if (const ot::Json* cat = e.get("cat")) cats.insert(cat->str);
    if (ph->str == "X") {
      ASSERT_TRUE(e.get("dur") && e.get("dur")->num >= 0);
    }
    if (ph->str == "X" && e.get("cat")->str == "launch") {
      const ot::Json* args = e.get("args");
      if (args->get("GB/s") && args->get("bytes")->num > 0) ++launches_with_rate;
      launch_tids.insert(e.get("tid")->num);
      if (args->get("stream")->num >= 0) stream_launch = true;
    }
    if (ph->str == "X" && e.get("cat")->str == "eval") {
      ++evals;
      EXPECT_TRUE(e.get("args")->get("reason"));
    }
    if (ph->str == "X" && e.get("cat")->str == "compile") ++compiles;
  }
  EXPECT_GE(evals, 2);
  EXPECT_GE(compiles, 2) << "the row kernel and the elementwise kernel compiled";
  EXPECT_GE(launches_with_rate, 2);
  EXPECT_TRUE(stream_launch) << "the async evaluation's launch is on a stream";
  for (const char* c : {"op", "eval", "pass", "cache", "compile", "launch"}) EXPECT_TRUE(cats.count(c)) << c;
  // Every track is named; one of them is a stream's.
  for (double tid : launch_tids) EXPECT_TRUE(name_of_tid.count(tid)) << tid;
  bool stream_track = false;
  for (const std::string& n : thread_names) stream_track = stream_track || n.starts_with("stream ");
  EXPECT_TRUE(stream_track);
  // A launch names its fused group.
  EXPECT_NE(text.find("\"group\":\"tanh+mul+add+sum\""), std::string::npos);
}

TEST(ObserveTrace, UnwritablePathIsAnError) {
  wok::start_trace("/nonexistent-dir-for-wok/trace.json");
  wok::from_vector(std::vector<float>{1, 2}, {2}).to_vector<float>();
  try {
    wok::stop_trace();
    FAIL() << "expected wok::Error";
  } catch (const wok::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir-for-wok/trace.json"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(wok::observe::tracing());
  EXPECT_THROW(wok::start_trace(""), wok::ArgumentError);
}

}  // namespace
