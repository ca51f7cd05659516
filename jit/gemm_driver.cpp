// Note [GEMM blocking]
// GotoBLAS/BLIS order. The output of each batch is cut into pieces, one per
// thread (rows, or columns when there are few rows), and each piece runs on
// its own: for each block of NC columns, for each block of KC steps of k,
// the B block is packed into strips of tile_cols columns (kc x tile_cols,
// sized to stay in L1 while every tile of the strip's column uses it); for
// each block of MC rows the A block is packed into panels of tile_rows rows
// (MC x KC, sized for L2), and the micro-kernel runs over every (strip,
// panel) pair. KC, MC and NC come from the host's cache sizes. Partial sums
// of earlier k blocks live in an output of the accumulation dtype; the last
// block applies the epilogue (Note [GEMM micro-kernels]). A piece that
// reads all of B packs all of B: with one piece per thread, each thread
// packs what it reads and no thread waits for another.
//
// A few rows of A (m <= 16, decoding one token): packing B would cost as
// much as the products, so the kernel reads B where it is (its rows
// contiguous) with a short, wide tile, over the whole of k at once, and the
// threads split the columns. That path is bound by reading B once.
//
// Note [GEMM prologues]
// An elementwise producer of an operand (matmul(x * s, w)) that nothing
// else reads is fused into the GEMM: its program is compiled as an
// ordinary elementwise kernel of rank 2 over the operand's [rows, cols],
// and the driver runs it on each block just before packing that block,
// into a staging buffer that stays in L2. The operand is never written to
// memory whole; the packing reads the staged block as it would the operand.
//
// Packing absorbs the operands' layouts: any row and column strides (a
// transposed operand) and batch offsets (a broadcast batch) are read by the
// packing loops, so no transposed copy is ever made.
#include "wok/jit/gemm_driver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "wok/jit/gemm_packing.h"
#include "wok/runtime/error.h"
#include "wok/runtime/storage.h"
#include "wok/runtime/thread_pool.h"

