#include "wok/runtime/conv_geometry.h"

#include <string>

#include "wok/runtime/error.h"

namespace wok {

namespace {

std::string ints_str(const std::vector<int64_t>& v) { return shape_str(v); }

// Reads the attributes both convolutions share and checks them.
void read_common(ConvGeometry& g, const Shape& x, const Shape& weight, const Attrs& a, int spatial) {
  const size_t rank = static_cast<size_t>(spatial) + 2;
  const char* layout = spatial == 1 ? "[N, C, L]" : "[N, C, H, W]";
  if (x.size() != rank) throw ShapeError(std::string("input must be ") + layout + ", got rank " + std::to_string(x.size()));
  if (weight.size() != rank)
    throw ShapeError("weight must have rank " + std::to_string(rank) + ", got rank " + std::to_string(weight.size()));
  const auto& stride = a.get_ints("stride");
  const auto& padding = a.get_ints("padding");
  const auto& dilation = a.get_ints("dilation");
  auto check = [](const char* what, const std::vector<int64_t>& v, size_t count, int64_t min, const char* form) {
    bool ok = v.size() == count;
    for (int64_t x : v) ok = ok && x >= min;
    if (!ok) throw ShapeError(std::string(what) + " must be " + form + ", got " + ints_str(v));
  };
  const size_t dims = rank - 2;
  check("stride", stride, dims, 1, spatial == 1 ? "one positive value" : "two positive values");
  check("dilation", dilation, dims, 1, spatial == 1 ? "one positive value" : "two positive values");
  check("padding", padding, 2 * dims, 0,
        spatial == 1 ? "two values >= 0 (left, right)" : "four values >= 0 (top, left, bottom, right)");
  g.spatial = spatial;
  g.groups = a.get_int("groups");
  if (g.groups < 1) throw ShapeError("groups must be positive, got " + std::to_string(g.groups));
  g.n = x[0];
  g.c = x[1];
  g.h = spatial == 1 ? 1 : x[2];
  g.w = x[rank - 1];
  g.kh = spatial == 1 ? 1 : weight[2];
  g.kw = weight[rank - 1];
  if (g.kh < 1 || g.kw < 1) throw ShapeError("the kernel " + shape_str(weight) + " is empty");
  if (spatial == 1) {
    g.sw = stride[0];
    g.dw = dilation[0];
    g.pl = padding[0];
    g.pr = padding[1];
  } else {
    g.sh = stride[0];
    g.sw = stride[1];
    g.dh = dilation[0];
    g.dw = dilation[1];
    g.pt = padding[0];
    g.pl = padding[1];
    g.pb = padding[2];
    g.pr = padding[3];
  }
  if (g.c % g.groups != 0)
    throw ShapeError("input channels " + std::to_string(g.c) + " are not divisible by groups " +
                     std::to_string(g.groups));
}

}  // namespace

ConvGeometry ConvGeometry::conv2d(const Shape& x, const Shape& weight, const Attrs& a) {
  ConvGeometry g;
  read_common(g, x, weight, a, x.size() == 3 ? 1 : 2);
  g.o = weight[0];
  if (weight[1] * g.groups != g.c)
    throw ShapeError("weight " + shape_str(weight) + " expects " + std::to_string(weight[1] * g.groups) +
                     " input channels (" + std::to_string(weight[1]) + " per group x " + std::to_string(g.groups) +
                     " groups), the input has " + std::to_string(g.c));
  if (g.o % g.groups != 0)
    throw ShapeError("output channels " + std::to_string(g.o) + " are not divisible by groups " +
                     std::to_string(g.groups));
  const int64_t eh = g.dh * (g.kh - 1) + 1, ew = g.dw * (g.kw - 1) + 1;  // the dilated kernel
  const int64_t ph = g.h + g.pt + g.pb, pw = g.w + g.pl + g.pr;
  if (ph < eh || pw < ew)
    throw ShapeError("the kernel (" + std::to_string(eh) + "x" + std::to_string(ew) +
                     " with dilation) is larger than the padded input (" + std::to_string(ph) + "x" +
                     std::to_string(pw) + ")");
  g.oh = (ph - eh) / g.sh + 1;
  g.ow = (pw - ew) / g.sw + 1;
  return g;
}

ConvGeometry ConvGeometry::conv_transpose2d(const Shape& x, const Shape& weight, const Attrs& a) {
  ConvGeometry g;
  read_common(g, x, weight, a, 2);
  if (weight[0] != g.c)
    throw ShapeError("weight " + shape_str(weight) + " expects " + std::to_string(weight[0]) +
                     " input channels, the input has " + std::to_string(g.c));
  g.o = weight[1] * g.groups;
  const auto& op = a.get_ints("output_padding");
  if (op.size() != 2 || op[0] < 0 || op[1] < 0)
    throw ShapeError("output_padding must be two values >= 0, got " + ints_str(op));
  g.oph = op[0];
  g.opw = op[1];
  if ((g.oph >= g.sh && g.oph >= g.dh) || (g.opw >= g.sw && g.opw >= g.dw))
    throw ShapeError("output_padding " + ints_str(op) + " must be smaller than the stride or the dilation");
  g.oh = (g.h - 1) * g.sh - g.pt - g.pb + g.dh * (g.kh - 1) + g.oph + 1;
  g.ow = (g.w - 1) * g.sw - g.pl - g.pr + g.dw * (g.kw - 1) + g.opw + 1;
  if (g.oh < 1 || g.ow < 1)
    throw ShapeError("the output would be " + std::to_string(g.oh) + "x" + std::to_string(g.ow) +
                     ": the padding removes more than the kernel adds");
  return g;
}

ConvPhasePlanes ConvPhasePlanes::of(const ConvGeometry& g) {
  ConvPhasePlanes pp;
  pp.hq = (g.h + g.pt + g.pb + g.sh - 1) / g.sh;
  pp.wq = (g.w + g.pl + g.pr + g.sw - 1) / g.sw;
  for (int64_t ci = 0; ci < g.c_per_group(); ++ci)
    for (int64_t kh = 0; kh < g.kh; ++kh)
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        const int64_t y = kh * g.dh, x = kw * g.dw;
        pp.row_offset.push_back(((ci * g.sh + y % g.sh) * g.sw + x % g.sw) * pp.plane_elements() +
                                (y / g.sh) * pp.wq + x / g.sw);
      }
  return pp;
}

}  // namespace wok
