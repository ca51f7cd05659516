// Loops of the precompiled CUDA kernels: the formula kernels of the
// elementwise ops (formula_kernel.cu.in) and full and the strided copies of
// runtime/kernels/cuda/misc.cu. The host (runtime/cuda/ew_args.h)
// collapses the iteration space like the CPU kernels do and passes it in
// EwArgs; the math comes from wok_device.cuh, the same functions the JIT's
// generated kernels call.
#ifndef WOK_ELEMENTWISE_CUH
#define WOK_ELEMENTWISE_CUH

#include "wok_device.cuh"

namespace wok {

constexpr int kEwMaxInputs = 3;

// Must match struct EwArgs in runtime/cuda/ew_args.h.
struct EwArgs {
  void* out;
  const void* in[kEwMaxInputs];
  i64 n;                               // output elements
  i32 rank;                            // 1..kMaxRank
  i32 flat;                            // rank 1, strides 0 or 1: offset = i * stride
  i32 pad[2];
  i64 shape[kMaxRank];
  i64 stride[kEwMaxInputs + 1][kMaxRank];  // inputs, then the output (copies only)
  u64 attr[2];                         // attribute values as param slots (full)
};

// Offsets of row-major element i over a runtime rank.
template <typename I, int N>
WOK_DEVICE void ew_offsets(const EwArgs& a, I i, I (&off)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
  if constexpr (sizeof(I) == 4) {
#pragma unroll
    for (int d = kMaxRank - 1; d > 0; --d) {
      if (d >= a.rank) continue;
      const I size = static_cast<I>(a.shape[d]);
      const I q = i / size;
      const I r = i - q * size;
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += r * static_cast<I>(a.stride[k][d]);
      i = q;
    }
  } else {  // beyond 2^31 elements: rare, kept small
    for (int d = a.rank - 1; d > 0; --d) {
      const I q = i / a.shape[d];
      const I r = i - q * a.shape[d];
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += r * a.stride[k][d];
      i = q;
    }
  }
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] += i * static_cast<I>(a.stride[k][0]);
}

// Offsets of element i for every input: i * stride when flat, else from
// the shape, in 32-bit arithmetic when n allows.
template <int N>
WOK_DEVICE void ew_input_offsets(const EwArgs& a, i64 i, i64 (&off)[N]) {
  if (a.flat) {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = i * a.stride[k][0];
  } else if (a.n <= kInt32Max) {
    int o[N];
    ew_offsets<int, N>(a, static_cast<int>(i), o);
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = o[k];
  } else {
    ew_offsets<i64, N>(a, i, off);
  }
}

template <int... K>
struct Seq {};
template <int N, int... K>
struct MakeSeq : MakeSeq<N - 1, N - 1, K...> {};
template <int... K>
struct MakeSeq<0, K...> {
  using type = Seq<K...>;
};

// The op's code appears once per kernel: each copy of a transcendental
// costs compile time (NVRTC's, at first use, for a formula kernel) and
// binary size. (The JIT's kernels, few and hot, add a vectorized path.)
template <typename Out, typename F, typename... Ins, int... K>
WOK_DEVICE void ew_apply_impl(const EwArgs& a, F f, Seq<K...>) {
  constexpr int N = sizeof...(Ins) > 0 ? sizeof...(Ins) : 1;
  Out* out = static_cast<Out*>(a.out);
  for (i64 i = global_thread(); i < a.n; i += global_threads()) {
    i64 off[N];
    ew_input_offsets<N>(a, i, off);
    out[i] = f(static_cast<const Ins*>(a.in[K])[off[K]]...);
  }
}

// out[i] = f(in0[.], ..., in(N-1)[.]) for every i; Ins are the inputs'
// element types.
template <typename Out, typename... Ins, typename F>
WOK_DEVICE void ew_apply(const EwArgs& a, F f) {
  ew_apply_impl<Out, F, Ins...>(a, f, typename MakeSeq<sizeof...(Ins)>::type{});
}

}  // namespace wok

#endif  // WOK_ELEMENTWISE_CUH
