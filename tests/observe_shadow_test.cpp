// Shadow mode: a custom op whose scalar formula (what the JIT fuses) and
// CPU kernel (what the precompiled executor runs) disagree is caught, with
// its fused group and a reproducer; a correct program shows no difference.
#include <cmath>

#include "observe_test_util.h"
#include "wok/cache/fragment_serialization.h"
#include "wok/jit/shadow.h"

namespace {

using wok::EventKind;
using wok::observe::bit;

// out = 2a in the formula, 2a + 0.5 in the CPU kernel: deliberately wrong.
void register_bad_op() {
  static bool done = [] {
    wok::OpDef def;
    def.name = "ObserveShadowBad";
    def.inputs = {"a"};
    def.kind = wok::OpKind::kElementwise;
    def.infer_shape = wok::broadcast_all_inputs;
    def.infer_dtype = [](std::span<const wok::DType> in, const wok::Attrs&) {
      if (in[0] != wok::DType::kFloat32) throw wok::DTypeError("ObserveShadowBad takes float32");
      return std::vector<wok::DType>{in[0]};
    };
    def.formula = [](wok::FormulaBuilder& f) { f.output(0, f.input(0) * 2.0); };
    def.doc = "2a (the CPU kernel says 2a + 0.5)";
    wok::register_op(std::move(def));
    wok::register_kernel("ObserveShadowBad", wok::DeviceType::kCPU, [](const wok::KernelContext& ctx) {
      const float* a = ctx.inputs[0].as<float>();
      float* out = ctx.outputs[0].as<float>();
      for (int64_t i = 0; i < ctx.outputs[0].numel(); ++i) out[i] = 2 * a[i] + 0.5f;
    });
    return true;
  }();
  (void)done;
}

class ShadowOn {
 public:
  ShadowOn() { wok::set_shadow(1); }
  ~ShadowOn() { wok::set_shadow(0); }
};

TEST(ObserveShadow, UlpDistance) {
  EXPECT_EQ(wok::jit::ulp_distance(1.0f, 1.0f), 0);
  EXPECT_EQ(wok::jit::ulp_distance(1.0f, std::nextafter(1.0f, 2.0f)), 1);
  EXPECT_EQ(wok::jit::ulp_distance(-0.0f, 0.0f), 0);
  EXPECT_EQ(wok::jit::ulp_distance(std::nextafter(0.0f, -1.0f), std::nextafter(0.0f, 1.0f)), 2);
  EXPECT_EQ(wok::jit::ulp_distance(1.0, std::nextafter(std::nextafter(1.0, 0.0), 0.0)), 2);
  EXPECT_EQ(wok::jit::ulp_distance(static_cast<double>(NAN), static_cast<double>(NAN)), 0);
  EXPECT_TRUE(std::isinf(wok::jit::ulp_distance(static_cast<double>(NAN), 1.0)));
}

TEST(ObserveShadow, CatchesAWrongKernel) {
  if (!ot::has_jit()) GTEST_SKIP() << "no JIT on this host";
  register_bad_op();
  ot::JitNoDiskCache jit;
  wok::reset_report();
  ShadowOn shadow;
  ot::Collector c(bit(EventKind::kShadow));
  wok::Tensor x = wok::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  wok::Tensor y = wok::call1("ObserveShadowBad", {x}) + 1.0f;  // fused with the add
  std::vector<float> got = y.to_vector<float>();
  c.stop();
  EXPECT_EQ(got[0], 3.0f) << "the JIT's result comes back (the formula's)";
  std::vector<wok::observe::Event> ev = c.events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_TRUE(ev[0].name.starts_with("fused")) << ev[0].name;
  EXPECT_EQ(ev[0].detail, "ObserveShadowBad+add");
  EXPECT_EQ(ev[0].max_abs, 0.5);
  EXPECT_GT(ev[0].max_ulp, 1000);
  EXPECT_TRUE(ev[0].warn);
  // The reproducer rebuilds the fragment.
  auto rebuilt = wok::cache::deserialize_fragment(ev[0].repro);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  EXPECT_EQ((*rebuilt)->fragment.nodes.size(), 3u);  // the op, the constant, the add

  std::string report = wok::report_string();
  EXPECT_NE(report.find("shadow mode"), std::string::npos) << report;
  EXPECT_NE(report.find("BEYOND BOUND"), std::string::npos) << report;
  EXPECT_NE(report.find("group: ObserveShadowBad+add"), std::string::npos) << report;
  EXPECT_NE(report.find("reproducer: F1 "), std::string::npos) << report;
}

TEST(ObserveShadow, CorrectProgramsAgreeBitwise) {
  if (!ot::has_jit()) GTEST_SKIP() << "no JIT on this host";
  ot::JitNoDiskCache jit;
  ShadowOn shadow;
  ot::Collector c(bit(EventKind::kShadow));
  std::vector<float> v(19 * 23);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 37) * 0.37f - 5.0f;
  wok::Tensor x = wok::from_vector(v, {19, 23});
  wok::Tensor y = wok::tanh(wok::exp(x * 0.5f) - x);
  wok::Tensor s = wok::softmax(y);
  wok::eval({y, s});
  (wok::sigmoid(x) * x - wok::erf(x)).to_vector<float>();  // elementwise only
  c.stop();
  std::vector<wok::observe::Event> ev = c.events();
  ASSERT_GE(ev.size(), 2u);
  int elementwise = 0;
  for (const wok::observe::Event& e : ev) elementwise += e.detail.find("sum") == std::string::npos;
  EXPECT_GE(elementwise, 1);
  for (const wok::observe::Event& e : ev) {
    // Elementwise kernels agree bitwise; the softmax row kernel sums in
    // another order than the precompiled reduction, within its bound.
    if (e.detail.find("sum") == std::string::npos) {
      EXPECT_EQ(e.max_ulp, 0) << e.name << " " << e.detail;
    }
    EXPECT_FALSE(e.warn) << e.name << " " << e.detail << " " << e.max_abs;
  }
}

