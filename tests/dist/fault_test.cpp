// The fault cases (Note [Arrive, then exchange] in
// runtime/dist/collective.cpp): a rank that never arrives, a rank that
// dies, ranks that disagree about the call. Each breaks the groups, so each
// runs as its own mpirun job, through tests/dist/run_fault.sh:
//
//   run_fault.sh MPIRUN NP "SURVIVORS" wok_dist_tests DistFault.NeverArrives
//
// After a fault the ranks cannot finalize MPI together, so a test ends its
// process itself: each surviving rank whose checks passed prints
// "DIST-FAULT-PASS rank r", waits (through marker files in WOK_FAULT_DIR)
// until the other survivors are done too, and exits; the wrapper passes
// when every survivor printed its line. The ordinary runs skip these tests
// (--gtest_filter=-*Fault*).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "dist_test_util.h"

namespace {

using namespace dt;
namespace dist = wok::dist;
using Clock = std::chrono::steady_clock;

constexpr double kTimeout = 2;
// How much later than the timeout a waiting rank may raise.
constexpr double kSlack = 2;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

// Ends the process after a fault test: the marker when the checks passed,
// then a wait for the other survivors (so that no rank leaves while a peer
// may still need its messages), then _exit.
[[noreturn]] void finish(const std::vector<int>& survivors) {
  const int rank = dist::rank();
  const bool ok = !::testing::Test::HasFailure();
  if (ok) std::printf("DIST-FAULT-PASS rank %d\n", rank);
  else std::printf("[rank %d] DIST-FAULT-FAIL: see the failures above\n", rank);
  std::fflush(stdout);
  std::fflush(stderr);
  if (const char* dir = std::getenv("WOK_FAULT_DIR"); dir && *dir) {
    const std::string base = std::string(dir) + "/done.";
    std::ofstream(base + std::to_string(rank)) << "done\n";
    const auto t0 = Clock::now();
    for (int r : survivors)
      while (!file_exists(base + std::to_string(r)) && seconds_since(t0) < 20)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  ::_exit(ok ? 0 : 1);
}

std::vector<int> all_but(int size, int left_out) {
  std::vector<int> r;
  for (int i = 0; i < size; ++i)
    if (i != left_out) r.push_back(i);
  return r;
}

// Runs `eval_collective` and checks that it raises DistError within
// `within` seconds with every string of `parts` in its message.
template <typename Fn>
void expect_dist_error(Fn&& eval_collective, double within, const std::vector<std::string>& parts) {
  const auto t0 = Clock::now();
  bool ok = false;
  const std::string msg = error_of<wok::DistError>(eval_collective, &ok);
  const double elapsed = seconds_since(t0);
  EXPECT_TRUE(ok) << "wanted wok::DistError, got: " << msg;
  EXPECT_LT(elapsed, within) << "raised after " << elapsed << " s: " << msg;
  for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "message lacks \"" << p << "\": " << msg;
  std::printf("[rank %d] raised after %.2f s: %s\n", dist::rank(), elapsed, msg.c_str());
  std::fflush(stdout);
}

// After a fault every later collective raises at once, naming the failure.
void expect_broken() {
  Tensor x = wok::full({4}, 1.0f);
  expect_dist_error([&] { wok::eval({dist::all_reduce(x)}); }, 0.5, {"all_reduce", "broken"});
  expect_dist_error([&] { wok::eval({dist::all_gather(x)}); }, 0.5, {"all_gather", "broken"});
}

// The last rank never calls the all_reduce; it waits (alive) until the
// others have raised and checked.
TEST(DistFault, NeverArrives) {
  const int rank = dist::rank(), size = dist::size();
  if (size < 2) GTEST_SKIP() << "needs peers";
  dist::set_timeout(kTimeout);
  EXPECT_EQ(dist::timeout(), kTimeout);
  const int missing = size - 1;
  if (rank != missing) {
    Tensor x = input<float>(rank, {16}, 1);
    expect_dist_error([&] { wok::eval({dist::all_reduce(x)}); }, kTimeout + kSlack,
                      {"all_reduce", "world", "missing rank(s): " + std::to_string(missing)});
    expect_broken();
  }
  finish(iota_ranks(size));
}

// The last rank dies (exits without a word) before the all_reduce; run
// under mpirun --enable-recovery so that the job outlives it.
TEST(DistFault, RankDies) {
  const int rank = dist::rank(), size = dist::size();
  if (size < 2) GTEST_SKIP() << "needs peers";
  dist::set_timeout(kTimeout);
  const int dead = size - 1;
  if (rank == dead) {
    std::fflush(stdout);
    ::_exit(0);
  }
  // Give it time to be gone, so that the collective meets a dead peer.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Tensor x = input<float>(rank, {16}, 1);
  expect_dist_error([&] { wok::eval({dist::all_reduce(x)}); }, kTimeout + kSlack,
                    {"all_reduce", "world", "missing rank(s): " + std::to_string(dead)});
  expect_broken();
  finish(all_but(size, dead));
}

// Rank 1 reduces float32[5], the others float32[4]: every rank raises,
// listing each rank's call, without waiting for the timeout.
TEST(DistFault, ShapeMismatch) {
  const int rank = dist::rank(), size = dist::size();
  if (size < 2) GTEST_SKIP() << "needs peers";
  dist::set_timeout(kTimeout);
  Tensor x = input<float>(rank, {rank == 1 ? 5 : 4}, 1);
  expect_dist_error([&] { wok::eval({dist::all_reduce(x)}); }, kTimeout,
                    {"all_reduce", "world", "float32[4]", "float32[5]", "rank 1"});
  expect_broken();
  finish(iota_ranks(size));
}

// Rank 0 calls all_gather where the others call all_reduce.
TEST(DistFault, CollectiveMismatch) {
  const int rank = dist::rank(), size = dist::size();
  if (size < 2) GTEST_SKIP() << "needs peers";
  dist::set_timeout(kTimeout);
  Tensor x = input<float>(rank, {4}, 1);
  expect_dist_error([&] { wok::eval({rank == 0 ? dist::all_gather(x) : dist::all_reduce(x)}); }, kTimeout,
                    {"all_gather", "all_reduce", "world"});
  expect_broken();
  finish(iota_ranks(size));
}

// Rank 0 sends float32[3] to rank 1, which expects int32[3]: the receiver
// raises, naming both tensors. A send is posted and returns without waiting
// for its receiver (runtime/dist/collective.cpp), and the receiver takes the
// payload anyway, so the sender sees no error.
TEST(DistFault, SendRecvMismatch) {
  const int rank = dist::rank(), size = dist::size();
  if (size < 2) GTEST_SKIP() << "needs peers";
  dist::set_timeout(kTimeout);
  if (rank == 0) {
    Tensor s = dist::send(input<float>(0, {3}, 1), 1);
    EXPECT_NO_THROW(wok::eval({s}));
  } else if (rank == 1) {
    expect_dist_error([&] { wok::eval({dist::recv({3}, DType::kInt32, 0)}); }, kTimeout,
                      {"recv", "rank 0", "float32[3]", "int32[3]"});
    expect_broken();
  }
  finish(iota_ranks(size));
}

// Rank 0 sends to rank 1, which never receives. The send returns at once;
// the first call after the timeout notices it and raises, naming the send
// and the rank that did not take it. The payload is large (1 MiB): MPI
// completes a small send eagerly, into the receiver's buffers, whether or
// not a recv ever takes it, so only a send past the eager limit can be
// seen to go untaken.
TEST(DistFault, SendNeverReceived) {
  const int rank = dist::rank(), size = dist::size();
  if (size < 2) GTEST_SKIP() << "needs peers";
  dist::set_timeout(kTimeout);
  if (rank == 0) {
    const auto t0 = Clock::now();
    Tensor s = dist::send(input<float>(0, {1 << 18}, 1), 1);
    EXPECT_NO_THROW(wok::eval({s}));
    EXPECT_LT(seconds_since(t0), 1.0) << "a send does not wait for its receiver";
    std::this_thread::sleep_for(std::chrono::duration<double>(kTimeout + 0.5));
    expect_dist_error([&] { wok::eval({dist::send(input<float>(0, {3}, 2), 1)}); }, 1.0,
                      {"send", "rank 1", "not received"});
    expect_broken();
  }
  finish(iota_ranks(size));
}

}  // namespace