namespace wok::jit {

namespace {

using namespace gemm_packing;

constexpr int kMaxEntries = 32;
constexpr int64_t kSmallM = 16;               // rows of A read with B in place
constexpr int64_t kMinParallelFlops = 1 << 24;  // below: one thread (waking the pool costs more)

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  return (end && *end == 0 && x > 0) ? x : fallback;
}

struct Blocking {
  int64_t kc, mc, nc;
};

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

Blocking blocking_for(const GemmTile& tile, int64_t size, const GemmLayout& l) {
  const CacheSizes& c = host_cache_sizes();
  Blocking b;
  // A strip of B (kc x tile_cols) of about 1.5 L1: deep enough that the
  // tile's partial sums are stored and loaded rarely, while the strip and
  // the next rows of the A panel still come from L1 and L2 in time
  // (measured on Zen 4: 128 -> 384 is 96 -> 104 GFLOP/s at 1024).
  static const int64_t kc_env = env_int("WOK_GEMM_KC", 0);
  int64_t kc = kc_env ? kc_env : std::clamp<int64_t>(3 * c.l1d / (2 * tile.cols * size), 256, 512);
  if (l.acc_entry < 0 || l.k <= kc) {
    kc = std::max<int64_t>(l.k, 1);
  } else {
    const int64_t blocks = (l.k + kc - 1) / kc;  // equal blocks, none short
    kc = round_up((l.k + blocks - 1) / blocks, 4);
  }
  b.kc = kc;
  // The A block (mc x kc) in half of L2.
  static const int64_t mc_env = env_int("WOK_GEMM_MC", 0);
  int64_t mc = mc_env ? mc_env : c.l2 / (2 * kc * size);
  b.mc = std::max<int64_t>(tile.rows, mc / tile.rows * tile.rows);
  static const int64_t nc_env = env_int("WOK_GEMM_NC", 0);
  int64_t nc = nc_env ? nc_env : std::min<int64_t>(4096, c.l3 / (4 * kc * size));
  b.nc = std::max<int64_t>(tile.cols, nc / tile.cols * tile.cols);
  return b;
}

// One operand: read from memory, or computed block by block by its
// prologue into a scratch buffer (Note [GEMM prologues]).
struct Operand {
  const char* data = nullptr;      // in memory: its base pointer
  const GemmOperandLayout* layout = nullptr;
  const GemmPrologue* prologue = nullptr;
  void* const* ptrs = nullptr;     // the step's pointers (the prologue's inputs)
  const uint64_t* params = nullptr;
};

// A block of an operand: where element (r, c) of the block is.
template <typename T>
struct Block {
  const T* data;
  int64_t rs, cs;
};

// Block [r0, r0 + rows) x [c0, c0 + cols) of batch bi of `op`; a prologue
// writes it to `scratch` (rows x cols, contiguous).
template <typename T>
Block<T> block_of(const Operand& op, int64_t bi, int64_t r0, int64_t c0, int64_t rows, int64_t cols, T* scratch) {
  if (!op.prologue) {
    const GemmOperandLayout& l = *op.layout;
    const T* base = reinterpret_cast<const T*>(op.data) + l.batch_offsets[static_cast<size_t>(bi)];
    return {base + r0 * l.row_stride + c0 * l.col_stride, l.row_stride, l.col_stride};
  }
  const GemmPrologue& p = *op.prologue;
  const int n = static_cast<int>(p.inputs.size());
  void* ptrs[kMaxEntries + 1];
  int64_t strides[2 * (kMaxEntries + 1)];
  for (int i = 0; i < n; ++i) {
    const GemmOperandLayout& in = p.inputs[i];
    const int64_t off = in.batch_offsets[static_cast<size_t>(bi)] + r0 * in.row_stride + c0 * in.col_stride;
    ptrs[i] = static_cast<char*>(op.ptrs[p.first_ptr + i]) +
              off * static_cast<int64_t>(itemsize(p.spec.input_dtypes[i]));
    strides[2 * i] = in.row_stride;
    strides[2 * i + 1] = in.col_stride;
  }
  ptrs[n] = scratch;
  strides[2 * n] = cols;
  strides[2 * n + 1] = 1;
  const int64_t shape[2] = {rows, cols};
  KernelArgs args{ptrs, op.params, shape, strides};
  p.kernel->fn(&args, 0, rows * cols);
  return {scratch, cols, 1};
}

// What every tile of one call shares.
struct Context {
  const FusedKernelSpec& spec;
  const GemmLayout& l;
  GemmTile tile;
  GemmTileFn fn;
  void* const* entries;
  std::vector<int64_t> entry_size;
  std::vector<int64_t> row_strides;
  const uint64_t* params;
  Operand a, b;
  const ConvPhasePlanes* patches = nullptr;  // a convolution's B (Note [Packing patches])
};

// Runs one tile whose top-left element is (i, j) of batch bi.
void run_tile(const Context& c, int64_t bi, int64_t i, int64_t j, const void* a, const void* b, int64_t ldb,
              int64_t kc, int64_t rows, int64_t cols, int64_t flags) {
  void* ptrs[kMaxEntries];
  const int n = static_cast<int>(c.l.epilogue.size());
  for (int e = 0; e < n; ++e) {
    const GemmOperandLayout& o = c.l.epilogue[e];
    const int64_t off = o.batch_offsets[static_cast<size_t>(bi)] + i * o.row_stride + j * o.col_stride;
    ptrs[e] = static_cast<char*>(c.entries[e]) + off * c.entry_size[e];
  }
  GemmTileArgs args{};
  args.a = a;
  args.b = b;
  args.ldb = ldb;
  args.kc = kc;
  // The accumulation buffer, else the first output: where the tile's rows
  // go, which the kernel prefetches.
  const int acc = c.l.acc_entry >= 0 ? c.l.acc_entry : c.spec.num_inputs() - 1;
  args.acc = ptrs[acc];
  args.ldacc = c.l.epilogue[acc].row_stride;
  args.rows = rows;
  args.cols = cols;
  args.flags = flags;
  args.ptrs = ptrs;
  args.row_strides = c.row_strides.data();
  args.params = c.params;
  c.fn(&args);
}

// One piece: rows [i0, i1), columns [j0, j1) of batch bi, on this thread.
// `staging` holds a block computed by a prologue before it is packed.
template <typename T>
void run_piece(const Context& c, const Blocking& bk, int64_t bi, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
               T* apack, T* bpack, T* staging, T* prepared) {
  const GemmLayout& l = c.l;
  const int MR = c.tile.rows, NR = c.tile.cols;
  if (c.patches) {
    // Only the plane rows this piece's output rows read: with the columns
    // split between threads, each prepares its part of the image, not all
    // of it.
    const ConvGeometry& g = *l.b_patches;
    const int64_t oh0 = j0 / g.ow, oh1 = (j1 - 1) / g.ow;
    const int64_t reach = (g.kh - 1) * g.dh / g.sh;
    prepare_conv_image(g, *c.patches, reinterpret_cast<const T*>(c.b.data) + l.b.batch_offsets[static_cast<size_t>(bi)],
                       prepared, -1, oh0, std::min(c.patches->hq, oh1 + reach + 1));
  }
  for (int64_t jc = j0; jc < j1; jc += bk.nc) {
    const int64_t nc = std::min(bk.nc, j1 - jc);
    for (int64_t pc = 0; pc < std::max<int64_t>(l.k, 1); pc += bk.kc) {
      const int64_t kc = std::min(bk.kc, l.k - pc);
      const int64_t flags = (pc > 0 ? kGemmLoadAcc : 0) | (pc + kc >= l.k ? kGemmEpilogue : 0);
      if (c.patches) {
        pack_patches(*l.b_patches, *c.patches, prepared, pc, kc, jc, nc, NR, bpack);
      } else {
        const Block<T> b = block_of<T>(c.b, bi, pc, jc, kc, nc, staging);
        pack_b(b.data, b.rs, b.cs, kc, nc, NR, bpack);
      }
      for (int64_t ic = i0; ic < i1; ic += bk.mc) {
        const int64_t mc = std::min(bk.mc, i1 - ic);
        const Block<T> a = block_of<T>(c.a, bi, ic, pc, mc, kc, staging);
        pack_a(a.data, a.rs, a.cs, mc, kc, MR, apack);
        for (int64_t jr = 0; jr < nc; jr += NR)
          for (int64_t ir = 0; ir < mc; ir += MR)
            run_tile(c, bi, ic + ir, jc + jr, apack + (ir / MR) * kc * MR, bpack + (jr / NR) * kc * NR, NR, kc,
                     std::min<int64_t>(MR, mc - ir), std::min<int64_t>(NR, nc - jr), flags);
      }
    }
  }
}

template <typename T>
void run_blocked(const Context& c) {
  const GemmLayout& l = c.l;
  const int MR = c.tile.rows, NR = c.tile.cols;
  const Blocking bk = blocking_for(c.tile, sizeof(T), l);
  const double flops = 2.0 * static_cast<double>(l.batches) * static_cast<double>(l.m * l.n) * static_cast<double>(l.k);
  const int64_t threads = flops < kMinParallelFlops ? 1 : std::max(1, ThreadPool::global().max_threads());
  // Pieces per batch, and whether they split rows or columns.
  const int64_t per_batch = l.batches >= threads ? 1 : (threads + l.batches - 1) / l.batches;
  const int64_t row_tiles = (l.m + MR - 1) / MR, col_tiles = (l.n + NR - 1) / NR;
  // A piece that splits rows packs all of B, one that splits columns all
  // of A. A convolution's B (the patches) is much larger than its A (the
  // weights): its pieces split columns (measured at 2 threads on
  // [1, 64, 56, 56] 3x3: 1.51 -> 1.25 ms), unless there are only a few
  // column tiles (14 x 14 and 7 x 7 outputs: 7 and 2), where rows balance
  // better (2.0 -> 1.76 ms at 7 x 7).
  const bool split_rows =
      l.convolution ? col_tiles < 8 * per_batch : row_tiles >= 4 * per_batch || row_tiles >= col_tiles;
  const int64_t tiles = split_rows ? row_tiles : col_tiles;
  const int64_t pieces = std::min(per_batch, tiles);
  const int64_t units = l.batches * pieces;
  const int64_t mc_alloc = std::min(bk.mc, round_up(l.m, MR));
  const int64_t nc_alloc = std::min(bk.nc, round_up(l.n, NR));
  const int64_t kc_alloc = std::min(bk.kc, std::max<int64_t>(l.k, 1));
  const bool prologue = c.a.prologue || c.b.prologue;
  auto work = [&](int64_t ub, int64_t ue) {
    // One block for both packed operands (and a prologue's staging), each
    // part on a cache line.
    const int64_t a_elems = round_up(mc_alloc * kc_alloc, 64), b_elems = round_up(kc_alloc * nc_alloc, 64);
    const int64_t staging = prologue ? std::max(mc_alloc, nc_alloc) * kc_alloc : 0;
    const int64_t prepared = c.patches ? c.patches->elements(*l.b_patches) : 0;
    ScratchBuffer<T> pack(a_elems + b_elems + staging + prepared);
    T* apack = pack.get();
    T* bpack = apack + a_elems;
    T* stage = bpack + b_elems;
    T* image = stage + staging;
    for (int64_t u = ub; u < ue; ++u) {
      const int64_t bi = u / pieces, piece = u % pieces;
      const int64_t t0 = tiles * piece / pieces, t1 = tiles * (piece + 1) / pieces;
      if (split_rows) run_piece<T>(c, bk, bi, t0 * MR, std::min(l.m, t1 * MR), 0, l.n, apack, bpack, stage, image);
      else run_piece<T>(c, bk, bi, 0, l.m, t0 * NR, std::min(l.n, t1 * NR), apack, bpack, stage, image);
    }
  };
  if (units == 1 || threads == 1) work(0, units);
  else parallel_for(units, 1, work);
}

// m <= kSmallM (or all of B in L1), rows of b contiguous in memory: A
// packed once per batch, B read in place over all of k; threads split
// batches x groups of column tiles.
template <typename T>
void run_small_m(const Context& c) {
  const GemmLayout& l = c.l;
  const int MR = c.tile.rows, NR = c.tile.cols;
  const int64_t panels = (l.m + MR - 1) / MR;
  const int64_t per_batch = panels * MR * l.k;
  // A packed once per distinct matrix: batches that read the same A (a
  // broadcast batch, a convolution's images) share it.
  std::vector<int64_t> packed_of(static_cast<size_t>(l.batches));
  std::vector<int64_t> distinct;  // batch offsets of A packed so far
  for (int64_t bi = 0; bi < l.batches; ++bi) {
    // A prologue computes A for each batch (its layouts are its inputs').
    const int64_t off = c.a.prologue ? bi : l.a.batch_offsets[static_cast<size_t>(bi)];
    auto at = std::find(distinct.begin(), distinct.end(), off);
    packed_of[static_cast<size_t>(bi)] = at - distinct.begin();
    if (at == distinct.end()) distinct.push_back(off);
  }
  const int64_t n_packed = static_cast<int64_t>(distinct.size());
  ScratchBuffer<T> apack(n_packed * per_batch + (c.a.prologue ? l.m * l.k : 0));
  T* staging = apack.get() + n_packed * per_batch;
  for (int64_t bi = 0, next = 0; bi < l.batches; ++bi) {
    if (packed_of[static_cast<size_t>(bi)] != next) continue;  // packed already
    const Block<T> a = block_of<T>(c.a, bi, 0, 0, l.m, l.k, staging);
    pack_a(a.data, a.rs, a.cs, l.m, l.k, MR, apack.get() + next++ * per_batch);
  }
  const int64_t col_tiles = (l.n + NR - 1) / NR;
  constexpr int64_t kTilesPerUnit = 4;
  const int64_t groups = (col_tiles + kTilesPerUnit - 1) / kTilesPerUnit;
  const double flops = 2.0 * static_cast<double>(l.batches) * static_cast<double>(l.m * l.n) * static_cast<double>(l.k);
  auto work = [&](int64_t ub, int64_t ue) {
    // The kernel loads whole vectors of B's rows: a partial last column
    // tile read in place would read past each row's end, and past the
    // buffer's end on the last row. That tile reads a zero-padded copy.
    const bool partial_tile = l.n % NR != 0;
    ScratchBuffer<T> padded(partial_tile ? l.k * NR : 0);
    for (int64_t u = ub; u < ue; ++u) {
      const int64_t bi = u / groups, g = u % groups;
      const T* b = reinterpret_cast<const T*>(c.b.data) + l.b.batch_offsets[static_cast<size_t>(bi)];
      for (int64_t jt = g * kTilesPerUnit; jt < std::min(col_tiles, (g + 1) * kTilesPerUnit); ++jt) {
        const int64_t j = jt * NR, cols = std::min<int64_t>(NR, l.n - j);
        const T* bt = b + j;
        int64_t ldb = l.b.row_stride;
        if (cols < NR) {
          pack_b(bt, ldb, 1, l.k, cols, NR, padded.get());
          bt = padded.get();
          ldb = NR;
        }
        for (int64_t pi = 0; pi < panels; ++pi)
          run_tile(c, bi, pi * MR, j, apack.get() + packed_of[static_cast<size_t>(bi)] * per_batch + pi * MR * l.k,
                   bt, ldb, l.k, std::min<int64_t>(MR, l.m - pi * MR), cols, kGemmEpilogue);
      }
    }
  };
  const int64_t units = l.batches * groups;
  if (flops < kMinParallelFlops / 4 || units == 1) work(0, units);
  else parallel_for(units, 1, work);
}

}  // namespace

