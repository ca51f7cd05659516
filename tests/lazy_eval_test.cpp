// Lazy evaluation: recording runs nothing, reading runs what is pending,
// shared work runs once, held intermediates are materialized, the graph is
// freed, pending limits evaluate long chains early, errors surface at the
// call, and threads can record and read concurrently.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::EvalReason;
using wok::Shape;
using wok::Tensor;

// An opaque op that counts its kernel calls: out = x + 1 (float32). Opaque,
// so every backend runs it through this kernel, once per materialization.
std::atomic<int> g_counted_calls{0};

const std::string& counted_op() {
  static const std::string name = [] {
    std::string n = "lazy_eval_test_counted";
    wok::OpDef def;
    def.name = n;
    def.inputs = {"x"};
    def.kind = wok::OpKind::kOpaque;
    def.infer_shape = [](std::span<const Shape> in, const wok::Attrs&) { return std::vector<Shape>{in[0]}; };
    def.infer_dtype = [](std::span<const DType> in, const wok::Attrs&) {
      if (in[0] != DType::kFloat32) throw wok::DTypeError("float32 only");
      return std::vector<DType>{in[0]};
    };
    wok::register_op(std::move(def));
    wok::register_kernel(n, wok::DeviceType::kCPU, [](const wok::KernelContext& ctx) {
      ++g_counted_calls;
      const float* x = ctx.inputs[0].as<float>();
      float* y = ctx.outputs[0].as<float>();
      for (int64_t i = 0; i < ctx.outputs[0].numel(); ++i) y[i] = x[i] + 1;
    });
    return n;
  }();
  return name;
}

Tensor counted(const Tensor& x) { return wok::call1(counted_op(), {x}); }

TEST(LazyEval, RecordingRunsNoKernelReadingDoes) {
  counted_op();
  g_counted_calls = 0;
  Tensor x = wok::from_vector(std::vector<float>{1, 2, 3, 4});
  wok::RuntimeStats before = wok::stats();
  int64_t nodes_before = wok::live_node_count();
  Tensor y = wok::exp(x * 2.0f + 1.0f) - wok::sqrt(x);
  Tensor c = counted(y);
  wok::RuntimeStats mid = wok::stats();
  EXPECT_EQ(mid.kernel_launches, before.kernel_launches);
  EXPECT_EQ(mid.evaluations, before.evaluations);
  EXPECT_EQ(g_counted_calls.load(), 0);
  EXPECT_FALSE(y.is_ready());
  EXPECT_FALSE(c.is_ready());
  EXPECT_TRUE(x.is_ready());
  // mul, add, exp, sqrt, sub, counted, and the two constants.
  EXPECT_EQ(wok::live_node_count() - nodes_before, 8);
  // Shape and dtype are known without running anything.
  EXPECT_EQ(c.shape(), (Shape{4}));
  EXPECT_EQ(c.dtype(), DType::kFloat32);
  EXPECT_EQ(wok::stats().kernel_launches, before.kernel_launches);

  std::vector<float> v = c.to_vector<float>();
  EXPECT_TRUE(c.is_ready());
  EXPECT_GT(wok::stats().kernel_launches, before.kernel_launches);
  EXPECT_EQ(wok::stats().evaluations_by_reason[static_cast<int>(EvalReason::kDataRead)],
            before.evaluations_by_reason[static_cast<int>(EvalReason::kDataRead)] + 1);
  EXPECT_EQ(g_counted_calls.load(), 1);
  for (int i = 0; i < 4; ++i) {
    float xi = static_cast<float>(i + 1);
    EXPECT_NEAR(v[i], std::exp(2 * xi + 1) - std::sqrt(xi) + 1, 1e-5 * std::exp(2 * xi + 1));
  }
  // Reading again runs nothing.
  int64_t launches = wok::stats().kernel_launches;
  c.to_vector<float>();
  EXPECT_EQ(wok::sum(c).dtype(), DType::kFloat32);  // recording on a ready tensor runs nothing either
  EXPECT_EQ(wok::stats().kernel_launches, launches);
  g_counted_calls = 0;
}

