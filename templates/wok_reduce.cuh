// Reductions of the precompiled CUDA kernels (runtime/kernels/cuda/
// reduce.cu): sum, mean, prod, max, min, argmax, with the CPU's accumulator
// types and nan rules (runtime/kernels/cpu/reduction_kernels.cpp).
//
// The host collapses the input into kept dims (one output element each)
// and reduced dims, then picks one of two loops:
//   block   one block per (output, split) when the innermost input dim is
//           reduced: threads stride along contiguous memory, then combine
//           in a fixed tree (warp shuffles, then shared memory);
//   thread  one thread per (output, split) otherwise: neighbouring threads
//           read neighbouring outputs' elements, so loads coalesce.
// A long reduction is cut into `splits` chunks whose partial results a
// second kernel merges in chunk order. Chunks depend on the shape only, so
// results are the same on every run.
#ifndef WOK_REDUCE_CUH
#define WOK_REDUCE_CUH

#include "wok_device.cuh"

namespace wok {

// Must match struct RedArgs in runtime/kernels/cuda/cuda_kernels.cpp.
struct RedArgs {
  const void* in;
  void* out;
  void* partial;  // [n_out * splits] when splits > 1
  i64 n_out, n_red, chunk;
  i32 splits, kept_rank, red_rank, pad;
  i64 kept_shape[kMaxRank], kept_stride[kMaxRank];
  i64 red_shape[kMaxRank], red_stride[kMaxRank];
};

template <typename T>
WOK_DEVICE bool is_nan(T x) {
  if constexpr (Traits<T>::kFloat) return x != x;
  else return false;
}
template <typename T>
WOK_DEVICE T lowest() {
  if constexpr (Traits<T>::kFloat) return -from_bits<T>(sizeof(T) == 4 ? 0x7f800000ull : 0x7ff0000000000000ull);
  else if constexpr (Traits<T>::kInt) return sizeof(T) == 4 ? T(kInt32Min) : T(kInt64Min);
  else return false;
}
template <typename T>
WOK_DEVICE T highest() {
  if constexpr (Traits<T>::kFloat) return from_bits<T>(sizeof(T) == 4 ? 0x7f800000ull : 0x7ff0000000000000ull);
  else if constexpr (Traits<T>::kInt) return sizeof(T) == 4 ? T(kInt32Max) : T(kInt64Max);
  else return true;
}

// ---- ops: identity, step (fold in element x at reduction index r), merge
// (a covers earlier indices than b, or ties are broken by index), finish.

template <typename In, typename P_, typename Out_>
struct SumOp {
  using P = P_;
  using Out = Out_;
  static WOK_DEVICE P identity() { return P(0); }
  static WOK_DEVICE P step(P acc, In x, i64) { return add(acc, cast<P>(x)); }
  static WOK_DEVICE P merge(P a, P b) { return add(a, b); }
  static WOK_DEVICE Out finish(P a, i64) { return cast<Out>(a); }
};

// Floats divide in their own type, integers in double; nan over nothing.
template <typename In, typename P_, typename Out_>
struct MeanOp : SumOp<In, P_, Out_> {
  static WOK_DEVICE Out_ finish(P_ a, i64 n) {
    if constexpr (Traits<P_>::kFloat) return cast<Out_>(a / static_cast<P_>(n));
    else return cast<Out_>(static_cast<f64>(a) / static_cast<f64>(n));
  }
};

template <typename In, typename P_>
struct ProdOp {
  using P = P_;
  using Out = P_;
  static WOK_DEVICE P identity() { return P(1); }
  static WOK_DEVICE P step(P acc, In x, i64) { return mul(acc, cast<P>(x)); }
  static WOK_DEVICE P merge(P a, P b) { return mul(a, b); }
  static WOK_DEVICE Out finish(P a, i64) { return a; }
};

template <typename T, bool kMax>
struct MaxMinOp {
  using P = T;
  using Out = T;
  static WOK_DEVICE P identity() { return kMax ? lowest<T>() : highest<T>(); }
  static WOK_DEVICE P step(P acc, T x, i64) { return kMax ? maximum(acc, x) : minimum(acc, x); }
  static WOK_DEVICE P merge(P a, P b) { return kMax ? maximum(a, b) : minimum(a, b); }
  static WOK_DEVICE Out finish(P a, i64) { return a; }
};

template <typename T>
struct ArgP {
  T v;
  i64 i;  // -1: nothing seen yet
};

// The first maximum; nan counts as the maximum (its first occurrence).
template <typename T>
struct ArgmaxOp {
  using P = ArgP<T>;
  using Out = i64;
  static WOK_DEVICE bool better(T x, T best) { return (x > best) | (is_nan(x) & !is_nan(best)); }
  static WOK_DEVICE P identity() { return {T(0), -1}; }
  static WOK_DEVICE P step(P acc, T x, i64 r) { return (acc.i < 0 || better(x, acc.v)) ? P{x, r} : acc; }
  static WOK_DEVICE P merge(P a, P b) {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    if (better(b.v, a.v)) return b;
    if (better(a.v, b.v)) return a;
    return b.i < a.i ? b : a;
  }
  static WOK_DEVICE Out finish(P a, i64) { return a.i; }
};

// ---- warp and block combination ---------------------------------------------------------------

template <typename T>
WOK_DEVICE T shfl_down(T v, int delta) {
  if constexpr (sizeof(T) == 1) return static_cast<T>(__shfl_down_sync(0xffffffffu, static_cast<int>(v), delta));
  else return __shfl_down_sync(0xffffffffu, v, delta);
}
template <typename T>
WOK_DEVICE ArgP<T> shfl_down(ArgP<T> v, int delta) {
  return {shfl_down(v.v, delta), shfl_down(v.i, delta)};
}

// Lane 0 of warp 0 gets the merge of every thread's value (fixed order).
template <class Op>
WOK_DEVICE typename Op::P block_merge(typename Op::P v) {
  using P = typename Op::P;
  __shared__ P warp_results[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    P other = shfl_down(v, d);
    if (lane + d < 32) v = Op::merge(v, other);
  }
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  if (warp == 0) {
    v = lane < warps ? warp_results[lane] : Op::identity();
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
      P other = shfl_down(v, d);
      if (lane + d < 32) v = Op::merge(v, other);
    }
  }
  __syncthreads();  // warp_results is reused by the next output
  return v;
}

