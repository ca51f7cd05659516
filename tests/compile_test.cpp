// wok::compile: captures replay what a fresh trace computes, trace once per
// input signature, refuse data reads, and stay flat in memory and safe
// across threads.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

#include "random_program_gen.h"
#include "random_program_gen_ops.h"
#include "test_util.h"
#include "wok/runtime/cpu_features.h"
#include "wok/runtime/observe/events.h"

namespace {

using wok::Tensor;

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

// Bitwise equality of two results (nan equal to nan).
::testing::AssertionResult same(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return ::testing::AssertionFailure() << wok::dtype_name(a.dtype()) << wok::shape_str(a.shape()) << " vs "
                                         << wok::dtype_name(b.dtype()) << wok::shape_str(b.shape());
  std::vector<double> x = values(a), y = values(b);
  for (size_t k = 0; k < x.size(); ++k)
    if (std::memcmp(&x[k], &y[k], sizeof(double)) != 0 && !(x[k] != x[k] && y[k] != y[k]))
      return ::testing::AssertionFailure() << "element " << k << ": " << x[k] << " vs " << y[k];
  return ::testing::AssertionSuccess();
}

class Compile : public wt::BothBackends {};

TEST_P(Compile, ReplaysWithoutCallingTheFunction) {
  std::atomic<int> calls{0};
  auto f = wok::compile([&](const Tensor& x, const Tensor& y) {
    ++calls;
    return wok::relu(x * 2.0f + y) - wok::exp(-x);
  });
  Tensor x = wok::from_vector(std::vector<float>{1, -2, 3, -4}, {2, 2});
  Tensor y = wok::from_vector(std::vector<float>{0.5f, 0.25f, -1, 2}, {2, 2});
  Tensor want = wok::relu(x * 2.0f + y) - wok::exp(-x);
  EXPECT_TRUE(same(f(x, y), want));
  EXPECT_EQ(calls.load(), 1);
  // New data, same signature: the plan replays and reads the new inputs.
  Tensor x2 = x * 3.0f;  // pending: evaluated before binding
  Tensor want2 = wok::relu(x2 * 2.0f + y) - wok::exp(-x2);
  EXPECT_TRUE(same(f(x2, y), want2));
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(same(f(x, y), want));
  EXPECT_EQ(calls.load(), 1);
  wok::CompileStats s = f.stats();
  EXPECT_EQ(s.traces, 1);
  EXPECT_EQ(s.replays, 6);
  EXPECT_EQ(s.captures, 1);
  // A new dtype is a new signature.
  Tensor xd = x.astype(wok::DType::kFloat64), yd = y.astype(wok::DType::kFloat64);
  EXPECT_TRUE(same(f(xd, yd), wok::relu(xd * 2.0f + yd) - wok::exp(-xd)));
  EXPECT_EQ(calls.load(), 2);
}

TEST_P(Compile, ReturnsTuplesPairsVectorsAndPassthroughs) {
  Tensor x = wok::from_vector(std::vector<float>{1, 2, 3}, {3});
  Tensor y = wok::from_vector(std::vector<float>{4, 5, 6}, {3});
  auto tup = wok::compile([](Tensor a, Tensor b) { return std::make_tuple(a + b, a * b, a); });
  for (int i = 0; i < 2; ++i) {
    auto [s, p, a] = tup(x, y);
    EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{5, 7, 9}));
    EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{4, 10, 18}));
    EXPECT_EQ(a.to_vector<float>(), x.to_vector<float>());
  }
  auto pair = wok::compile([](const Tensor& a) {
    Tensor s = wok::sum(a);
    return std::make_pair(s, s);  // one value returned twice
  });
  auto [s1, s2] = pair(x);
  EXPECT_EQ(s1.item<float>(), 6.0f);
  EXPECT_EQ(s2.item<float>(), 6.0f);
  auto vec = wok::compile([](const std::vector<Tensor>& in) {
    std::vector<Tensor> out;
    for (const Tensor& t : in) out.push_back(t * 2.0f);
    return out;
  });
  std::vector<Tensor> outs = vec(std::vector<Tensor>{x, y, x});
  ASSERT_EQ(outs.size(), 3u);
  EXPECT_EQ(outs[1].to_vector<float>(), (std::vector<float>{8, 10, 12}));
  EXPECT_EQ(outs[2].to_vector<float>(), (std::vector<float>{2, 4, 6}));
  // The same tensor passed twice, then two different ones: two inputs either way.
  auto diff = wok::compile([](const Tensor& a, const Tensor& b) { return a - b; });
  EXPECT_EQ(diff(x, x).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(diff(y, x).to_vector<float>(), (std::vector<float>{3, 3, 3}));
}

