// wok::compile: capture a function once, replay it on every later call.
//
//   auto step = wok::compile([](const wok::Tensor& x, const wok::Tensor& w) {
//     return wok::relu(wok::matmul(x, w) + 1.0f);
//   });
//   wok::Tensor y = step(x, w);   // first call: traces, plans, compiles
//   wok::Tensor z = step(x2, w);  // same dtypes and shapes: replays the plan
//
// The callable takes tensors (any number, by value or const reference, or
// one std::vector<Tensor>) and
// returns a Tensor, a std::tuple or std::pair of them, or a
// std::vector<Tensor>. The first call with a given input signature (the
// backend, and each input's dtype, device and shape) runs the function
// under a capture: its ops are recorded, not run, and become one fragment,
// whose plan is built (passes, fused kernels, memory) and prepared. A call
// with new sizes derives its fragment from that trace instead (Note [Sizes
// of a capture]). Every
// later call with that signature binds the new inputs to the prepared plan
// and runs it: the function is not called, nothing is traced or hashed, and
// the cost of a call does not grow with the number of ops. Tensors the
// function reads without taking them as arguments (weights it closes over)
// are captured as constants: their data at the first call is what every
// replay reads.
//
// A captured function must not read tensor values: item(), to_vector(),
// data(), str(), wok::eval and copies between devices raise CaptureError
// during the capture, naming the read (Note [What a capture refuses] in
// runtime/capture.h).
//
// Note [Sizes of a capture]
// A prepared plan is built for one set of sizes (its memory plan and launch
// shapes are fixed), but the function need not be traced for each. Sizes
// are symbolic by default: signatures that agree in backend, dtypes,
// devices, ranks, and in which dims are 0 or 1 (an empty dim, a broadcast
// one), form a family. The family's first trace is its graph; a call with
// other sizes re-runs the graph's shape and dtype rules for them (Note
// [Deriving a capture for new sizes] in compile.cpp) and prepares a plan
// for the result, without calling the function. The fused kernels are
// shape-generic, so that plan compiles nothing; each set of sizes keeps its
// plan, so a replay costs what a shape-specialised one does.
//
// Note [Verifying a derivation]
// C++ code can read a size and bake it in: x * float(x.shape()[0]), a
// reshape to a size it computed, a branch. The graph says nothing of where
// an attribute came from, so the first call that changes a dim traces the
// function anyway and compares the trace with the derivation (ops, wiring,
// attributes, every value's shape, constants). Equal: the dim is symbolic,
// and later sizes derive. Different: the dim is specialised, every new size
// of it traces, and WOK_LOG=compile gives the difference ("a size is used
// as a constant: node 0 (mul scalar=8) ..."). So a function called with
// eight batch sizes traces twice and compiles once. One verification per
// dim cannot see a branch taken at some sizes only: such a function wants
// {.static_shapes = true}, which traces every new signature.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "wok/frontend/tensor.h"

namespace wok {

struct CompileOptions {
  // Trace the function for every new set of input sizes, instead of
  // deriving from a trace of other sizes (Note [Sizes of a capture]).
  bool static_shapes = false;
  // How errors and logs name the function; "function #N" when empty.
  std::string name;
};

// What a compiled function has done, for tests and reports.
struct CompileStats {
  int64_t traces = 0;   // calls that ran the function under a capture
  int64_t replays = 0;  // calls that replayed a prepared plan
  int64_t captures = 0; // prepared plans held now (one per input signature)
  int64_t derived = 0;  // plans built for new sizes from a trace of others, without calling the function
};

namespace detail {

class CaptureTable;

// The type-erased core of a compiled function: the captures by input
// signature, and the call that binds or traces.
class CompiledCore {
 public:
  using Trace = std::vector<Tensor> (*)(void* fn, const std::vector<Tensor>& args);
  explicit CompiledCore(CompileOptions options);
  // Runs the capture for `args`' signature, tracing `trace(fn, args)` first
  // when there is none.
  std::vector<Tensor> call(const std::vector<Tensor>& args, Trace trace, void* fn) const;
  CompileStats stats() const;

