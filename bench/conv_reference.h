// oneDNN's forward-inference convolution, the reference bench/conv.cpp times
// wok's conv2d against (Debian's libdnnl-dev 2.6, OpenMP runtime).
//
// One DnnlConv is one primitive at one thread count: oneDNN's
// implementations pick their blocking and thread split for
// omp_get_max_threads() when the primitive descriptor is made, so the
// caller sets the thread count (set_dnnl_threads) before constructing one
// and again before running it. Layouts: Layout::kAny lets the primitive
// choose (format_tag::any: 2.6's brgconv kernels take nhwc activations and
// blocked weights on AVX-512), Layout::kNchw fixes the activations to plain nchw (weights stay
// `any`). Weights, bias and the source are reordered into the primitive's
// layouts once, in the constructor; run() executes the primitive alone.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

namespace wok_bench {

inline void set_dnnl_threads(int threads) { omp_set_num_threads(threads); }

inline dnnl::engine& dnnl_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}
inline dnnl::stream& dnnl_stream() {
  static dnnl::stream stream(dnnl_engine());
  return stream;
}

// One 2-D convolution: x [n, c, h, w], weights [o, c / groups, k, k].
struct ConvShape {
  int64_t n, c, h, w, o, k, stride, pad, groups = 1;
  int64_t oh() const { return (h + 2 * pad - k) / stride + 1; }
  int64_t ow() const { return (w + 2 * pad - k) / stride + 1; }
  double flops() const { return 2.0 * n * o * oh() * ow() * (c / groups) * k * k; }
  int64_t src_elems() const { return n * c * h * w; }
  int64_t dst_elems() const { return n * o * oh() * ow(); }
};

enum class Layout { kAny, kNchw };
// What follows the convolution in the same primitive: nothing, relu, or
// dst = relu(conv + dst) (the sum post-op reads dst's previous contents).
enum class PostOp { kNone, kRelu, kSumRelu };

class DnnlConv {
 public:
  // `src_md`, when given, is the source layout (the previous primitive's
  // dst_desc()); the source data is then set with set_src_memory.
  DnnlConv(const ConvShape& s, Layout layout, PostOp post, const float* src, const float* weights, const float* bias,
           const dnnl::memory::desc* src_md = nullptr)
      : shape_(s) {
    using dnnl::memory;
    using tag = memory::format_tag;
    const auto f32 = memory::data_type::f32;
    const tag act = layout == Layout::kAny ? tag::any : tag::nchw;
    const memory::dims src_dims{s.n, s.c, s.h, s.w}, dst_dims{s.n, s.o, s.oh(), s.ow()};
    const memory::dims w_dims = s.groups == 1 ? memory::dims{s.o, s.c, s.k, s.k}
                                              : memory::dims{s.groups, s.o / s.groups, s.c / s.groups, s.k, s.k};
    const memory::desc src_any = src_md ? *src_md : memory::desc(src_dims, f32, act);
    const memory::desc w_any(w_dims, f32, tag::any), dst_any(dst_dims, f32, act);
    const memory::dims strides{s.stride, s.stride}, pads{s.pad, s.pad};
    const auto kind = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::convolution_direct;
    auto desc = bias ? dnnl::convolution_forward::desc(kind, alg, src_any, w_any, memory::desc({s.o}, f32, tag::any),
                                                       dst_any, strides, pads, pads)
                     : dnnl::convolution_forward::desc(kind, alg, src_any, w_any, dst_any, strides, pads, pads);
    dnnl::post_ops ops;
    if (post == PostOp::kSumRelu) ops.append_sum(1.0f);
    if (post != PostOp::kNone) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    pd_ = dnnl::convolution_forward::primitive_desc(desc, attr, dnnl_engine());
    prim_ = dnnl::convolution_forward(pd_);

    weights_ = reordered(
        memory({w_dims, f32, s.groups == 1 ? tag::oihw : tag::goihw}, dnnl_engine(), const_cast<float*>(weights)),
        pd_.weights_desc());
    if (bias) bias_ = reordered(memory({{s.o}, f32, tag::x}, dnnl_engine(), const_cast<float*>(bias)), pd_.bias_desc());
    if (src)
      src_ = reordered(memory({src_dims, f32, tag::nchw}, dnnl_engine(), const_cast<float*>(src)), pd_.src_desc());
    dst_ = memory(pd_.dst_desc(), dnnl_engine());
    std::memset(dst_.get_data_handle(), 0, pd_.dst_desc().get_size());
  }

