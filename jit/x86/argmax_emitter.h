// Vector argmax for the row and column generators.
//
// Note [Generated argmax]
// The precompiled kernel's answer, which the JIT must reproduce exactly: the
// first index of the maximum, where a nan beats every number (so the first
// nan wins) and equal values (+0 and -0 too) tie, the earlier index winning.
//
// Each accumulator lane holds a best value and its index. A lane sees its
// elements in increasing index order, so one step takes an element only
// when it beats the best strictly (the earlier of two ties stays):
//   beats(x, best) = x > best, or x is nan and best is not.
// Accumulators whose lanes interleave (unrolled ones, lanes of one vector)
// are merged with ties broken by the smaller index.
//
// Indices live in integer lanes as wide as the compared values' (int32 for
// float32, int32 and bool, int64 otherwise), so they share the values'
// masks; 4-byte inputs are therefore limited to rows of kMaxArgmaxIndex32.
// A lane starts at (identity, no-index): the identity (-inf, the integer
// minimum) never beats anything, so a lane that never took an element still
// holds no-index at the end, and only when every element equals the
// identity; the answer is then the first index.
//
// An argmax's result is an int64 index, not a value of the row space: a
// kernel writes it but no instruction of the kernel reads it (fusion keeps
// its consumers out of its group, jit/passes/fusion.cpp), and it does not
// narrow the vector lanes (choose_lanes): in a row kernel it is one scalar
// per row, and a column kernel widens int32 lanes to int64 as it stores
// them. A split row also reports the winning value
// (KernelArgs::partial_values) for the runtime's combine.
#pragma once

#include "wok/jit/x86/vec_emitter.h"

namespace wok::jit::x86 {

// The dtype argmax compares in (bool: its int32 lanes) and that of its
// per-lane indices.
DType argmax_compare_dtype(DType input);
DType argmax_index_dtype(DType input);
// The index of a lane that has taken no element.
uint64_t argmax_no_index(DType input);

// A best value and its index per lane; registers owned by the caller.
struct ArgmaxAcc {
  ax::Vec best, index;
};

// Argmax over vectors of an input dtype `t`, on the lanes of `e`.
class ArgmaxEmitter {
 public:
  ArgmaxEmitter(VecEmitter& e, DType t) : e_(e), t_(t), ct_(argmax_compare_dtype(t)), it_(argmax_index_dtype(t)) {}

  DType index_dtype() const { return it_; }
  ArgmaxAcc new_acc();
  // (identity, no-index) in every lane.
  void reset(const ArgmaxAcc& a);
  // A value that never beats anything (for lanes past the end of a row).
  ax::Vec identity();
  // Lanes where x beats a.best take (x, index).
  void step(const ArgmaxAcc& a, const ax::Vec& x, const ax::Vec& index);
  // a = the better of a and b per lane, ties to the smaller index.
  void merge(const ArgmaxAcc& a, const ArgmaxAcc& b);
  // The winner across the lanes of `a`, in lane 0 of the result (narrower
  // registers); `a` is left as it is.
  ArgmaxAcc reduce_lanes(const ArgmaxAcc& a);

 private:
  Mask beats(VecEmitter& e, const ax::Vec& x, const ax::Vec& best);
  // dst = m ? src : dst, lanes of the values' width.
  void move_where(VecEmitter& e, const Mask& m, const ax::Vec& dst, const ax::Vec& src);
  void merge_in(VecEmitter& e, const ArgmaxAcc& a, const ArgmaxAcc& b);

  VecEmitter& e_;
  DType t_, ct_, it_;
};

}  // namespace wok::jit::x86