TEST_P(Compile, ClosedOverTensorsAreConstantsEvaluatedOnce) {
  Tensor w = wok::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor bias = wok::full({2}, 0.5f) * 2.0f;  // pending outside: run once, at the trace
  std::atomic<int> calls{0};
  auto layer = wok::compile([&](const Tensor& x) {
    ++calls;
    return wok::relu(wok::matmul(x, w) + bias);
  });
  Tensor x = wok::from_vector(std::vector<float>{1, 0, -1, 2, 1, 0}, {2, 3});
  Tensor want = wok::relu(wok::matmul(x, w) + bias);
  EXPECT_TRUE(same(layer(x), want));
  EXPECT_TRUE(bias.is_ready());
  Tensor x2 = x * -1.0f;
  EXPECT_TRUE(same(layer(x2), wok::relu(wok::matmul(x2, w) + bias)));
  EXPECT_EQ(calls.load(), 1);
}

TEST_P(Compile, ReadingDataDuringTheCaptureIsAnError) {
  Tensor x = wok::from_vector(std::vector<float>{1, -2, 3}, {3});
  auto expect_refused = [&](auto fn, const char* what) {
    auto f = wok::compile(fn, {.name = "branchy"});
    try {
      f(x);
      ADD_FAILURE() << "no error for " << what;
    } catch (const wok::CaptureError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("branchy"), std::string::npos) << e.what();
    }
    // Nothing is left captured, and eager code still runs.
    EXPECT_EQ(f.stats().captures, 0);
    EXPECT_EQ(wok::sum(x * 2.0f).item<float>(), 4.0f);
  };
  expect_refused([](const Tensor& a) { return wok::sum(a).item<float>() > 0 ? a : -a; }, "Tensor::item()");
  expect_refused([](const Tensor& a) { return a * static_cast<float>(a.to_vector<float>()[0]); }, "reading the data");
  expect_refused([](const Tensor& a) {
    (void)a.str();
    return a;
  }, "reading the data");
  expect_refused([](const Tensor& a) {
    Tensor b = a + 1.0f;
    wok::eval({b});
    return b;
  }, "wok::eval");
  // A compiled function called inside another's capture.
  auto inner = wok::compile([](const Tensor& a) { return a + 1.0f; });
  expect_refused([&](const Tensor& a) { return inner(a); }, "while wok::compile traces another function");
}

