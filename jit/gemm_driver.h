// Runs a generated GEMM kernel over a whole matmul: blocking, packing and
// threads (Note [GEMM blocking] in jit/gemm_driver.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "wok/jit/fused_kernel.h"
#include "wok/jit/gemm_kernel.h"
#include "wok/jit/kernel_cache.h"
#include "wok/runtime/conv_geometry.h"
#include "wok/runtime/cpu_features.h"

namespace wok::jit {

// Where the elements of one operand are, in elements: (i, j) of batch b is
// at batch_offsets[b] + i * row_stride + j * col_stride. Any strides, so a
// transposed or broadcast operand is read in place.
struct GemmOperandLayout {
  int64_t row_stride = 0;
  int64_t col_stride = 0;
  std::vector<int64_t> batch_offsets;  // one per batch of the output
};

// An elementwise producer of an operand fused into its packing (Note
// [GEMM prologues] in jit/gemm_driver.cpp): a generated elementwise kernel
// of rank 2 that computes a block of the operand into a scratch buffer.
struct GemmPrologue {
  FusedKernelSpec spec;
  std::shared_ptr<const CompiledKernel> kernel;  // set when the plan is compiled
  std::vector<int> param_nodes;                  // the `full` node behind each param
  int first_ptr = 0;                             // its inputs in the step's pointers
  std::vector<GemmOperandLayout> inputs;         // over the operand's [rows, cols]
};

struct GemmLayout {
  int64_t m = 0, n = 0, k = 0;  // product [m, n] = a [m, k] @ b [k, n]
  int64_t batches = 1;
  // The operands, each read from memory (layout a or b, pointer a_ptr or
  // b_ptr of the step) or computed by its prologue.
  GemmOperandLayout a, b;
  int a_ptr = 0, b_ptr = 1;
  std::optional<GemmPrologue> a_prologue, b_prologue;
  // A convolution (Note [Convolution as a GEMM] in jit/gemm_lowering.cpp):
  // B is the patch matrix of one image and group, read from the input
  // image by the packing; b.batch_offsets give each batch's first channel.
  std::optional<ConvGeometry> b_patches;
  bool convolution = false;  // its tile is chosen for a convolution's shapes
  int first_entry = 2;  // the step's pointer of the first epilogue entry
  // Per entry of the tile's ptrs: the epilogue's inputs, then its outputs
  // (outputs have col_stride 1). Only col_stride 0 or 1 occur here.
  std::vector<GemmOperandLayout> epilogue;
  // The entry (an output of the accumulation dtype) that holds partial sums
  // between blocks of k, or -1: then k is never blocked.
  int acc_entry = -1;
};

// The register tile the generator builds for this host, dtype and m (a few
// rows of A get a shorter, wider tile; see the .cpp).
struct GemmTile {
  int rows = 0, cols = 0;
};
GemmTile choose_gemm_tile(DType t, CpuIsa isa, int64_t m, bool convolution = false);

// The product's dtypes the GEMM generator handles.
bool gemm_dtype_supported(DType t);

// Computes every output of the fused GEMM. `ptrs` are the step's pointers
// (operands or their prologues' inputs, the epilogue's inputs, outputs);
// `params` the kernel's, `a_params` and `b_params` the prologues'.
void run_gemm(const FusedKernelSpec& spec, const GemmLayout& layout, void* const* ptrs, const uint64_t* params,
              const uint64_t* a_params, const uint64_t* b_params, GemmTileFn fn);

}  // namespace wok::jit
