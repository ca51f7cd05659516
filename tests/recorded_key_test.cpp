// Note [Signatures hashed while recording] in runtime/fragment.h: a traced
// fragment's plan is found by the key its nodes hashed when they were
// recorded, and confirmed by comparing fragments, never by the key alone.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "wok/frontend/dispatch.h"
#include "wok/runtime/cpu_features.h"
#include "wok/runtime/fragment_signature.h"

namespace {

using wok::DType;
using wok::Fragment;
using wok::FragmentNode;
using wok::Tensor;
using wok::TensorMeta;

const wok::RegisteredOp& op(const char* name) { return wok::OpRegistry::global().get(name); }

// x0 + x1 -> v2, sum(v2, axes) -> v3, and a constant v4 = full(value) read by
// mul(v3, v4) -> v5: every part of a signature has something to change.
struct Program {
  wok::Attrs add_attrs;
  wok::Attrs sum_attrs;
  wok::Attrs full_attrs;
  wok::Attrs mul_attrs;
  Fragment f;

  explicit Program(std::vector<int64_t> axes = {1}, float constant = 2.0f) {
    sum_attrs = wok::detail::positional_attrs(op("sum"), {axes, false});
    full_attrs = wok::detail::positional_attrs(op("full"), {wok::Scalar(constant), wok::Shape{}});
    TensorMeta m{{4, 8}, DType::kFloat32, wok::Device::cpu()};
    TensorMeta r{{4}, DType::kFloat32, wok::Device::cpu()};
    TensorMeta s{{}, DType::kFloat32, wok::Device::cpu()};
    f.values = {m, m, m, r, s, r};
    f.nodes = {FragmentNode{&op("add"), &add_attrs, {0, 1}, {2}}, FragmentNode{&op("sum"), &sum_attrs, {2}, {3}},
               FragmentNode{&op("full"), &full_attrs, {}, {4}}, FragmentNode{&op("mul"), &mul_attrs, {3, 4}, {5}}};
    f.inputs = {0, 1};
    f.outputs = {5};
  }
};

bool signatures_equal(const Fragment& a, const Fragment& b) {
  return wok::fragment_signature(a) == wok::fragment_signature(b);
}

TEST(RecordedKey, SameSignatureAgreesWithTheSignatureBytesOnEveryKindOfChange) {
  Program base;
  struct Change {
    std::string what;
    std::function<void(Program&)> apply;
    bool same;  // what the signature says
  };
  std::vector<Change> changes = {
      {"nothing", [](Program&) {}, true},
      {"a constant's value", [](Program& p) { p.full_attrs = Program({1}, 3.0f).full_attrs; }, true},
      {"an input's size", [](Program& p) { p.f.values[0].shape = {4, 9}; }, false},
      {"a value's rank", [](Program& p) { p.f.values[2].shape = {32}; }, false},
      {"a dtype", [](Program& p) { p.f.values[1].dtype = DType::kFloat64; }, false},
      {"a device", [](Program& p) { p.f.values[1].device = wok::Device::cuda(0); }, false},
      {"an op", [](Program& p) { p.f.nodes[0].op = &op("sub"); }, false},
      {"the wiring", [](Program& p) { p.f.nodes[0].inputs = {1, 0}; }, false},
      {"an attribute", [](Program& p) { p.sum_attrs = Program({0}).sum_attrs; }, false},
      {"the outputs", [](Program& p) { p.f.outputs = {3, 5}; }, false},
      {"the inputs", [](Program& p) { p.f.inputs = {1, 0}; }, false},
  };
  for (const Change& c : changes) {
    Program changed;
    c.apply(changed);
    EXPECT_EQ(signatures_equal(base.f, changed.f), c.same) << c.what << " (the test's own expectation)";
    EXPECT_EQ(wok::same_signature(base.f, changed.f), c.same) << c.what;
    EXPECT_EQ(wok::same_signature(changed.f, base.f), c.same) << c.what;
  }
}

TEST(RecordedKey, ACopyOfAFragmentHasNoKey) {
  Program p;
  p.f.recorded_key.set({1, 2});
  ASSERT_NE(p.f.recorded_key.get(), nullptr);
  Fragment copy = p.f;
  EXPECT_EQ(copy.recorded_key.get(), nullptr) << "a copy may be edited, so it never carries the key";
  Fragment assigned;
  assigned.recorded_key.set({3, 4});
  assigned = p.f;
  EXPECT_EQ(assigned.recorded_key.get(), nullptr);
  EXPECT_TRUE(wok::same_signature(copy, p.f));
}

class RecordedKeyPlans : public ::testing::Test {
 protected:
  void SetUp() override {
    if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
    wok::set_backend(wok::Backend::kJit);
  }
};

TEST_F(RecordedKeyPlans, ARetracedProgramFindsItsPlanByTheRecordedKey) {
  Tensor a = wok::rand({64, 8}, 11);
  auto step = [&](const Tensor& x, float lr) { return wok::sum((x * lr + 1.0f) * x, {1}); };
  step(a, 0.5f).to_vector<float>();
  wok::reset_stats();
  for (int i = 0; i < 5; ++i) step(a, 0.1f * static_cast<float>(i)).to_vector<float>();
  EXPECT_EQ(wok::stats().plan_cache_misses, 0);
  EXPECT_EQ(wok::stats().plan_cache_hits, 5);
  EXPECT_EQ(wok::stats().plan_cache_recorded_hits, 5) << "no signature string was built for a retrace";
}

TEST_F(RecordedKeyPlans, AChangedProgramIsNeverTakenForTheRecordedOne) {
  Tensor a = wok::rand({64, 8}, 12);
  Tensor b = wok::rand({64, 9}, 13);
  auto step = [](const Tensor& x, std::vector<int64_t> axes) { return wok::sum(wok::exp(x) * x, axes); };
  std::vector<float> first = step(a, {1}).to_vector<float>();
  wok::reset_stats();
  // Other sizes, another attribute, another dtype: each a plan of its own.
  std::vector<float> wider = step(b, {1}).to_vector<float>();
  std::vector<float> other_axis = step(a, {0}).to_vector<float>();
  std::vector<double> wide_dtype = step(a.astype(DType::kFloat64), {1}).to_vector<double>();
  EXPECT_EQ(wok::stats().plan_cache_recorded_hits, 0);
  EXPECT_EQ(wider.size(), 64u);
  EXPECT_EQ(other_axis.size(), 8u);
  ASSERT_EQ(wide_dtype.size(), 64u);
  for (size_t i = 0; i < first.size(); ++i) EXPECT_NEAR(wide_dtype[i], first[i], 1e-4 * std::abs(first[i]) + 1e-5);
  // And each finds its own plan again.
  EXPECT_EQ(step(b, {1}).to_vector<float>(), wider);
  EXPECT_EQ(step(a, {0}).to_vector<float>(), other_axis);
  EXPECT_EQ(wok::stats().plan_cache_recorded_hits, 2);
}

}  // namespace