TEST(LazyEval, EvalManySharedWorkRunsOnce) {
  g_counted_calls = 0;
  Tensor x = wok::from_vector(std::vector<float>{1, 2, 3});
  Tensor shared = counted(x * 3.0f);  // nodes: full, mul, counted
  Tensor a = shared + 1.0f;           // full, add
  Tensor b = shared * shared;         // mul
  Tensor c = wok::exp(shared);        // exp
  wok::RuntimeStats before = wok::stats();
  wok::eval({a, b, c});
  wok::RuntimeStats after = wok::stats();
  EXPECT_TRUE(a.is_ready() && b.is_ready() && c.is_ready());
  EXPECT_EQ(g_counted_calls.load(), 1) << "the shared node ran more than once";
  EXPECT_EQ(after.nodes_evaluated - before.nodes_evaluated, 7);
  EXPECT_EQ(after.evaluations - before.evaluations, 1);
  EXPECT_EQ(after.evaluations_by_reason[static_cast<int>(EvalReason::kEvalCall)] -
                before.evaluations_by_reason[static_cast<int>(EvalReason::kEvalCall)],
            1);
  EXPECT_TRUE(wt::exact<float>("a", a, {5, 8, 11}));
  EXPECT_TRUE(wt::exact<float>("b", b, {16, 49, 100}));
  // eval of ready tensors (and repeats) is a no-op.
  wok::eval({a, a, b});
  EXPECT_EQ(wok::stats().evaluations, after.evaluations);
  EXPECT_EQ(g_counted_calls.load(), 1);
  EXPECT_THROW(wok::eval({a, Tensor()}), wok::Error);
}

TEST(LazyEval, HeldIntermediateIsMaterializedNotRecomputed) {
  g_counted_calls = 0;
  Tensor x = wok::from_vector(std::vector<float>{1, 2});
  Tensor mid = counted(x);  // held by the user
  Tensor out = mid * 10.0f;
  EXPECT_TRUE(wt::exact<float>("out", out, {20, 30}));
  EXPECT_EQ(g_counted_calls.load(), 1);
  EXPECT_TRUE(mid.is_ready()) << "an intermediate the user holds should be written by the evaluation";
  int64_t launches = wok::stats().kernel_launches;
  EXPECT_TRUE(wt::exact<float>("mid", mid, {2, 3}));
  EXPECT_EQ(g_counted_calls.load(), 1);
  EXPECT_EQ(wok::stats().kernel_launches, launches);
  // A later consumer of the ready intermediate does not recompute it.
  Tensor again = mid - 1.0f;
  EXPECT_TRUE(wt::exact<float>("again", again, {1, 2}));
  EXPECT_EQ(g_counted_calls.load(), 1);

  // An intermediate still needed by another pending tensor is kept too.
  Tensor m2 = counted(x);
  Tensor first = m2 + 1.0f;
  Tensor second = m2 + 2.0f;
  m2 = Tensor();  // only pending consumers refer to it now
  EXPECT_TRUE(wt::exact<float>("first", first, {3, 4}));
  EXPECT_TRUE(wt::exact<float>("second", second, {4, 5}));
  EXPECT_EQ(g_counted_calls.load(), 2) << "the intermediate shared by two reads was recomputed";
}

TEST(LazyEval, GraphIsFreedAfterEvaluation) {
  const int64_t baseline = wok::live_node_count();
  {
    Tensor x = wok::from_vector(std::vector<float>{1, 2, 3});
    Tensor y = x;
    for (int i = 0; i < 50; ++i) y = wok::tanh(y) * 0.5f + x;
    EXPECT_GE(wok::live_node_count() - baseline, 150);
    y.to_vector<float>();
    // The graph behind a ready tensor is released right away.
    EXPECT_EQ(wok::live_node_count(), baseline);
  }
  {
    // Pending tensors that die unread release their nodes too.
    Tensor x = wok::ones({4});
    Tensor y = wok::exp(x) + wok::log(x);
    EXPECT_GT(wok::live_node_count(), baseline);
  }
  EXPECT_EQ(wok::live_node_count(), baseline);
  {
    // A very long chain is freed without deep recursion.
    Tensor y = wok::ones({1});
    wt::PendingLimitsGuard guard;
    wok::set_pending_limits({int64_t{1} << 40, int64_t{1} << 40});
    for (int i = 0; i < 200000; ++i) y = wok::neg(y);
  }
  EXPECT_EQ(wok::live_node_count(), baseline);
}

TEST(LazyEval, NodeLimitEvaluatesLongLoops) {
  wt::PendingLimitsGuard guard;
  wok::set_pending_limits({100, int64_t{1} << 30});
  EXPECT_EQ(wok::pending_limits().max_nodes, 100);
  wok::RuntimeStats before = wok::stats();
  const int64_t baseline = wok::live_node_count();
  Tensor x = wok::from_vector(std::vector<float>{0, 1, 2});
  Tensor acc = wok::zeros({3});
  int64_t max_live = 0;
  for (int i = 0; i < 1000; ++i) {
    acc = acc + x;
    max_live = std::max(max_live, wok::live_node_count() - baseline);
  }
  wok::RuntimeStats after = wok::stats();
  int64_t by_limit = after.evaluations_by_reason[static_cast<int>(EvalReason::kNodeLimit)] -
                     before.evaluations_by_reason[static_cast<int>(EvalReason::kNodeLimit)];
  EXPECT_GT(by_limit, 0);
  EXPECT_LE(by_limit, 20) << "evaluated far more often than every ~100 nodes";
  EXPECT_LE(max_live, 101) << "the pending graph grew past the limit";
  EXPECT_TRUE(wt::exact<float>("acc", acc, {0, 1000, 2000}));
}

