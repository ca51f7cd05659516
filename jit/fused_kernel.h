// FusedKernelSpec: one fused group of elementwise ops, as the code
// generators see it. It is shape-generic: it fixes the rank of the
// (collapsed) iteration space, which operands broadcast along which dims,
// the dtypes and the scalar program, but no sizes. Two groups with equal
// specs share one compiled kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wok/runtime/dtype.h"
#include "wok/runtime/scalar_formula.h"

namespace wok::jit {

// Bump when the meaning of a spec or the kernel ABI changes: it is part of
// every kernel signature, so old cached kernels stop matching.
inline constexpr int kKernelAbiVersion = 5;

// Note [Row kernels]
// An elementwise kernel computes each output element on its own. A row
// kernel's last dim is a row that is reduced: the program may hold
// reductions (kReduceSum, ...) along it, and values computed from their
// results. It runs in phases over each row (phase k reads the row again,
// from cache, to feed reductions that need phase k-1's results), so
// softmax, layer_norm and rms_norm read each row from memory once and write
// it once. Outputs are full rows or one value per row (row_scalar).
//
// A column kernel reduces leading rows of a [P, R, C] space: reduction
// results are one value per (p, column); it is vectorized along C.
//
// A GEMM kernel (kGemm) is a matmul micro-kernel with the elementwise
// program that consumes the product fused into its epilogue (Note [GEMM
// micro-kernels] in jit/gemm_kernel.h).
enum class KernelKind : uint8_t { kElementwise = 0, kRow = 1, kColumn = 2, kGemm = 3 };

struct FusedKernelSpec {
  KernelKind kind = KernelKind::kElementwise;
  int rank = 1;  // dims of the iteration space after merging; >= 1
  // Inputs read from memory. broadcast[i][d] is true when input i does not
  // advance along dim d (stride 0); the inner dim's flag decides whether the
  // generated loop loads a vector or a broadcast scalar.
  std::vector<DType> input_dtypes;
  std::vector<std::vector<bool>> input_broadcast;
  // Scalars passed by value at launch (constants of the traced program).
  std::vector<DType> param_dtypes;
  // The fused computation. kInput(i) reads input i for i < inputs, and
  // param (i - inputs) above that. program.outputs are written, contiguous.
  ScalarProgram program;
  // Row and column kernels: output o holds one value per row (per column).
  std::vector<bool> output_row_scalar;
  // GEMM kernels: the register tile, rows x columns of the product.
  int tile_rows = 0;
  int tile_cols = 0;

  bool is_row() const { return kind == KernelKind::kRow; }
  bool is_column() const { return kind == KernelKind::kColumn; }
  bool is_gemm() const { return kind == KernelKind::kGemm; }
  int num_inputs() const { return static_cast<int>(input_dtypes.size()); }
  int num_params() const { return static_cast<int>(param_dtypes.size()); }
  int num_outputs() const { return static_cast<int>(program.outputs.size()); }
  DType output_dtype(int i) const { return program.instrs[program.outputs[i]].dtype; }
  bool inner_broadcast(int input) const { return input_broadcast[input][rank - 1]; }

  // Canonical bytes: everything above, nothing about sizes.
  std::string signature() const;
  // A short readable name, "fused_<first ops>_<key_hex[0, 8)>", for dumps,
  // traces and reports (both code generators' kernels).
  std::string short_name(const std::string& key_hex) const;
  std::string str() const;  // readable, for dumps and errors
};

// What a generated kernel receives at launch.
struct KernelArgs {
  void* const* ptrs;        // inputs then outputs, base pointers
  const uint64_t* params;   // one 8-byte slot per param, value in the low bytes
  const int64_t* shape;     // [rank]
  const int64_t* strides;   // [(inputs + outputs) * rank], in elements
  // Row kernels: the columns of each row to read, [col_begin, col_end).
  // The whole row, except when one long row is cut into chunks whose
  // partial reductions the runtime combines.
  int64_t col_begin = 0;
  int64_t col_end = 0;
  // Split rows: when not null, the row kernel also stores the winning value
  // of each argmax output o in 8-byte slot o (low bytes), which the
  // runtime's combine of the chunks compares.
  void* partial_values = nullptr;
  // Row kernels with scratch rows (Note [Spilled values] in
  // jit/x86/row_schedule.h): a buffer of the kernel's scratch bytes per
  // column times the columns [col_begin, col_end), 64-byte aligned, that no
  // other call uses while this one runs.
  void* row_scratch = nullptr;
};

// Elementwise kernels process flat output elements [begin, end); row
// kernels process rows [begin, end) (flat over the outer dims). The runtime
// splits ranges across threads.
using KernelFn = void (*)(const KernelArgs* args, int64_t begin, int64_t end);

// A param slot holding `value` as `dtype`.
uint64_t param_bits(DType dtype, const Scalar& value);

}  // namespace wok::jit
