#include "wok/frontend/einsum.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"

namespace wok {

namespace {

// Note [Einsum lowering]
// Each dim of each operand gets a label: a letter (0-25 for A-Z, 26-51 for
// a-z, so that sorting the ids sorts them as ASCII does) or, for the dims
// "..." stands for, kEllipsisLabel + i, right-aligned over the widest "...",
// so that those dims broadcast as NumPy's do. Then:
//  1. each operand takes its diagonals (a label repeated within it): the
//     repeated dims are moved last and flattened, and a strided slice picks
//     the diagonal out of them;
//  2. labels found in one operand only and not in the output are summed
//     there, before anything is multiplied;
//  3. while more than one operand is left, the pair whose result has the
//     fewest elements is contracted: labels both hold and something later
//     needs (the output or another operand) are batch dims, labels both
//     hold and nothing later needs are summed by a matmul over
//     [batch..., M, K] x [batch..., K, N]; when M and N are both empty
//     (dot products) a multiply and a sum do it in one row kernel instead,
//     and a pair with nothing to sum is a broadcast multiply;
//  4. the last operand, which holds the output's labels only, is permuted
//     (and broadcast, where a size-1 dim met a larger one) into the output.
// Each matmul operand is arranged as [batch..., rows, cols] without a copy
// where its dims already come in that order, or in [batch..., cols, rows]
// order, which the GEMM reads transposed in place; only other orders are
// permuted into a new tensor.
constexpr int kLetters = 52;
constexpr int kEllipsisLabel = kLetters;

using Labels = std::vector<int>;

char label_char(int l) { return static_cast<char>(l < 26 ? 'A' + l : 'a' + (l - 26)); }

// What errors append: the equation and the operands.
std::string context(std::string_view equation, const std::vector<Tensor>& operands) {
  std::string s = " (equation \"" + std::string(equation) + "\", operands:";
  for (size_t i = 0; i < operands.size(); ++i) {
    s += i ? ", " : " ";
    s += operands[i].defined() ? std::string(dtype_name(operands[i].dtype())) + shape_str(operands[i].shape())
                               : std::string("undefined");
  }
  return s + ")";
}

// One term of the equation: its letters, and where "..." stands, if
// anywhere (an index into `letters`).
struct Term {
  Labels letters;
  int ellipsis = -1;
};

struct Equation {
  std::vector<Term> inputs;
  bool explicit_output = false;
  Term output;
};

Equation parse(std::string_view equation, size_t n_operands, const std::string& ctx) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  auto fail = [&](const std::string& why) { throw ArgumentError("wok::einsum: " + why + ctx); };
  std::string lhs = eq, rhs;
  if (size_t arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
    if (rhs.find("->") != std::string::npos) fail("more than one \"->\"");
  }
  auto parse_term = [&](const std::string& text) {
    Term t;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (c >= 'A' && c <= 'Z') {
        t.letters.push_back(c - 'A');
      } else if (c >= 'a' && c <= 'z') {
        t.letters.push_back(26 + (c - 'a'));
      } else if (c == '.') {
        if (text.compare(i, 3, "...") != 0) fail("a '.' that is not part of \"...\" in term \"" + text + "\"");
        if (t.ellipsis >= 0) fail("more than one \"...\" in term \"" + text + "\"");
        t.ellipsis = static_cast<int>(t.letters.size());
        i += 2;
      } else {
        fail(std::string("'") + c + "' in term \"" + text + "\" is not a letter, \"...\", ',' or \"->\"");
      }
    }
    return t;
  };
  Equation e;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    e.inputs.push_back(parse_term(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (e.inputs.size() != n_operands)
    fail("the equation has " + std::to_string(e.inputs.size()) + " input terms for " + std::to_string(n_operands) +
         " operands");
  if (eq.find("->") != std::string::npos) {
    if (rhs.find(',') != std::string::npos) fail("the output term has a ','");
    e.explicit_output = true;
    e.output = parse_term(rhs);
  }
  return e;
}

// An operand on its way: the tensor and the label of each of its dims.
struct Operand {
  Tensor t;
  Labels labels;
};

int position(const Labels& ls, int l) {
  auto it = std::find(ls.begin(), ls.end(), l);
  return it == ls.end() ? -1 : static_cast<int>(it - ls.begin());
}
bool holds(const Labels& ls, int l) { return position(ls, l) >= 0; }

class Lowering {
 public:
  Lowering(std::string_view equation, const std::vector<Tensor>& operands)
      : ctx_(context(equation, operands)) {
    if (operands.empty()) throw ArgumentError("wok::einsum: needs at least one operand" + ctx_);
    for (const Tensor& t : operands)
      if (!t.defined()) throw Error("wok::einsum: an operand is an undefined wok::Tensor" + ctx_);
    const Equation e = parse(equation, operands.size(), ctx_);
    DType dtype = operands[0].dtype();
    for (const Tensor& t : operands) dtype = promote_types(dtype, t.dtype());
    if (dtype == DType::kBool) dtype = DType::kInt32;  // as matmul does
    dtype_ = dtype;
    label_operands(e, operands);
    choose_output(e);
  }

  Tensor run() {
    for (Operand& o : ops_) {
      take_diagonals(o);
      sum_unneeded(o, nullptr);
    }
    while (ops_.size() > 1) contract_cheapest_pair();
    // What is left holds the output's labels only: each contraction keeps
    // just what the output or the operands left need.
    const Operand& o = ops_[0];
    std::vector<int64_t> perm;
    for (int l : out_) perm.push_back(position(o.labels, l));
    Tensor y = permute(o.t, perm);
    Shape shape;
    for (int l : out_) shape.push_back(size_of(l));
    return broadcast_to(y, shape).astype(dtype_);
  }

 private:
  int64_t size_of(int l) const { return sizes_[static_cast<size_t>(l)]; }

  // Each operand's labels, and the size of each label (size-1 dims
  // broadcast against the others).
  void label_operands(const Equation& e, const std::vector<Tensor>& operands) {
    int widest = 0;  // dims under "...", over all operands
    for (size_t i = 0; i < operands.size(); ++i) {
      const Term& term = e.inputs[i];
      const int rank = operands[i].ndim(), named = static_cast<int>(term.letters.size());
      if (term.ellipsis < 0 ? rank != named : rank < named)
        throw ShapeError("wok::einsum: operand " + std::to_string(i) + " has " + std::to_string(rank) +
                         " dims, but its term names " + std::to_string(named) +
                         (term.ellipsis < 0 ? "" : " besides \"...\"") + ctx_);
      if (term.ellipsis >= 0) widest = std::max(widest, rank - named);
    }
    sizes_.resize(static_cast<size_t>(kEllipsisLabel + widest), -1);
    size_from_.resize(sizes_.size(), -1);
    ellipsis_ = widest;
    for (size_t i = 0; i < operands.size(); ++i) {
      const Term& term = e.inputs[i];
      const int rank = operands[i].ndim(), under = rank - static_cast<int>(term.letters.size());
      Labels ls;
      for (int p = 0; p < static_cast<int>(term.letters.size()); ++p) {
        if (p == term.ellipsis)
          for (int d = 0; d < under; ++d) ls.push_back(kEllipsisLabel + widest - under + d);
        ls.push_back(term.letters[static_cast<size_t>(p)]);
      }
      if (term.ellipsis == static_cast<int>(term.letters.size()))
        for (int d = 0; d < under; ++d) ls.push_back(kEllipsisLabel + widest - under + d);
      for (int d = 0; d < rank; ++d) {
        const int l = ls[static_cast<size_t>(d)];
        const int64_t n = operands[i].shape()[d];
        int64_t& s = sizes_[static_cast<size_t>(l)];
        // Within one operand a repeated letter is a diagonal: equal sizes.
        const int first = position(ls, l);
        if (first < d && operands[i].shape()[first] != n)
          throw ShapeError(std::string("wok::einsum: '") + label_char(l) + "' is repeated in operand " +
                           std::to_string(i) + " over dims of sizes " + std::to_string(operands[i].shape()[first]) +
                           " and " + std::to_string(n) + "; a diagonal needs equal sizes" + ctx_);
        int& from = size_from_[static_cast<size_t>(l)];
        if (s < 0 || s == 1) {
          s = n;
          from = static_cast<int>(i);
        } else if (n != 1 && n != s) {
          throw ShapeError("wok::einsum: " + label_name(l) + " has size " + std::to_string(s) + " in operand " +
                           std::to_string(from) + " and " + std::to_string(n) + " in operand " + std::to_string(i) +
                           " (sizes must match or be 1)" + ctx_);
        }
      }
      ops_.push_back({operands[i].astype(dtype_), std::move(ls)});
    }
  }

  std::string label_name(int l) const {
    if (l < kLetters) return std::string("'") + label_char(l) + "'";
    return "dim " + std::to_string(l - kEllipsisLabel) + " of \"...\"";
  }

  void choose_output(const Equation& e) {
    if (e.explicit_output) {
      const Term& t = e.output;
      for (int p = 0; p <= static_cast<int>(t.letters.size()); ++p) {
        if (p == t.ellipsis)
          for (int d = 0; d < ellipsis_; ++d) out_.push_back(kEllipsisLabel + d);
        if (p == static_cast<int>(t.letters.size())) break;
        const int l = t.letters[static_cast<size_t>(p)];
        if (holds(out_, l))
          throw ArgumentError(std::string("wok::einsum: '") + label_char(l) + "' appears twice in the output" + ctx_);
        if (size_of(l) < 0)
          throw ArgumentError(std::string("wok::einsum: output letter '") + label_char(l) +
                              "' names no dim of any operand" + ctx_);
        out_.push_back(l);
      }
      return;
    }
    // NumPy's implicit output: the "..." dims, then the letters that
    // appear once in the whole equation, in ASCII order.
    for (int d = 0; d < ellipsis_; ++d) out_.push_back(kEllipsisLabel + d);
    std::vector<int> count(kLetters, 0);
    for (const Term& t : e.inputs)
      for (int l : t.letters) ++count[static_cast<size_t>(l)];
    for (int l = 0; l < kLetters; ++l)
      if (count[static_cast<size_t>(l)] == 1) out_.push_back(l);
  }

  // Is label `l` needed outside the operands `a` and `b` (one may be null)?
  bool needed_elsewhere(int l, const Operand* a, const Operand* b) const {
    if (holds(out_, l)) return true;
    for (const Operand& o : ops_)
      if (&o != a && &o != b && holds(o.labels, l)) return true;
    return false;
  }

  // The diagonal of every label repeated in `o`: its k dims of size n are
  // moved last and flattened, and elements 0, step, 2 step, ... with
  // step = 1 + n + ... + n^(k-1) are the ones whose k indices are equal.
  void take_diagonals(Operand& o) {
    for (size_t d = 0; d < o.labels.size(); ++d) {
      const int l = o.labels[d];
      if (std::count(o.labels.begin(), o.labels.end(), l) < 2) continue;
      std::vector<int64_t> perm, rest_dims;
      Labels rest;
      for (size_t e = 0; e < o.labels.size(); ++e)
        if (o.labels[e] != l) {
          perm.push_back(static_cast<int64_t>(e));
          rest.push_back(o.labels[e]);
          rest_dims.push_back(o.t.shape()[e]);
        }
      const int64_t k = static_cast<int64_t>(o.labels.size() - rest.size());
      for (size_t e = 0; e < o.labels.size(); ++e)
        if (o.labels[e] == l) perm.push_back(static_cast<int64_t>(e));
      const int64_t n = o.t.shape()[d];
      int64_t flat = 1, step = 0;
      for (int64_t i = 0; i < k; ++i) {
        step += flat;
        flat *= n;
      }
      Shape shape(rest_dims.begin(), rest_dims.end());
      shape.push_back(flat);
      Tensor t = permute(o.t, perm).reshape(shape);
      if (n > 1) t = slice(t, -1, 0, std::nullopt, step);
      rest.push_back(l);
      o = {std::move(t), std::move(rest)};
      d = static_cast<size_t>(-1);  // start again: the dims moved
    }
  }

  // Sums the labels of `o` that neither `partner` (which o is about to
  // be contracted with; may be null) nor anything else needs.
  void sum_unneeded(Operand& o, const Operand* partner) {
    std::vector<int64_t> axes;
    Labels kept;
    for (size_t d = 0; d < o.labels.size(); ++d) {
      const int l = o.labels[d];
      if (needed_elsewhere(l, &o, partner) || (partner && holds(partner->labels, l))) kept.push_back(l);
      else axes.push_back(static_cast<int64_t>(d));
    }
    if (axes.empty()) return;
    o = {sum(o.t, axes), std::move(kept)};
  }

  // The labels of a's and b's contraction: theirs that something else needs.
  Labels contraction_labels(const Operand& a, const Operand& b) const {
    Labels ls;
    for (const Operand* o : {&a, &b})
      for (int l : o->labels)
        if (!holds(ls, l) && needed_elsewhere(l, &a, &b)) ls.push_back(l);
    return ls;
  }

  void contract_cheapest_pair() {
    size_t best_i = 0, best_j = 1;
    long double best = -1;
    for (size_t i = 0; i < ops_.size(); ++i)
      for (size_t j = i + 1; j < ops_.size(); ++j) {
        long double n = 1;
        for (int l : contraction_labels(ops_[i], ops_[j])) n *= static_cast<long double>(size_of(l));
        if (best < 0 || n < best) {
          best = n;
          best_i = i;
          best_j = j;
        }
      }
    Operand c = contract(ops_[best_i], ops_[best_j]);
    ops_.erase(ops_.begin() + static_cast<std::ptrdiff_t>(best_j));
    ops_[best_i] = std::move(c);
  }

  Operand contract(Operand& a, Operand& b) {
    sum_unneeded(a, &b);
    sum_unneeded(b, &a);
    Labels batch, summed, a_only, b_only;
    for (int l : a.labels) {
      if (!holds(b.labels, l)) a_only.push_back(l);
      else if (needed_elsewhere(l, &a, &b)) batch.push_back(l);
      else summed.push_back(l);
    }
    for (int l : b.labels)
      if (!holds(a.labels, l)) b_only.push_back(l);
    Labels out = batch;
    out.insert(out.end(), a_only.begin(), a_only.end());
    out.insert(out.end(), b_only.begin(), b_only.end());

    if (summed.empty()) {
      // Nothing to sum: a broadcast multiply over [batch, a_only, b_only].
      return {arranged(a, out) * arranged(b, out), out};
    }
    if (a_only.empty() && b_only.empty()) {
      // Dot products (a matmul of 1 x K by K x 1 per batch): a multiply
      // and a sum, which the JIT runs as one row kernel.
      Labels all = batch;
      all.insert(all.end(), summed.begin(), summed.end());
      std::vector<int64_t> axes(summed.size());
      std::iota(axes.begin(), axes.end(), static_cast<int64_t>(batch.size()));
      return {sum(arranged(a, all) * arranged(b, all), axes), out};
    }
    // The larger operand keeps its order of the summed labels (it is the
    // one a copy would cost more).
    if (a.t.numel() < b.t.numel()) {
      Labels in_b;
      for (int l : b.labels)
        if (holds(summed, l)) in_b.push_back(l);
      summed = in_b;
    }
    Tensor y = matmul(as_matrix(a, batch, a_only, summed, true), as_matrix(b, batch, summed, b_only, false));
    Shape shape(y.shape().begin(), y.shape().end() - 2);
    for (int l : a_only) shape.push_back(a.t.shape()[position(a.labels, l)]);
    for (int l : b_only) shape.push_back(b.t.shape()[position(b.labels, l)]);
    return {y.reshape(shape), out};
  }

  // o's dims in the order of `order` (a superset of its labels), with
  // size-1 dims for the labels it lacks: ready to broadcast against the
  // other operand of a multiply.
  static Tensor arranged(const Operand& o, const Labels& order) {
    std::vector<int64_t> perm;
    Shape shape;
    for (int l : order) {
      const int p = position(o.labels, l);
      if (p >= 0) perm.push_back(p);
      shape.push_back(p >= 0 ? o.t.shape()[p] : 1);
    }
    return permute(o.t, perm).reshape(shape);
  }

  // o as [batch..., R, C], R the product of the `rows` labels' sizes and C
  // of the `cols`'. The labels the matmul sums (the cols of its left
  // operand, the rows of its right one) are at their full sizes: a size-1
  // dim that meets a larger one in the other operand is broadcast.
  Tensor as_matrix(const Operand& o, const Labels& batch, const Labels& rows, const Labels& cols,
                   bool cols_summed) const {
    auto pos = [&](int l) { return static_cast<int64_t>(position(o.labels, l)); };
    std::vector<int64_t> order;
    Shape full;
    for (int l : batch) {
      order.push_back(pos(l));
      full.push_back(o.t.shape()[pos(l)]);
    }
    Shape shape = full;
    std::vector<int64_t> flipped = order;
    int64_t r = 1, c = 1;
    bool broadcast = false;
    auto add = [&](const Labels& ls, bool summed, int64_t& extent) {
      for (int l : ls) {
        order.push_back(pos(l));
        int64_t n = o.t.shape()[pos(l)];
        if (summed && n != size_of(l)) {
          broadcast = true;
          n = size_of(l);
        }
        full.push_back(n);
        extent *= n;
      }
    };
    add(rows, !cols_summed, r);
    add(cols, cols_summed, c);
    for (int l : cols) flipped.push_back(pos(l));
    for (int l : rows) flipped.push_back(pos(l));
    if (broadcast) {
      shape.insert(shape.end(), {r, c});
      return broadcast_to(permute(o.t, order), full).reshape(shape);
    }
    if (!is_identity(order) && is_identity(flipped)) {
      shape.insert(shape.end(), {c, r});
      return transpose(o.t.reshape(shape), -2, -1);  // read in place by the GEMM
    }
    shape.insert(shape.end(), {r, c});
    return permute(o.t, order).reshape(shape);
  }

  static bool is_identity(const std::vector<int64_t>& perm) {
    for (size_t i = 0; i < perm.size(); ++i)
      if (perm[i] != static_cast<int64_t>(i)) return false;
    return true;
  }

  std::string ctx_;
  std::vector<int64_t> sizes_;  // per label; -1 where no dim has it
  std::vector<int> size_from_;  // per label, the operand its size was first seen in
  int ellipsis_ = 0;            // dims under "..."
  DType dtype_ = DType::kFloat32;
  std::vector<Operand> ops_;
  Labels out_;
};

}  // namespace

Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands) {
  WOK_CALLER_SCOPE();
  return Lowering(equation, operands).run();
}

}  // namespace wok