// A fused float16 chain rounds once, the op-by-op replay at every op: the
// difference is reported in float16 ulps, and it is what fusion gains, not
// a defect (within n unit roundoffs for n ops).
TEST(ObserveShadow, HalfKernelsReportTheirErrorInTheirOwnUlps) {
  if (!ot::has_jit()) GTEST_SKIP() << "no JIT on this host";
  ot::JitNoDiskCache jit;
  ShadowOn shadow;
  ot::Collector c(bit(EventKind::kShadow));
  std::vector<wok::half> v;
  for (int i = 0; i < 512; ++i) v.push_back(wok::half(static_cast<float>(i % 41) * 0.1f - 2.0f));
  wok::Tensor y = wok::from_vector(v);
  for (int r = 0; r < 10; ++r) y = y * 1.1 - 0.05;
  (void)y.to_vector<wok::half>();
  c.stop();
  std::vector<wok::observe::Event> ev = c.events();
  ASSERT_EQ(ev.size(), 1u);
  std::printf("shadow: %s max %.0f float16 ulps, max |difference| %g, warn %d\n", ev[0].detail.c_str(),
              ev[0].max_ulp, ev[0].max_abs, static_cast<int>(ev[0].warn));
  EXPECT_GE(ev[0].max_ulp, 1) << "op by op rounds 20 times";
  EXPECT_LT(ev[0].max_ulp, 65536) << "counted in float16's ulps, not float32's";
  EXPECT_FALSE(ev[0].warn) << "within n float16 unit roundoffs: what rounding once gains";
}

TEST(ObserveShadow, EveryNth) {
  if (!ot::has_jit()) GTEST_SKIP() << "no JIT on this host";
  ot::JitNoDiskCache jit;
  wok::set_shadow(3);
  ot::Collector c(bit(EventKind::kShadow));
  for (int i = 0; i < 9; ++i) (wok::from_vector(std::vector<float>{1, 2, 3}, {3}) * 3.0f).to_vector<float>();
  c.stop();
  wok::set_shadow(0);
  EXPECT_EQ(c.events().size(), 3u);
}

}  // namespace