TEST(LazyEval, ByteLimitEvaluatesEarly) {
  wt::PendingLimitsGuard guard;
  // Each step pins a fresh 4 KiB leaf; at most 64 KiB may be pinned.
  wok::set_pending_limits({1 << 20, 64 << 10});
  wok::RuntimeStats before = wok::stats();
  Tensor acc = wok::zeros({1024});
  double want = 0;
  for (int i = 0; i < 100; ++i) {
    acc = acc + wok::from_vector(std::vector<float>(1024, static_cast<float>(i)));
    want += i;
  }
  wok::RuntimeStats after = wok::stats();
  EXPECT_GT(after.evaluations_by_reason[static_cast<int>(EvalReason::kByteLimit)] -
                before.evaluations_by_reason[static_cast<int>(EvalReason::kByteLimit)],
            0);
  EXPECT_EQ(after.evaluations_by_reason[static_cast<int>(EvalReason::kNodeLimit)],
            before.evaluations_by_reason[static_cast<int>(EvalReason::kNodeLimit)]);
  EXPECT_TRUE(wt::exact<float>("acc", acc, std::vector<float>(1024, static_cast<float>(want))));
}

TEST(LazyEval, SharedSubgraphsDoNotTriggerSpuriousLimits) {
  // y = y + y doubles the *bound* each step (sums over inputs) while the
  // real graph grows by one node: 40 steps must not evaluate.
  wt::PendingLimitsGuard guard;
  wok::set_pending_limits({1000, int64_t{1} << 30});
  wok::RuntimeStats before = wok::stats();
  Tensor y = wok::from_vector(std::vector<float>{1});
  for (int i = 0; i < 40; ++i) y = y + y;
  EXPECT_EQ(wok::stats().evaluations, before.evaluations);
  EXPECT_FALSE(y.is_ready());
  EXPECT_EQ(y.item<float>(), std::ldexp(1.0f, 40));
}

TEST(LazyEval, ErrorsAtTheCallSite) {
  wok::RuntimeStats before = wok::stats();
  const int64_t baseline = wok::live_node_count();
  Tensor a = wok::exp(wok::ones({2, 3}));
  Tensor b = wok::ones({4});
  try {
    Tensor c = a + b;
    ADD_FAILURE() << "add of [2, 3] and [4] did not throw";
  } catch (const wok::ShapeError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("wok::add"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4]"), std::string::npos) << msg;
  }
  EXPECT_THROW(wok::matmul(a, b), wok::ShapeError);
  EXPECT_THROW(a.reshape({7}), wok::ShapeError);
  EXPECT_THROW(wok::sum(a, {5}), wok::ShapeError);
  EXPECT_THROW(wok::ones({1}, DType::kBool) - wok::ones({1}, DType::kBool), wok::DTypeError);
  // Nothing ran, and the failed calls left no nodes behind.
  EXPECT_EQ(wok::stats().evaluations, before.evaluations);
  EXPECT_EQ(wok::stats().kernel_launches, before.kernel_launches);
  EXPECT_FALSE(a.is_ready());
  EXPECT_EQ(wok::live_node_count() - baseline, 3);  // full, exp, full
}

TEST(LazyEval, ThreadsWithTheirOwnPrograms) {
  constexpr int kThreads = 4;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      for (int iter = 0; iter < 50; ++iter) {
        float k = static_cast<float>(t * 100 + iter);
        Tensor x = wok::from_vector(std::vector<float>{k, k + 1, k + 2, k + 3}, {2, 2});
        Tensor y = (x * 2.0f + 1.0f) - x;  // x + 1
        Tensor z = wok::maximum(y, x * 0.0f) * wok::full({2, 1}, 1.0f);
        std::vector<float> v = z.to_vector<float>();
        for (int i = 0; i < 4; ++i)
          if (v[i] != k + static_cast<float>(i) + 1) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(LazyEval, ThreadsReadingOneSharedPendingTensor) {
  for (int round = 0; round < 20; ++round) {
    g_counted_calls = 0;
    Tensor x = wok::from_vector(std::vector<float>(4096, 1.0f));
    Tensor shared = counted(wok::exp(x * 0.0f) * 3.0f);  // 4 everywhere
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        // Half read it directly, half build on it first.
        Tensor mine = t % 2 ? shared : shared + static_cast<float>(t);
        std::vector<float> v = mine.to_vector<float>();
        float want = 4.0f + (t % 2 ? 0.0f : static_cast<float>(t));
        for (float f : v)
          if (f != want) {
            ++failures;
            break;
          }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0) << "round " << round;
    EXPECT_TRUE(shared.is_ready());
    EXPECT_EQ(g_counted_calls.load(), 1) << "round " << round << ": the shared node ran more than once";
  }
}

}  // namespace