bool gemm_dtype_supported(DType t) { return t == DType::kFloat32 || t == DType::kFloat64; }

GemmTile choose_gemm_tile(DType t, CpuIsa isa, int64_t m, bool convolution) {
  const int lanes = (isa == CpuIsa::kAvx512 ? 64 : 32) / static_cast<int>(itemsize(t));
  // AVX-512 (32 registers): 14 x 2 vectors of accumulators, two of B, the
  // broadcast of A inside the multiply-add. AVX2 (16): 6 x 2, two of B, one
  // broadcast.
  GemmTile tile = isa == CpuIsa::kAvx512 ? GemmTile{14, 2 * lanes} : GemmTile{6, 2 * lanes};
  // A convolution has few rows (output channels: 64, 128, ... per group),
  // which tiles of 8 (AVX-512) or 4 (AVX2) rows divide; measured on Zen 4
  // over the ResNet-50 layers, 8 x 2 beats 14 x 2 by 3-10% (and the 7x7
  // layers by 6%), 4 x 3 beats 6 x 2 by 1-6%.
  if (convolution) tile = isa == CpuIsa::kAvx512 ? GemmTile{8, 2 * lanes} : GemmTile{4, 3 * lanes};
  if (const char* v = std::getenv("WOK_GEMM_TILE"); v && m > kSmallM) {  // tuning: "rows,cols"
    int r = 0, c = 0;
    if (std::sscanf(v, "%d,%d", &r, &c) == 2 && r > 0 && c > 0 && c <= kMaxTileCols && c % lanes == 0)
      return GemmTile{r, c};
  }
  // A few rows: no padded rows, and four vectors per row keep enough
  // multiply-adds in flight while the loads of B dominate. AVX2 has too
  // few registers for 8 rows: from 5 rows its 6 x 2 tile wastes less than
  // 4-row tiles, whose B loads feed too few multiply-adds.
  if (m <= (isa == CpuIsa::kAvx512 ? kSmallM : 4)) {
    const int rows = m <= 1 ? 1 : m <= 2 ? 2 : m <= 4 ? 4 : 8;
    const int vecs = rows <= 2 || (isa == CpuIsa::kAvx512 && rows <= 4) ? 4 : 2;
    tile = GemmTile{rows, vecs * lanes};
  }
  return tile;
}

