// Precompiled CUDA kernels of full, the movement ops (one strided copy per
// element size) and matmul. Built by nvcc into a fatbin when CMake finds the
// toolkit, else compiled by NVRTC at first use; launched by
// runtime/cuda/cuda_kernels.cpp. The elementwise ops have no kernels here:
// theirs are rendered from their formulas (runtime/cuda/
// cuda_formula_kernel.cpp).
#include "wok_elementwise.cuh"

using namespace wok;

#define WOK_EACH(M) M(b8) M(i32) M(i64) M(f32) M(f64)
#define WOK_EACH_STORED(M) WOK_EACH(M) M(f16) M(bf16) M(i8) M(u8) M(i16) M(u16) M(u32) M(u64)
#define WOK_EACH_NUMBER(M) M(i32) M(i64) M(f32) M(f64)

// ---- full ------------------------------------------------------------------------------

#define WOK_FULL(T)                                                                  \
  extern "C" __global__ void __launch_bounds__(256) wok_full_##T(const EwArgs a) {   \
    const T v = from_bits<T>(a.attr[0]);                                             \
    ew_apply<T>(a, [v]() { return v; });                                             \
  }
WOK_EACH_STORED(WOK_FULL)

// ---- strided copy: permute, broadcast_to, slice, concat -----------------------------------
// out[offset1(i)] = in[offset0(i)] over the input view's shape; stride[0]
// holds the input's strides, stride[1] the output's (a.in[0] and a.out
// already point at the view's first element).

template <typename U>
__device__ void strided_copy(const EwArgs& a) {
  const U* in = static_cast<const U*>(a.in[0]);
  U* out = static_cast<U*>(a.out);
  const i64 tid = global_thread(), nthreads = global_threads();
  if (a.n <= kInt32Max) {
    for (i64 i = tid; i < a.n; i += nthreads) {
      int off[2];
      ew_offsets<int, 2>(a, static_cast<int>(i), off);
      out[off[1]] = in[off[0]];
    }
  } else {
    for (i64 i = tid; i < a.n; i += nthreads) {
      i64 off[2];
      ew_offsets<i64, 2>(a, i, off);
      out[off[1]] = in[off[0]];
    }
  }
}
extern "C" __global__ void __launch_bounds__(256) wok_copy_1(const EwArgs a) { strided_copy<unsigned char>(a); }
extern "C" __global__ void __launch_bounds__(256) wok_copy_2(const EwArgs a) { strided_copy<u16>(a); }
extern "C" __global__ void __launch_bounds__(256) wok_copy_4(const EwArgs a) { strided_copy<u32>(a); }
extern "C" __global__ void __launch_bounds__(256) wok_copy_8(const EwArgs a) { strided_copy<u64>(a); }

// ---- matmul ------------------------------------------------------------------------------
// C[b] = A[b] x B[b] in 16x16 tiles through shared memory, for every batch
// b of the broadcast batch shape. Integers wrap; floats accumulate in their
// own type, k in order.

// Must match struct MmArgs in runtime/cuda/cuda_kernels.cpp.
struct MmArgs {
  const void* a;
  const void* b;
  void* c;
  i64 m, n, k, batch;
  i32 batch_rank, pad;
  i64 batch_shape[kMaxRank], a_batch_stride[kMaxRank], b_batch_stride[kMaxRank];
};

constexpr int kTile = 16;

template <typename T>
__device__ void matmul_tiles(const MmArgs& p) {
  __shared__ T as[kTile][kTile + 1];
  __shared__ T bs[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const i64 row = static_cast<i64>(blockIdx.y) * kTile + ty, col = static_cast<i64>(blockIdx.x) * kTile + tx;
  for (i64 z = blockIdx.z; z < p.batch; z += gridDim.z) {
    i64 aoff = 0, boff = 0, rest = z;
    for (int d = p.batch_rank - 1; d >= 0; --d) {
      const i64 q = rest / p.batch_shape[d], r = rest - q * p.batch_shape[d];
      aoff += r * p.a_batch_stride[d];
      boff += r * p.b_batch_stride[d];
      rest = q;
    }
    const T* A = static_cast<const T*>(p.a) + aoff;
    const T* B = static_cast<const T*>(p.b) + boff;
    T acc = T(0);
    for (i64 k0 = 0; k0 < p.k; k0 += kTile) {
      as[ty][tx] = (row < p.m && k0 + tx < p.k) ? A[row * p.k + k0 + tx] : T(0);
      bs[ty][tx] = (k0 + ty < p.k && col < p.n) ? B[(k0 + ty) * p.n + col] : T(0);
      __syncthreads();
      const int kmax = p.k - k0 < kTile ? static_cast<int>(p.k - k0) : kTile;
      for (int kk = 0; kk < kmax; ++kk) acc = add(acc, mul(as[ty][kk], bs[kk][tx]));
      __syncthreads();
    }
    if (row < p.m && col < p.n) static_cast<T*>(p.c)[z * p.m * p.n + row * p.n + col] = acc;
  }
}
#define WOK_MATMUL(T) \
  extern "C" __global__ void __launch_bounds__(256) wok_matmul_##T(const MmArgs p) { matmul_tiles<T>(p); }
WOK_EACH_NUMBER(WOK_MATMUL)
