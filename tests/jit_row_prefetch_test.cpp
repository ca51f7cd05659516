// Note [Next row prefetch] (jit/x86/row_codegen.cpp): a row kernel that
// walks its row more than once asks for the next row's inputs during its
// last phase; a one-pass kernel, a kernel over one row, and an input that
// is the same for every row do not. Prefetches change no result, so the
// check is on the generated code, for both instruction sets.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "wok/jit/plan.h"
#include "wok/jit/x86/x86_codegen.h"

namespace {

using wok::DType;
using wok::Tensor;

// The listings of the row kernels the JIT plans for `out`.
std::vector<std::string> row_kernel_listings(const Tensor& out, wok::CpuIsa isa) {
  wok::jit::cuda::PendingFragment pf = wt::pending_fragment({out});
  std::shared_ptr<wok::jit::Plan> plan = wok::jit::plan_structure(pf.fragment);
  std::vector<std::string> listings;
  for (const wok::jit::PlanStep& st : plan->steps) {
    if (st.kind != wok::jit::PlanStep::Kind::kKernel || !st.lowered.spec.is_row()) continue;
    absl::StatusOr<wok::jit::x86::MachineCode> code = wok::jit::x86::generate_x86(st.lowered.spec, isa, true);
    EXPECT_TRUE(code.ok()) << code.status();
    if (code.ok()) listings.push_back(code->listing);
  }
  return listings;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(JitRowPrefetch, MultiPassRowKernelsAskForTheNextRow) {
  for (wok::CpuIsa isa : {wok::CpuIsa::kAvx2, wok::CpuIsa::kAvx512}) {
    SCOPED_TRACE(std::string(wok::cpu_isa_name(isa)));
    for (DType t : {DType::kFloat32, DType::kFloat16}) {
      const Tensor x = wok::cast(wok::rand({64, 1000}, 1), t);
      // softmax: max, then exp and its sum, then the division.
      std::vector<std::string> k = row_kernel_listings(wok::softmax(x, 1), isa);
      ASSERT_EQ(k.size(), 1u);
      EXPECT_GT(count(k[0], "prefetcht1"), 0) << k[0];
      // layer_norm with a weight the same for every row: only x is asked for.
      const Tensor w = wok::cast(wok::rand({1000}, 2), t);
      k = row_kernel_listings(wok::layer_norm(x) * w, isa);
      ASSERT_EQ(k.size(), 1u);
      EXPECT_GT(count(k[0], "prefetcht1"), 0) << k[0];
      // One pass over the row: nothing to overlap.
      k = row_kernel_listings(wok::sum(wok::exp(x), {1}), isa);
      ASSERT_EQ(k.size(), 1u);
      EXPECT_EQ(count(k[0], "prefetcht1"), 0) << k[0];
      // One row: no next row.
      k = row_kernel_listings(wok::softmax(wok::cast(wok::rand({1000}, 3), t), 0), isa);
      ASSERT_EQ(k.size(), 1u);
      EXPECT_EQ(count(k[0], "prefetcht1"), 0) << k[0];
    }
  }
}

}  // namespace
