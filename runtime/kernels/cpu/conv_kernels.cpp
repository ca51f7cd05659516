// Precompiled kernels of conv2d and conv_transpose2d, float32 and float64.
//
// conv2d: per image and group, the patch matrix (Note [Convolution
// patches] in runtime/conv_geometry.h) is copied from the image's phase
// planes to a scratch buffer and multiplied by the group's weights with the
// blocked GEMM of gemm_blocked.h; a 1x1 stride-1 convolution multiplies the
// image itself.
// Depthwise convolutions (one input channel per group) are not GEMM-shaped
// and have their own loop (Note [Depthwise convolution]).
//
// conv_transpose2d: per image and group, the columns W_g^T @ x_g
// ([O/g * KH * KW, H * W]) are scattered and added into the output
// ("col2im"), each output channel by one thread.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "wok/runtime/conv_geometry.h"
#include "wok/runtime/error.h"
#include "wok/runtime/kernels/cpu/elementwise_rules.h"
#include "wok/runtime/kernels/cpu/gemm_blocked.h"
#include "wok/runtime/kernels/cpu/isa.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/storage.h"
#include "wok/runtime/thread_pool.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

// Note [Depthwise convolution]
// One input channel per group: each output plane is a sum of KH * KW
// scaled windows of its input plane, which is bandwidth-bound (a few
// multiply-adds per element), not GEMM-shaped. The input plane is
// prepared once (padded, phase-split: Note [Phase planes] in
// runtime/conv_geometry.h) into a buffer in L1 or L2, where every tap is a
// window at a fixed offset; the output is accumulated in rows of wq
// columns (the columns past OW are computed and dropped), so each tap is
// one contiguous multiply-add loop over the whole plane, which the
// compiler vectorizes. Each prepared plane serves the `o / c` output
// channels of its input channel.
// One register of this ISA (GCC's vector extension).
constexpr int kVecBytes = gemm_blocked::kVecBytes;
typedef float FloatVec __attribute__((vector_size(kVecBytes)));
typedef double DoubleVec __attribute__((vector_size(kVecBytes)));

template <typename T>
void depthwise(const ConvGeometry& g, const T* x, const T* w, T* out) {
  // Outputs accumulated in registers over all taps: kAcc vectors, enough
  // independent chains to hide the adds' latency.
  using V = std::conditional_t<std::is_same_v<T, float>, FloatVec, DoubleVec>;
  constexpr int64_t kLanes = kVecBytes / static_cast<int64_t>(sizeof(T));
  constexpr int kAcc = 8;
  constexpr int64_t kChunk = kAcc * kLanes;
  const int64_t mult = g.o / g.c, plane = g.h * g.w, oplane = g.oh * g.ow;
  const ConvPhasePlanes pp = ConvPhasePlanes::of(g);
  const int64_t taps = g.kh * g.kw;
  const int64_t span = (g.oh * pp.wq + kChunk - 1) / kChunk * kChunk;  // the accumulated rows, whole chunks
  const int64_t planes_size = g.sh * g.sw * pp.plane_elements();
  const int64_t work = mult * oplane * taps;
  parallel_for(g.n * g.c, std::max<int64_t>(1, (1 << 17) / std::max<int64_t>(work, 1)), [&](int64_t b, int64_t e) {
    // The last chunk reads up to kChunk past the end of the last plane.
    ScratchBuffer<T> buffer(planes_size + kChunk + span);
    T* planes = buffer.get();
    T* acc = planes + planes_size + kChunk;
    std::fill(planes + planes_size, planes + planes_size + kChunk, T(0));
    const int64_t chunks = span / kChunk;
    const int64_t prefetch_step = (plane * static_cast<int64_t>(sizeof(T)) / chunks + 63) / 64 * 64;
    for (int64_t p = b; p < e; ++p) {
      const int64_t n = p / g.c, ic = p % g.c;
      prepare_conv_image(g, pp, x + (n * g.c + ic) * plane, planes, 1);
      // The next input plane is fetched while this one is computed, a few
      // lines per chunk: the computation runs from L1, and reading the
      // next plane only when preparing it would leave the memory idle
      // meanwhile.
      const char* next = p + 1 < e ? reinterpret_cast<const char*>(x + (p + 1) * plane) : nullptr;
      for (int64_t j = 0; j < mult; ++j) {
        const int64_t oc = ic * mult + j;
        const T* wk = w + oc * taps;
        for (int64_t i0 = 0; i0 < span; i0 += kChunk) {
          if (next && j == 0)
            for (int64_t off = i0 / kChunk * prefetch_step; off < (i0 / kChunk + 1) * prefetch_step; off += 64)
              if (off < plane * static_cast<int64_t>(sizeof(T))) __builtin_prefetch(next + off);
          V a[kAcc] = {};
          for (int64_t t = 0; t < taps; ++t) {
            const T wv = wk[t];
            const T* src = planes + pp.row_offset[static_cast<size_t>(t)] + i0;
#pragma GCC unroll 16
            for (int v = 0; v < kAcc; ++v) {
              V x;  // an unaligned load
              std::memcpy(&x, src + v * kLanes, sizeof(V));
              a[v] += wv * x;
            }
          }
#pragma GCC unroll 16
          for (int v = 0; v < kAcc; ++v) std::memcpy(acc + i0 + v * kLanes, &a[v], sizeof(V));
        }
        T* __restrict o = out + (n * g.o + oc) * oplane;
        for (int64_t oh = 0; oh < g.oh; ++oh)
          for (int64_t ow = 0; ow < g.ow; ++ow) o[oh * g.ow + ow] = acc[oh * pp.wq + ow];
      }
    }
  });
}

