#include "wok/jit/x86/argmax_emitter.h"

#include <cstdint>
#include <cstring>
#include <limits>

namespace wok::jit::x86 {

namespace {
using Id = ax::Inst::Id;
namespace I = ax::Inst;

// vcmpps predicates.
constexpr int kOrdQ = 0x07;
constexpr int kNleUq = 0x16;  // !(a <= b): a > b, or unordered
}  // namespace

DType argmax_compare_dtype(DType input) { return input == DType::kBool ? DType::kInt32 : input; }

DType argmax_index_dtype(DType input) {
  return VecEmitter::lane_width(input) == 8 ? DType::kInt64 : DType::kInt32;
}

uint64_t argmax_no_index(DType input) {
  return argmax_index_dtype(input) == DType::kInt64 ? static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                                                    : static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
}

ArgmaxAcc ArgmaxEmitter::new_acc() { return {e_.new_vec(ct_), e_.new_vec(it_)}; }

ax::Vec ArgmaxEmitter::identity() {
  uint64_t bits = 0;
  switch (ct_) {
    case DType::kFloat32: {
      float v = -std::numeric_limits<float>::infinity();
      uint32_t b;
      std::memcpy(&b, &v, 4);
      bits = b;
      break;
    }
    case DType::kFloat64: {
      double v = -std::numeric_limits<double>::infinity();
      std::memcpy(&bits, &v, 8);
      break;
    }
    case DType::kInt64: bits = uint64_t{1} << 63; break;
    default: bits = uint64_t{1} << 31; break;
  }
  asmjit::Operand op = e_.const_bits_operand(ct_, bits);
  if (op.isReg()) return op.as<ax::Vec>();
  ax::Vec r = e_.new_vec(ct_);
  e_.cc().vmovups(r, op.as<ax::Mem>());
  return r;
}

void ArgmaxEmitter::reset(const ArgmaxAcc& a) {
  ax::Compiler& cc = e_.cc();
  cc.vmovaps(a.best, identity());
  asmjit::Operand none = e_.const_bits_operand(it_, argmax_no_index(t_));
  if (none.isReg()) cc.vmovaps(a.index, none.as<ax::Vec>());
  else cc.vmovups(a.index, none.as<ax::Mem>());
}

Mask ArgmaxEmitter::beats(VecEmitter& e, const ax::Vec& x, const ax::Vec& best) {
  if (!is_floating(ct_)) return e.cmp(ct_, Cmp::kGt, x, best);
  // x beats best: !(x <= best) (true for a nan x) while best is not nan.
  ax::Compiler& cc = e.cc();
  Id cmp = ct_ == DType::kFloat32 ? I::kIdVcmpps : I::kIdVcmppd;
  Mask m;
  if (e.avx512()) {
    // Two compares and an and: a compare masked by `ord` would make the
    // register allocator keep its destination live across iterations.
    ax::KReg ord = cc.newKq(), above = cc.newKq();
    m.k = cc.newKq();
    cc.emit(cmp, ord, best, best, kOrdQ);
    cc.emit(cmp, above, x, best, kNleUq);
    cc.kandq(m.k, above, ord);
  } else {
    ax::Vec ord = e.new_vec(ct_);
    m.v = e.new_vec(ct_);
    cc.emit(cmp, ord, best, best, kOrdQ);
    cc.emit(cmp, m.v, x, best, kNleUq);
    cc.vandps(m.v, m.v, ord);
  }
  return m;
}

void ArgmaxEmitter::move_where(VecEmitter& e, const Mask& m, const ax::Vec& dst, const ax::Vec& src) {
  const bool wide = VecEmitter::lane_width(ct_) == 8;
  if (e.avx512()) e.cc().k(m.k).emit(wide ? I::kIdVmovapd : I::kIdVmovaps, dst, src);
  else e.cc().emit(wide ? I::kIdVblendvpd : I::kIdVblendvps, dst, dst, src, m.v);
}

void ArgmaxEmitter::step(const ArgmaxAcc& a, const ax::Vec& x, const ax::Vec& index) {
  Mask m = beats(e_, x, a.best);
  move_where(e_, m, a.best, x);
  move_where(e_, m, a.index, index);
}

void ArgmaxEmitter::merge_in(VecEmitter& e, const ArgmaxAcc& a, const ArgmaxAcc& b) {
  // b wins where it beats a, or where neither beats the other (a tie) and
  // its index is smaller.
  Mask a_wins = beats(e, a.best, b.best), b_wins = beats(e, b.best, a.best);
  Mask earlier = e.cmp(it_, Cmp::kLt, b.index, a.index);
  ax::Compiler& cc = e.cc();
  Mask take;
  if (e.avx512()) {
    ax::KReg either = cc.newKq();
    take.k = cc.newKq();
    cc.korq(either, b_wins.k, earlier.k);
    cc.kandnq(take.k, a_wins.k, either);
  } else {
    ax::Vec either = e.new_vec(ct_);
    take.v = e.new_vec(ct_);
    cc.vorps(either, b_wins.v, earlier.v);
    cc.vandnps(take.v, a_wins.v, either);
  }
  move_where(e, take, a.best, b.best);
  move_where(e, take, a.index, b.index);
}

void ArgmaxEmitter::merge(const ArgmaxAcc& a, const ArgmaxAcc& b) { merge_in(e_, a, b); }

// Note [Argmax across lanes]
// Halving the accumulator and merging the halves with beats() and the index
// tie-break costs about 14 instructions per halving, most of them compares
// into k registers; on short rows, where the finish is per few elements,
// that was the kernel's largest cost. The winner is found instead from two
// ordinary lane reductions: the maximum value M (vmax, which drops nans,
// so a lane holding a nan overrides it below), then the smallest index
// among the lanes holding M (== treats +0 and -0 as equal: they tie), or
// among the lanes holding a nan when there is one (a nan beats every
// number). That is the same winner the merges find: the first index of the
// largest value, the first nan above all. Lanes that took no element hold
// the identity and no-index, the largest index, so they win only when
// every lane is such a lane. The winning value reported for split rows is
// M, or a quiet nan: the runtime's combine only compares it.
ArgmaxAcc ArgmaxEmitter::reduce_lanes(const ArgmaxAcc& a) {
  ax::Compiler& cc = e_.cc();
  ax::Vec best = e_.reduce_lanes(ScalarOp::kReduceMax, ct_, a.best);
  Mask cand = e_.cmp(ct_, Cmp::kEq, a.best, best);
  if (is_floating(ct_)) {
    Mask nan = e_.is_nan(ct_, a.best);
    asmjit::Label clean = cc.newLabel();
    if (e_.avx512()) {
      cc.kortestq(nan.k, nan.k);
      cc.jz(clean);
      cc.kmovq(cand.k, nan.k);
    } else {
      cc.vptest(nan.v, nan.v);
      cc.jz(clean);
      cc.vmovaps(cand.v, nan.v);
    }
    cc.vmovaps(best, e_.const_vec(ct_, std::numeric_limits<double>::quiet_NaN()));
    cc.bind(clean);
  }
  ax::Vec none = e_.new_vec(it_);
  asmjit::Operand none_bits = e_.const_bits_operand(it_, argmax_no_index(t_));
  if (none_bits.isReg()) cc.vmovaps(none, none_bits.as<ax::Vec>());
  else cc.vmovups(none, none_bits.as<ax::Mem>());
  ax::Vec index = e_.reduce_lanes(ScalarOp::kReduceMin, it_, e_.blend(it_, cand, a.index, none));
  return {best, index};
}

}  // namespace wok::jit::x86
