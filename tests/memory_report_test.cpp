// wok::memory_report(): live tensors by call site, pending graphs, growth
// warnings (Note [Live tensors by call site] in runtime/observe/live_tensors.h).
//
// Sites come from wok::CallSiteScope on the statement's own line, so the
// rows read "memory_report_test.cpp:<line>" with or without debug info.
// Other tests may leave tensors alive, so assertions look only at this
// file's rows.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <atomic>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "wok/runtime/observe/live_tensors.h"

namespace {

const std::string kFile = "memory_report_test.cpp";

// Tracking on for the test, restored after.
class Tracking {
 public:
  Tracking() : was_(wok::observe::tracking_live_tensors()) { wok::track_live_tensors(true); }
  ~Tracking() { wok::track_live_tensors(was_); }

 private:
  bool was_;
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The lines of one section: from the line starting with `title` to the
// next line that does not start with two spaces.
std::vector<std::string> section(const std::string& report, const std::string& title) {
  std::vector<std::string> out;
  bool in = false;
  for (const std::string& l : lines_of(report)) {
    if (!in) {
      in = l.rfind(title, 0) == 0;
      continue;
    }
    if (l.rfind("  ", 0) != 0) break;
    out.push_back(l);
  }
  return out;
}

std::string label(int line) { return kFile + ":" + std::to_string(line); }

// The row of `line` in a section ("" when absent), as its words.
std::vector<std::string> row(const std::vector<std::string>& rows, int line) {
  for (const std::string& r : rows) {
    std::istringstream in(r);
    std::string first;
    in >> first;
    if (first != label(line)) continue;
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    return words;
  }
  return {};
}

// The first row of a section that names this file.
std::string first_row_of_this_file(const std::vector<std::string>& rows) {
  for (const std::string& r : rows) {
    std::istringstream in(r);
    std::string first;
    in >> first;
    if (first.rfind(kFile + ":", 0) == 0) return first;
  }
  return "";
}

wok::Tensor vector_of(int64_t n, float v) { return wok::from_vector(std::vector<float>(static_cast<size_t>(n), v), {n}); }

TEST(MemoryReport, LeakedTensorsTopTheTable) {
  Tracking on;
  wok::Tensor x = vector_of(1024, 0.5f);
  std::vector<wok::Tensor> kept;
  int leak_line = 0;
  testing::internal::CaptureStderr();  // the loop also draws a growth warning
  for (int i = 0; i < 50; ++i) {
    { wok::CallSiteScope here; kept.push_back(wok::exp(x)); leak_line = __LINE__; }
    wok::eval({kept.back()});
  }
  testing::internal::GetCapturedStderr();

  std::string report = wok::memory_report();
  std::vector<std::string> table = section(report, "live tensors:");
  ASSERT_FALSE(table.empty()) << report;
  EXPECT_EQ(first_row_of_this_file(table), label(leak_line)) << report;
  // Tracking started in this test: nothing else can outweigh 50 buffers.
  if (!std::getenv("WOK_REPORT")) {
    ASSERT_GE(table.size(), 2u);  // the header, then the rows
    EXPECT_EQ(table[1].find("  " + label(leak_line) + " "), 0u) << report;
  }
  std::vector<std::string> words = row(table, leak_line);
  ASSERT_EQ(words.size(), 4u) << report;  // tensors, bytes (2 words), example
  EXPECT_EQ(words[0], "50");
  EXPECT_EQ(words[1] + " " + words[2], "200.0 KiB");  // 50 x 1024 float32, each its own buffer
  EXPECT_EQ(words[3], "float32[1024]");

  kept.clear();
  report = wok::memory_report();
  EXPECT_TRUE(row(section(report, "live tensors:"), leak_line).empty()) << report;
}

TEST(MemoryReport, PendingChainShowsItsNodes) {
  Tracking on;
  wok::Tensor x = vector_of(1024, 0.25f);
  wok::Tensor y = x;
  int chain_line = 0;
  { wok::CallSiteScope here; for (int i = 0; i < 5; ++i) y = wok::exp(y); chain_line = __LINE__; }

  std::string report = wok::memory_report();
  std::vector<std::string> pending = section(report, "pending graphs:");
  std::vector<std::string> words = row(pending, chain_line);
  ASSERT_EQ(words.size(), 5u) << report;  // graphs, tensors, nodes, pinned (2 words)
  EXPECT_EQ(words[0], "1") << "one graph: the chain's last tensor";
  EXPECT_EQ(words[1], "5") << "the four intermediates its nodes hold count too";
  EXPECT_EQ(words[2], "5") << "nodes";
  EXPECT_EQ(words[3] + " " + words[4], "4.0 KiB") << "x, pinned";
  EXPECT_TRUE(row(section(report, "live tensors:"), chain_line).empty());

  wok::eval({y});
  report = wok::memory_report();
  EXPECT_TRUE(row(section(report, "pending graphs:"), chain_line).empty()) << report;
  words = row(section(report, "live tensors:"), chain_line);
  ASSERT_EQ(words.size(), 4u) << report;
  EXPECT_EQ(words[0], "1") << "the intermediates were never written";
  EXPECT_EQ(words[1] + " " + words[2], "4.0 KiB");
}

TEST(MemoryReport, ViewsCountTheirBufferOnce) {
  Tracking on;
  int data_line = 0, view_line = 0;
  wok::Tensor x, v;
  { wok::CallSiteScope here; x = vector_of(1024, 1.0f); data_line = __LINE__; }
  { wok::CallSiteScope here; v = x.reshape({32, 32}); view_line = __LINE__; }
  wok::eval({v});
  std::vector<std::string> table = section(wok::memory_report(), "live tensors:");
  std::vector<std::string> data = row(table, data_line), view = row(table, view_line);
  ASSERT_EQ(data.size(), 4u);
  ASSERT_EQ(view.size(), 5u);  // the example's shape is two words
  EXPECT_EQ(data[1] + " " + data[2], "4.0 KiB") << "the buffer goes to its oldest holder";
  EXPECT_EQ(view[0], "1");
  EXPECT_EQ(view[1] + " " + view[2], "0 B") << "the view shares x's buffer";
  EXPECT_EQ(view[3] + " " + view[4], "float32[32, 32]");
}

TEST(MemoryReport, GrowthWarningForALeakingLoopOnly) {
  Tracking on;
  wok::observe::reset_growth();
  wok::Tensor x = vector_of(1024, 0.5f);

  // Not leaking: each result dies before the next evaluation.
  testing::internal::CaptureStderr();
  for (int i = 0; i < 40; ++i) {
    wok::Tensor y = wok::tanh(x);
    wok::eval({y});
  }
  std::string quiet = testing::internal::GetCapturedStderr();
  EXPECT_EQ(quiet.find("live memory rose"), std::string::npos) << quiet;

  std::vector<wok::Tensor> kept;
  int leak_line = 0;
  testing::internal::CaptureStderr();
  for (int i = 0; i < 40; ++i) {
    { wok::CallSiteScope here; kept.push_back(wok::sigmoid(x)); leak_line = __LINE__; }
    wok::eval({kept.back()});
  }
  std::string err = testing::internal::GetCapturedStderr();
  const std::string warning = "wok: live memory rose across " + std::to_string(wok::observe::growth_evals()) +
                              " evaluations of sigmoid (1 nodes)";
  EXPECT_NE(err.find(warning), std::string::npos) << err;
  EXPECT_NE(err.find("top site: " + label(leak_line) + " (+"), std::string::npos) << err;
  EXPECT_NE(err.find("see wok::memory_report()"), std::string::npos) << err;
  EXPECT_EQ(err.find("live memory rose", err.find(warning) + warning.size()), std::string::npos)
      << "once per program: " << err;

  std::vector<std::string> listed = section(wok::memory_report(), "growth warnings");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_NE(listed[0].find("evaluations of sigmoid (1 nodes)"), std::string::npos) << listed[0];
  wok::observe::reset_growth();
}

TEST(MemoryReport, TrackingOffSaysHowToTurnItOn) {
  Tracking restore;
  wok::track_live_tensors(false);
  std::string report = wok::memory_report();
  EXPECT_NE(report.find("host allocator:"), std::string::npos) << report;
  EXPECT_NE(report.find("tracking is off"), std::string::npos) << report;
  EXPECT_NE(report.find("WOK_REPORT=1"), std::string::npos) << report;
  EXPECT_NE(report.find("wok::track_live_tensors(true)"), std::string::npos) << report;
}

// Asynchronous evaluations publish and free tensors on stream threads while
// another thread reads the report (run under build-tsan too).
TEST(MemoryReport, ReportWhileStreamsFreeTensors) {
  Tracking on;
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop.load()) (void)wok::memory_report();
  });
  wok::Tensor x = vector_of(4096, 0.5f);
  for (int i = 0; i < 200; ++i) {
    std::vector<wok::Tensor> batch;
    for (int k = 0; k < 4; ++k) batch.push_back(wok::exp(x) + static_cast<float>(k));
    wok::eval_async(batch);
    if (i % 2) wok::eval(batch);  // the others die while in flight
  }
  stop = true;
  reader.join();
}

}  // namespace