template <typename T>
void conv2d_typed(const ConvGeometry& g, const T* x, const T* w, T* out) {
  if (g.depthwise()) return depthwise(g, x, w, out);
  const int64_t cg = g.c_per_group(), og = g.o_per_group(), k = g.k(), cols = g.oh * g.ow;
  const int64_t plane = g.h * g.w;
  const ConvPhasePlanes pp = ConvPhasePlanes::of(g);
  ScratchBuffer<T> patches(g.pointwise() ? 0 : k * cols + pp.elements(g));
  T* pm = patches.get();
  T* prepared = pm + k * cols;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const T* xg = x + (n * g.c + gi * cg) * plane;
      const T* b = xg;
      if (!g.pointwise()) {
        // Row r of the patch matrix is a window of the prepared image
        // (Note [Phase planes]): one copy of OW elements per output row.
        prepare_conv_image(g, pp, xg, prepared);
        parallel_for(k, std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(cols, 1)), [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) {
            const T* src = prepared + pp.row_offset[static_cast<size_t>(r)];
            for (int64_t oh = 0; oh < g.oh; ++oh)
              std::memcpy(pm + r * cols + oh * g.ow, src + oh * pp.wq, static_cast<size_t>(g.ow) * sizeof(T));
          }
        });
        b = pm;
      }
      gemm_blocked::gemm_rowmajor<T>(og, cols, k, w + gi * og * k, b, out + (n * g.o + gi * og) * cols);
    }
}

template <typename T>
void conv_transpose2d_typed(const ConvGeometry& g, const T* x, const T* w, T* out) {
  const int64_t cg = g.c_per_group(), og = g.o_per_group(), kk = g.kh * g.kw;
  const int64_t rows = og * kk, cols = g.h * g.w, oplane = g.oh * g.ow;
  ScratchBuffer<T> wt(rows * cg);  // the group's weights, transposed: [og * kk, cg]
  ScratchBuffer<T> colbuf(rows * cols);
  std::memset(out, 0, static_cast<size_t>(g.n * g.o * oplane) * sizeof(T));
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const T* wg = w + gi * cg * rows;  // [cg, og * kk]
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t r = 0; r < rows; ++r) wt.get()[r * cg + c] = wg[c * rows + r];
      gemm_blocked::gemm_rowmajor<T>(rows, cols, cg, wt.get(), x + (n * g.c + gi * cg) * cols, colbuf.get());
      T* og_out = out + (n * g.o + gi * og) * oplane;
      parallel_for(og, 1, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o)
          for (int64_t kh = 0; kh < g.kh; ++kh)
            for (int64_t kw = 0; kw < g.kw; ++kw) {
              const T* col = colbuf.get() + ((o * g.kh + kh) * g.kw + kw) * cols;
              T* dst = og_out + o * oplane;
              for (int64_t ih = 0; ih < g.h; ++ih) {
                const int64_t oh = ih * g.sh - g.pt + kh * g.dh;
                if (oh < 0 || oh >= g.oh) continue;
                for (int64_t iw = 0; iw < g.w; ++iw) {
                  const int64_t ow = iw * g.sw - g.pl + kw * g.dw;
                  if (ow >= 0 && ow < g.ow) dst[oh * g.ow + ow] += col[ih * g.w + iw];
                }
              }
            }
      });
    }
}

template <bool kTranspose>
void conv_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& w = ctx.inputs[1];
  const TensorRef& out = ctx.outputs[0];
  const ConvGeometry g = kTranspose ? ConvGeometry::conv_transpose2d(*x.shape, *w.shape, ctx.attrs)
                                    : ConvGeometry::conv2d(*x.shape, *w.shape, ctx.attrs);
  if (out.numel() == 0) return;
  visit_dtype(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      if (x.numel() == 0 || w.numel() == 0) {
        std::memset(out.data, 0, static_cast<size_t>(out.numel()) * sizeof(T));
        return;
      }
      if constexpr (kTranspose) conv_transpose2d_typed<T>(g, x.as<const T>(), w.as<const T>(), out.as<T>());
      else conv2d_typed<T>(g, x.as<const T>(), w.as<const T>(), out.as<T>());
    } else {
      unsupported_dtype(ctx, x.dtype);
    }
  });
}

}  // namespace

void register_conv_kernels(OpRegistry& r) {
  r.add_kernel("conv2d", DeviceType::kCPU, conv_kernel<false>);
  r.add_kernel("conv1d", DeviceType::kCPU, conv_kernel<false>);
  r.add_kernel("conv_transpose2d", DeviceType::kCPU, conv_kernel<true>);
}

}  // namespace wok::cpu::WOK_ISA_NS
