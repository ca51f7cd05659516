// ONNX's recurrent layers (RNN, GRU, LSTM), unrolled over the sequence:
// the input projection of every step is one matmul, then each step records
// its recurrent matmul and gate arithmetic, which the JIT fuses per step.
#include "wok/frontend/creation.h"
#include "wok/frontend/ops.h"
#include "wok/onnx/converters.h"

namespace wok::onnx {

namespace {

enum class Cell { kRnn, kGru, kLstm };

constexpr int gates_of(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }

// Only the default activations are imported (sigmoid for gates, tanh
// otherwise): custom ones are refused at load.
std::string check_recurrent(const ::onnx::NodeProto& node, int64_t) {
  for (const auto& a : node.attribute()) {
    if (a.name() == "activations") {
      for (const std::string& f : a.strings())
        if (f != "Sigmoid" && f != "Tanh") return "activation " + f;
      const int n = a.strings_size();
      const bool lstm = node.op_type() == "LSTM", gru = node.op_type() == "GRU";
      // The defaults: RNN Tanh; GRU Sigmoid, Tanh; LSTM Sigmoid, Tanh, Tanh (per direction).
      for (int i = 0; i < n; ++i) {
        const int k = lstm ? i % 3 : gru ? i % 2 : 0;
        const std::string want = (lstm || gru) && k == 0 ? "Sigmoid" : "Tanh";
        if (a.strings(i) != want) return "activations other than the defaults";
      }
    }
    if (a.name() == "input_forget" && a.i() != 0) return "input_forget=1";
  }
  return "";
}

// Row `i` of a [dirs, ...] weight: [...].
Tensor direction(const Tensor& w, int64_t i) {
  Shape rest(w.shape().begin() + 1, w.shape().end());
  return reshape(slice(w, 0, i, i + 1), rest);
}

// Gate `g` of `count` along the last dim.
Tensor gate(const Tensor& t, int g, int count) {
  const int64_t h = t.shape().back() / count;
  return slice(t, -1, g * h, (g + 1) * h);
}

template <Cell kCell>
Outputs convert_recurrent(const NodeContext& c) {
  constexpr int G = gates_of(kCell);
  Tensor x = c.input(0);
  const bool batch_first = c.attr_int("layout", 0) != 0;
  if (batch_first) x = permute(x, {1, 0, 2});
  const Tensor& w = c.input(1);
  const Tensor& r = c.input(2);
  const int64_t seq = x.shape()[0], batch = x.shape()[1];
  const int64_t hidden = c.attr_int("hidden_size", r.shape().back());
  const std::string dir = c.attr_string("direction", "forward");
  const int64_t dirs = dir == "bidirectional" ? 2 : 1;
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional") c.fail("unknown direction '" + dir + "'");
  if (c.has_input(4)) {
    for (int64_t len : c.int_values(4))
      if (len != seq) c.fail("sequence_lens other than the whole sequence (" + std::to_string(seq) + ") are not supported");
  }
  const double clip = c.attr_float("clip", 0);
  auto clipped = [&](const Tensor& t) { return clip > 0 ? clamp(t, -clip, clip) : t; };
  const bool linear_before_reset = c.attr_int("linear_before_reset", 0) != 0;

  std::vector<Tensor> y_dirs, h_last, c_last;
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = dir == "reverse" || d == 1;
    const Tensor wd = direction(w, d), rd = direction(r, d);  // [G*H, in], [G*H, H]
    Tensor wb, rb;
    if (c.has_input(3)) {
      const Tensor bd = direction(c.input(3), d);  // [2*G*H]
      wb = slice(bd, 0, 0, G * hidden);
      rb = slice(bd, 0, G * hidden, 2 * G * hidden);
    }
    // Every step's input projection at once: [seq, batch, G*H].
    Tensor xw = matmul(x, transpose(wd));
    if (wb.defined()) xw = xw + wb;
    const Tensor rt = transpose(rd);
    Tensor h = c.has_input(5) ? direction(c.input(5), d) : zeros({batch, hidden}, x.dtype());
    Tensor cell = kCell == Cell::kLstm && c.has_input(6) ? direction(c.input(6), d) : zeros({batch, hidden}, x.dtype());
    Tensor peep;
    if (kCell == Cell::kLstm && c.has_input(7)) peep = direction(c.input(7), d);  // [3*H]: i, o, f
    std::vector<Tensor> steps(static_cast<size_t>(seq));
    for (int64_t k = 0; k < seq; ++k) {
      const int64_t t = reverse ? seq - 1 - k : k;
      const Tensor xt = reshape(slice(xw, 0, t, t + 1), {batch, G * hidden});
      if (kCell == Cell::kRnn) {
        Tensor pre = xt + matmul(h, rt);
        if (rb.defined()) pre = pre + rb;
        h = tanh(clipped(pre));
      } else if (kCell == Cell::kGru) {
        // Gates z, r, h; the recurrent part of h depends on linear_before_reset.
        const Tensor hr = matmul(h, rt);
        auto rec = [&](int g) { return rb.defined() ? gate(hr, g, 3) + gate(rb, g, 3) : gate(hr, g, 3); };
        const Tensor z = sigmoid(clipped(gate(xt, 0, 3) + rec(0)));
        const Tensor rg = sigmoid(clipped(gate(xt, 1, 3) + rec(1)));
        Tensor cand;
        if (linear_before_reset) {
          cand = tanh(clipped(gate(xt, 2, 3) + rg * rec(2)));
        } else {
          Tensor hh = matmul(rg * h, gate(rt, 2, 3));
          if (rb.defined()) hh = hh + gate(rb, 2, 3);
          cand = tanh(clipped(gate(xt, 2, 3) + hh));
        }
        h = (1.0f - z) * cand + z * h;
      } else {
        // Gates i, o, f, c; peepholes P = [Pi, Po, Pf].
        Tensor pre = xt + matmul(h, rt);
        if (rb.defined()) pre = pre + rb;
        Tensor gi = gate(pre, 0, 4), go = gate(pre, 1, 4), gf = gate(pre, 2, 4);
        if (peep.defined()) {
          gi = gi + gate(peep, 0, 3) * cell;
          gf = gf + gate(peep, 2, 3) * cell;
        }
        const Tensor i = sigmoid(clipped(gi)), f = sigmoid(clipped(gf));
        cell = f * cell + i * tanh(clipped(gate(pre, 3, 4)));
        if (peep.defined()) go = go + gate(peep, 1, 3) * cell;
        h = sigmoid(clipped(go)) * tanh(cell);
      }
      steps[static_cast<size_t>(t)] = reshape(h, {1, 1, batch, hidden});
    }
    y_dirs.push_back(concat(steps, 0));  // [seq, 1, batch, H]
    h_last.push_back(reshape(h, {1, batch, hidden}));
    c_last.push_back(reshape(cell, {1, batch, hidden}));
  }
  Tensor y = concat(y_dirs, 1), yh = concat(h_last, 0), yc = concat(c_last, 0);
  if (batch_first) {
    y = permute(y, {2, 0, 1, 3});  // [batch, seq, dirs, H]
    yh = permute(yh, {1, 0, 2});
    yc = permute(yc, {1, 0, 2});
  }
  Outputs out{y, yh};
  if (kCell == Cell::kLstm) out.push_back(yc);
  return out;
}

}  // namespace

void add_recurrent_converters(ConverterTable& t) {
  t.add("RNN", convert_recurrent<Cell::kRnn>, check_recurrent);
  t.add("GRU", convert_recurrent<Cell::kGru>, check_recurrent);
  t.add("LSTM", convert_recurrent<Cell::kLstm>, check_recurrent);
}

}  // namespace wok::onnx
