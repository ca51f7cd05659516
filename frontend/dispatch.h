// Recording an op call into the lazy graph: the one place where inputs are
// checked, shapes and dtypes inferred, and errors given their context.
#pragma once

#include <source_location>
#include <span>
#include <string_view>
#include <vector>

#include "wok/frontend/tensor.h"
#include "wok/runtime/attrs.h"
#include "wok/runtime/op_registry.h"

namespace wok {

// Calls any registered op by name, built-in or user-registered:
//   wok::call("WeightedSum", {a, b}, {{"weight", 0.5}})
std::vector<Tensor> call(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs = {},
                         std::source_location site = std::source_location::current());
// The same, for an op with exactly one output.
Tensor call1(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs = {},
             std::source_location site = std::source_location::current());

namespace detail {

// Note [Call sites]
// wok::call / wok::call1 take a defaulted std::source_location and open a
// CallSiteScope; the outermost scope on a thread wins, so every node recorded
// inside it carries that line. The named op functions (wok::exp, wok::add)
// and the operators keep their plain signatures (code takes their address),
// so they do not capture a site themselves: a user opens a scope
// (wok::CallSiteScope here;) in a function to label every op it records.
// Built with WOK_EVENTS=OFF, sites are not kept.
class CallSiteScope {
 public:
  explicit CallSiteScope(const std::source_location& site = std::source_location::current()) noexcept;
  ~CallSiteScope();
  CallSiteScope(const CallSiteScope&) = delete;
  CallSiteScope& operator=(const CallSiteScope&) = delete;
  // The site of the outermost open scope on this thread, or an empty one.
  static std::source_location current() noexcept;

 private:
  bool outermost_ = false;
};

// Records `op` on `inputs`; no work runs (unless a pending limit is hit).
// Errors from the op's rules are rethrown with the op's name and the
// inputs' dtypes and shapes.
std::vector<Tensor> record(const RegisteredOp& op, std::span<const Tensor> inputs, Attrs attrs);
Tensor record1(const RegisteredOp& op, std::span<const Tensor> inputs, Attrs attrs);
Tensor record1(const RegisteredOp& op, std::initializer_list<Tensor> inputs, Attrs attrs = {});

// A built-in op by name, looked up once per call site.
#define WOK_BUILTIN_OP(name)                                                   \
  ([]() -> const ::wok::RegisteredOp& {                                        \
    static const ::wok::RegisteredOp& op = ::wok::OpRegistry::global().get(name); \
    return op;                                                                 \
  }())

// Binds attributes in schema order without name lookups (built-ins only).
Attrs positional_attrs(const RegisteredOp& op, std::vector<AttrValue> values);

// "a float32[2, 3], b float32[4]": how errors describe a call's inputs.
std::string describe_inputs(const RegisteredOp& op, std::span<const Tensor> inputs);

}  // namespace detail
}  // namespace wok
