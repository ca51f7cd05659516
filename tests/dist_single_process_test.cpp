// wok::dist in a process that no launcher started: the world is a group of
// one, every collective returns its input (recording nothing), and what
// cannot work (send or recv to oneself, a bad root) raises at the call.
// Then init() under a launcher's environment without a loadable Open MPI,
// in a child process (init happens once per process). The multi-process tests are in tests/dist; the Open MPI layouts
// are checked in tests/dist_mpi_abi_test.cpp.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"
#include "wok/frontend/dist.h"

extern char** environ;

namespace {

namespace dist = wok::dist;
using wok::DType;
using wok::Tensor;
using dist::ReduceOp;

// The message of the E that `fn` throws ("" with a failure when it throws
// nothing or something else).
template <typename E, typename Fn>
std::string message_of(Fn&& fn, const char* what) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << what << ": no exception";
  return "";
}

#define EXPECT_ERROR_NAMING(E, stmt, part)                                        \
  do {                                                                            \
    const std::string m_ = message_of<E>([&] { stmt; }, #stmt);                  \
    EXPECT_NE(m_.find(part), std::string::npos) << #stmt << ": " << m_;          \
  } while (0)

TEST(DistSingleProcess, WorldIsAGroupOfOne) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK")) GTEST_SKIP() << "started by an MPI launcher";
  dist::init();
  dist::init();  // idempotent
  EXPECT_TRUE(dist::initialized());
  EXPECT_EQ(dist::rank(), 0);
  EXPECT_EQ(dist::size(), 1);
  EXPECT_EQ(dist::world().rank(), 0);
  EXPECT_EQ(dist::world().size(), 1);
  EXPECT_EQ(dist::world().name(), "world");

  const double saved = dist::timeout();
  if (!std::getenv("WOK_DIST_TIMEOUT")) {
    EXPECT_EQ(saved, 300);
  }
  dist::set_timeout(7.5);
  EXPECT_EQ(dist::timeout(), 7.5);
  EXPECT_THROW(dist::set_timeout(0), wok::ArgumentError);
  EXPECT_THROW(dist::set_timeout(-1), wok::ArgumentError);
  dist::set_timeout(saved);
}

TEST(DistSingleProcess, CollectivesReturnTheirInput) {
  if (dist::size() != 1) GTEST_SKIP();
  Tensor x = wok::from_vector(std::vector<float>{1, -2, 3, -4, 5, -6}, {3, 2}) * 2.0f;  // pending
  wok::reset_stats();
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kMean}) {
    EXPECT_EQ(dist::all_reduce(x, op).impl(), x.impl());
    EXPECT_EQ(dist::reduce_scatter(x, op).impl(), x.impl());
  }
  EXPECT_EQ(dist::all_gather(x).impl(), x.impl());
  EXPECT_EQ(dist::broadcast(x, 0).impl(), x.impl());
  EXPECT_EQ(dist::all_to_all(x).impl(), x.impl());
  EXPECT_FALSE(x.is_ready());
  EXPECT_EQ(wok::stats().evaluations, 0);  // nothing ran, nothing was recorded
  EXPECT_EQ(dist::all_reduce(x).to_vector<float>(), (std::vector<float>{2, -4, 6, -8, 10, -12}));

  // Every dtype, and bool's reductions (or / and over one rank: the input).
  for (DType t : wok::kAllDTypes) {
    Tensor y = wok::arange(0, 4, 1, t == DType::kBool ? DType::kInt32 : t).astype(t);
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin})
      EXPECT_EQ(dist::all_reduce(y, op).impl(), y.impl()) << wok::dtype_name(t);
  }
  // A 0-d tensor gathers to [1].
  Tensor g = dist::all_gather(wok::scalar_tensor(int64_t{42}));
  EXPECT_EQ(g.shape(), (wok::Shape{1}));
  EXPECT_EQ(g.to_vector<int64_t>(), std::vector<int64_t>{42});
}