// ---- offsets ------------------------------------------------------------------------------------

WOK_DEVICE i64 dims_offset(i64 i, int rank, const i64* shape, const i64* stride) {
  if (rank == 1) return i * stride[0];
  i64 off = 0;
  for (int d = rank - 1; d > 0; --d) {
    const i64 q = i / shape[d];
    off += (i - q * shape[d]) * stride[d];
    i = q;
  }
  return off + i * stride[0];
}

// ---- kernels --------------------------------------------------------------------------------------

template <class Op, typename In>
WOK_DEVICE typename Op::P reduce_range(const RedArgs& a, i64 o, i64 r0, i64 r1, i64 step) {
  const In* in = static_cast<const In*>(a.in) + dims_offset(o, a.kept_rank, a.kept_shape, a.kept_stride);
  typename Op::P acc = Op::identity();
  for (i64 r = r0; r < r1; r += step) acc = Op::step(acc, in[dims_offset(r, a.red_rank, a.red_shape, a.red_stride)], r);
  return acc;
}

template <class Op, typename In>
WOK_DEVICE void store_result(const RedArgs& a, i64 o, i64 s, typename Op::P acc) {
  if (a.splits == 1) static_cast<typename Op::Out*>(a.out)[o] = Op::finish(acc, a.n_red);
  else static_cast<typename Op::P*>(a.partial)[o * a.splits + s] = acc;
}

template <class Op, typename In>
WOK_DEVICE void reduce_block(const RedArgs& a) {
  const i64 groups = a.n_out * a.splits;
  for (i64 g = blockIdx.x; g < groups; g += gridDim.x) {
    const i64 o = g / a.splits, s = g - o * a.splits;
    const i64 r0 = s * a.chunk, r1 = r0 + a.chunk < a.n_red ? r0 + a.chunk : a.n_red;
    typename Op::P acc = block_merge<Op>(reduce_range<Op, In>(a, o, r0 + threadIdx.x, r1, blockDim.x));
    if (threadIdx.x == 0) store_result<Op, In>(a, o, s, acc);
  }
}

template <class Op, typename In>
WOK_DEVICE void reduce_thread(const RedArgs& a) {
  const i64 groups = a.n_out * a.splits;
  for (i64 g = global_thread(); g < groups; g += global_threads()) {
    const i64 s = g / a.n_out, o = g - s * a.n_out;
    const i64 r0 = s * a.chunk, r1 = r0 + a.chunk < a.n_red ? r0 + a.chunk : a.n_red;
    store_result<Op, In>(a, o, s, reduce_range<Op, In>(a, o, r0, r1, 1));
  }
}

template <class Op>
WOK_DEVICE void reduce_merge(const RedArgs& a) {
  const typename Op::P* partial = static_cast<const typename Op::P*>(a.partial);
  for (i64 o = global_thread(); o < a.n_out; o += global_threads()) {
    typename Op::P acc = partial[o * a.splits];
    for (i64 s = 1; s < a.splits; ++s) acc = Op::merge(acc, partial[o * a.splits + s]);
    static_cast<typename Op::Out*>(a.out)[o] = Op::finish(acc, a.n_red);
  }
}

}  // namespace wok

#endif  // WOK_REDUCE_CUH
