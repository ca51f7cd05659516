// Compiles a FusedKernelSpec to x86-64 machine code with asmjit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <absl/status/statusor.h>
#include <asmjit/x86.h>

#include "wok/jit/fused_kernel.h"
#include "wok/runtime/cpu_features.h"

namespace wok::jit::x86 {

// The largest iteration rank the generated odometer handles.
inline constexpr int kMaxRank = 8;

// The longest reduction a generated argmax of a 4-byte input handles: its
// indices are int32 lanes (Note [Generated argmax] in jit/x86/argmax_emitter.h),
// with room left for the lanes' positions past the end and the no-index mark.
inline constexpr int64_t kMaxArgmaxIndex32 = (int64_t{1} << 31) - (int64_t{1} << 16);

struct MachineCode {
  // Position-independent: constants are RIP-relative inside the bytes and
  // nothing outside is referenced, so the bytes run wherever they are copied.
  std::vector<uint8_t> bytes;
  std::string listing;  // assembly text, when asked for
};

// Whether the generator handles every instruction of `program` (integer
// pow and some integer reductions are left to the precompiled kernels).
bool can_compile(const ScalarProgram& program);

// Bytes per column of the scratch rows a row kernel of `spec` needs
// (Note [Spilled values] in jit/x86/row_schedule.h); 0 for other kernels.
int row_scratch_bytes_per_column(const FusedKernelSpec& spec);

// Whether the code for `spec` on `isa` uses AVX512-BF16 (Note [bfloat16
// stores] in jit/x86/vec_emitter.h): it has a bfloat16 value and the host
// allows it (host_has_avx512_bf16). Part of the kernel's signature and of
// its cache entry's required features.
bool uses_avx512_bf16(const FusedKernelSpec& spec, CpuIsa isa);

// AVX2 or AVX-512; kBaseline is rejected.
absl::StatusOr<MachineCode> generate_x86(const FusedKernelSpec& spec, CpuIsa isa, bool want_listing);

// The row-kernel generator (jit/x86/row_codegen.cpp).
void generate_row_kernel(const FusedKernelSpec& spec, asmjit::x86::Compiler& cc, bool avx512);
// The column-kernel generator (jit/x86/column_codegen.cpp).
void generate_column_kernel(const FusedKernelSpec& spec, asmjit::x86::Compiler& cc, bool avx512);
// The GEMM micro-kernel generator (jit/x86/gemm_codegen.cpp).
void generate_gemm_kernel(const FusedKernelSpec& spec, asmjit::x86::Compiler& cc, bool avx512);

// Copies code into executable memory (never freed: kernels live as long as
// the process, see Note [Kernel lifetime] in jit/kernel_cache.cpp).
absl::StatusOr<KernelFn> load_machine_code(const std::vector<uint8_t>& bytes);

}  // namespace wok::jit::x86