// The kCapture events' reasons, and which were derivations.
class CaptureLog {
 public:
  CaptureLog() {
    sub_ = wok::observe::subscribe(wok::observe::bit(wok::observe::EventKind::kCapture), [this](const auto& e) {
      std::lock_guard lock(mu_);
      why_.push_back(e.detail);
      derived_.push_back(e.hit);
    });
  }
  ~CaptureLog() { wok::observe::unsubscribe(sub_); }
  std::vector<std::string> why() {
    std::lock_guard lock(mu_);
    return why_;
  }
  std::vector<bool> derived() {
    std::lock_guard lock(mu_);
    return derived_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> why_;
  std::vector<bool> derived_;
  uint64_t sub_ = 0;
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Calls softmax(tanh(x / 2) * g + 1) compiled with `options` at eight batch
// sizes, twice each, checking every result against eager code; returns the
// function's stats and the reasons of its captures.
struct EightSizes {
  int calls = 0;
  wok::CompileStats stats;
  std::vector<std::string> why;
  std::vector<bool> derived;
};
EightSizes call_at_eight_batch_sizes(wok::CompileOptions options) {
  std::atomic<int> calls{0};
  auto f = wok::compile(
      [&](const Tensor& x, const Tensor& g) {
        ++calls;
        return wok::softmax(wok::tanh(x * 0.5f) * g + 1.0f, -1);
      },
      options);
  CaptureLog log;
  Tensor g = wok::rand({16}, 1);
  const wok::RuntimeStats before = wok::stats();
  for (int64_t batch : {2, 3, 5, 8, 13, 21, 34, 55}) {
    Tensor x = wok::rand({batch, 16}, static_cast<uint64_t>(batch));
    Tensor want = wok::softmax(wok::tanh(x * 0.5f) * g + 1.0f, -1);
    EXPECT_TRUE(same(f(x, g), want)) << "batch " << batch;
    EXPECT_TRUE(same(f(x, g), want)) << "batch " << batch << ", replayed";
  }
  if (wok::backend() == wok::Backend::kJit) {
    // Kernels are shape-generic: one fused kernel serves every size (the
    // first size compiles it, for the eager reference; every later plan,
    // captured, derived or eager, finds it in memory). With the disk cache
    // on it may load instead of compiling.
    const wok::RuntimeStats after = wok::stats();
    EXPECT_LE(after.kernels_compiled - before.kernels_compiled, 1);
    EXPECT_LE(after.cache_misses - before.cache_misses, 1);
  }
  return {calls.load(), f.stats(), log.why(), log.derived()};
}

TEST_P(Compile, StaticShapesTraceEachSizeButCompileNoKernel) {
  EightSizes r = call_at_eight_batch_sizes({.static_shapes = true, .name = ""});
  EXPECT_EQ(r.calls, 8);
  EXPECT_EQ(r.stats.replays, 8);
  EXPECT_EQ(r.stats.derived, 0);
  ASSERT_EQ(r.why.size(), 8u);
  EXPECT_EQ(r.why[0], "first call");
  EXPECT_EQ(r.why[1], "input 0 is float32[3, 16], captured as float32[2, 16]");
}

TEST_P(Compile, EightBatchSizesTraceTwiceAndCompileOnce) {
  EightSizes r = call_at_eight_batch_sizes({});
  // The first call traces; the second traces once more to verify that the
  // batch dim can be derived; the other six derive their plans.
  EXPECT_EQ(r.calls, 2);
  EXPECT_EQ(r.stats.traces, 2);
  EXPECT_EQ(r.stats.derived, 6);
  EXPECT_EQ(r.stats.replays, 8);
  EXPECT_EQ(r.stats.captures, 8);
  ASSERT_EQ(r.why.size(), 8u);
  EXPECT_EQ(r.why[0], "first call");
  EXPECT_TRUE(contains(r.why[1], "verified: later sizes derive from the capture for (float32[2, 16], float32[16])"))
      << r.why[1];
  EXPECT_FALSE(r.derived[1]);
  for (size_t k = 2; k < r.why.size(); ++k) {
    EXPECT_TRUE(r.derived[k]) << r.why[k];
    EXPECT_TRUE(contains(r.why[k], "derived from the capture for (float32[2, 16], float32[16])")) << r.why[k];
  }
}

TEST_P(Compile, SizesInShapeAttributesFollowTheInputs) {
  std::atomic<int> calls{0};
  // x [b, s, 8] and mask [s, s]: reshapes and a creation op take sizes the
  // function computes from x's shape.
  auto layer = [&](const Tensor& x, const Tensor& mask) {
    ++calls;
    const int64_t b = x.shape()[0], s = x.shape()[1];
    Tensor flat = wok::relu(wok::reshape(x, {b * s, 8})) + 1.0f;
    Tensor h = wok::reshape(flat, {b, s, 8});
    Tensor scores = wok::matmul(h, wok::transpose(h, 1, 2)) * 0.125f + mask;
    return wok::softmax(scores, -1) + wok::ones({b, s, s});
  };
  auto f = wok::compile(layer);
  CaptureLog log;
  struct Size {
    int64_t b, s;
  };
  for (Size size : {Size{2, 4}, Size{3, 4}, Size{3, 6}, Size{5, 7}, Size{2, 9}, Size{4, 4}, Size{6, 5}}) {
    Tensor x = wok::randn({size.b, size.s, 8}, static_cast<uint64_t>(size.b * 100 + size.s));
    Tensor mask = wok::randn({size.s, size.s}, static_cast<uint64_t>(size.s));
    const int before = calls.load();
    Tensor want = layer(x, mask);
    calls = before;
    EXPECT_TRUE(same(f(x, mask), want)) << "b " << size.b << ", s " << size.s;
  }
  // Traces: the first, one verifying b, one verifying s.
  EXPECT_EQ(f.stats().traces, 3) << [&] {
    std::string all;
    for (const std::string& w : log.why()) all += w + "\n";
    return all;
  }();
  EXPECT_EQ(f.stats().derived, 4);
}

TEST_P(Compile, ASizeBakedIntoAScalarIsSpecialised) {
  std::atomic<int> calls{0};
  auto f = wok::compile([&](const Tensor& x) {
    ++calls;
    return x * static_cast<float>(x.shape()[0]) + 1.0f;
  });
  CaptureLog log;
  for (int64_t batch : {2, 3, 4, 5}) {
    Tensor x = wok::rand({batch, 8}, static_cast<uint64_t>(batch));
    EXPECT_TRUE(same(f(x), x * static_cast<float>(batch) + 1.0f)) << "batch " << batch;
  }
  EXPECT_EQ(calls.load(), 4);
  EXPECT_EQ(f.stats().derived, 0);
  std::vector<std::string> why = log.why();
  ASSERT_EQ(why.size(), 4u);
  EXPECT_TRUE(contains(why[1], "specialised: a size is used as a constant: node 0")) << why[1];
  EXPECT_TRUE(contains(why[2], "input 0 dim 0 is specialised (a size is used as a constant")) << why[2];
}

TEST_P(Compile, ABroadcastDimOfOneIsAFamilyOfItsOwn) {
  std::atomic<int> calls{0};
  auto f = wok::compile([&](const Tensor& x, const Tensor& y) {
    ++calls;
    return x * y + 1.0f;
  });
  CaptureLog log;
  auto check = [&](int64_t rows_x, int64_t rows_y) {
    Tensor x = wok::rand({rows_x, 8}, static_cast<uint64_t>(rows_x));
    Tensor y = wok::rand({rows_y, 8}, static_cast<uint64_t>(rows_y + 50));
    EXPECT_TRUE(same(f(x, y), x * y + 1.0f)) << rows_x << " and " << rows_y << " rows";
  };
  check(4, 4);
  check(4, 1);  // y broadcasts now: traced
  check(6, 1);  // verifies x's rows in the broadcast family
  check(7, 1);  // derived
  check(5, 5);  // verifies the rows of the first family
  check(9, 9);  // derived
  EXPECT_EQ(calls.load(), 4);
  EXPECT_EQ(f.stats().derived, 2);
  std::vector<std::string> why = log.why();
  ASSERT_EQ(why.size(), 6u);
  EXPECT_EQ(why[1], "input 1 is float32[1, 8], captured as float32[4, 8]");
  EXPECT_TRUE(contains(why[3], "derived from the capture for (float32[4, 8], float32[1, 8])")) << why[3];
}

TEST_P(Compile, SizesTheGraphRejectsRaiseTheFunctionsOwnError) {
  auto f = wok::compile([](const Tensor& x, const Tensor& y) { return x + y; });
  f(wok::rand({4, 8}, 1), wok::rand({4, 8}, 2));
  EXPECT_THROW(f(wok::rand({5, 8}, 1), wok::rand({6, 8}, 2)), wok::ShapeError);
  f(wok::rand({5, 8}, 1), wok::rand({5, 8}, 2));  // verified
  try {
    f(wok::rand({7, 8}, 1), wok::rand({6, 8}, 2));
    ADD_FAILURE() << "no error";
  } catch (const wok::ShapeError& e) {
    EXPECT_TRUE(contains(e.what(), "[7, 8]")) << e.what();
  }
  EXPECT_EQ(f.stats().derived, 0);
}

TEST_P(Compile, DerivedPlansEqualEagerAtRandomSizes) {
  Tensor w = wok::randn({12, 12}, 7);
  Tensor gamma = wok::rand({12}, 8);
  auto block = [&](const Tensor& x, const Tensor& bias) {
    Tensor h = wok::layer_norm(x, gamma);
    Tensor y = wok::matmul(h, w) + bias;
    Tensor pooled = wok::mean(y, {1}, /*keepdims=*/true);
    Tensor mixed = wok::concat({wok::exp(y - pooled), wok::sigmoid(y)}, 2);
    return std::vector<Tensor>{wok::sum(mixed * mixed, {2}), wok::permute(mixed, {1, 0, 2})};
  };
  auto f = wok::compile([&](const std::vector<Tensor>& in) { return block(in[0], in[1]); });
  uint64_t state = 12345;
  auto next = [&](int64_t lo, int64_t hi) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(hi - lo + 1));
  };
  for (int k = 0; k < 24; ++k) {
    const int64_t b = next(2, 9), s = next(2, 40);
    Tensor x = wok::randn({b, s, 12}, static_cast<uint64_t>(k));
    Tensor bias = wok::randn({12}, static_cast<uint64_t>(k + 1000));
    std::vector<Tensor> want = block(x, bias);
    std::vector<Tensor> got = f(std::vector<Tensor>{x, bias});
    for (size_t j = 0; j < want.size(); ++j) ASSERT_TRUE(same(got[j], want[j])) << "b " << b << ", s " << s << ", output " << j;
  }
  EXPECT_LE(f.stats().traces, 3);
  EXPECT_GE(f.stats().derived, 20);
}