  void run() {
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst_}};
    if (bias_) args.emplace(DNNL_ARG_BIAS, bias_);
    prim_.execute(dnnl_stream(), args);
    dnnl_stream().wait();
  }

  void set_src_memory(const dnnl::memory& m) { src_ = m; }
  dnnl::memory& dst() { return dst_; }
  dnnl::memory::desc dst_desc() const { return pd_.dst_desc(); }
  const ConvShape& shape() const { return shape_; }
  // The implementation oneDNN chose, e.g. "brg:avx512_core" or "jit:avx512_core".
  std::string impl() const { return pd_.impl_info_str(); }
  std::string dst_layout() const { return layout_name(pd_.dst_desc()); }

  // A copy of `m` in `to`'s layout.
  static dnnl::memory reordered(const dnnl::memory& m, const dnnl::memory::desc& to) {
    dnnl::memory out(to, dnnl_engine());
    dnnl::reorder(m, out).execute(dnnl_stream(), const_cast<dnnl::memory&>(m), out);
    dnnl_stream().wait();
    return out;
  }
  // The destination as plain nchw floats.
  std::vector<float> dst_nchw() const {
    std::vector<float> out(static_cast<size_t>(shape_.dst_elems()));
    const dnnl::memory::dims dims{shape_.n, shape_.o, shape_.oh(), shape_.ow()};
    dnnl::memory plain({dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nchw}, dnnl_engine(), out.data());
    dnnl::reorder(dst_, plain).execute(dnnl_stream(), const_cast<dnnl::memory&>(dst_), plain);
    dnnl_stream().wait();
    return out;
  }

 private:
  // "nchw", "nChw16c", ...: the inner blocks of a blocked layout.
  static std::string layout_name(const dnnl::memory::desc& md) {
    const dnnl_memory_desc_t& d = md.data;
    if (d.format_kind != dnnl_blocked) return "other";
    std::string name;
    const auto& b = d.format_desc.blocking;
    std::vector<int> order(static_cast<size_t>(d.ndims));
    for (int i = 0; i < d.ndims; ++i) order[static_cast<size_t>(i)] = i;
    std::stable_sort(order.begin(), order.end(), [&](int a, int c) { return b.strides[a] > b.strides[c]; });
    bool blocked[DNNL_MAX_NDIMS] = {};
    for (int i = 0; i < b.inner_nblks; ++i) blocked[b.inner_idxs[i]] = true;
    for (int i : order) name += blocked[i] ? static_cast<char>('A' + i) : static_cast<char>('a' + i);
    for (int i = 0; i < b.inner_nblks; ++i)
      name += std::to_string(b.inner_blks[i]) + static_cast<char>('a' + b.inner_idxs[i]);
    // abcd -> nchw
    for (char& ch : name) {
      const char* plain = "nchw";
      const char* upper = "NCHW";
      if (ch >= 'a' && ch <= 'd')
        ch = plain[ch - 'a'];
      else if (ch >= 'A' && ch <= 'D')
        ch = upper[ch - 'A'];
    }
    return name;
  }

  ConvShape shape_;
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward prim_;
  dnnl::memory weights_, bias_, src_, dst_;
};

// oneDNN's side of one benchmark case: its primitives, run in order. For
// the basic block, `residual` (x in the second conv's dst layout) is copied
// into that conv's dst by prep() (untimed), for its sum post-op to read.
struct DnnlRun {
  std::vector<std::unique_ptr<DnnlConv>> convs;
  dnnl::memory residual;
  void prep() {
    if (residual)
      std::memcpy(convs.back()->dst().get_data_handle(), residual.get_data_handle(),
                  convs.back()->dst_desc().get_size());
  }
  void run() {
    for (auto& c : convs) c->run();
  }
  std::string impl() const {
    std::string s;
    for (const auto& c : convs) s += (s.empty() ? "" : ", ") + c->impl() + " -> " + c->dst_layout();
    return s;
  }
};

}  // namespace wok_bench