 private:
  std::shared_ptr<CaptureTable> table_;
};

template <typename R>
struct CompiledResult;

template <>
struct CompiledResult<Tensor> {
  static std::vector<Tensor> flatten(Tensor t) { return {std::move(t)}; }
  static Tensor unflatten(std::vector<Tensor>& v) { return std::move(v[0]); }
};

template <>
struct CompiledResult<std::vector<Tensor>> {
  static std::vector<Tensor> flatten(std::vector<Tensor> v) { return v; }
  static std::vector<Tensor> unflatten(std::vector<Tensor>& v) { return std::move(v); }
};

template <typename... Ts>
struct CompiledResult<std::tuple<Ts...>> {
  static_assert((std::is_same_v<Ts, Tensor> && ...), "wok::compile: a returned tuple must hold wok::Tensor only");
  static std::vector<Tensor> flatten(std::tuple<Ts...> t) {
    return std::apply([](auto&&... x) { return std::vector<Tensor>{std::move(x)...}; }, std::move(t));
  }
  static std::tuple<Ts...> unflatten(std::vector<Tensor>& v) {
    return [&]<size_t... I>(std::index_sequence<I...>) { return std::tuple<Ts...>{std::move(v[I])...}; }(
        std::index_sequence_for<Ts...>{});
  }
};

template <>
struct CompiledResult<std::pair<Tensor, Tensor>> {
  static std::vector<Tensor> flatten(std::pair<Tensor, Tensor> p) { return {std::move(p.first), std::move(p.second)}; }
  static std::pair<Tensor, Tensor> unflatten(std::vector<Tensor>& v) { return {std::move(v[0]), std::move(v[1])}; }
};

}  // namespace detail

// A function captured by wok::compile; cheap to copy (copies share their
// captures) and safe to call from several threads at once.
template <typename F>
class Compiled {
 public:
  Compiled(F fn, CompileOptions options) : fn_(std::make_shared<F>(std::move(fn))), core_(std::move(options)) {}

  template <typename... Args>
  auto operator()(Args&&... args) const {
    using R = std::decay_t<std::invoke_result_t<F&, Args...>>;
    if constexpr (sizeof...(Args) == 1 && (std::is_same_v<std::decay_t<Args>, std::vector<Tensor>> && ...)) {
      // One vector of tensors: each element is an input.
      const std::vector<Tensor>& inputs = (args, ...);
      std::vector<Tensor> outs = core_.call(inputs, &TraceVector<R>::run, fn_.get());
      return detail::CompiledResult<R>::unflatten(outs);
    } else {
      static_assert((std::is_convertible_v<Args, const Tensor&> && ...),
                    "wok::compile: a compiled function takes wok::Tensor arguments, or one std::vector<wok::Tensor>");
      std::vector<Tensor> inputs{Tensor(args)...};
      std::vector<Tensor> outs = core_.call(inputs, &Trace<R, sizeof...(Args)>::run, fn_.get());
      return detail::CompiledResult<R>::unflatten(outs);
    }
  }

  CompileStats stats() const { return core_.stats(); }

 private:
  template <typename R, size_t N>
  struct Trace {
    static std::vector<Tensor> run(void* fn, const std::vector<Tensor>& a) {
      return [&]<size_t... I>(std::index_sequence<I...>) {
        return detail::CompiledResult<R>::flatten((*static_cast<F*>(fn))(a[I]...));
      }(std::make_index_sequence<N>{});
    }
  };

  template <typename R>
  struct TraceVector {
    static std::vector<Tensor> run(void* fn, const std::vector<Tensor>& a) {
      return detail::CompiledResult<R>::flatten((*static_cast<F*>(fn))(a));
    }
  };

  std::shared_ptr<F> fn_;
  detail::CompiledCore core_;
};

template <typename F>
Compiled<std::decay_t<F>> compile(F&& fn, CompileOptions options = {}) {
  return Compiled<std::decay_t<F>>(std::forward<F>(fn), std::move(options));
}

}  // namespace wok
