// wok_dist_tests' main: the same GoogleTest binary runs on every rank of an
// mpirun job (or alone, as a group of one). Rank 0 prints the usual report;
// the other ranks print only their failures, each line prefixed with
// "[rank r]". At the end the ranks agree on whether any of them failed, so
// every rank (and so mpirun) exits non-zero when one did.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "dist_test_util.h"

namespace {

// A timeout for the ordinary tests: a bug that desynchronizes the ranks
// fails within a minute rather than WOK_DIST_TIMEOUT's default five.
constexpr double kTestTimeoutSeconds = 60;

class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}

  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::string text = r.message();
    std::string out;
    // Prefix every line, so that interleaved output stays attributable.
    std::string prefix = "[rank " + std::to_string(rank_) + "] ";
    out += prefix + (r.file_name() ? r.file_name() : "?") + ":" + std::to_string(r.line_number()) + ": failure in " +
           test_ + "\n";
    size_t at = 0;
    while (at <= text.size()) {
      size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      out += prefix + text.substr(at, end - at) + "\n";
      at = end + 1;
    }
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
  }

  // (Not UnitTest::current_test_info() in OnTestPartResult: gtest holds its
  // lock there, and asking takes it again.)
  void OnTestStart(const ::testing::TestInfo& t) override {
    test_ = std::string(t.test_suite_name()) + "." + t.name();
  }

  void OnTestEnd(const ::testing::TestInfo& t) override {
    if (t.result()->Failed())
      std::printf("[rank %d] FAILED %s.%s\n", rank_, t.test_suite_name(), t.name()), std::fflush(stdout);
  }

 private:
  int rank_;
  std::string test_ = "(no test)";
};

// The harness itself: with WOK_DIST_SELF_CHECK=1 the last rank fails an
// expectation, and the job must print it as "[rank r]" and exit non-zero.
TEST(DistHarness, SelfCheckFailsOnLastRank) {
  if (!std::getenv("WOK_DIST_SELF_CHECK")) GTEST_SKIP() << "set WOK_DIST_SELF_CHECK=1 to see a rank fail";
  EXPECT_NE(wok::dist::rank(), wok::dist::size() - 1) << "the expected failure";
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  try {
    wok::dist::init();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wok_dist_tests: wok::dist::init failed: %s\n", e.what());
    return 2;
  }
  if (!std::getenv("WOK_DIST_TIMEOUT")) wok::dist::set_timeout(kTestTimeoutSeconds);
  const int rank = wok::dist::rank(), size = wok::dist::size();

  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  int rc = RUN_ALL_TESTS();
  if (size == 1) return rc;

  // Every rank's verdict, so that all of them exit non-zero when one failed.
  int failed_ranks = 0;
  try {
    failed_ranks = wok::dist::all_reduce(wok::scalar_tensor(rc != 0 ? 1 : 0).astype(wok::DType::kInt32),
                                         wok::dist::ReduceOp::kSum)
                       .item<int32_t>();
  } catch (const std::exception& e) {
    std::printf("[rank %d] could not gather the ranks' results: %s\n", rank, e.what());
    return 1;
  }
  if (rank == 0 && failed_ranks > 0)
    std::printf("wok_dist_tests: tests failed on %d of %d ranks (see the [rank r] lines)\n", failed_ranks, size);
  std::fflush(stdout);
  return failed_ranks > 0 ? 1 : 0;
}
