// Precompiled CUDA kernels of the reductions, three per (op, input dtype):
// wok_<op>_<dtype>_block, _thread (the two loops of templates/
// wok_reduce.cuh) and _merge (combines split partial results). Accumulator
// and result types are the CPU kernels'.
#include "wok_reduce.cuh"

using namespace wok;

#define WOK_REDUCTION(name, In, ...)                                                             \
  extern "C" __global__ void __launch_bounds__(256) wok_##name##_##In##_block(const RedArgs a) { \
    reduce_block<__VA_ARGS__, In>(a);                                                            \
  }                                                                                              \
  extern "C" __global__ void __launch_bounds__(256) wok_##name##_##In##_thread(const RedArgs a) { \
    reduce_thread<__VA_ARGS__, In>(a);                                                           \
  }                                                                                              \
  extern "C" __global__ void __launch_bounds__(256) wok_##name##_##In##_merge(const RedArgs a) { \
    reduce_merge<__VA_ARGS__>(a);                                                                \
  }

// Integers and bool accumulate in int64 (wrapping); floats in their type.
WOK_REDUCTION(sum, b8, SumOp<b8, i64, i64>)
WOK_REDUCTION(sum, i32, SumOp<i32, i64, i64>)
WOK_REDUCTION(sum, i64, SumOp<i64, i64, i64>)
WOK_REDUCTION(sum, f32, SumOp<f32, f32, f32>)
WOK_REDUCTION(sum, f64, SumOp<f64, f64, f64>)
// bool and int32 sum exactly in int64, int64 in double; floats in their type.
WOK_REDUCTION(mean, b8, MeanOp<b8, i64, f32>)
WOK_REDUCTION(mean, i32, MeanOp<i32, i64, f64>)
WOK_REDUCTION(mean, i64, MeanOp<i64, f64, f64>)
WOK_REDUCTION(mean, f32, MeanOp<f32, f32, f32>)
WOK_REDUCTION(mean, f64, MeanOp<f64, f64, f64>)
WOK_REDUCTION(prod, b8, ProdOp<b8, i64>)
WOK_REDUCTION(prod, i32, ProdOp<i32, i64>)
WOK_REDUCTION(prod, i64, ProdOp<i64, i64>)
WOK_REDUCTION(prod, f32, ProdOp<f32, f32>)
WOK_REDUCTION(prod, f64, ProdOp<f64, f64>)
#define WOK_MAXMIN(T)                            \
  WOK_REDUCTION(max, T, MaxMinOp<T, true>)       \
  WOK_REDUCTION(min, T, MaxMinOp<T, false>)      \
  WOK_REDUCTION(argmax, T, ArgmaxOp<T>)
WOK_MAXMIN(b8)
WOK_MAXMIN(i32)
WOK_MAXMIN(i64)
WOK_MAXMIN(f32)
WOK_MAXMIN(f64)
