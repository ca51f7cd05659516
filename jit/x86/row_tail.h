// The last, partial vector of a row kernel's row (row_codegen.cpp), read and
// written with masked instructions.
//
// Note [Masked row tails]
// A row's last `rem` < lanes columns used to go through stack bounce
// buffers: a byte loop copying each streamed operand in, and each output
// out, per phase. On short rows (softmax over 7 columns: every column is in
// the tail, three phases) those copies were most of the kernel's time, and
// the JIT ran 1.5-5x slower than the precompiled kernels. Masked loads and
// stores touch only the lanes below rem, and masked-off lanes neither fault
// nor are written (AVX-512 k-masks with zeroing; AVX2 vmaskmovps/pd), so the
// tail reads and writes the operand's row in place. Lanes past rem load as
// zero; what is computed on them is discarded exactly as the bounce buffer's
// stale lanes were (reductions blend in their identity, stores skip them),
// so the bits of every result are the same.
//
// Bool operands (one byte per element, widened to int32 lanes), half ones
// (two bytes, widened to float32) and narrow integers (widened to int32;
// uint32 to int64)
// have no masked load that widens on AVX2, so they keep the bounce buffers (on both
// ISAs, for one code path), and their kernels keep the loop for short rows
// (Note [Short rows] in row_codegen.cpp).
//
// The block loop leaves j at len rounded down to a multiple of lanes (a
// power of two), so every phase of every row of a call has the same tail
// len & (lanes - 1): the masks are made once per call, outside the row loop.
#pragma once

#include <map>
#include <set>

#include "wok/jit/x86/vec_emitter.h"

namespace wok::jit::x86 {

class RowTail {
 public:
  // rem: the number of valid lanes, 0 <= rem < lanes (the masks are used
  // only when it is not 0). Every row of a call has the same tail, so the
  // masks are made once per call, at the point of construction; `widths`
  // are the lane widths the kernel's values come in (AVX2 needs a mask
  // vector per width).
  RowTail(VecEmitter& e, const ax::Gp& rem, const std::set<int>& widths);
  const ax::Gp& rem() const { return rem_; }

  // Whether values of t load and store masked (else through a bounce buffer).
  static bool masked(DType t) { return t != DType::kBool && !is_half(t) && !is_widened_int(t); }
  ax::Vec load(DType t, const ax::Mem& m);
  void store(DType t, const ax::Mem& m, const ax::Vec& v);
  // Lanes below rem, on lanes of t.
  Mask valid(DType t);

 private:
  VecEmitter& e_;
  ax::Gp rem_;
  ax::KReg k_;                    // AVX-512: the low rem bits
  std::map<int, ax::Vec> vmask_;  // AVX2: per lane width, lanes < rem all ones
};

}  // namespace wok::jit::x86