TEST_P(Compile, ReplayEqualsAFreshTraceOnRandomPrograms) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    for (rpgen::Flavour flavour : {rpgen::Flavour::kContinuous, rpgen::Flavour::kMixed}) {
      rpgen::Program p;
      rpgen::Generator(seed * 7919 + static_cast<uint64_t>(flavour), flavour, p).build();
      if (p.vals.empty() || !p.error.empty()) continue;
      p.vals.clear();
      // The inputs are the steps that create ready tensors; the function is
      // every other step, over them.
      std::vector<Tensor> eager;
      std::vector<int> input_steps;
      for (size_t k = 0; k < p.steps.size(); ++k) {
        eager.push_back(p.steps[k](eager));
        if (eager.back().is_ready()) input_steps.push_back(static_cast<int>(k));
      }
      const size_t last = p.steps.size() - 1;
      auto program = [&](const std::vector<Tensor>& inputs) {
        std::vector<Tensor> ts;
        size_t next = 0;
        for (size_t k = 0; k < p.steps.size(); ++k) {
          if (next < input_steps.size() && input_steps[next] == static_cast<int>(k)) ts.push_back(inputs[next++]);
          else ts.push_back(p.steps[k](ts));
        }
        return std::vector<Tensor>{ts[last], ts[last / 2]};
      };
      std::vector<Tensor> inputs;
      for (int k : input_steps) inputs.push_back(eager[k]);
      // Second inputs: the first ones reversed along their flat order.
      std::vector<Tensor> reversed;
      for (const Tensor& t : inputs) {
        std::vector<double> v = t.to_vector<double>();
        std::reverse(v.begin(), v.end());
        Tensor r = wok::from_vector(v, t.shape()).astype(t.dtype());
        wok::eval({r});
        reversed.push_back(r);
      }
      auto f = wok::compile(program);
      for (const std::vector<Tensor>* in : {&inputs, &reversed, &inputs}) {
        std::vector<Tensor> want = program(*in);
        wok::eval(want);
        std::vector<Tensor> got = f(*in);
        for (size_t j = 0; j < want.size(); ++j)
          ASSERT_TRUE(same(got[j], want[j])) << "seed " << seed << ", output " << j << "\n" << [&] {
            std::string code;
            for (const std::string& line : p.code) code += line + "\n";
            return code;
          }();
      }
      EXPECT_EQ(f.stats().traces, 1);
      ++checked;
    }
  }
  EXPECT_GT(checked, 150);
}