TEST(DistSingleProcess, ErrorsAtTheCall) {
  if (dist::size() != 1) GTEST_SKIP();
  Tensor x = wok::full({4}, 1.0f);
  // No peer to talk to.
  EXPECT_ERROR_NAMING(wok::ArgumentError, dist::send(x, 0), "send");
  EXPECT_ERROR_NAMING(wok::ArgumentError, dist::recv({4}, DType::kFloat32, 0), "recv");
  EXPECT_ERROR_NAMING(wok::ArgumentError, dist::send(x, 1), "send");
  EXPECT_ERROR_NAMING(wok::ArgumentError, dist::recv({4}, DType::kFloat32, -1), "recv");
  // A root outside the group, mean over integers.
  EXPECT_ERROR_NAMING(wok::ArgumentError, dist::broadcast(x, 1), "broadcast");
  EXPECT_ERROR_NAMING(wok::ArgumentError, dist::broadcast(x, -1), "broadcast");
  Tensor i = wok::full({4}, int32_t{3});
  EXPECT_ERROR_NAMING(wok::DTypeError, dist::all_reduce(i, ReduceOp::kMean), "all_reduce");
  EXPECT_ERROR_NAMING(wok::DTypeError, dist::reduce_scatter(i, ReduceOp::kMean), "reduce_scatter");
  EXPECT_ERROR_NAMING(wok::Error, dist::all_reduce(Tensor()), "all_reduce");  // undefined
}

TEST(DistSingleProcess, SplitGivesAGroupOfOne) {
  if (dist::size() != 1) GTEST_SKIP();
  const dist::Group g = dist::world().split(3);
  EXPECT_EQ(g.rank(), 0);
  EXPECT_EQ(g.size(), 1);
  EXPECT_EQ(g.name(), "world/split(color=3)");
  const dist::Group h = g.split(1, 5);
  EXPECT_EQ(h.size(), 1);
  EXPECT_EQ(h.name(), "world/split(color=3)/split(color=1)");
  const dist::Group none = dist::world().split(-1);
  EXPECT_EQ(none.size(), 1);
  EXPECT_EQ(none.name(), "world/split(none)");
  Tensor x = wok::full({2, 2}, 1.5);
  EXPECT_EQ(dist::all_reduce(x, ReduceOp::kSum, h).impl(), x.impl());
  EXPECT_EQ(dist::broadcast(x, 0, none).impl(), x.impl());
  EXPECT_ERROR_NAMING(wok::ArgumentError, dist::send(x, 0, g), "send");
}

// ---- init under a launcher without Open MPI's library ----------------------------------

constexpr const char* kMissingLibrary = "/nonexistent/wok-dist-test/libmpi.so";

// The child's side: started by the test below with a launcher's environment.
TEST(DistInitChild, RaisesDistErrorNamingTheLibrary) {
  if (!std::getenv("WOK_DIST_INIT_CHILD")) GTEST_SKIP() << "run by DistSingleProcess.InitWithoutMpiLibraryRaises";
  const std::string m = message_of<wok::DistError>([] { dist::init(); }, "init");
  std::printf("DIST-INIT-ERROR: %s\n", m.c_str());
  EXPECT_NE(m.find(kMissingLibrary), std::string::npos) << m;
  EXPECT_NE(m.find("WOK_MPI_PATH"), std::string::npos) << m;
  EXPECT_NE(m.find("OMPI_COMM_WORLD_SIZE"), std::string::npos) << m;  // why it looked for MPI
  EXPECT_FALSE(dist::initialized());
  // Collectives (which init on first use) raise the same error.
  EXPECT_ERROR_NAMING(wok::DistError, dist::rank(), "WOK_MPI_PATH");
}

std::string self_exe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// Runs this test binary with `args` and `extra_env` (and no MPI launcher
// variables of ours, nor GoogleTest's sharding: a sanitizer tree runs this
// binary in shards, and a child that inherits its shard runs none of the
// one test it was asked for); returns its exit status and its output.
int run_self(const std::vector<std::string>& args, const std::vector<std::string>& extra_env, std::string* out) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string v = *e;
    if (v.rfind("OMPI_", 0) == 0 || v.rfind("PMIX_", 0) == 0 || v.rfind("WOK_MPI_PATH=", 0) == 0 ||
        v.rfind("GTEST_", 0) == 0)
      continue;
    env.push_back(v);
  }
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<std::string> argv = {self_exe()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv, cenv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (std::string& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  int pipe_fd[2];
  if (::pipe(pipe_fd) != 0) return -1;
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_fd[1], 1);
    ::dup2(pipe_fd[1], 2);
    ::close(pipe_fd[0]);
    ::close(pipe_fd[1]);
    ::execve(cargv[0], cargv.data(), cenv.data());
    ::_exit(127);
  }
  ::close(pipe_fd[1]);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(pipe_fd[0], buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  ::close(pipe_fd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(DistSingleProcess, InitWithoutMpiLibraryRaises) {
  std::string out;
  const int rc = run_self({"--gtest_filter=DistInitChild.RaisesDistErrorNamingTheLibrary"},
                          {"WOK_DIST_INIT_CHILD=1", "OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_RANK=0",
                           std::string("WOK_MPI_PATH=") + kMissingLibrary},
                          &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("DIST-INIT-ERROR: "), std::string::npos) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
}

}  // namespace
