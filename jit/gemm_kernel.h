// The ABI of a generated GEMM micro-kernel (KernelKind::kGemm), shared by
// its generator (jit/x86/gemm_codegen.cpp) and the driver that packs the
// operands and walks the tiles (jit/gemm_driver.cpp).
//
// Note [GEMM micro-kernels]
// A micro-kernel computes one tile of C, tile_rows x tile_cols, over kc
// steps of k: the tile stays in vector registers for the whole k loop, and
// each step broadcasts tile_rows values of A against tile_cols / lanes
// vector loads of B. A is packed (step p holds the tile's rows, p-major);
// B is read rows `ldb` elements apart, so the same kernel reads a packed
// panel (ldb = tile_cols) or, for a few rows of A, the weights in place.
//
// When the tile is finished, its values go to a stack buffer in L1 and a
// loop over its valid rows finishes them: partial sums of earlier k blocks
// are added (kGemmLoadAcc), and either the sum is stored to the
// accumulation buffer (more k blocks follow) or, on the last block
// (kGemmEpilogue), the fused elementwise program runs on it and writes the
// outputs. The output is written once, never read back. Columns past
// `cols` are masked.
//
// The spec of such a kernel (FusedKernelSpec, kind kGemm): input 0 is the
// product (dtype = the accumulation dtype, never loaded); inputs 1.. are
// the epilogue's operands, each [rows, cols] with a row stride and
// broadcast flags {along rows, along columns}; params follow as usual; the
// program's outputs are written, `row_strides` apart.
#pragma once

#include <cstdint>

namespace wok::jit {

inline constexpr int64_t kGemmLoadAcc = 1;   // add the accumulation buffer's partial sums
inline constexpr int64_t kGemmEpilogue = 2;  // last k block: run the program, write the outputs

struct GemmTileArgs {
  const void* a;   // packed A: kc steps of tile_rows values
  const void* b;   // B: kc rows of tile_cols values, ldb elements apart
  int64_t ldb;
  int64_t kc;
  void* acc;       // partial sums of this tile, ldacc elements per row
  int64_t ldacc;
  int64_t rows, cols;  // the valid part of the tile
  int64_t flags;
  void* const* ptrs;           // epilogue operands (inputs 1.., then outputs) at the tile's origin
  const int64_t* row_strides;  // per entry of ptrs, elements
  const uint64_t* params;
};

using GemmTileFn = void (*)(const GemmTileArgs* args);

}  // namespace wok::jit