TEST_P(Compile, MemoryStaysFlatOverManyReplays) {
  auto f = wok::compile([](const Tensor& x) { return wok::sum(wok::exp(x * 0.25f) + 1.0f, {1}); });
  Tensor x = wok::rand({8, 64}, 3);
  // Warm-up in the loop's own pattern: a result held while the next is made.
  Tensor last;
  for (int i = 0; i < 100; ++i) last = f(x);
  const int64_t nodes = wok::live_node_count();
  const wok::MemoryStats before = wok::memory_stats();
  for (int i = 0; i < 100000; ++i) last = f(x);
  const wok::MemoryStats after = wok::memory_stats();
  EXPECT_EQ(wok::live_node_count(), nodes);
  EXPECT_EQ(after.current_bytes, before.current_bytes);
  EXPECT_EQ(after.os_allocations, before.os_allocations);
  EXPECT_TRUE(same(last, wok::sum(wok::exp(x * 0.25f) + 1.0f, {1})));
}

TEST_P(Compile, ConcurrentReplaysFromEightThreads) {
  auto f = wok::compile([](const Tensor& x, const Tensor& y) { return wok::softmax(x * y + 0.5f, -1); });
  Tensor y = wok::rand({32}, 9);
  std::vector<Tensor> xs, want;
  for (int t = 0; t < 8; ++t) {
    xs.push_back(wok::rand({4, 32}, 100 + static_cast<uint64_t>(t)));
    want.push_back(wok::softmax(xs.back() * y + 0.5f, -1));
  }
  wok::eval(want);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i)
        if (!same(f(xs[t], y), want[t])) ++wrong;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(f.stats().traces, 1);
  EXPECT_EQ(f.stats().replays, 8 * 200 - 1);
}

