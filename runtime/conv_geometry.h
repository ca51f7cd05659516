// The geometry of a 2-D convolution (conv2d, conv_transpose2d) read from
// its operands' shapes and attributes: shared by the shape rules, the
// precompiled kernels and the JIT's implicit-GEMM lowering, so the output
// size is computed in one place.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "wok/runtime/attrs.h"
#include "wok/runtime/shape.h"

namespace wok {

struct ConvGeometry {
  int64_t n = 0;          // batch
  int64_t c = 0, h = 0, w = 0;   // input channels and size
  int64_t o = 0, oh = 0, ow = 0;  // output channels and size
  int64_t kh = 0, kw = 0;
  int64_t sh = 1, sw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;  // padding: top, left, bottom, right
  int64_t dh = 1, dw = 1;
  int64_t oph = 0, opw = 0;  // conv_transpose2d's output_padding
  int64_t groups = 1;
  int spatial = 2;  // conv1d: 1 (h = oh = kh = 1)

  int64_t c_per_group() const { return c / groups; }
  int64_t o_per_group() const { return o / groups; }
  // The depth of each output's sum: a GEMM's k.
  int64_t k() const { return c_per_group() * kh * kw; }
  // One input channel per group: depthwise (with a channel multiplier
  // o / c), which has its own kernel.
  bool depthwise() const { return groups > 1 && c_per_group() == 1; }
  // 1x1, stride 1, no padding: the input is already the GEMM's operand.
  bool pointwise() const {
    return kh == 1 && kw == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && pb == 0 && pr == 0;
  }

  // [N, O, OH, OW], or [N, O, OW] for conv1d.
  Shape output_shape() const { return spatial == 1 ? Shape{n, o, ow} : Shape{n, o, oh, ow}; }

  // conv2d: x [N, C, H, W], weight [O, C / groups, KH, KW]; conv1d: x
  // [N, C, L], weight [O, C / groups, K] (attributes of one spatial dim).
  // Throws wok::ShapeError naming what is wrong.
  static ConvGeometry conv2d(const Shape& x, const Shape& weight, const Attrs& attrs);
  // conv_transpose2d: x [N, C, H, W], weight [C, O / groups, KH, KW].
  static ConvGeometry conv_transpose2d(const Shape& x, const Shape& weight, const Attrs& attrs);
};

// Note [Convolution patches]
// A convolution is a matrix product over patches: row (ci, kh, kw) and
// column (oh, ow) of the patch matrix ("im2col") hold
//   x[ci, oh * sh - pt + kh * dh, ow * sw - pl + kw * dw]
// or 0 in the padding. Both the precompiled kernel (which writes the whole
// matrix for one image) and the JIT's packing (which writes a block of it
// straight into the micro-kernel's strips, never the whole matrix) read
// its rows from the image's phase planes below.

// Note [Phase planes]
// The patch matrix's rows are shifted windows of the padded image, except
// that a stride s > 1 skips columns. Split the padded image into s x s
// phase planes (plane (a, b) holds the padded rows a, a + s, ... and
// columns b, b + s, ...): then row (ci, kh, kw) is a window of one plane,
// element (oh, ow) at row_offset + oh * wq + ow, for every stride and
// dilation. A plane has a row of slack at its end so a window read
// wq columns wide (the depthwise kernel computes whole rows of wq and
// drops the columns past OW) stays inside the buffer.
struct ConvPhasePlanes {
  int64_t hq = 0, wq = 0;           // rows and columns of a plane
  std::vector<int64_t> row_offset;  // per row (ci, kh, kw) of the patch matrix

  int64_t plane_elements() const { return (hq + 1) * wq; }
  // Of one prepared image: the planes of the C / groups channels of a group.
  int64_t elements(const ConvGeometry& g) const { return g.c_per_group() * g.sh * g.sw * plane_elements(); }

  static ConvPhasePlanes of(const ConvGeometry& g);
};

// Writes the phase planes of `channels` channels of `image` (its first
// channel's plane at image[0]) to `out`: their rows [qy_begin, qy_end).
// `static`: the precompiled kernels compile this header once per ISA, and
// an inline template with external linkage would leave the linker free to
// keep the AVX-512 copy for every caller.
template <typename T>
static void prepare_conv_image(const ConvGeometry& g, const ConvPhasePlanes& pp, const T* image, T* out,
                               int64_t channels = -1, int64_t qy_begin = 0, int64_t qy_end = -1) {
  if (channels < 0) channels = g.c_per_group();
  if (qy_end < 0) qy_end = pp.hq + 1;  // every row and the slack
  for (int64_t ci = 0; ci < channels; ++ci)
    for (int64_t a = 0; a < g.sh; ++a)
      for (int64_t b = 0; b < g.sw; ++b) {
        T* plane = out + ((ci * g.sh + a) * g.sw + b) * pp.plane_elements();
        // The plane's columns qx whose image column qx * sw + b - pl is inside.
        const int64_t x0 = b - g.pl;
        const int64_t lo = std::min(pp.wq, x0 >= 0 ? 0 : (-x0 + g.sw - 1) / g.sw);
        const int64_t hi = std::max(lo, std::min(pp.wq, g.w - 1 - x0 < 0 ? 0 : (g.w - 1 - x0) / g.sw + 1));
        for (int64_t qy = qy_begin; qy < qy_end; ++qy) {  // row hq is the slack
          T* dst = plane + qy * pp.wq;
          const int64_t y = qy * g.sh + a - g.pt;
          // Plain loops, not memcpy and memset: rows are short, and the
          // kernels that include this are vectorized for their ISA.
          if (qy == pp.hq || y < 0 || y >= g.h) {
            for (int64_t qx = 0; qx < pp.wq; ++qx) dst[qx] = T(0);
            continue;
          }
          const T* src = image + (ci * g.h + y) * g.w + x0;
          for (int64_t qx = 0; qx < lo; ++qx) dst[qx] = T(0);
          if (g.sw == 1)
            for (int64_t qx = lo; qx < hi; ++qx) dst[qx] = src[qx];
          else
            for (int64_t qx = lo; qx < hi; ++qx) dst[qx] = src[qx * g.sw];
          for (int64_t qx = hi; qx < pp.wq; ++qx) dst[qx] = T(0);
        }
      }
}

}  // namespace wok