void run_gemm(const FusedKernelSpec& spec, const GemmLayout& layout, void* const* ptrs, const uint64_t* params,
              const uint64_t* a_params, const uint64_t* b_params, GemmTileFn fn) {
  if (layout.m == 0 || layout.n == 0 || layout.batches == 0) return;
  if (layout.epilogue.size() > static_cast<size_t>(kMaxEntries))
    throw Error("wok JIT: a GEMM epilogue with more than 32 operands (internal error)");
  Context c{spec, layout, GemmTile{spec.tile_rows, spec.tile_cols}, fn, ptrs + layout.first_entry, {}, {}, params,
            {}, {}};
  const int n_in = spec.num_inputs() - 1;
  for (size_t e = 0; e < layout.epilogue.size(); ++e) {
    const int k = static_cast<int>(e);
    const DType t = k < n_in ? spec.input_dtypes[k + 1] : spec.output_dtype(k - n_in);
    c.entry_size.push_back(static_cast<int64_t>(itemsize(t)));
    c.row_strides.push_back(layout.epilogue[e].row_stride);
  }
  auto operand = [&](const GemmOperandLayout& l, int ptr, const std::optional<GemmPrologue>& p, const uint64_t* pp) {
    Operand o;
    o.layout = &l;
    o.ptrs = ptrs;
    if (p) {
      o.prologue = &*p;
      o.params = pp;
    } else {
      o.data = static_cast<const char*>(ptrs[ptr]);
    }
    return o;
  };
  c.a = operand(layout.a, layout.a_ptr, layout.a_prologue, a_params);
  c.b = operand(layout.b, layout.b_ptr, layout.b_prologue, b_params);
  ConvPhasePlanes patches;
  if (layout.b_patches) {
    patches = ConvPhasePlanes::of(*layout.b_patches);
    c.patches = &patches;
  }
  // B read in place: for a few rows of A, when all of B fits in L1
  // (packing it would cost as much as the products), and for a 1x1
  // convolution, whose B is the image itself with its rows contiguous: a
  // convolution has tens to hundreds of rows of A, too few to amortise
  // packing B (measured on Zen 4, [1, 256, 56, 56] -> 64 channels: 91 ->
  // 111 GFLOP/s).
  const bool b_in_l1 = layout.k * layout.n * static_cast<int64_t>(itemsize(spec.input_dtypes[0])) <=
                       host_cache_sizes().l1d;
  const bool small = (layout.m <= kSmallM || b_in_l1 || layout.convolution) && layout.b.col_stride == 1 &&
                     !layout.b_prologue && !layout.b_patches;
  visit_dtype(spec.input_dtypes[0], [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      if (small) run_small_m<T>(c);
      else run_blocked<T>(c);
    } else {
      throw Error("wok JIT: GEMM of a non-float dtype (internal error)");
    }
  });
}

}  // namespace wok::jit