TEST(CompileObserve, ReplaysAreEvaluationsAndShadowModeChecksThem) {
  if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
  wok::set_backend(wok::Backend::kJit);
  auto f = wok::compile([](const Tensor& x) { return wok::exp(x * 0.5f) - x; }, {.name = "observed"});
  Tensor x = wok::rand({5, 3}, 4);
  std::mutex mu;
  std::vector<wok::observe::Event> seen;
  using wok::observe::EventKind;
  uint64_t sub = wok::observe::subscribe(
      wok::observe::bit(EventKind::kEvalEnd) | wok::observe::bit(EventKind::kShadow) |
          wok::observe::bit(EventKind::kCapture),
      [&](const wok::observe::Event& e) {
        std::lock_guard lock(mu);
        seen.push_back(e);
      });
  wok::set_shadow(1);
  f(x);
  f(x);
  wok::set_shadow(0);
  wok::observe::unsubscribe(sub);
  int captures = 0, replays = 0, shadows = 0;
  for (const auto& e : seen) {
    if (e.kind == EventKind::kCapture) {
      ++captures;
      EXPECT_EQ(e.name, "observed");
      EXPECT_EQ(e.detail, "first call");
    }
    if (e.kind == EventKind::kEvalEnd && e.reason == static_cast<int>(wok::EvalReason::kCompiledCall)) {
      ++replays;
      EXPECT_EQ(e.name, "jit");
      EXPECT_EQ(e.count, 4);  // full, mul, exp, sub
    }
    if (e.kind == EventKind::kShadow) {
      ++shadows;
      EXPECT_FALSE(e.warn) << e.name;
    }
  }
  EXPECT_EQ(captures, 1);
  EXPECT_EQ(replays, 2);  // the first call runs the prepared plan too
  EXPECT_EQ(shadows, 2);
}

TEST(CompileAsync, RunsOnPrecompiledKernelsUntilThePlanIsBuilt) {
  if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
  wok::set_backend(wok::Backend::kJit);
  wok::set_async_compile(true);
  // A program no other test builds, so its plan is not cached yet.
  auto f = wok::compile([](const Tensor& x) { return wok::sigmoid(x * 1.2345f - 0.678f) * x; });
  Tensor x = wok::rand({3, 7}, 42);
  Tensor want;
  {
    // The reference on the precompiled kernels, so that the JIT's plan is
    // not built by it (the two agree bitwise: docs/numerics.md).
    wok::set_backend(wok::Backend::kPrecompiled);
    want = wok::sigmoid(x * 1.2345f - 0.678f) * x;
    wok::eval({want});
    wok::set_backend(wok::Backend::kJit);
  }
  // Bitwise the same whether a call ran on the precompiled kernels (the
  // plan still building in the background) or on the prepared plan.
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(same(f(x), want)) << "call " << i;
  wok::set_async_compile(false);
  EXPECT_TRUE(same(f(x), want));
  EXPECT_EQ(f.stats().traces, 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, Compile, wt::kBothBackends, wt::backend_param_name);

}  // namespace
