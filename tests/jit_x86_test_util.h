// Helpers of the x86 generator's tests: the kernels the JIT plans for a
// tensor, as the generator sees them, and their listings.
#pragma once

#include <gtest/gtest.h>
#include <wok/wok.h>

#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "wok/jit/x86/x86_codegen.h"
#include "wok/runtime/compute_program.h"

namespace wt {

// The specs of the row kernels the JIT plans for `out`, in their compute
// dtypes: what the generator schedules (Note [Programs in their compute
// dtypes] in runtime/compute_program.h).
inline std::vector<wok::jit::FusedKernelSpec> compute_row_kernel_specs(const wok::Tensor& out) {
  std::vector<wok::jit::FusedKernelSpec> specs = row_kernel_specs(out);
  for (wok::jit::FusedKernelSpec& s : specs)
    if (wok::has_storage_dtype(s.program)) s.program = wok::compute_program(s.program);
  return specs;
}

// The listings of the kernels of `kind` the JIT plans for `out`, generated
// for `isa`.
inline std::vector<std::string> kernel_listings(const wok::Tensor& out, wok::jit::KernelKind kind, wok::CpuIsa isa) {
  std::vector<std::string> listings;
  for (const wok::jit::FusedKernelSpec& spec : kernel_specs(out, kind)) {
    absl::StatusOr<wok::jit::x86::MachineCode> code = wok::jit::x86::generate_x86(spec, isa, true);
    EXPECT_TRUE(code.ok()) << code.status();
    if (code.ok()) listings.push_back(code->listing);
  }
  return listings;
}

}  // namespace wt
